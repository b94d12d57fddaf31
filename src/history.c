/*-------------------------------------------------------------------------
 *
 * history.c
 *	  The rules of a key space's history, as pure functions: each is a
 *	  transition of the model test/model/snowflake.pml, whose name it gives
 *	  ("Model: X"), and the model's transition names the function.
 *
 * The argument, in one place.  Every ID a server issues lies at or below
 * its reservation (the state file records it before the ID is handed out),
 * and at or below the clock plus the lead in force (the bound the
 * generator obeys).  A successor (a restarted server, a promoted standby, a
 * restore, a copy) knows neither the reservation of the server it
 * succeeds, which no WAL carries, nor when it stopped; it knows the
 * history's leads: the lead any member may allow, and the horizon, where
 * the IDs issued under larger leads since lowered end.  So every start
 * places its first ID past max(horizon, clock + lead) (sf_rule_floor),
 * never less than SNOWFLAKE_MIN_LEAD_MS past the clock, and past its own
 * file's reservation (sf_rule_resume).  That holds only if a successor
 * knows every lead a predecessor relied on:
 *	- a lead up to SNOWFLAKE_MIN_LEAD_MS is assumed by every start: it needs
 *	  no record;
 *	- a raise above it is written into WAL first, and relied on only once
 *	  every standby the primary can see has flushed that record
 *	  (sf_rule_lead, sf_rule_raise_lagging): until then the old bound holds.
 *	  A standby the primary cannot see is covered by node_id_span (its
 *	  node field differs) or by its own setting (a start counts its own
 *	  snowflake.max_drift_ms);
 *	- a lowering takes effect at once and moves the old lead's reach into
 *	  the horizon, an absolute time: the largest ID issued when it was
 *	  lowered (sf_rule_lead);
 *	- a replayed record never takes back what a server knows: a record at
 *	  or before the position the state file reflects is skipped, one after
 *	  it replaces the lead, one from another branch is merged by maximum,
 *	  and the horizon is always merged by maximum (sf_rule_order,
 *	  sf_rule_replay).  Order then matters only where WAL gives one.
 * Node fields keep timelines apart within a span (sf_rule_node_offset), a
 * start whose node id falls in the span of the history's node id, or that
 * continues a timeline, or is a restore (with snowflake.confirm_restore),
 * waits for a confirmation (sf_rule_start_request), and requests and
 * confirmations travel in WAL like the leads (sf_rule_replay,
 * sf_rule_confirm).
 *
 * No I/O, no PostgreSQL state, no lock, no error: test/model/replay.c
 * drives these functions with the model checker's counterexample trails,
 * and the fuzz and property tests call them directly.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "history.h"

/*
 * sf_rule_floor
 *		Model: START.  The earliest millisecond (Unix ms) the first ID of a
 *		start may take: past every ID the history can have issued under the
 *		leads it knows (at or below the horizon, or the clock plus the
 *		lead), and past the clock plus this server's own lead (a member of
 *		its history too), the lead never less than SNOWFLAKE_MIN_LEAD_MS.
 */
int64
sf_rule_floor(const SfLeads *leads, int64 now_unix_ms, int64 own_drift_ms)
{
	int64		lead = Max(Max(leads->lead_ms, own_drift_ms),
						   SNOWFLAKE_MIN_LEAD_MS);

	return Max(leads->horizon_unix_ms, now_unix_ms + lead) + 1;
}

/*
 * sf_rule_resume
 *		Model: START.  Where generation resumes from a state file f of the
 *		configured layout, for IDs of node field node_field (-1: not set):
 *		strictly above what the file proves.  After a clean shutdown that is
 *		the exact last ID, with the reservation just below its millisecond,
 *		so that the first ID written there rewrites the file first; with
 *		another node field, in the next millisecond (an ID in the last one
 *		could be smaller); else above the reservation.
 */
