/*-------------------------------------------------------------------------
 *
 * history_rules.c
 *	  Property target: the rules of a key space's history (src/history.c),
 *	  driven directly, as the model test/model/snowflake.pml drives them
 *	  symbolically.
 *
 * The input is read as a history of one primary on one timeline: clock
 * steps forward, reloads of snowflake.max_drift_ms (each followed by the
 * write that applies sf_rule_lead, whose records go into a log), the
 * standbys' acknowledgement of a raise, and IDs issued at the clock plus
 * the bound in force.  Properties:
 *	- the argument of history.c: a successor that has replayed the log up
 *	  to any record at or after the last one a relied-on raise needed (in
 *	  order, and again with the earlier records replayed a second time, as
 *	  a restart from an earlier checkpoint does) places its first ID
 *	  (sf_rule_floor) past every ID issued, whatever its own lead;
 *	- the lead rule keeps its invariants: the history's lead is at least
 *	  the minimum, the bound and any raise waiting; the horizon never goes
 *	  back;
 *	- a record replayed a second time changes nothing (sf_rule_order says
 *	  it was seen), and the horizon never goes back in a merge;
 *	- positions on one timeline order by LSN, and a position past the
 *	  point where a child timeline branched off is on another branch;
 *	- a timeline's node offset lies in the span and differs from the
 *	  offsets of the span - 1 timelines before it;
 *	- a load waits for a confirmation exactly when a request is pending.
 *
 * Test only: never part of the extension.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "history.h"

#include "fuzz.h"

#define MAX_RECORDS 64

typedef struct Primary
{
	int64		now;			/* Unix ms */
	int64		bound;
	int64		drift;
	int64		raise;			/* -1: none waiting */
	int64		issued;			/* largest ID's timestamp, Unix ms */
	int			raise_record;	/* record the waiting raise needs */
	int			needed;			/* record every successor must have */
	SfLeads		leads;
	SfRecord	log[MAX_RECORDS];
	int			nlog;
} Primary;

/* A successor that replayed log[0 .. upto]: its floor covers every ID. */
static void
check_successor(const Primary *p, int upto, int64 own_drift, bool again)
{
	SfHistory	h;
	SfTimelineStep line = {1, SF_POS_END};

	memset(&h, 0, sizeof(h));
	h.leads.lead_ms = SNOWFLAKE_MIN_LEAD_MS;
	for (int pass = 0; pass < (again ? 2 : 1); pass++)
		for (int i = 0; i <= upto; i++)
		{
			SfPos		pos = {1, (uint64) (i + 1) * 100};
			SfOrder		order = sf_rule_order(h.pos, &line, 1, pos, &line, 1);
			SfLeads		before = h.leads;
			bool		changed = sf_rule_replay(&h, &p->log[i], pos, order);

			FUZZ_CHECK(pass == 0 ? order == SF_ORDER_NEWER && changed :
					   order == SF_ORDER_SEEN && !changed,
					   "record %d replayed (pass %d): order %d, changed %d",
					   i, pass, (int) order, (int) changed);
			FUZZ_CHECK(h.leads.horizon_unix_ms >= before.horizon_unix_ms,
					   "a replay took the horizon back");
		}
	FUZZ_CHECK(sf_rule_floor(&h.leads, p->now, own_drift) > p->issued,
			   "a successor with %d of %d records places its floor at %lld, below an ID at %lld",
			   upto + 1, p->nlog, (long long) sf_rule_floor(&h.leads, p->now, own_drift),
			   (long long) p->issued);
}

