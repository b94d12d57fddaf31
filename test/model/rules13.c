/*-------------------------------------------------------------------------
 *
 * rules13.c
 *	  The rules of snowflake 1.3 at commit 92d2e11, transcribed as pure
 *	  functions for test/model/replay.c: where a start places its first ID,
 *	  how the history's lead is kept, raised, lowered, logged and merged on
 *	  replay, when a start asks for its node id to be confirmed, which node
 *	  field a timeline takes.  Each function names the file and function of
 *	  92d2e11 it transcribes; what those do beside the rule (I/O, locks,
 *	  messages, counters) is left out, nothing else.  snowflake.pml built
 *	  with -DRULES13 has an inline of the same name for each, and replay.c
 *	  fails if the two ever disagree.
 *
 * Test only: never part of the extension (these are the rules with the
 * defects of issue 52).  No lock: the caller owns the structs.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "rules13.h"

/*
 * shared.c snowflake_history_lead (and snowflake_floor_lead, which with
 * the preload is the same): the largest lead over the clock that an ID of
 * the history may have had, as of now_unix_ms, updating the record.  The
 * old value keeps counting until it has elapsed since a lower one was
 * first recorded.
 */
int64
r13_history_lead(R13Lead *s, int64 drift, int64 now_unix_ms)
{
	if (drift >= s->max_lead_ms)
	{
		s->max_lead_ms = drift;
		s->lead_lowered_ms = 0;
	}
	else if (s->lead_lowered_ms == 0)
		s->lead_lowered_ms = now_unix_ms;
	else if (now_unix_ms >= s->lead_lowered_ms + s->max_lead_ms)
	{
		s->max_lead_ms = drift;
		s->lead_lowered_ms = 0;
	}
	return s->max_lead_ms;
}

/*
 * reservation.c sf_raise_to_floor: the last ID raised to just below
 * now_ms + lead, so that the next one is past anything an earlier life can
 * have issued; returns that millisecond.  (The floor's causes, for
 * messages, are left out.)
 */
int64
r13_raise_to_floor(R13Gen *g, const SnowflakeLayout *layout, int64 now_ms,
				   int64 lead)
{
	int64		floor_ms = Min(now_ms + lead, snowflake_max_ms(layout));
	int64		floor_packed;

	floor_packed = floor_ms <= 0 ? -1 :
		(floor_ms << layout->sequence_bits) - 1;
	if (g->last < floor_packed)
		g->last = floor_packed;
	if (floor_ms >= g->floor_ms)
		g->floor_ms = floor_ms;
	return floor_ms;
}

/*
 * reservation.c sf_log_lead (with the preload): whether the history's
 * largest lead is to be written into WAL now, because this life has not
 * written this value (or this lowering) yet; if so, it counts as written.
 */
bool
r13_log_lead(R13Gen *g)
{
	if (g->wal_lead_ms == g->lead.max_lead_ms &&
		g->wal_lowered_ms == g->lead.lead_lowered_ms)
		return false;
	g->wal_lead_ms = g->lead.max_lead_ms;
	g->wal_lowered_ms = g->lead.lead_lowered_ms;
	return true;
}

/*
 * reservation.c snowflake_extend_reservation, the rule without its I/O:
 * a reservation write reaching needed_ms, by a process whose
 * snowflake.max_drift_ms is drift, at now_ms (the epoch is 0 here, so
 * Unix and epoch milliseconds agree).  The lead bound is lowered at once
 * to drift; the history's lead is updated (snowflake_floor_lead); the
 * first write of a life raises the last ID to the floor; the file is
 * written if the reservation falls short, a floor is owed, the process
 * allows a larger lead than the bound, or the life's lineage is not
 * recorded yet; then the lead is logged (sf_log_lead), the reservation
 * and the bound published (sf_publish_write).  The write never fails
 * here.  SNOWFLAKE_RESERVE_AHEAD_MS is the model's, ahead_ms (0: the
 * reservation reaches exactly what is needed).
 */
void
r13_extend_reservation(R13Gen *g, const SnowflakeLayout *layout,
					   int64 needed_ms, int64 now_ms, int64 drift,
					   int64 ahead_ms, R13Write *w)
{
	int64		bound;
	bool		floor;
	bool		new_lineage = !g->lineage_checked;

	if (drift < g->lead_bound_ms)
		g->lead_bound_ms = drift;
	bound = g->lead_bound_ms;
	w->lead = r13_history_lead(&g->lead, drift, now_ms);
	w->floor_ms = -1;
	floor = g->floor_pending;
	if (floor)
	{
		w->floor_ms = r13_raise_to_floor(g, layout, now_ms, w->lead);
		needed_ms = Max(needed_ms, w->floor_ms);
	}
	/* sf_cover_issued */
	if (g->last >= 0)
		needed_ms = Max(needed_ms, g->last >> layout->sequence_bits);
	w->write = g->reserved_ms < needed_ms || floor || drift > bound ||
		new_lineage;
	w->log = false;
	if (!w->write)
		return;
	g->reserved_ms = Min(Max(Max(needed_ms, now_ms) + ahead_ms,
							 g->reserved_ms),
						 snowflake_max_ms(layout));
	w->log = r13_log_lead(g);
	g->lead_bound_ms = drift;
	g->lineage_checked = true;
	g->floor_pending = false;
}

