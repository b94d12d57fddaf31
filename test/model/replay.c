/*-------------------------------------------------------------------------
 *
 * replay.c
 *	  Replays a history that test/model/snowflake.pml printed (its "EV"
 *	  lines: `spin -t` of a counterexample trail) through the C functions
 *	  of the rules: src/history.c (the new rules), or test/model/rules13.c
 *	  (1.3's, --rules13).  The history is rebuilt here, operation by
 *	  operation, by a harness that is the model's harness in C, calling the
 *	  C functions where the model calls its inlines of the same names; the
 *	  properties P1 to P3 are checked as the model checks them.
 *
 *	  When the trail comes from the model of the same rules, every result
 *	  the model printed ("RS" lines) must equal the one computed here: a
 *	  difference means that the model no longer says what the code does,
 *	  and fails loudly.  A trail of the other rules (--cross) is replayed as
 *	  the same operations: it shows what the other rules make of them.
 *
 *	  replay [--rules13] [--cross] [--span N] [--quiet] FILE
 *	  Exit status: 0 no violation; 1 a violation (the first one is printed,
 *	  as "VIOLATION P1 ..."); 2 usage or input error; 3 the model and the C
 *	  functions disagree; 4 the trail cannot happen under these rules (an
 *	  operation it makes is not possible: the refusal or state that allows
 *	  it is not there).
 *
 *	  Time is in the model's units (SNOWFLAKE_MIN_LEAD_MS each); the C
 *	  functions get milliseconds: a time u is u * 1000, a bound covering
 *	  unit u (a reservation, the largest ID issued) u * 1000 + 999, and a
 *	  result in milliseconds is the unit that contains it.
 *
 * Test only: never part of the extension.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "history.h"
#include "rules13.h"

#define NS			4			/* servers: 0 1 2 the cluster, 3 the copy */
#define MAXR		64			/* WAL records */
#define MAXT		32			/* timelines */
#define NF			4			/* node fields 1 .. 4 */
#define MAXTT		64			/* ID times */
#define NO			255
#define MIN_U		1			/* SNOWFLAKE_MIN_LEAD_MS, in units */
#define WAIT_U		1			/* snowflake.max_wait_ms */
#define SB			12			/* the layout's sequence bits */

/* roles, pg_control states, record kinds: as snowflake.pml */
#define R_NONE		0
#define R_PRIM		1
#define R_STBY		2
#define R_DEPO		3
#define R_COPY		4
#define C_RUN		0
#define C_SHUT		1
#define C_REC		2
#define C_SHUTREC	3
#define K_EOR		1
#define K_LEADS		2
#define K_CONFIRM	3
#define K_REQUEST	4
#define M_ISSUED	0
#define M_WAIT		1
#define M_REFUSED	2
#define M_REQUEST	3
#define ID_COPY		16
#define ID_IMG		32
#define ID_X		64
#define ID_RST		128

#define U2MS(u)		((int64) (u) * 1000)
#define U2END(u)	((int64) (u) * 1000 + 999)
#define MS2U(ms)	((int) ((ms) / 1000))

/* exit statuses */
#define EXIT_CLEAN		0
#define EXIT_VIOLATION	1
#define EXIT_USAGE		2
#define EXIT_DISAGREE	3
#define EXIT_IMPOSSIBLE 4

/* A server (or an image of one): the model's Srv, the rules' state in ms. */
typedef struct Srv
{
	int			role,
				up,
				skew,
				drift,
				nid,
				head,
				ckpt,
				ctl;
	int			last,
				bound,
				fpend,
				field,
				rz,
				rzrec,
				rql,
				wa,
				wb;
	int			fres,
				ffield,
				ftli,
				fplace;
	/* 1.3: in memory (R13Gen's lead, bound; the harness keeps last, fres) */
	R13Gen		g;
	int			rq;
	R13Lead		fl;				/* the state file's lead */
	uint32		fflags;			/* the state file's request flags */
	/* new rules: the state file's SfHistory */
	SfHistory	h;
	int64		wa_ms,
				wb_ms;			/* the leads this life logged */
	/* ghost */
	int			gq,
				gall,
				cpos,
				gset;
	/* an image only */
	int			label,
				irec;
} Srv;

typedef struct Rec
{
	int			prev,
				tli,
				lsn,
				kind;
	int64		a,
				b;				/* leads: ms; confirm: request id, node base */
	int			gin,
				gset,
				gq,
				who;
} Rec;

/* configuration: the model's macros */
static int	span = 1;
static int	confirm_restore = 1;
static bool rules13 = false;
static bool cross = false;
static bool quiet = false;
static int	check = 7;			/* the properties checked: 1 P1, 2 P2, 4 P3 */
static int	standbys = 2;		/* standbys of the primary at the start */

static const SnowflakeLayout layout = {0, 41, 10, SB};

/* the history */
static Srv	srv[NS];
static Srv	img;
static bool ihave;
static int	now = 1;
static int	tmint;
static int	P;
static Rec	rec[MAXR];
static int	nrec = 1;
static int	tlpar[MAXT];
static int	tlend[MAXT];
static int	ntli = 1;
static uint8 id[NF + 1][MAXTT];
static int	nreq;
static int	ngq;

/* the facts of the start under way */
static bool f_ss,
			f_rs,
			f_bl,
			f_cr,
			f_mv;

/* results of the current operation, and the first violation */
static char out[256][160];
static int	nout;
static char violation[200];
static int	event_no;

static void
rs(const char *fmt,...)
pg_attribute_printf(1, 2);

/* Record one result line of the current operation ("RS ..."). */
static void
rs(const char *fmt,...)
{
	va_list		ap;

	if (nout >= (int) lengthof(out))
	{
		fprintf(stderr, "replay: too many results in one operation\n");
		exit(EXIT_USAGE);
	}
	va_start(ap, fmt);
	vsnprintf(out[nout++], sizeof(out[0]), fmt, ap);
	va_end(ap);
}