/* A reload and the write that applies it. */
static void
reload(Primary *p, int64 drift)
{
	SfLeads		before = p->leads;
	SfLeadStep	step;

	p->drift = drift;
	if (drift < p->bound)
		p->bound = drift;
	if (p->raise >= 0 && p->raise != drift)
		p->raise = -1;
	step = sf_rule_lead(&p->leads, p->bound, drift, p->issued);
	FUZZ_CHECK(p->leads.lead_ms >= SNOWFLAKE_MIN_LEAD_MS &&
			   p->leads.lead_ms >= step.bound_ms &&
			   p->leads.lead_ms >= step.raise_ms &&
			   p->leads.horizon_unix_ms >= before.horizon_unix_ms,
			   "lead %lld, bound %lld, raise %lld",
			   (long long) p->leads.lead_ms, (long long) step.bound_ms,
			   (long long) step.raise_ms);
	if (step.log && p->nlog < MAX_RECORDS &&
		(p->nlog == 0 || memcmp(&p->log[p->nlog - 1].leads, &p->leads,
								sizeof(p->leads)) != 0))
	{
		p->log[p->nlog].kind = SF_RECORD_LEADS;
		p->log[p->nlog].leads = p->leads;
		p->nlog++;
	}
	else if (step.log && p->nlog >= MAX_RECORDS)
		p->leads = before;		/* no room: as if the write failed */
	/* A raise waits for the record that carries it (none: the write failed). */
	if (step.raise_ms >= 0 && p->raise != step.raise_ms && p->nlog > 0 &&
		p->log[p->nlog - 1].leads.lead_ms >= step.raise_ms)
	{
		p->raise = step.raise_ms;
		p->raise_record = p->nlog - 1;
	}
	p->bound = step.bound_ms;
}

static void
check_history(const uint8 *data, size_t size)
{
	Primary		p;

	memset(&p, 0, sizeof(p));
	p.now = 1000000;
	p.bound = sf_rule_start_bound(SNOWFLAKE_MIN_LEAD_MS);
	p.drift = SNOWFLAKE_MIN_LEAD_MS;
	p.raise = -1;
	p.needed = -1;
	p.issued = p.now;
	p.leads.lead_ms = SNOWFLAKE_MIN_LEAD_MS;
	while (size > 0)
	{
		switch (fuzz_take(&data, &size, 1) % 4)
		{
			case 0:
				p.now += (int64) fuzz_take(&data, &size, 2);
				break;
			case 1:
				reload(&p, (int64) fuzz_take(&data, &size, 2));
				break;
			case 2:
				if (p.raise >= 0)
				{
					p.bound = Max(p.bound, p.raise);
					p.needed = Max(p.needed, p.raise_record);
					p.raise = -1;
				}
				break;
			case 3:
				p.issued = Max(p.issued, p.now + p.bound);
				break;
		}
		for (int k = Max(p.needed, 0); k < p.nlog; k++)
			check_successor(&p, k, (int64) (size % 3) * 500, k % 2 == 1);
		if (p.nlog == 0 || p.needed < 0)
		{
			SfLeads		none = {SNOWFLAKE_MIN_LEAD_MS, 0};

			/* Nothing relied on past the minimum: no record is needed. */
			if (p.bound <= SNOWFLAKE_MIN_LEAD_MS && p.issued <= p.now + SNOWFLAKE_MIN_LEAD_MS)
				FUZZ_CHECK(sf_rule_floor(&none, p.now, 0) > p.issued - 1,
						   "the minimum lead does not cover an ID");
		}
	}
}