/*
 * reservation.c snowflake_replay_lead: the redo of a lead record.  A larger
 * lead than the one known, or the same lead in force again (not lowered)
 * or lowered later, is recorded; returns whether it was (the state file is
 * rewritten then).
 */
bool
r13_replay_lead(R13Lead *s, int64 max_lead_ms, int64 lead_lowered_ms)
{
	bool		raised = max_lead_ms > s->max_lead_ms;

	/* The same lead: in force if either says so (0), else the later lowering. */
	if (!raised)
		lead_lowered_ms = (lead_lowered_ms == 0 || s->lead_lowered_ms == 0) ? 0 :
			Max(lead_lowered_ms, s->lead_lowered_ms);
	if (max_lead_ms < s->max_lead_ms ||
		(!raised && lead_lowered_ms == s->lead_lowered_ms))
		return false;
	s->max_lead_ms = max_lead_ms;
	s->lead_lowered_ms = lead_lowered_ms;
	return true;
}

/*
 * startcheck.c sf_continued_start, snowflake_restore_start and
 * sf_start_asks: why this start asks (R13_REQ_*), at the postmaster's first
 * look.
 */
static int
r13_start_asks(const R13Facts *f)
{
	if (!f->standby_signal && !f->recovery_signal &&
		(f->backup_label || f->control_in_recovery))
		return R13_REQ_CONTINUED;
	if (!f->confirm_restore || f->standby_signal)
		return R13_REQ_NONE;
	if (f->recovery_signal || f->backup_label || f->moved)
		return R13_REQ_RESTORE;
	return R13_REQ_NONE;
}

/*
 * startcheck.c snowflake_start_request: the request to confirm the node id
 * this load makes or keeps (R13_REQ_*), given the state file's flags,
 * which are set to match; *is_new: no file records it yet.  None when the
 * server mints with another node id than the file records.
 */
int
r13_start_request(const R13Facts *facts, uint32 *flags, int file_node_id,
				  bool *is_new)
{
	bool		recorded = (*flags & R13_STATE_UNCONFIRMED) != 0;
	int			why = facts->first_look ? r13_start_asks(facts) : R13_REQ_NONE;

	if (why == R13_REQ_NONE && recorded)
	{
		if (*flags & R13_STATE_CONTINUED)
			why = R13_REQ_CONTINUED;
		else if (facts->confirm_restore)
			why = R13_REQ_RESTORE;
	}
	*flags &= ~(R13_STATE_UNCONFIRMED | R13_STATE_CONTINUED);
	*is_new = false;
	if (why == R13_REQ_NONE ||
		(facts->node_id_set && facts->file_node_field != file_node_id))
		return R13_REQ_NONE;
	*flags |= R13_STATE_UNCONFIRMED |
		(why == R13_REQ_CONTINUED ? R13_STATE_CONTINUED : 0);
	*is_new = !recorded;
	return why;
}

/*
 * statefile.c snowflake_chain_offset: the offset within a span of span
 * node ids of the node field of the last timeline of chain[0 .. n).
 */
int
r13_chain_offset(const uint32 *chain, int n, int span)
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
 * shared.c snowflake_node_field (statefile.c snowflake_timeline_offset
 * reading the timeline's history file, here chain[0 .. n)): the node field
 * on the last timeline of the chain.
 */
int
r13_node_field(int node_id, int span, const uint32 *chain, int n)
{
	if (node_id < 0)
		return -1;
	if (span == 1 || chain[n - 1] <= 1)
		return node_id;
	return node_id + r13_chain_offset(chain, n, span);
}

/*
 * shared.c sf_resume: where generation resumes from a state file f of the
 * configured layout, for IDs of node field node: strictly above what the
 * file proves.
 */
void
r13_resume(R13Gen *g, const SnowflakeStateFile *f,
		   const SnowflakeLayout *layout, int node)
{
	int64		max_packed = (int64) ((UINT64CONST(1) <<
									   (layout->timestamp_bits +
										layout->sequence_bits)) - 1);

	if (f->last >= 0 && f->node_id == node)
	{
		g->last = Min(f->last, max_packed);
		g->reserved_ms = (g->last >> layout->sequence_bits) - 1;
	}
	else if (f->last >= 0)
	{
		int64		last_ms = f->last >> layout->sequence_bits;

		g->reserved_ms = last_ms;
		g->last = last_ms >= snowflake_max_ms(layout) ? max_packed :
			((last_ms + 1) << layout->sequence_bits) - 1;
	}
	else
	{
		g->reserved_ms = f->reserved_ms;
		if (f->reserved_ms >= snowflake_max_ms(layout))
			g->last = max_packed;
		else
			g->last = ((f->reserved_ms + 1) << layout->sequence_bits) - 1;
	}
}

/*
 * generator.c sf_try_issue: the lead a call may give its IDs, the caller's
 * drift at most the server's bound (a->limit).
 */
int64
r13_issue_limit(const R13Gen *g, int64 drift)
{
	return Min(drift, g->lead_bound_ms);
}