/* A property broken: keep the first. */
static void
violate(const char *fmt,...)
pg_attribute_printf(1, 2);

static void
violate(const char *fmt,...)
{
	va_list		ap;

	if (violation[0] != '\0')
		return;
	va_start(ap, fmt);
	vsnprintf(violation, sizeof(violation), fmt, ap);
	va_end(ap);
}

/* The trail cannot happen under these rules: say why and stop. */
static void
impossible(const char *what)
{
	printf("the trail cannot happen under the %s rules: event %d (%s)\n",
		   rules13 ? "1.3" : "new", event_no, what);
	exit(EXIT_IMPOSSIBLE);
}

/* ---------------------------------------------------------------- */
/* WAL lines and timelines (snowflake.pml: on_line, next_on_line ...) */
/* ---------------------------------------------------------------- */

static bool
on_line(int a, int b)
{
	for (int t = b;; t = rec[t].prev)
	{
		if (t == a)
			return true;
		if (t == 0)
			return false;
	}
}

static int
next_on_line(int h, int top)
{
	for (int t = top; t != h && t != 0; t = rec[t].prev)
		if (rec[t].prev == h)
			return t;
	return 0;
}

static int
count_after(int h, int top)
{
	int			n = 0;

	if (!on_line(h, top))
		return 0;
	for (int t = top; t != h; t = rec[t].prev)
		n++;
	return n;
}

/* timeline t's ancestry, oldest first, then t; returns its length */
static int
chain_of(int t, uint32 *chain)
{
	uint32		tmp[MAXT];
	int			n = 0;

	for (int x = t; x != 0; x = tlpar[x])
		tmp[n++] = (uint32) x;
	for (int i = 0; i < n; i++)
		chain[i] = tmp[n - 1 - i];
	return n;
}

/* SfTimelineStep ancestry of timeline t */
static int
steps_of(int t, SfTimelineStep *steps)
{
	uint32		chain[MAXT];
	int			n = chain_of(t, chain);

	for (int i = 0; i < n; i++)
	{
		steps[i].tli = chain[i];
		steps[i].end = i + 1 < n ? (uint64) tlend[chain[i + 1]] : SF_POS_END;
	}
	return n;
}

static void
print_rec(int s, int r)
{
	int			a = rec[r].kind == K_LEADS ? MS2U(rec[r].a) : (int) rec[r].a;
	int			b = rec[r].kind == K_LEADS ? MS2U(rec[r].b) : (int) rec[r].b;

	rs("RS rec s=%d r=%d kind=%d tli=%d lsn=%d a=%d b=%d", s, r, rec[r].kind,
	   rec[r].tli, rec[r].lsn, a, b);
}

/* write a record on server s's line, or of a new timeline (tli != 0) */
static int
write_rec(int s, int kind, int64 a, int64 b, int tli)
{
	int			r = nrec++;
	Rec		   *x = &rec[r];

	if (r >= MAXR)
	{
		fprintf(stderr, "replay: too many records\n");
		exit(EXIT_USAGE);
	}
	x->prev = srv[s].head;
	x->tli = tli != 0 ? tli : rec[srv[s].head].tli;
	x->lsn = rec[srv[s].head].lsn + 1;
	x->kind = kind;
	x->a = a;
	x->b = b;
	x->gin = srv[s].drift;
	x->gset = srv[s].gset;
	x->gq = srv[s].gq;
	x->who = s;
	srv[s].head = r;
	print_rec(s, r);
	return r;
}

/* a new timeline for server s, branching after its last record */
static void
new_timeline(int s)
{
	ntli++;
	tlpar[ntli] = rec[srv[s].head].tli;
	tlend[ntli] = rec[srv[s].head].lsn;
	write_rec(s, K_EOR, 0, 0, ntli);
	rec[srv[s].head].gin = rec[srv[s].head].gset = rec[srv[s].head].gq = 0;
	rec[srv[s].head].who = 0;
}

/* the node field server s's IDs carry on timeline t */
static int
node_field(int s, int t)
{
	uint32		chain[MAXT];
	int			n = chain_of(t, chain);

	if (rules13)
		return r13_node_field(srv[s].nid, span, chain, n);
	if (span == 1 || t <= 1)
		return srv[s].nid;
	return srv[s].nid + sf_rule_node_offset(chain, n, span);
}

#define MINTER(s)	(srv[s].up && ((srv[s].role == R_PRIM && P == (s)) || \
						   srv[s].role == R_COPY))
#define CLOCK(s)	(now - srv[s].skew)
#define REFUSED_REQ(s) (rules13 ? srv[s].rq != R13_REQ_NONE : \
						srv[s].h.request_kind != SF_REQUEST_NONE)

/* ---------------------------------------------------------------- */
/* The 1.3 rules in the harness (snowflake.pml -DRULES13)            */
/* ---------------------------------------------------------------- */

/* the generator's last ID and reservation, from the harness's units */
static void
r13_sync_in(Srv *x)
{
	x->g.last = ((U2MS(x->last + 1)) << SB) - 1;
	x->g.reserved_ms = U2END(x->fres);
}

static void
r13_sync_out(Srv *x)
{
	x->last = MS2U(x->g.last >> SB);
	x->fres = MS2U(x->g.reserved_ms);
}

/* shared.c snowflake_state_image: the state file written from memory */
static void
old_write_file(int s)
{
	srv[s].fplace = s + 1;
	srv[s].fl = srv[s].g.lead;
	srv[s].fflags = srv[s].rq == R13_REQ_NONE ? 0 :
		R13_STATE_UNCONFIRMED |
		(srv[s].rq == R13_REQ_CONTINUED ? R13_STATE_CONTINUED : 0);
}