/* Timelines 1 .. 3: 2 branched off 1 at 1000, 3 off 2 at 2000. */
static void
check_order(const uint8 *data, size_t size)
{
	SfTimelineStep t1[] = {{1, SF_POS_END}};
	SfTimelineStep t2[] = {{1, 1000}, {2, SF_POS_END}};
	SfTimelineStep t3[] = {{1, 1000}, {2, 2000}, {3, SF_POS_END}};
	const SfTimelineStep *steps[] = {t1, t2, t3};
	int			n[] = {1, 2, 3};
	uint32		ta = 1 + fuzz_take(&data, &size, 1) % 3;
	uint32		tb = 1 + fuzz_take(&data, &size, 1) % 3;
	SfPos		a = {ta, fuzz_take(&data, &size, 2)};
	SfPos		b = {tb, fuzz_take(&data, &size, 2)};
	SfOrder		ab = sf_rule_order(a, steps[ta - 1], n[ta - 1], b, steps[tb - 1], n[tb - 1]);
	SfOrder		ba = sf_rule_order(b, steps[tb - 1], n[tb - 1], a, steps[ta - 1], n[ta - 1]);

	if (ta == tb)
		FUZZ_CHECK(ab == (b.lsn <= a.lsn ? SF_ORDER_SEEN : SF_ORDER_NEWER),
				   "same timeline, %llu then %llu", (unsigned long long) a.lsn,
				   (unsigned long long) b.lsn);
	FUZZ_CHECK((ab == SF_ORDER_DIVERGED) == (ba == SF_ORDER_DIVERGED),
			   "diverged one way only (%u/%llu, %u/%llu)", ta,
			   (unsigned long long) a.lsn, tb, (unsigned long long) b.lsn);
	if (ab == SF_ORDER_NEWER)
		FUZZ_CHECK(ba == SF_ORDER_SEEN, "newer one way, not seen the other");
	/* An ancestor's position past the branch point is another branch. */
	if (ta < tb && a.lsn > steps[tb - 1][ta - 1].end)
		FUZZ_CHECK(ab == SF_ORDER_DIVERGED, "past the branch point, not diverged");
}

static void
check_offsets(const uint8 *data, size_t size)
{
	uint32		chain[16];
	int			span = 1 + (int) (fuzz_take(&data, &size, 1) % 4);
	int			n = 1 + (int) (fuzz_take(&data, &size, 1) % 16);
	int			offsets[16];

	chain[0] = 1 + (uint32) (fuzz_take(&data, &size, 1) % 4);
	for (int i = 1; i < n; i++)
		chain[i] = chain[i - 1] + 1 + (uint32) (fuzz_take(&data, &size, 1) % 4);
	for (int i = 0; i < n; i++)
	{
		offsets[i] = sf_rule_node_offset(chain, i + 1, span);
		FUZZ_CHECK(offsets[i] >= 0 && offsets[i] < span, "offset %d of span %d",
				   offsets[i], span);
		for (int j = Max(0, i - span + 1); j < i; j++)
			FUZZ_CHECK(offsets[j] != offsets[i],
					   "timelines %u and %u share offset %d in span %d",
					   chain[j], chain[i], offsets[i], span);
	}
}

static void
check_request(const uint8 *data, size_t size)
{
	SfStartFacts facts;
	SfHistory	h;
	uint64		bits = fuzz_take(&data, &size, 2);
	SfAsk		ask;

	memset(&h, 0, sizeof(h));
	facts.first_look = bits & 1;
	facts.standby_signal = bits & 2;
	facts.recovery_signal = bits & 4;
	facts.backup_label = bits & 8;
	facts.control_in_recovery = bits & 16;
	facts.confirm_restore = bits & 32;
	facts.moved = bits & 64;
	facts.node_changed = bits & 128;
	facts.in_span = bits & 256;
	if (bits & 512)
	{
		h.request_id = 7;
		h.request_kind = (SfRequestKind) (1 + (bits >> 10) % 3);
	}
	ask = sf_rule_start_request(&facts, &h, 42);
	FUZZ_CHECK((ask == SF_ASK_NONE) == (h.request_id == 0),
			   "ask %d with request %llu", (int) ask,
			   (unsigned long long) h.request_id);
	if (facts.in_span)
		FUZZ_CHECK(ask != SF_ASK_NONE, "a node id in the span did not ask");
}

int
LLVMFuzzerTestOneInput(const uint8 *data, size_t size)
{
	if (size < 1)
		return 0;
	switch (data[0] % 4)
	{
		case 0:
			check_history(data + 1, size - 1);
			break;
		case 1:
			check_order(data + 1, size - 1);
			break;
		case 2:
			check_offsets(data + 1, size - 1);
			break;
		case 3:
			check_request(data + 1, size - 1);
			break;
	}
	return 0;
}