void
sf_rule_resume(const SnowflakeStateFile *f, const SnowflakeLayout *layout,
			   int node_field, SfResume *r)
{
	int			sb = layout->sequence_bits;
	int64		max_ms = snowflake_max_ms(layout);
	int64		max_packed = (int64) ((UINT64CONST(1) <<
									   (layout->timestamp_bits + sb)) - 1);

	if (f->last >= 0 && f->node_id == node_field)
	{
		r->last = Min(f->last, max_packed);
		r->reserved_ms = (r->last >> sb) - 1;
	}
	else if (f->last >= 0)
	{
		int64		last_ms = f->last >> sb;

		r->reserved_ms = last_ms;
		r->last = last_ms >= max_ms ? max_packed :
			((last_ms + 1) << sb) - 1;
	}
	else
	{
		r->reserved_ms = f->reserved_ms;
		r->last = f->reserved_ms >= max_ms ? max_packed :
			((f->reserved_ms + 1) << sb) - 1;
	}
	r->durable_ms = f->last >= 0 ? (f->last >> f->sequence_bits) :
		f->reserved_ms;
}

/*
 * sf_rule_start_bound
 *		Model: START.  The lead a life's IDs may have before it has written
 *		anything: its own snowflake.max_drift_ms up to SNOWFLAKE_MIN_LEAD_MS,
 *		which every successor assumes.  A larger one is a raise
 *		(sf_rule_lead), recorded and acknowledged in this life.
 */
int64
sf_rule_start_bound(int64 drift_ms)
{
	return Min(drift_ms, SNOWFLAKE_MIN_LEAD_MS);
}

/*
 * sf_rule_lead
 *		Model: LEAD.  A reservation write of a server that mints, with its
 *		snowflake.max_drift_ms drift_ms, under the bound bound_ms in force,
 *		after the caller lowered that bound to drift_ms if it was above it
 *		and then read issued_unix_ms, the largest timestamp issued so far
 *		(Unix ms).  Updates the history's leads, and says what the caller
 *		does:
 *		- a raise above SNOWFLAKE_MIN_LEAD_MS: the history's lead takes it
 *		  first (the state file and WAL record it: log), and the bound only
 *		  once the record is on every standby the primary can see
 *		  (raise_ms);
 *		- otherwise the bound is drift_ms at once: lowering is safe at once,
 *		  and a lead up to the minimum is one every successor assumes; a
 *		  history's lead above both is lowered to them, its reach moving
 *		  into the horizon (log: successors may lower theirs).
 */
SfLeadStep
sf_rule_lead(SfLeads *leads, int64 bound_ms, int64 drift_ms,
			 int64 issued_unix_ms)
{
	SfLeadStep	step;
	int64		target = Max(drift_ms, SNOWFLAKE_MIN_LEAD_MS);

	step.bound_ms = bound_ms;
	step.raise_ms = -1;
	step.log = false;
	if (drift_ms > bound_ms && drift_ms > SNOWFLAKE_MIN_LEAD_MS)
	{
		leads->lead_ms = Max(leads->lead_ms, drift_ms);
		step.raise_ms = drift_ms;
		step.log = true;
		return step;
	}
	step.bound_ms = drift_ms;
	if (leads->lead_ms > target)
	{
		leads->horizon_unix_ms = Max(leads->horizon_unix_ms, issued_unix_ms);
		leads->lead_ms = target;
		step.log = true;
	}
	return step;
}

/*
 * sf_rule_raise_lagging
 *		Model: ACK.  Which of the n standbys the primary can see (their WAL
 *		flushed up to flushed[i]) has not flushed the record that ends at
 *		record_lsn: the index of the first, or -1 when every one has and a
 *		raise recorded there may be relied on.
 */
int
sf_rule_raise_lagging(uint64 record_lsn, const uint64 *flushed, int n)
{
	for (int i = 0; i < n; i++)
		if (flushed[i] < record_lsn)
			return i;
	return -1;
}

/*
 * sf_rule_order
 *		Model: REPLAY.  How the position rec of a replayed record relates to
 *		the position seen that a state file reflects, given each one's
 *		timeline ancestry (history.h, SfTimelineStep): an LSN compares only
 *		along one line of history, so a position on an ancestor timeline
 *		counts as before one on a descendant only up to the point where the
 *		descendant branched off; past it, it is on an abandoned branch.
 *		Nothing seen yet: every record is newer.
 */