/* snowflake_extend_reservation, with the lineage and the WAL record */
static void
old_extend(int s, int nowv, int needed)
{
	Srv		   *x = &srv[s];
	R13Write	w;

	if (x->fpend && x->gset == 0)
		x->gset = nowv;
	x->g.floor_pending = x->fpend;
	x->g.lineage_checked = x->field != 0;
	r13_sync_in(x);
	r13_extend_reservation(&x->g, &layout, U2END(needed), U2MS(nowv),
						   U2MS(x->drift), 0, &w);
	r13_sync_out(x);
	if (w.write)
	{
		if (x->field == 0)
		{
			x->field = node_field(s, rec[x->head].tli);
			x->ffield = x->field;
			x->ftli = rec[x->head].tli;
		}
		old_write_file(s);
		if (w.log)
			write_rec(s, K_LEADS, x->g.lead.max_lead_ms,
					  x->g.lead.lead_lowered_ms, 0);
		if (x->fpend)
			rs("RS floor s=%d F=%d fld=%d", s, MS2U(w.floor_ms), x->field);
		x->fpend = 0;
	}
	x->bound = MS2U(x->g.lead_bound_ms);
	rs("RS ext s=%d lead=%d ml=%d lw=%d write=%d bound=%d", s, MS2U(w.lead),
	   MS2U(x->g.lead.max_lead_ms), MS2U(x->g.lead.lead_lowered_ms),
	   w.write, x->bound);
}

/* ---------------------------------------------------------------- */
/* The new rules in the harness                                      */
/* ---------------------------------------------------------------- */

/* ACK: a raise waiting for the standbys, relied on once they have it */
static void
ack(int s)
{
	uint64		flushed[3];
	int			who[3];
	int			n = 0;
	int			lag;

	if (srv[s].rz == 0)
		return;
	for (int t = 0; t < 3; t++)
		if (t != s && srv[t].role == R_STBY && s == P &&
			on_line(srv[t].head, srv[s].head))
		{
			flushed[n] = (uint64) rec[srv[t].head].lsn;
			who[n++] = t;
		}
	lag = sf_rule_raise_lagging((uint64) rec[srv[s].rzrec].lsn, flushed, n);
	rs("RS ack s=%d lag=%d", s, lag < 0 ? NO : who[lag]);
	if (lag < 0)
	{
		srv[s].bound = srv[s].rz;
		srv[s].rz = 0;
	}
}

/* the first write of a life: the floor (START) and the lineage */
static void
new_first_write(int s, int nowv)
{
	Srv		   *x = &srv[s];
	int64		floor_ms = sf_rule_floor(&x->h.leads, U2MS(nowv),
										 U2MS(x->drift));
	int			fu = MS2U(floor_ms);

	if (x->last < fu - 1)
		x->last = fu - 1;
	if (x->fres < fu)
		x->fres = fu;
	x->field = node_field(s, rec[x->head].tli);
	x->ffield = x->field;
	x->ftli = rec[x->head].tli;
	x->h.node_base = x->nid;
	x->h.node_span = span;
	x->fplace = s + 1;
	x->fpend = 0;
	if (x->gset == 0)
		x->gset = nowv;
	rs("RS floor s=%d F=%d fld=%d", s, fu, x->field);
}

/* a reservation write of server s (LEAD), after the floor if owed */
static void
write_new(int s, int nowv)
{
	Srv		   *x = &srv[s];
	SfLeadStep	step;

	if (x->fpend)
		new_first_write(s, nowv);
	if (x->drift < x->bound)
		x->bound = x->drift;
	if (x->rz > x->drift)
		x->rz = 0;
	step = sf_rule_lead(&x->h.leads, U2MS(x->bound), U2MS(x->drift),
						U2END(x->last));
	x->bound = MS2U(step.bound_ms);
	if (step.raise_ms >= 0)
		x->rz = MS2U(step.raise_ms);
	if (step.log && (x->h.leads.lead_ms != x->wa_ms ||
					 x->h.leads.horizon_unix_ms != x->wb_ms))
	{
		int			r = write_rec(s, K_LEADS, x->h.leads.lead_ms,
								  x->h.leads.horizon_unix_ms, 0);

		x->h.pos.tli = (uint32) rec[r].tli;
		x->h.pos.lsn = (uint64) rec[r].lsn;
		x->wa_ms = x->h.leads.lead_ms;
		x->wb_ms = x->h.leads.horizon_unix_ms;
		if (step.raise_ms >= 0)
			x->rzrec = r;
	}
	rs("RS lead s=%d bound=%d raise=%d log=%d lead=%d hor=%d", s,
	   MS2U(step.bound_ms), step.raise_ms >= 0 ? MS2U(step.raise_ms) : 0,
	   step.log, MS2U(x->h.leads.lead_ms),
	   MS2U(x->h.leads.horizon_unix_ms));
	ack(s);
}

/* REPLAY: server s replays record r */
static void
replay_rec(int s, int r)
{
	Srv		   *x = &srv[s];

	if (rules13)
	{
		if (rec[r].kind != K_LEADS)
			return;
		if (r13_replay_lead(&x->g.lead, rec[r].a, rec[r].b))
			old_write_file(s);
		rs("RS replay s=%d r=%d ml=%d lw=%d", s, r,
		   MS2U(x->g.lead.max_lead_ms), MS2U(x->g.lead.lead_lowered_ms));
		return;
	}
	if (rec[r].kind == K_LEADS || rec[r].kind == K_CONFIRM ||
		rec[r].kind == K_REQUEST)
	{
		SfTimelineStep seen_steps[MAXT];
		SfTimelineStep rec_steps[MAXT];
		int			nseen = x->h.pos.tli == 0 ? 0 :
			steps_of((int) x->h.pos.tli, seen_steps);
		int			nr = steps_of(rec[r].tli, rec_steps);
		SfPos		pos = {(uint32) rec[r].tli, (uint64) rec[r].lsn};
		SfRecord	rc;
		SfOrder		ord;
		uint64		had = x->h.request_id;

		memset(&rc, 0, sizeof(rc));
		rc.kind = rec[r].kind == K_LEADS ? SF_RECORD_LEADS :
			rec[r].kind == K_REQUEST ? SF_RECORD_REQUEST : SF_RECORD_CONFIRM;
		rc.leads.lead_ms = rec[r].a;
		rc.leads.horizon_unix_ms = rec[r].b;
		rc.request_id = (uint64) rec[r].a;
		rc.request_kind = (SfRequestKind) rec[r].b;
		rc.node_base = (int32) rec[r].b;
		rc.node_span = span;
		ord = sf_rule_order(x->h.pos, seen_steps, nseen, pos, rec_steps, nr);
		(void) sf_rule_replay(&x->h, &rc, pos, ord);
		/* ghost: a request taken from WAL is one this server must answer */
		if (rec[r].kind == K_REQUEST && had == 0 && x->h.request_id != 0 &&
			x->gq == 0)
			x->gq = rec[r].gq;
		if (ord != SF_ORDER_SEEN)
			x->fplace = s + 1;
		rs("RS replay s=%d r=%d ord=%d lead=%d hor=%d rq=%d", s, r, (int) ord,
		   MS2U(x->h.leads.lead_ms), MS2U(x->h.leads.horizon_unix_ms),
		   (int) x->h.request_id);
	}
}

/* crash recovery: replay the records after s's checkpoint */
static void
recover(int s)
{
	int			list[MAXR];
	int			n = 0;

	if (!on_line(srv[s].ckpt, srv[s].head))
	{
		fprintf(stderr, "replay: checkpoint not on the line\n");
		exit(EXIT_DISAGREE);
	}
	for (int t = srv[s].head; t != srv[s].ckpt; t = rec[t].prev)
		list[n++] = t;
	while (n > 0)
		replay_rec(s, list[--n]);
}

/*
 * START (and ASK): a load of server s's state, with the facts f_*, then
 * recovery of the WAL after its checkpoint.
 */
static void
load(int s)
{
	Srv		   *x = &srv[s];
	bool		nc;
	int			ask;

	x->fpend = 1;
	x->field = 0;
	x->wa = x->wb = NO;
	x->wa_ms = x->wb_ms = -1;
	f_cr = f_cr && !f_ss;
	nc = node_field(s, x->ftli) != x->ffield;
	if (!rules13)
	{
		SnowflakeStateFile f;
		SfResume	r;
		SfStartFacts facts;

		memset(&f, 0, sizeof(f));
		f.last = -1;
		f.reserved_ms = U2END(x->fres);
		f.node_id = x->ffield;
		f.sequence_bits = SB;
		sf_rule_resume(&f, &layout, x->ffield, &r);
		x->last = MS2U(r.last >> SB);
		x->bound = MS2U(sf_rule_start_bound(U2MS(x->drift)));
		x->rz = x->rzrec = 0;
		x->rql = 0;
		memset(&facts, 0, sizeof(facts));
		facts.first_look = true;
		facts.standby_signal = f_ss;
		facts.recovery_signal = f_rs;
		facts.backup_label = f_bl;
		facts.control_in_recovery = f_cr;
		facts.confirm_restore = confirm_restore;
		facts.moved = f_mv;
		facts.node_changed = nc;
		facts.in_span = nc && sf_rule_node_in_span(&x->h, x->nid, span);
		ask = (int) sf_rule_start_request(&facts, &x->h, (uint64) nreq + 1);
		if (x->h.request_id == (uint64) nreq + 1)
			nreq++;
		rs("RS ask s=%d ask=%d rq=%d k=%d", s, ask, (int) x->h.request_id,
		   (int) x->h.request_kind);
	}
	else
	{
		SnowflakeStateFile f;
		R13Facts	facts;
		bool		is_new;

		x->g.lead = x->fl;
		x->g.lead_bound_ms = x->fl.max_lead_ms;
		x->g.wal_lead_ms = x->g.wal_lowered_ms = -1;
		x->g.floor_ms = -1;
		memset(&f, 0, sizeof(f));
		f.last = -1;
		f.reserved_ms = U2END(x->fres);
		f.node_id = x->ffield;
		r13_resume(&x->g, &f, &layout, x->ffield);
		x->last = MS2U(x->g.last >> SB);
		memset(&facts, 0, sizeof(facts));
		facts.first_look = true;
		facts.standby_signal = f_ss;
		facts.recovery_signal = f_rs;
		facts.backup_label = f_bl;
		facts.control_in_recovery = f_cr;
		facts.confirm_restore = confirm_restore;
		facts.moved = f_mv;
		facts.node_id_set = true;
		facts.file_node_field = node_field(s, x->ftli);
		ask = r13_start_request(&facts, &x->fflags, x->ffield, &is_new);
		x->rq = ask;
		x->bound = MS2U(x->g.lead_bound_ms);
		rs("RS ask s=%d ask=%d", s, ask);
	}
	if (!(f_ss && ask != 0))
		x->fplace = s + 1;
	recover(s);
}

/*
 * The end of recovery of a server that mints: the request its history has
 * pending goes into WAL once a life (snowflake.pml log_request).
 */
static void
log_request(int s)
{
	Srv		   *x = &srv[s];
	int			r;

	if (rules13 || x->h.request_id == 0 || x->rql)
		return;
	r = write_rec(s, K_REQUEST, (int64) x->h.request_id,
				  (int64) x->h.request_kind, 0);
	x->h.pos.tli = (uint32) rec[r].tli;
	x->h.pos.lsn = (uint64) rec[r].lsn;
	x->fplace = s + 1;
	x->rql = 1;
}