SfOrder
sf_rule_order(SfPos seen, const SfTimelineStep *seen_steps, int nseen,
			  SfPos rec, const SfTimelineStep *rec_steps, int nrec)
{
	if (seen.tli == 0)
		return SF_ORDER_NEWER;
	if (seen.tli == rec.tli)
		return rec.lsn <= seen.lsn ? SF_ORDER_SEEN : SF_ORDER_NEWER;
	for (int i = 0; i < nrec; i++)
		if (rec_steps[i].tli == seen.tli)
			return seen.lsn <= rec_steps[i].end ? SF_ORDER_NEWER :
				SF_ORDER_DIVERGED;
	for (int i = 0; i < nseen; i++)
		if (seen_steps[i].tli == rec.tli)
			return rec.lsn <= seen_steps[i].end ? SF_ORDER_SEEN :
				SF_ORDER_DIVERGED;
	return SF_ORDER_DIVERGED;
}

/*
 * sf_rule_replay
 *		Model: REPLAY.  Merge a replayed record rec at position pos, whose
 *		order against what h reflects is order (sf_rule_order), into h;
 *		returns whether h changed (the state file is to be rewritten).
 *
 * A record already reflected changes nothing.  A newer one replaces the
 * lead (a lowering is as binding as a raise once it is the latest word)
 * and one of another branch raises it to the larger of the two; the
 * horizon is merged by maximum either way, so no IDs a server knows of are
 * forgotten.  A request is taken when none is pending (a pending one is
 * answered by the same confirmation); a confirmation lifts the request it
 * names, and records the node id and span it confirmed.
 */
bool
sf_rule_replay(SfHistory *h, const SfRecord *rec, SfPos pos, SfOrder order)
{
	SfHistory	before = *h;

	if (order == SF_ORDER_SEEN)
		return false;
	switch (rec->kind)
	{
		case SF_RECORD_LEADS:
			h->leads.lead_ms = order == SF_ORDER_NEWER ? rec->leads.lead_ms :
				Max(h->leads.lead_ms, rec->leads.lead_ms);
			h->leads.lead_ms = Max(h->leads.lead_ms, SNOWFLAKE_MIN_LEAD_MS);
			h->leads.horizon_unix_ms = Max(h->leads.horizon_unix_ms,
										   rec->leads.horizon_unix_ms);
			break;
		case SF_RECORD_REQUEST:
			if (h->request_id == 0)
			{
				h->request_id = rec->request_id;
				h->request_kind = rec->request_kind;
			}
			break;
		case SF_RECORD_CONFIRM:
			if (h->request_id == rec->request_id)
				(void) sf_rule_confirm(h, rec->node_base, rec->node_span);
			break;
	}
	h->pos = pos;
	return memcmp(&before, h, sizeof(before)) != 0;
}

/*
 * sf_rule_confirm
 *		Model: CONFIRM.  The node id node_id with span span is confirmed for
 *		this history: the pending request is lifted and the node id becomes
 *		the one the history's span is counted from.  Returns whether a
 *		request was pending.
 */
bool
sf_rule_confirm(SfHistory *h, int node_id, int span)
{
	bool		pending = h->request_id != 0;

	h->request_id = 0;
	h->request_kind = SF_REQUEST_NONE;
	h->node_base = node_id;
	h->node_span = span;
	return pending;
}

/*
 * sf_rule_node_offset
 *		Model: PROMOTE.  The offset within a span of span node ids of the
 *		node field of the last timeline of chain[0 .. n) (a timeline's
 *		ancestors, oldest first, then itself): its number's,
 *		(timeline - 1) % span, unless one of the span - 1 timelines before it
 *		in the chain took that offset, else the lowest offset none of them
 *		took; each timeline of the chain in turn.  So a timeline's node field
 *		differs from those of the span - 1 timelines before it, whatever
 *		numbers were skipped, and is its number's when none was.
 */
int
sf_rule_node_offset(const uint32 *chain, int n, int span)
{
	int32		offsets[SNOWFLAKE_MAX_ANCESTORS + 1];

	Assert(n >= 1 && n <= SNOWFLAKE_MAX_ANCESTORS + 1 && span >= 1);
	for (int i = 0; i < n; i++)
	{
		int			want = (int) ((chain[i] - 1) % (uint32) span);
		int			from = Max(0, i - span + 1);

		for (int o = 0;; o++)
		{
			int			candidate = o == 0 ? want : o - 1;
			bool		taken = false;

			for (int j = from; j < i && !taken; j++)
				taken = offsets[j] == candidate;
			if (!taken)
			{
				offsets[i] = candidate;
				break;
			}
		}
	}
	return offsets[n - 1];
}