/* the lead in force on s's line (the ghost of P3) */
static int
lead_in_force(int s)
{
	int			lin = 0;
	bool		first = true;
	int			nset = 0;

	for (int r = srv[s].head; r != 0; r = rec[r].prev)
	{
		if (rec[r].kind != K_LEADS)
			continue;
		if (first)
		{
			lin = rec[r].gin;
			first = false;
		}
		else if (CLOCK(s) < nset + rec[r].gin && rec[r].gin > lin)
			lin = rec[r].gin;
		nset = rec[r].gset;
	}
	return Max(Max(lin, srv[s].drift), MIN_U);
}

/* whether the ID at (f, t) is on s's history */
static bool
in_history(int s, int f, int t)
{
	uint8		c = id[f][t];

	if (c == 0)
		return false;
	if (!(c & ID_COPY) && (c & ID_RST) && srv[s].gall)
		return true;
	return on_line((c & 15) - 1, srv[s].head) &&
		!(srv[s].cpos != 0 && (c & ID_X));
}

/* the largest ID on s's history, and whether all lie behind its clock */
static void
history_max(int s, int *hmt, int *hmf, bool *behind)
{
	*hmt = *hmf = 0;
	*behind = true;
	for (int f = 1; f <= NF; f++)
		for (int t = 0; t < MAXTT; t++)
			if (in_history(s, f, t))
			{
				if (t > *hmt || (t == *hmt && f > *hmf))
				{
					*hmt = t;
					*hmf = f;
				}
				if (t > CLOCK(s))
					*behind = false;
			}
}

/* P3 for a server refused until its node id is confirmed */
static void
check_request_refusal(int s)
{
	bool		answered = false;

	for (int r = 1; r < nrec; r++)
		if (rec[r].kind == K_CONFIRM && rec[r].gq == srv[s].gq &&
			on_line(r, srv[s].head))
			answered = true;
	if ((check & 4) && (srv[s].gq == 0 || answered))
		violate("P3 s=%d refused for a request it need not answer (gq=%d answered=%d)",
				s, srv[s].gq, answered);
}

/* issue the IDs t0 .. t1 of server s's batch */
static void
issue(int s, int t0, int t1, int hmt, int hmf)
{
	Srv		   *x = &srv[s];

	if ((check & 2) && (t0 < hmt || (t0 == hmt && x->field <= hmf)))
		violate("P2 s=%d issues (t=%d f=%d) below (t=%d f=%d) of its history",
				s, t0, x->field, hmt, hmf);
	for (int t = t0; t <= t1; t++)
	{
		if ((check & 1) && id[x->field][t] != 0)
			violate("P1 s=%d issues (t=%d f=%d) again", s, t, x->field);
		id[x->field][t] = (uint8) (x->head + 1 +
								   (s == 3 ? ID_COPY : 0) +
								   (s != 3 && srv[3].cpos == x->head + 1 ?
									ID_X : 0));
	}
	x->last = t1;
	if (x->fres < t1)
		x->fres = t1;
	tmint = now;
}

/* MINT: server s asks for a batch reaching as far ahead as it may */
static void
op_mint(int s)
{
	Srv		   *x = &srv[s];
	int			hmt,
				hmf,
				lin,
				lim,
				t0,
				t1;
	bool		behind;

	if (!MINTER(s))
		impossible("MINT: the server does not mint");
	history_max(s, &hmt, &hmf, &behind);
	lin = lead_in_force(s);
	if (REFUSED_REQ(s))
	{
		rs("RS mint s=%d out=%d", s, M_REQUEST);
		check_request_refusal(s);
		return;
	}
	if (rules13)
		old_extend(s, CLOCK(s), CLOCK(s) + x->drift);
	else
		write_new(s, CLOCK(s));
	lim = rules13 ? MS2U(r13_issue_limit(&x->g, U2MS(x->drift))) :
		Min(x->drift, x->bound);
	t0 = Max(CLOCK(s), x->last + 1);
	t1 = CLOCK(s) + lim;
	if (t0 <= t1)
	{
		rs("RS mint s=%d out=%d t0=%d t1=%d lim=%d fld=%d", s, M_ISSUED, t0,
		   t1, lim, x->field);
		issue(s, t0, t1, hmt, hmf);
	}
	else if (t0 > CLOCK(s) + x->drift + WAIT_U)
	{
		rs("RS mint s=%d out=%d t0=%d t1=%d lim=%d fld=%d", s, M_REFUSED, t0,
		   t1, lim, x->field);
		if ((check & 4) && behind && !x->skew && t0 > CLOCK(s) + lin + 1)
			violate("P3 s=%d refused: next ID %d units ahead, lead in force %d",
					s, t0 - CLOCK(s), lin);
	}
	else
		rs("RS mint s=%d out=%d t0=%d t1=%d lim=%d fld=%d", s, M_WAIT, t0, t1,
		   lim, x->field);
}

/* LEAD: snowflake.max_drift_ms of the primary set to d, then its write */
static void
op_lead(int s, int d)
{
	if (!MINTER(s) || s == 3 || srv[s].drift == d ||
		(d < srv[s].drift && srv[s].fpend))
		impossible("LEAD: not a primary that may change its setting so");
	srv[s].drift = d;
	srv[s].gset = now;
	/* a standby the primary cannot see takes the raise first (the docs) */
	for (int t = 0; t < 3; t++)
		if (srv[t].role == R_STBY && srv[t].drift < d &&
			!on_line(srv[t].head, srv[s].head))
		{
			srv[t].drift = d;
			rs("RS cfg s=%d d=%d", t, d);
		}
	if (REFUSED_REQ(s))
		return;
	if (rules13)
		old_extend(s, CLOCK(s), srv[s].last);
	else
		write_new(s, CLOCK(s));
}

/* DELIVER: standby s receives the next record of the primary's line */
static void
op_deliver(int s, int r)
{
	int			next;

	if (!srv[s].up || srv[s].role != R_STBY)
		impossible("DELIVER: not a running standby");
	next = next_on_line(srv[s].head, srv[P].head);
	if (next == 0)
	{
		if (!cross)
			impossible("DELIVER: nothing to receive");
		return;
	}
	if (!cross && next != r)
	{
		printf("DISAGREE at event %d: the model delivers record %d, the harness %d\n",
			   event_no, r, next);
		exit(EXIT_DISAGREE);
	}
	srv[s].head = next;
	replay_rec(s, next);
}

static void
op_crash(int s)
{
	if (!srv[s].up)
		impossible("CRASH: the server is down");
	srv[s].up = 0;
	srv[s].ctl = srv[s].role == R_STBY ? C_REC : C_RUN;
}

static void
op_stop(int s)
{
	if (!srv[s].up || srv[s].role != R_PRIM || P != s)
		impossible("STOP: not the running primary");
	srv[s].up = 0;
	srv[s].ctl = C_SHUT;
	srv[s].ckpt = srv[s].head;
	if (!srv[s].fpend)
	{
		srv[s].fres = srv[s].last;
		if (rules13)
			old_write_file(s);
	}
}

/* the facts of an ordinary start (no signal file but a standby's) */
static void
facts_restart(int s)
{
	f_ss = srv[s].role == R_STBY;
	f_rs = false;
	f_bl = false;
	f_cr = srv[s].ctl == C_REC || srv[s].ctl == C_SHUTREC;
	f_mv = srv[s].fplace != s + 1;
}

static void
op_start(int s)
{
	if (srv[s].up ||
		!((srv[s].role == R_PRIM && P == s && now > tmint) ||
		  srv[s].role == R_STBY))
		impossible("START: the server cannot start so");
	facts_restart(s);
	srv[s].up = 1;
	load(s);
	if (srv[s].role == R_PRIM)
		log_request(s);
}

static void
op_ckpt(int s)
{
	if (!srv[s].up || s != P)
		impossible("CKPT: not the running primary");
	srv[s].ckpt = srv[s].head;
}

static void
op_promote(int s)
{
	if (!srv[s].up || srv[s].role != R_STBY || srv[P].up || srv[s].skew ||
		now <= tmint)
		impossible("PROMOTE: not a running standby of a lost primary");
	srv[P].role = R_DEPO;
	new_timeline(s);
	srv[s].role = R_PRIM;
	srv[s].gset = 0;
	P = s;
	log_request(s);
}

static void
op_rejoin(int s)
{
	if (srv[s].up || srv[s].role != R_DEPO || !on_line(srv[s].head, srv[P].head))
		impossible("REJOIN: not an old primary on the new one's line");
	srv[s].role = R_STBY;
	facts_restart(s);
	srv[s].up = 1;
	load(s);
}

/* a data directory's durable state (snowflake.pml copy_srv) */
static void
copy_srv(Srv *dst, const Srv *src)
{
	dst->drift = src->drift;
	dst->nid = src->nid;
	dst->head = src->head;
	dst->ckpt = src->ckpt;
	dst->ctl = src->ctl;
	dst->fres = src->fres;
	dst->ffield = src->ffield;
	dst->ftli = src->ftli;
	dst->fplace = src->fplace;
	dst->fl = src->fl;
	dst->fflags = src->fflags;
	dst->h = src->h;
	dst->gq = src->gq;
	dst->gall = src->gall;
	dst->cpos = src->cpos;
	dst->gset = src->gset;
}

static void
clear_mem(int s)
{
	srv[s].skew = 0;
	srv[s].last = 0;
	srv[s].bound = 0;
	srv[s].rq = 0;
	srv[s].rz = srv[s].rzrec = srv[s].rql = 0;
	memset(&srv[s].g, 0, sizeof(srv[s].g));
}

static void
op_clone(int s)
{
	if (srv[s].up || s == P || !srv[P].up)
		impossible("CLONE: no running primary, or the server runs");
	copy_srv(&srv[s], &srv[P]);
	clear_mem(s);
	srv[s].role = R_STBY;
	srv[s].ckpt = srv[s].head;
	srv[s].cpos = 0;
	f_ss = true;
	f_rs = false;
	f_bl = true;
	f_cr = false;
	f_mv = true;
	srv[s].up = 1;
	load(s);
}

static void
op_img(int s, int kind)
{
	if (ihave || !(srv[s].role == R_PRIM || srv[s].role == R_STBY) ||
		(kind == 1 && !srv[s].up))
		impossible("IMG: no such image");
	copy_srv(&img, &srv[s]);
	img.label = kind;
	img.irec = nrec;
	for (int f = 1; f <= NF; f++)
		for (int t = 0; t < MAXTT; t++)
			if (id[f][t] != 0)
				id[f][t] |= ID_IMG;
	img.ctl = srv[s].up ? (srv[s].role == R_STBY ? C_REC : C_RUN) : srv[s].ctl;
	if (kind == 1)
		img.ckpt = srv[s].head;
	ihave = true;
}

/* the ghost's request at a start from an image (snowflake.pml ghost_ask) */
static void
ghost_ask(int s, bool restore)
{
	int			fld = node_field(s, srv[s].ftli);
	bool		in_span = srv[s].nid != 1 && srv[s].nid <= span;

	if (in_span || (fld == srv[s].ffield &&
					(f_bl || f_cr || (confirm_restore && (restore || f_mv)))))
		srv[s].gq = ++ngq;
	else if (fld != srv[s].ffield)
		srv[s].gq = 0;
}