/*
 * sf_rule_node_in_span
 *		Model: COPY.  Whether node ids node_id .. node_id + span - 1, another
 *		base than the one the history's IDs were minted under, meet that
 *		history's span (node_base .. node_base + node_span - 1): a copy
 *		beside its original, given a node id its original's promoted
 *		standbys take.  Unknown (a file of 1.2 or earlier, no node id): no.
 */
bool
sf_rule_node_in_span(const SfHistory *h, int node_id, int span)
{
	if (h->node_span <= 0 || node_id < 0 || node_id == h->node_base)
		return false;
	return node_id <= h->node_base + h->node_span - 1 &&
		h->node_base <= node_id + Max(span, 1) - 1;
}

/* What a load's facts ask, before any recorded request (see below). */
static SfAsk
sf_start_asks(const SfStartFacts *facts)
{
	if (facts->first_look && !facts->standby_signal && !facts->recovery_signal)
	{
		if (facts->backup_label)
			return SF_ASK_CONTINUED_BACKUP;
		if (facts->control_in_recovery)
			return SF_ASK_CONTINUED_STANDBY;
	}
	if (!facts->first_look || !facts->confirm_restore || facts->standby_signal)
		return SF_ASK_NONE;
	if (facts->recovery_signal)
		return SF_ASK_RESTORE_ARCHIVE;
	if (facts->backup_label)
		return SF_ASK_RESTORE_BACKUP;
	if (facts->moved)
		return SF_ASK_MOVED;
	return SF_ASK_NONE;
}

/*
 * sf_rule_start_request
 *		Model: ASK.  Whether a load of the state must wait for the node id
 *		to be confirmed, updating the request h records (new_id: the id a
 *		new request takes, never 0).
 *
 * A start leaving recovery without a new timeline (a base backup or a
 * standby started without its signal file, an old primary rewound and
 * started as a primary) continues its predecessor's timeline and node
 * field; a node id in the span of the history's node id is one a promoted
 * standby of the original takes; a restore, with snowflake.confirm_restore
 * on, may run beside its original.  Each asks, and a request recorded
 * earlier stands until confirmed, except that every one is dropped when
 * the server mints with a node field of its own outside that span (it was
 * given its own node id), and a restore's when snowflake.confirm_restore
 * is off.  A node id in the span asks first, whatever else the start is.
 */
SfAsk
sf_rule_start_request(const SfStartFacts *facts, SfHistory *h, uint64 new_id)
{
	SfAsk		ask = facts->in_span ? SF_ASK_IN_SPAN : sf_start_asks(facts);

	if (ask != SF_ASK_IN_SPAN && facts->node_changed)
	{
		h->request_id = 0;
		h->request_kind = SF_REQUEST_NONE;
		return SF_ASK_NONE;
	}
	if (ask != SF_ASK_NONE)
	{
		if (h->request_id == 0)
			h->request_id = new_id;
		h->request_kind = ask == SF_ASK_IN_SPAN ? SF_REQUEST_IN_SPAN :
			(ask == SF_ASK_CONTINUED_BACKUP || ask == SF_ASK_CONTINUED_STANDBY) ?
			SF_REQUEST_CONTINUED : SF_REQUEST_RESTORE;
		return ask;
	}
	switch (h->request_kind)
	{
		case SF_REQUEST_NONE:
			break;
		case SF_REQUEST_CONTINUED:
			return SF_ASK_PENDING_CONTINUED;
		case SF_REQUEST_IN_SPAN:
			return SF_ASK_PENDING_IN_SPAN;
		case SF_REQUEST_RESTORE:
			if (facts->confirm_restore)
				return SF_ASK_PENDING_RESTORE;
			break;
	}
	h->request_id = 0;
	h->request_kind = SF_REQUEST_NONE;
	return SF_ASK_NONE;
}