/* RESTORE: the image restored in place of the lost primary (see the model) */
static void
op_restore(int k, int mode)
{
	int			arch = srv[P].head;
	int			tgt;
	int			avail = ihave ? count_after(img.head, srv[P].head) : 0;

	if (!ihave || srv[P].up || now <= tmint || (mode == 1 && avail < k))
	{
		if (!cross || !ihave || srv[P].up || now <= tmint)
			impossible("RESTORE: no image, or the primary runs");
		k = avail;
	}
	for (int t = 0; t < 3; t++)
		if (t != P)
		{
			srv[t].role = R_NONE;
			srv[t].up = 0;
		}
	copy_srv(&srv[P], &img);
	clear_mem(P);
	srv[P].role = R_PRIM;
	srv[P].cpos = 0;
	srv[P].gall = 1;
	srv[P].gset = 0;
	for (int f = 1; f <= NF; f++)
		for (int t = 0; t < MAXTT; t++)
			if (id[f][t] != 0 && !(id[f][t] & ID_COPY))
				id[f][t] |= ID_RST;
	tgt = srv[P].head;
	for (int i = 0; mode == 1 && i < k; i++)
		tgt = next_on_line(tgt, arch);
	/* its setting: the largest after the image and not replayed */
	for (int r = img.irec; r < nrec; r++)
		if (rec[r].kind == K_LEADS && !on_line(r, tgt) && rec[r].who != 3 &&
			rec[r].gin > srv[P].drift)
			srv[P].drift = rec[r].gin;
	rs("RS cfg s=%d d=%d", P, srv[P].drift);
	f_ss = false;
	f_rs = mode == 1;
	f_bl = img.label;
	f_cr = img.ctl == C_REC || img.ctl == C_SHUTREC;
	f_mv = srv[P].fplace != P + 1;
	ghost_ask(P, mode == 1);
	srv[P].up = 1;
	load(P);
	while (srv[P].head != tgt)
	{
		int			r = next_on_line(srv[P].head, tgt);

		srv[P].head = r;
		replay_rec(P, r);
	}
	if (mode == 1)
		new_timeline(P);
	log_request(P);
}

/* COPY: the image started beside the cluster as server 3, node id nid */
static void
op_copy(int nid)
{
	int			r;

	if (!ihave || srv[3].role != R_NONE || now <= tmint)
		impossible("COPY: no image, or a copy runs already");
	copy_srv(&srv[3], &img);
	clear_mem(3);
	srv[3].role = R_COPY;
	srv[3].nid = nid;
	srv[3].cpos = img.head + 1;
	srv[3].gset = 0;
	for (int f = 1; f <= NF; f++)
		for (int t = 0; t < MAXTT; t++)
			if ((id[f][t] & 15) == img.head + 1 && !(id[f][t] & ID_IMG))
				id[f][t] |= ID_X;
	f_ss = false;
	f_rs = false;
	f_bl = img.label;
	f_cr = img.ctl == C_REC || img.ctl == C_SHUTREC;
	f_mv = true;
	ghost_ask(3, false);
	srv[3].up = 1;
	load(3);
	r = write_rec(3, K_EOR, 0, 0, 0);
	rec[r].gin = rec[r].gset = rec[r].gq = rec[r].who = 0;
	log_request(3);
}

/* CONFIRM: a superuser confirms s's node id */
static void
op_confirm(int s)
{
	if (!MINTER(s) || !REFUSED_REQ(s) || (s == 3 && srv[3].gq != 0))
		impossible("CONFIRM: nothing to confirm there");
	if (!rules13)
	{
		int64		req = (int64) srv[s].h.request_id;
		int			r;

		(void) sf_rule_confirm(&srv[s].h, srv[s].nid, span);
		srv[s].fplace = s + 1;
		r = write_rec(s, K_CONFIRM, req, srv[s].nid, 0);
		srv[s].h.pos.tli = (uint32) rec[r].tli;
		srv[s].h.pos.lsn = (uint64) rec[r].lsn;
	}
	else
	{
		/* reservation.c snowflake_confirm_restore_state */
		srv[s].rq = R13_REQ_NONE;
		old_write_file(s);
		/* not in 1.3's WAL: a marker the ghost reads, the rules do not */
		write_rec(s, K_CONFIRM, 0, 0, 0);
	}
	rs("RS confirm s=%d", s);
}

static void
op_step(int s)
{
	if (!MINTER(s) || srv[s].fpend || srv[s].skew || now <= 1)
		impossible("STEP: not a primary past its floor");
	srv[s].skew = 1;
}

static void
op_tick(int to)
{
	now++;
	if (now != to)
	{
		printf("DISAGREE at event %d: the clock reads %d, the model says %d\n",
			   event_no, now, to);
		exit(EXIT_DISAGREE);
	}
	for (int s = 0; s < NS; s++)
		srv[s].skew = 0;
}

/* the start of the model's history (snowflake.pml init_history) */
static void
init_history(void)
{
	rec[0].tli = 1;
	for (int s = 0; s < 3; s++)
	{
		Srv		   *x = &srv[s];

		x->up = 1;
		x->drift = 1;
		x->nid = 1;
		x->ffield = 1;
		x->ftli = 1;
		x->fplace = s + 1;
		x->fl.max_lead_ms = U2MS(1);
		x->g.lead = x->fl;
		x->g.lead_bound_ms = U2MS(1);
		x->g.wal_lead_ms = s == 0 ? U2MS(1) : -1;
		x->g.wal_lowered_ms = s == 0 ? 0 : -1;
		x->g.floor_ms = -1;
		x->h.leads.lead_ms = SNOWFLAKE_MIN_LEAD_MS;
		x->h.node_base = 1;
		x->h.node_span = span;
		x->bound = 1;
		x->gset = 1;
		x->role = s == 0 ? R_PRIM : R_STBY;
		x->ctl = s == 0 ? C_RUN : C_REC;
		x->fpend = s != 0;
		x->wa_ms = s == 0 ? SNOWFLAKE_MIN_LEAD_MS : -1;
		x->wb_ms = s == 0 ? 0 : -1;
	}
	srv[0].field = 1;
	for (int s = standbys + 1; s < 3; s++)
	{
		srv[s].role = R_NONE;
		srv[s].up = 0;
	}
	P = 0;
}

/* carry out one EV line of the trail */
static void
do_event(const char *line)
{
	int			s,
				a,
				b,
				c;

	if (sscanf(line, "EV TICK now=%d", &a) == 1)
		op_tick(a);
	else if (sscanf(line, "EV DELIVER s=%d r=%d", &s, &a) == 2)
		op_deliver(s, a);
	else if (sscanf(line, "EV MINT s=%d now=%d", &s, &a) == 2)
		op_mint(s);
	else if (sscanf(line, "EV LEAD s=%d d=%d now=%d", &s, &a, &b) == 3)
		op_lead(s, a);
	else if (sscanf(line, "EV CRASH s=%d", &s) == 1)
		op_crash(s);
	else if (sscanf(line, "EV STOP s=%d", &s) == 1)
		op_stop(s);
	else if (sscanf(line, "EV START s=%d now=%d", &s, &a) == 2)
		op_start(s);
	else if (sscanf(line, "EV CKPT s=%d", &s) == 1)
		op_ckpt(s);
	else if (sscanf(line, "EV PROMOTE s=%d now=%d", &s, &a) == 2)
		op_promote(s);
	else if (sscanf(line, "EV REJOIN s=%d now=%d", &s, &a) == 2)
		op_rejoin(s);
	else if (sscanf(line, "EV CLONE s=%d now=%d", &s, &a) == 2)
		op_clone(s);
	else if (sscanf(line, "EV IMG s=%d kind=%d", &s, &a) == 2)
		op_img(s, a);
	else if (sscanf(line, "EV RESTORE k=%d mode=%d now=%d", &a, &b, &c) == 3)
		op_restore(a, b);
	else if (sscanf(line, "EV COPY nid=%d now=%d", &a, &b) == 2)
		op_copy(a);
	else if (sscanf(line, "EV CONFIRM s=%d", &s) == 1)
		op_confirm(s);
	else if (sscanf(line, "EV STEP s=%d", &s) == 1)
		op_step(s);
	else
	{
		fprintf(stderr, "replay: unknown event: %s\n", line);
		exit(EXIT_USAGE);
	}
}

/* the model's results of an operation must be the harness's, one by one */
static void
expect(const char *line, int *next)
{
	if (cross)
		return;
	if (*next >= nout || strcmp(out[*next], line) != 0)
	{
		printf("DISAGREE at event %d: the model says \"%s\", the C functions \"%s\"\n",
			   event_no, line, *next < nout ? out[*next] : "(nothing)");
		exit(EXIT_DISAGREE);
	}
	(*next)++;
}

static void
end_event(int next)
{
	if (!quiet)
		for (int i = 0; i < nout; i++)
			printf("  %s\n", out[i]);
	if (!cross && next != nout)
	{
		printf("DISAGREE at event %d: the C functions also say \"%s\"\n",
			   event_no, out[next]);
		exit(EXIT_DISAGREE);
	}
}

/* the verdict, against the model's own (pv: its first PV line, or "") */
static int
verdict(const char *pv)
{
	if (!cross && strcmp(pv, violation) != 0)
	{
		printf("DISAGREE at the end: the model finds \"%s\", the C functions \"%s\"\n",
			   pv[0] ? pv : "no violation",
			   violation[0] ? violation : "no violation");
		return EXIT_DISAGREE;
	}
	if (violation[0] != '\0')
	{
		printf("VIOLATION %s\n", violation);
		return EXIT_VIOLATION;
	}
	printf("CLEAN: no property broken, %d events replayed through the %s rules\n",
		   event_no, rules13 ? "1.3" : "new");
	return EXIT_CLEAN;
}

static void
usage(void)
{
	fprintf(stderr, "usage: replay [--rules13] [--cross] [--span N] [--check MASK] [--standbys N] [--no-confirm-restore] [--quiet] FILE\n");
	exit(EXIT_USAGE);
}

int
main(int argc, char **argv)
{
	const char *path = NULL;
	FILE	   *in;
	char		line[512];
	char		pv[200] = "";
	int			next = 0;
	bool		started = false;

	for (int i = 1; i < argc; i++)
	{
		if (strcmp(argv[i], "--rules13") == 0)
			rules13 = true;
		else if (strcmp(argv[i], "--cross") == 0)
			cross = true;
		else if (strcmp(argv[i], "--quiet") == 0)
			quiet = true;
		else if (strcmp(argv[i], "--standbys") == 0 && i + 1 < argc)
			standbys = atoi(argv[++i]);
		else if (strcmp(argv[i], "--no-confirm-restore") == 0)
			confirm_restore = 0;
		else if (strcmp(argv[i], "--span") == 0 && i + 1 < argc)
			span = atoi(argv[++i]);
		else if (strcmp(argv[i], "--check") == 0 && i + 1 < argc)
			check = atoi(argv[++i]);
		else if (argv[i][0] != '-' && path == NULL)
			path = argv[i];
		else
			usage();
	}
	if (path == NULL || span < 1 || span > 2 || standbys < 0 || standbys > 2)
		usage();
	in = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
	if (in == NULL)
	{
		perror(path);
		return EXIT_USAGE;
	}
	init_history();
	while (fgets(line, sizeof(line), in) != NULL)
	{
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, "EV ", 3) == 0)
		{
			if (started)
				end_event(next);
			started = true;
			event_no++;
			nout = next = 0;
			if (!quiet)
				printf("%s\n", line);
			do_event(line);
		}
		else if (strncmp(line, "RS ", 3) == 0)
			expect(line, &next);
		else if (strncmp(line, "PV ", 3) == 0 && pv[0] == '\0')
			strlcpy(pv, line + 3, sizeof(pv));
	}
	if (!started)
	{
		fprintf(stderr, "replay: no event in %s\n", path);
		return EXIT_USAGE;
	}
	end_event(next);
	return verdict(pv);
}
