/*
 * snowflake.pml
 *	  A model of a snowflake key space's history, for Spin: a primary and two
 *	  standbys with replication lag, a copy beside them, base backups and
 *	  volume snapshots taken at any point, restores to any point, state
 *	  files, WAL records of the lead delivered or not, a clock that moves
 *	  (and steps back on one server), raises, lowerings and expiry of the
 *	  lead, crashes, checkpoints, clean stops, promotions, switchovers,
 *	  copies with their own node id, confirmations, node_id_span 1 or 2.
 *
 *	  The rules that decide (where a start's first ID lies, how a change of
 *	  the lead is recorded and relied on, how a replayed record merges, which
 *	  node field a timeline takes, when a start asks for a confirmation) are
 *	  the inlines of the section "The rules", each named after the C
 *	  function it transcribes: src/history.c (the new rules, the default), or
 *	  with -DRULES13 the 1.3 code at commit 92d2e11 (test/model/rules13.c
 *	  transcribes the same functions in C).  Everything else here is the
 *	  harness: what PostgreSQL and the operator do, and the properties.
 *
 *	  Every operation prints one line "EV ..." (its choices) and the rules'
 *	  results "RS ...": `spin -t` of a trail prints them, and
 *	  test/model/replay.c rebuilds the history from the EV lines, calling
 *	  the C functions, and fails if its RS lines differ from these.
 *
 *	  Abstraction (test/model/README.md): one time unit is
 *	  SNOWFLAKE_MIN_LEAD_MS (1 s); snowflake.max_drift_ms is 1, 2 or 3 units,
 *	  snowflake.max_wait_ms 1 unit; an ID is (time unit, node field): a
 *	  server issues at most one per unit, and a mint is a batch reaching as
 *	  far ahead of the clock as the bound allows (a bulk job), which covers
 *	  every smaller call.  The reservation is written before every batch,
 *	  exactly up to it.  WAL holds only what the rules read: snowflake's
 *	  records and the end-of-recovery record of a new timeline (or of a copy's
 *	  first start); an LSN is the number of records from the start of the
 *	  history along a line, so that branches share LSNs as in PostgreSQL.
 *
 *	  Properties (asserts; their PV line says which):
 *	  P1  no ID (node field, time) is issued twice, by any two servers;
 *	  P2  no ID is below an ID issued earlier on the issuer's history: the IDs
 *	      issued by any server while its WAL position was on the issuer's
 *	      line (its own, those of the servers it descends from before it
 *	      forked from them; for a restore every ID of the lost cluster;
 *	      for a copy those issued before its image was taken);
 *	  P3  a server whose history's IDs all lie at or behind its clock is
 *	      never refused because its next ID lies further ahead than the lead
 *	      in force (plus one unit, the reservation's rounding), nor for a
 *	      request to confirm its node id that it need not answer (no start of
 *	      its history needed one) or that was answered on its line.
 *	  "The lead in force" (ghost, computed from the WAL line, not by the
 *	  rules): the largest of SNOWFLAKE_MIN_LEAD_MS, the server's own
 *	  setting, the setting of the writer of the latest lead record on its
 *	  line, and the setting of an earlier lead record until the one after it
 *	  was set plus that setting (a lowered lead stays in force until it has
 *	  elapsed).
 */

/* ------------------------------------------------------------------ */
/* Bounds and configuration                                           */
/* ------------------------------------------------------------------ */

#ifndef MAXOPS
#define MAXOPS	8		/* operations of a history (ticks and deliveries not counted) */
#endif
#ifndef TMAX
#define TMAX	5		/* the clock runs 1 .. TMAX */
#endif
#ifndef SPAN
#define SPAN	1		/* snowflake.node_id_span */
#endif
#ifndef DMAX
#define DMAX	3		/* largest snowflake.max_drift_ms, units */
#endif
#ifndef CONFIRM_RESTORE
#define CONFIRM_RESTORE 1	/* snowflake.confirm_restore on every server */
#endif

#ifndef STANDBYS
#define STANDBYS 2	/* standbys of the primary at the start */
#endif
#ifndef CHECK
#define CHECK	7	/* the properties checked: 1 P1, 2 P2, 4 P3 */
#endif
#define CHECKS(p)	((CHECK & (p)) != 0)

#define MIN		1	/* SNOWFLAKE_MIN_LEAD_MS */
#define WAIT	1	/* snowflake.max_wait_ms */
#define NS		4	/* servers: 0 1 2 the cluster, 3 the copy */
/* WAL records, 0 the start of the history: at most one an operation, 15 in all */
#ifndef NR
#if MAXOPS + 5 > 15
#define NR		15
#else
#define NR		(MAXOPS + 5)
#endif
#endif
#define NTL		(MAXOPS + 2)	/* timelines 1 .. */
#define NF		4	/* node fields 1 .. 4 (cells index them from 0) */
#define TT		(TMAX + DMAX + 1)	/* ID times 0 .. TT - 1 */
#define NO		255	/* none */
#define POSEND	255	/* SF_POS_END */

/* roles */
#define R_NONE	0	/* no server here (or one discarded) */
#define R_PRIM	1	/* the cluster's primary (up or down) */
#define R_STBY	2	/* a standby of the cluster's primary */
#define R_DEPO	3	/* an old primary after a failover */
#define R_COPY	4	/* the copy beside the cluster */

/* pg_control as a stop left it */
#define C_RUN	0	/* in production (running, or crashed) */
#define C_SHUT	1	/* shut down */
#define C_REC	2	/* in archive recovery (a standby, running or crashed) */
#define C_SHUTREC 3	/* shut down in recovery */

/* record kinds */
#define K_EOR	1	/* end of recovery: a new timeline, or a copy's first start */
#define K_LEADS 2	/* snowflake: the history's leads (old: max_lead, lowered) */
#define K_CONFIRM 3	/* snowflake: a confirmation (old: a marker only, ghost) */
#define K_REQUEST 4	/* new: a request to confirm the node id */

/* sf_rule_order */
#define O_SEEN		0
#define O_NEWER		1
#define O_DIVERGED	2

/* SfAsk, SfRequestKind (history.h) */
#define A_NONE		0
#define A_CONT_BACKUP 1
#define A_CONT_STANDBY 2
#define A_RESTORE_ARCHIVE 3
#define A_RESTORE_BACKUP 4
#define A_MOVED		5
#define A_IN_SPAN	6
#define A_PENDING_CONT 7
#define A_PENDING_RESTORE 8
#define A_PENDING_IN_SPAN 9
#define Q_NONE		0
#define Q_RESTORE	1
#define Q_CONT		2
#define Q_IN_SPAN	3

/* outcome of a mint */
#define M_ISSUED	0
#define M_WAIT		1
#define M_REFUSED	2	/* the next ID is further ahead than a call may wait */
#define M_REQUEST	3	/* refused: the node id is to be confirmed */

/* ------------------------------------------------------------------ */
/* State                                                              */
/* ------------------------------------------------------------------ */

typedef Srv {
	byte role;
	byte up;
	byte skew;		/* its clock reads one unit behind */
	byte drift;		/* snowflake.max_drift_ms */
	byte nid;		/* snowflake.node_id */
	byte head;		/* its last WAL record */
	byte ckpt;		/* redo starts after this record */
	byte ctl;		/* pg_control at its last stop */
	/* memory, lost at a crash */
	byte last;		/* the next ID lies past it */
	byte bound;		/* the generator's lead bound (old: lead_bound_ms) */
	byte fpend;		/* the floor is owed */
	byte field;		/* node field of this life's IDs (0: not fixed) */
#ifdef RULES13
	byte rq;		/* old: refused until confirmed (Q_ kind) */
#else
	byte rz;		/* new: a raise waiting for the standbys (0: none) */
	byte rzrec;		/* ... the record they must flush */
	byte rql;		/* new: the request is in WAL (once a life) */
#endif
	byte wa;		/* the leads this life logged last (old: wal_lead_ms, */
	byte wb;		/*   wal_lowered_ms; new: lead, horizon), NO: none */
#ifdef RULES13
	byte ml;		/* old: max_lead_ms */
	byte lw;		/* old: lead_lowered_ms (0: in force) */
#endif
	/* the state file */
	byte fres;		/* no ID of this data directory lies past it */
	byte ffield;	/* the node field and timeline it records */
	byte ftli;
	byte fplace;	/* where it was written (slot + 1) */
#ifdef RULES13
	byte fml;		/* old: max_lead_ms, lead_lowered_ms, request flags */
	byte flw;
	byte fq;
#else
	byte lead;		/* new: SfHistory (leads, pos, request, node base/span) */
	byte hor;
	byte ptli;
	byte plsn;
	byte rqid;
	byte rqk;
	byte nbase;
	byte nspan;
#endif
	/* ghost */
	byte gq;		/* the request it must have answered (0: none) */
	byte gall;		/* a restore's history: every cluster ID issued before it */
	byte cpos;		/* a copy: its image's position + 1 */
	byte gset;		/* when its setting changed, or it first wrote (0: not yet) */
}

/* a base backup or volume snapshot: a data directory's durable state */
typedef Img {
	byte drift;
	byte nid;
	byte head;
	byte ckpt;
	byte ctl;
	byte fres;
	byte ffield;
	byte ftli;
	byte fplace;
#ifdef RULES13
	byte fml;
	byte flw;
	byte fq;
#else
	byte lead;
	byte hor;
	byte ptli;
	byte plsn;
	byte rqid;
	byte rqk;
	byte nbase;
	byte nspan;
#endif
	byte gq;
	byte gall;
	byte cpos;
	byte gset;
	byte label;		/* a base backup (backup_label) */
	byte irec;		/* records written before it */
}

Srv srv[NS];
Img img;
bit ihave;			/* an image is kept */

byte now = 1;		/* the clock */
byte nops;			/* operations so far (also the ghost's op count) */
byte tmint;			/* the clock when the last ID was issued */
byte P;				/* the cluster's primary */
bit bc = 1;			/* standbys 1 and 2 still interchangeable */

/* WAL records, a tree: record 0 starts the history (timeline 1) */
byte nrec = 1;
byte rprev[NR];
byte rtli[NR];
byte rlsn[NR];
byte rkind[NR];
byte ra[NR];		/* leads: max_lead / lead; confirm: request id */
byte rb[NR];		/* leads: lowered / horizon; confirm: node base */
byte rgin[NR];		/* ghost: the writer's setting ... */
byte rgset[NR];		/* ... and when it was set */
byte rgq[NR];		/* ghost: the request a confirmation answers */
byte rwho[NR];		/* ghost: the server that wrote it */

/* timelines: parent, and the LSN where each branched off it */
byte ntli = 1;
byte tlpar[NTL];
byte tlend[NTL];

/*
 * IDs issued, one byte each (0: not issued): the issuer's position (record
 * + 1) in the low four bits, and marks: issued by the copy, before the
 * image kept, outside the copy's history (at its image's position, after
 * it), in a restore's history (issued before it)
 */
byte id[NF * TT];
#define ID_POS(c)	(id[c] & 15)
#define ID_COPY		16
#define ID_IMG		32
#define ID_X		64
#define ID_RST		128
#define ID_HAS(c, m)	((id[c] & (m)) != 0)

byte nreq;			/* new: request ids handed out */
byte nlead;			/* changes of the setting so far (-DLEADS) */

/* derived from the above after every operation (no new states): */
byte nxt[3];		/* the record standby s receives next, 0: none */
bit rjok[3];		/* old primary s can start as a standby of the new one */
byte navail;		/* records the archive has after the image */
byte ngq;			/* ghost request ids */

/* scratch, not part of the state */
hidden byte ol_t, nl_t, cc_x, cc_i, nf_n, nf_o, no_i, no_j, no_o, no_w,
	no_c, no_f, od_i, od_na, od_nb, ln_r, ln_x, ln_n, lf_r, q_n, q_i;
hidden byte no_tk, od_found, lf_first;
hidden byte cc_tmp[NTL];
hidden byte ch[NTL];
hidden byte ch_n;
hidden byte no_offs[NTL];
hidden byte q_list[NR];
hidden byte tA, tB, tC, tD, tE, tF, tG, tH, tX, tY, rr, oo;
hidden byte stb, str, stl;
hidden byte f_first, f_ss, f_rs, f_bl, f_cr, f_mv, f_nc, f_is;
hidden int lmask;
hidden byte hmt, hmf, lin;
hidden byte behind;
hidden byte g_ok;
hidden byte g_r, g_n, rs_arch, rs_tgt, rs_x, rs_i;
byte g_s, g_d;		/* the operation chosen (0 between operations) */

/* ------------------------------------------------------------------ */
/* WAL lines and timelines                                            */
/* ------------------------------------------------------------------ */

/* res: record a is record b or lies before it on b's line */
inline on_line(a, b, res)
{
	ol_t = b;
	res = 0;
	do
	:: ol_t == a -> res = 1; break
	:: ol_t != a && ol_t == 0 -> break
	:: ol_t != a && ol_t != 0 -> ol_t = rprev[ol_t]
	od;
	skip
}

/* res: the record after hh on the line ending at top, 0 if none */
inline next_on_line(hh, top, res)
{
	nl_t = top;
	res = 0;
	do
	:: nl_t == hh || nl_t == 0 -> break
	:: else ->
		if
		:: rprev[nl_t] == hh -> res = nl_t; break
		:: else -> nl_t = rprev[nl_t]
		fi
	od;
	skip
}

/* g_n: how many records follow hh on the line ending at top (0 if hh is not on it) */
inline count_after(hh, top)
{
	g_n = 0;
	on_line(hh, top, g_ok);
	if
	:: g_ok ->
		nl_t = top;
		do
		:: nl_t != hh -> g_n++; nl_t = rprev[nl_t]
		:: else -> break
		od
	:: else
	fi
}

/* the records of the line ending at b, as a bit mask */
inline line_mask(b)
{
	ln_r = b;
	lmask = 1;
	do
	:: ln_r != 0 -> lmask = lmask | (1 << ln_r); ln_r = rprev[ln_r]
	:: else -> break
	od;
	skip
}

/* ch[0 .. ch_n): timeline t's ancestry, oldest first, then t */
inline chain_of(t)
{
	ch_n = 0;
	cc_x = t;
	do
	:: cc_x != 0 -> cc_tmp[ch_n] = cc_x; ch_n++; cc_x = tlpar[cc_x]
	:: else -> break
	od;
	cc_i = 0;
	do
	:: cc_i < ch_n -> ch[cc_i] = cc_tmp[ch_n - 1 - cc_i]; cc_i++
	:: else -> break
	od;
	skip
}

/* the end of step i of the chain ch (SfTimelineStep) */
#define STEP_END(i)	((i) + 1 < ch_n -> tlend[ch[(i) + 1]] : POSEND)

/* write a record on server s's line: rr is its index */
inline write_rec(s, kind, a, b)
{
	assert(nrec < NR);
	rr = nrec;
	nrec++;
	rprev[rr] = srv[s].head;
	rtli[rr] = rtli[srv[s].head];
	rlsn[rr] = rlsn[srv[s].head] + 1;
	rkind[rr] = kind;
	ra[rr] = a;
	rb[rr] = b;
	rgin[rr] = srv[s].drift;
	rgset[rr] = srv[s].gset;
	rgq[rr] = srv[s].gq;
	rwho[rr] = s;
	srv[s].head = rr;
	printf("RS rec s=%d r=%d kind=%d tli=%d lsn=%d a=%d b=%d\n", s, rr,
		   kind, rtli[rr], rlsn[rr], a, b)
}

/* a new timeline for server s, branching after its last record */
inline new_timeline(s)
{
	assert(ntli + 1 < NTL);
	ntli++;
	tlpar[ntli] = rtli[srv[s].head];
	tlend[ntli] = rlsn[srv[s].head];
	assert(nrec < NR);
	rr = nrec;
	nrec++;
	rprev[rr] = srv[s].head;
	rtli[rr] = ntli;
	rlsn[rr] = rlsn[srv[s].head] + 1;
	rkind[rr] = K_EOR;
	srv[s].head = rr;
	printf("RS rec s=%d r=%d kind=%d tli=%d lsn=%d a=0 b=0\n", s, rr, K_EOR,
		   ntli, rlsn[rr])
}

/* ------------------------------------------------------------------ */
/* The rules                                                          */
/* ------------------------------------------------------------------ */

/*
 * sf_rule_node_offset: PROMOTE (history.c; statefile.c
 * snowflake_chain_offset in 1.3, the same code): the offset within a span
 * of the node field of the last timeline of the chain ch.
 */
inline sf_rule_node_offset(span, res)
{
	no_i = 0;
	do
	:: no_i < ch_n ->
		no_w = (ch[no_i] - 1) % span;
		no_f = (no_i + 1 >= span -> no_i + 1 - span : 0);
		no_o = 0;
		do
		:: true ->
			no_c = (no_o == 0 -> no_w : no_o - 1);
			no_tk = 0;
			no_j = no_f;
			do
			:: no_j < no_i && !no_tk -> no_tk = (no_offs[no_j] == no_c); no_j++
			:: else -> break
			od;
			if
			:: !no_tk -> no_offs[no_i] = no_c; break
			:: else -> no_o++
			fi
		od;
		no_i++
	:: else -> break
	od;
	res = no_offs[ch_n - 1]
}

/*
 * The node field server s's IDs carry on timeline t: shared.c
 * snowflake_node_field (1.3), or the node id plus sf_rule_node_offset.
 */
inline node_field(s, t, res)
{
	if
	:: SPAN == 1 || t <= 1 -> res = srv[s].nid
	:: else ->
		chain_of(t);
		sf_rule_node_offset(SPAN, nf_o);
		res = srv[s].nid + nf_o
	fi
}

#ifndef RULES13

/*
 * sf_rule_floor: START.  res: the first unit the first ID of a start may
 * take: max(horizon, clock + lead) + 1 ms in history.c, where the horizon
 * is the end of a unit an ID was issued in (u * 1000 + 999 ms, so the next
 * unit) and clock + lead the start of one (so that unit).
 */
inline sf_rule_floor(s, nowv, res)
{
	tX = srv[s].lead;
	if
	:: srv[s].drift > tX -> tX = srv[s].drift
	:: else
	fi;
	if
	:: MIN > tX -> tX = MIN
	:: else
	fi;
	res = nowv + tX;
#ifndef PLANT_HORIZON
	if
	:: srv[s].hor + 1 > res -> res = srv[s].hor + 1
	:: else
	fi
#else
	/* planted: the floor at the horizon, not past it (history.c before 1.3's fix) */
	if
	:: srv[s].hor > res -> res = srv[s].hor
	:: else
	fi
#endif
}

/* sf_rule_start_bound: START.  The lead before this life raised it. */
#define sf_rule_start_bound(d)	((d) < MIN -> (d) : MIN)

/* sf_rule_resume: START.  Generation resumes strictly above the file. */
inline sf_rule_resume(s)
{
	srv[s].last = srv[s].fres
}

/*
 * sf_rule_lead: LEAD.  A reservation write of server s under its bound,
 * issued: its last.  stb: the bound from now on; str: a raise to rely on
 * once acknowledged (0: none); stl: write the leads into WAL.
 */
inline sf_rule_lead(s)
{
	tY = (srv[s].drift > MIN -> srv[s].drift : MIN);
	stb = srv[s].bound;
	str = 0;
	stl = 0;
	if
	:: srv[s].drift > srv[s].bound && srv[s].drift > MIN ->
		if
		:: srv[s].drift > srv[s].lead -> srv[s].lead = srv[s].drift
		:: else
		fi;
		str = srv[s].drift;
		stl = 1
	:: else ->
		stb = srv[s].drift;
		if
		:: srv[s].lead > tY ->
			if
			:: srv[s].last > srv[s].hor -> srv[s].hor = srv[s].last
			:: else
			fi;
			srv[s].lead = tY;
			stl = 1
		:: else
		fi
	fi
}

/*
 * sf_rule_raise_lagging: ACK.  res: the first standby primary s can see
 * (a standby of the cluster on its line) that has not flushed record rec,
 * or NO.
 */
inline sf_rule_raise_lagging(s, rec, res)
{
	res = NO;
	tH = 0;
	do
	:: tH < 3 ->
		if
		:: tH != s && srv[tH].role == R_STBY && s == P ->
			on_line(srv[tH].head, srv[s].head, tG);
			if
			:: tG && rlsn[srv[tH].head] < rlsn[rec] -> res = tH; break
			:: else
			fi
		:: else
		fi;
		tH++
	:: else -> break
	od;
	skip
}

/*
 * sf_rule_order: REPLAY.  res: how a record at (qtli, qlsn) relates to the
 * position (stli, slsn) a state file reflects.
 */
inline sf_rule_order(stli, slsn, qtli, qlsn, res)
{
	if
	:: stli == 0 -> res = O_NEWER
	:: stli != 0 && stli == qtli -> res = (qlsn <= slsn -> O_SEEN : O_NEWER)
	:: stli != 0 && stli != qtli ->
		od_found = 0;
		chain_of(qtli);
		od_i = 0;
		do
		:: od_i < ch_n && !od_found ->
			if
			:: ch[od_i] == stli ->
				od_found = 1;
				res = (slsn <= STEP_END(od_i) -> O_NEWER : O_DIVERGED)
			:: else
			fi;
			od_i++
		:: else -> break
		od;
		if
		:: !od_found ->
			chain_of(stli);
			od_i = 0;
			do
			:: od_i < ch_n && !od_found ->
				if
				:: ch[od_i] == qtli ->
					od_found = 1;
					res = (qlsn <= STEP_END(od_i) -> O_SEEN : O_DIVERGED)
				:: else
				fi;
				od_i++
			:: else -> break
			od
		:: else
		fi;
		if
		:: !od_found -> res = O_DIVERGED
		:: else
		fi
	fi
}

/* sf_rule_confirm: CONFIRM.  The node id nodeid (span) confirmed. */
inline sf_rule_confirm(s, nodeid, span)
{
	srv[s].rqid = 0;
	srv[s].rqk = Q_NONE;
	srv[s].nbase = nodeid;
	srv[s].nspan = span
}

/* sf_rule_replay: REPLAY.  Merge record r, of order ord, into s's history. */
inline sf_rule_replay(s, r, ord)
{
	if
	:: ord == O_SEEN
	:: else ->
		if
		:: rkind[r] == K_LEADS ->
			if
			:: ord == O_NEWER -> srv[s].lead = ra[r]
			:: else ->
				if
				:: ra[r] > srv[s].lead -> srv[s].lead = ra[r]
				:: else
				fi
			fi;
			if
			:: srv[s].lead < MIN -> srv[s].lead = MIN
			:: else
			fi;
			if
			:: rb[r] > srv[s].hor -> srv[s].hor = rb[r]
			:: else
			fi
		:: rkind[r] == K_REQUEST ->
			if
			:: srv[s].rqid == 0 -> srv[s].rqid = ra[r]; srv[s].rqk = rb[r]
			:: else
			fi
		:: rkind[r] == K_CONFIRM ->
			if
			:: srv[s].rqid == ra[r] -> sf_rule_confirm(s, rb[r], SPAN)
			:: else
			fi
		:: else
		fi;
		srv[s].ptli = rtli[r];
		srv[s].plsn = rlsn[r];
		srv[s].fplace = s + 1	/* the caller rewrites the file */
	fi
}

/* sf_rule_node_in_span: COPY.  res: node ids nodeid .. meet s's history's span. */
inline sf_rule_node_in_span(s, nodeid, span, res)
{
	if
	:: srv[s].nspan == 0 || nodeid == srv[s].nbase -> res = 0
	:: else ->
		res = (nodeid <= srv[s].nbase + srv[s].nspan - 1 &&
			   srv[s].nbase <= nodeid + span - 1)
	fi
}

/*
 * sf_rule_start_request: ASK.  res: what server s's start asks, given the
 * facts f_*; updates the request its history records.
 */
inline sf_start_asks(res)
{
	if
	:: f_first && !f_ss && !f_rs && f_bl -> res = A_CONT_BACKUP
	:: f_first && !f_ss && !f_rs && !f_bl && f_cr -> res = A_CONT_STANDBY
	:: else ->
		if
		:: !f_first || !CONFIRM_RESTORE || f_ss -> res = A_NONE
		:: else ->
			if
			:: f_rs -> res = A_RESTORE_ARCHIVE
			:: !f_rs && f_bl -> res = A_RESTORE_BACKUP
			:: !f_rs && !f_bl && f_mv -> res = A_MOVED
			:: else -> res = A_NONE
			fi
		fi
	fi
}

inline sf_rule_start_request(s, res)
{
	if
	:: f_is -> res = A_IN_SPAN
	:: else -> sf_start_asks(res)
	fi;
	if
	:: res != A_IN_SPAN && f_nc ->
		srv[s].rqid = 0;
		srv[s].rqk = Q_NONE;
		res = A_NONE
	:: else ->
		if
		:: res != A_NONE ->
			if
			:: srv[s].rqid == 0 -> nreq++; srv[s].rqid = nreq
			:: else
			fi;
			srv[s].rqk = (res == A_IN_SPAN -> Q_IN_SPAN :
						  (res == A_CONT_BACKUP || res == A_CONT_STANDBY -> Q_CONT :
						   Q_RESTORE))
		:: else ->
			if
			:: srv[s].rqk == Q_CONT -> res = A_PENDING_CONT
			:: srv[s].rqk == Q_IN_SPAN -> res = A_PENDING_IN_SPAN
			:: srv[s].rqk == Q_RESTORE && CONFIRM_RESTORE -> res = A_PENDING_RESTORE
			:: else ->
				srv[s].rqid = 0;
				srv[s].rqk = Q_NONE
			fi
		fi
	fi
}

#else /* RULES13 */

/*
 * shared.c snowflake_history_lead (and snowflake_floor_lead, the same with
 * the preload): the history's largest lead as of nowv, updating it.
 */
inline snowflake_history_lead(s, nowv, res)
{
	if
	:: srv[s].drift >= srv[s].ml -> srv[s].ml = srv[s].drift; srv[s].lw = 0
	:: srv[s].drift < srv[s].ml && srv[s].lw == 0 -> srv[s].lw = nowv
	:: srv[s].drift < srv[s].ml && srv[s].lw != 0 && nowv >= srv[s].lw + srv[s].ml ->
		srv[s].ml = srv[s].drift;
		srv[s].lw = 0
	:: else
	fi;
	res = srv[s].ml
}

/* shared.c sf_resume: strictly above what the file proves. */
inline sf_resume(s)
{
	srv[s].last = srv[s].fres
}

/* reservation.c sf_raise_to_floor: res: the floor, now plus lead. */
inline sf_raise_to_floor(s, nowv, ld, res)
{
	res = nowv + ld;
	if
	:: srv[s].last < res - 1 -> srv[s].last = res - 1
	:: else
	fi
}

/* reservation.c sf_log_lead: the largest lead into WAL, once per change */
inline sf_log_lead(s)
{
	if
	:: srv[s].wa == srv[s].ml && srv[s].wb == srv[s].lw
	:: else ->
		write_rec(s, K_LEADS, srv[s].ml, srv[s].lw);
		srv[s].wa = srv[s].ml;
		srv[s].wb = srv[s].lw
	fi
}

/* the state file written from memory (shared.c snowflake_state_image) */
inline old_write_file(s)
{
	srv[s].fplace = s + 1;
	srv[s].fml = srv[s].ml;
	srv[s].flw = srv[s].lw;
	srv[s].fq = srv[s].rq
}

/*
 * reservation.c snowflake_extend_reservation: a reservation write of s
 * reaching needed; the first of a life applies the floor and records the
 * lineage.
 */
inline snowflake_extend_reservation(s, nowv, needed)
{
	if
	:: srv[s].drift < srv[s].bound -> srv[s].bound = srv[s].drift
	:: else
	fi;
	tC = srv[s].bound;
	snowflake_history_lead(s, nowv, tD);
	tE = needed;
	tF = 0;
	if
	:: srv[s].fpend ->
		if
		:: srv[s].gset == 0 -> srv[s].gset = nowv
		:: else
		fi;
		sf_raise_to_floor(s, nowv, tD, tF);
		if
		:: tF > tE -> tE = tF
		:: else
		fi
	:: else
	fi;
	if
	:: srv[s].last > tE -> tE = srv[s].last
	:: else
	fi;
	tG = (srv[s].fres < tE || srv[s].fpend || srv[s].drift > tC || srv[s].field == 0);
	if
	:: tG ->
		if
		:: srv[s].field == 0 ->
			node_field(s, rtli[srv[s].head], srv[s].field);
			srv[s].ffield = srv[s].field;
			srv[s].ftli = rtli[srv[s].head]
		:: else
		fi;
		if
		:: nowv > tE -> tE = nowv
		:: else
		fi;
		if
		:: tE > srv[s].fres -> srv[s].fres = tE
		:: else
		fi;
		old_write_file(s);
		sf_log_lead(s);
		srv[s].bound = srv[s].drift;
		if
		:: srv[s].fpend ->
			printf("RS floor s=%d F=%d fld=%d\n", s, tF, srv[s].field)
		:: else
		fi;
		srv[s].fpend = 0
	:: else
	fi;
	printf("RS ext s=%d lead=%d ml=%d lw=%d write=%d bound=%d\n", s, tD,
		   srv[s].ml, srv[s].lw, tG, srv[s].bound)
}

/* reservation.c snowflake_replay_lead: the redo of a lead record */
inline snowflake_replay_lead(s, maxl, lowered)
{
	tX = lowered;
	tY = (maxl > srv[s].ml);
	if
	:: !tY ->
		tX = ((tX == 0 || srv[s].lw == 0) -> 0 :
			  (tX > srv[s].lw -> tX : srv[s].lw))
	:: else
	fi;
	if
	:: maxl < srv[s].ml || (!tY && tX == srv[s].lw)
	:: else ->
		srv[s].ml = maxl;
		srv[s].lw = tX;
		old_write_file(s)
	fi
}

/*
 * startcheck.c snowflake_start_request (with sf_start_asks,
 * sf_continued_start, snowflake_restore_start): res: the request this
 * load makes or keeps (Q_ kind), given the facts f_*.
 */
inline snowflake_start_request(s, res)
{
	res = Q_NONE;
	if
	:: f_first && !f_ss && !f_rs && (f_bl || f_cr) -> res = Q_CONT
	:: else ->
		if
		:: f_first && CONFIRM_RESTORE && !f_ss && (f_rs || f_bl || f_mv) ->
			res = Q_RESTORE
		:: else
		fi
	fi;
	if
	:: res == Q_NONE && srv[s].fq == Q_CONT -> res = Q_CONT
	:: res == Q_NONE && srv[s].fq == Q_RESTORE && CONFIRM_RESTORE -> res = Q_RESTORE
	:: else
	fi;
	if
	:: f_nc -> res = Q_NONE
	:: else
	fi;
	srv[s].rq = res;
	srv[s].fq = res
}

/* reservation.c snowflake_confirm_restore_state */
inline snowflake_confirm_restore_state(s)
{
	srv[s].rq = Q_NONE;
	old_write_file(s)
}

#endif /* RULES13 */

/* ------------------------------------------------------------------ */
/* Transitions: what a server does, calling the rules                 */
/* ------------------------------------------------------------------ */

/* REPLAY: server s replays record r */
inline replay_rec(s, r)
{
#ifndef RULES13
	if
	:: rkind[r] == K_LEADS || rkind[r] == K_CONFIRM || rkind[r] == K_REQUEST ->
		sf_rule_order(srv[s].ptli, srv[s].plsn, rtli[r], rlsn[r], oo);
		tB = srv[s].rqid;
		sf_rule_replay(s, r, oo);
		/* ghost: a request taken from WAL is one this server must answer */
		if
		:: rkind[r] == K_REQUEST && tB == 0 && srv[s].rqid != 0 && srv[s].gq == 0 ->
			srv[s].gq = rgq[r]
		:: else
		fi;
		printf("RS replay s=%d r=%d ord=%d lead=%d hor=%d rq=%d\n", s, r, oo,
			   srv[s].lead, srv[s].hor, srv[s].rqid)
	:: else
	fi
#else
	if
	:: rkind[r] == K_LEADS ->
		snowflake_replay_lead(s, ra[r], rb[r]);
		printf("RS replay s=%d r=%d ml=%d lw=%d\n", s, r, srv[s].ml, srv[s].lw)
	:: else
	fi
#endif
}

/* crash recovery: replay the records after s's checkpoint */
inline recover(s)
{
	on_line(srv[s].ckpt, srv[s].head, tA);
	assert(tA);
	q_n = 0;
	ln_x = srv[s].head;
	do
	:: ln_x != srv[s].ckpt -> q_list[q_n] = ln_x; q_n++; ln_x = rprev[ln_x]
	:: else -> break
	od;
	do
	:: q_n > 0 -> q_n--; replay_rec(s, q_list[q_n])
	:: else -> break
	od;
	skip
}

/*
 * START (and ASK): a load of server s's state (a postmaster's start),
 * with the facts f_*, then recovery of the WAL after its checkpoint.
 */
inline load(s)
{
	srv[s].fpend = 1;
	srv[s].field = 0;
	srv[s].wa = NO;
	srv[s].wb = NO;
	f_first = 1;
	f_cr = f_cr && !f_ss;
	node_field(s, srv[s].ftli, tB);
	f_nc = (tB != srv[s].ffield);
#ifndef RULES13
	sf_rule_resume(s);
	srv[s].bound = sf_rule_start_bound(srv[s].drift);
	srv[s].rz = 0;
	srv[s].rzrec = 0;
	srv[s].rql = 0;
	sf_rule_node_in_span(s, srv[s].nid, SPAN, f_is);
	f_is = f_is && f_nc;
	sf_rule_start_request(s, tA);
	printf("RS ask s=%d ask=%d rq=%d k=%d\n", s, tA, srv[s].rqid, srv[s].rqk);
#else
	srv[s].ml = srv[s].fml;
	srv[s].lw = srv[s].flw;
	srv[s].bound = srv[s].fml;
	sf_resume(s);
	snowflake_start_request(s, tA);
	printf("RS ask s=%d ask=%d\n", s, tA);
#endif
	/*
	 * every write of the state file records where the data directory is
	 * (startcheck.c snowflake_record_request, snowflake_record_standby_place,
	 * shared.c snowflake_state_image): here, unless a standby asks (it
	 * writes nothing then)
	 */
	if
	:: !(f_ss && tA != 0) -> srv[s].fplace = s + 1
	:: else
	fi;
	recover(s)
}

/*
 * The end of recovery of a server that mints (its background writer
 * starts, worker.c): the request its history has pending goes into WAL
 * once a life (reservation.c snowflake_log_request), for the servers that
 * replay it later.
 */
inline log_request(s)
{
#ifndef RULES13
	if
	:: srv[s].rqid != 0 && !srv[s].rql ->
		write_rec(s, K_REQUEST, srv[s].rqid, srv[s].rqk);
		srv[s].ptli = rtli[rr];
		srv[s].plsn = rlsn[rr];
		srv[s].fplace = s + 1;
		srv[s].rql = 1
	:: else
	fi
#else
	skip
#endif
}

/* whether s is refused until its node id is confirmed */
#ifndef RULES13
#define REFUSED_REQ(s)	(srv[s].rqk != Q_NONE)
#else
#define REFUSED_REQ(s)	(srv[s].rq != Q_NONE)
#endif

#ifndef RULES13
/* ACK: a raise waiting for the standbys is relied on once they have it */
inline ack(s)
{
	if
	:: srv[s].rz != 0 ->
		sf_rule_raise_lagging(s, srv[s].rzrec, tA);
		printf("RS ack s=%d lag=%d\n", s, tA);
		if
		:: tA == NO -> srv[s].bound = srv[s].rz; srv[s].rz = 0
		:: else
		fi
	:: else
	fi
}

/*
 * A reservation write of server s (new rules): the first of a life places
 * the floor (START) and records the lineage, then the lead step (LEAD).
 */
inline write_new(s, nowv)
{
	if
	:: srv[s].fpend ->
		sf_rule_floor(s, nowv, tA);
		if
		:: srv[s].last < tA - 1 -> srv[s].last = tA - 1
		:: else
		fi;
		if
		:: srv[s].fres < tA -> srv[s].fres = tA
		:: else
		fi;
		node_field(s, rtli[srv[s].head], srv[s].field);
		srv[s].ffield = srv[s].field;
		srv[s].ftli = rtli[srv[s].head];
		srv[s].nbase = srv[s].nid;
		srv[s].nspan = SPAN;
		srv[s].fplace = s + 1;
		srv[s].fpend = 0;
		if
		:: srv[s].gset == 0 -> srv[s].gset = nowv
		:: else
		fi;
		printf("RS floor s=%d F=%d fld=%d\n", s, tA, srv[s].field)
	:: else
	fi;
	if
	:: srv[s].drift < srv[s].bound -> srv[s].bound = srv[s].drift
	:: else
	fi;
	if
	:: srv[s].rz > srv[s].drift -> srv[s].rz = 0
	:: else
	fi;
	sf_rule_lead(s);
	srv[s].bound = stb;
	if
	:: str != 0 -> srv[s].rz = str
	:: else
	fi;
	if
	:: stl && (srv[s].lead != srv[s].wa || srv[s].hor != srv[s].wb) ->
		write_rec(s, K_LEADS, srv[s].lead, srv[s].hor);
		srv[s].ptli = rtli[rr];
		srv[s].plsn = rlsn[rr];
		srv[s].wa = srv[s].lead;
		srv[s].wb = srv[s].hor;
		if
		:: str != 0 -> srv[s].rzrec = rr
		:: else
		fi
	:: else
	fi;
	printf("RS lead s=%d bound=%d raise=%d log=%d lead=%d hor=%d\n", s, stb,
		   str, stl, srv[s].lead, srv[s].hor);
#ifdef PLANT_SKIP_ACK
	/* planted: a raise relied on before the standbys have it */
	if
	:: srv[s].rz != 0 -> srv[s].bound = srv[s].rz; srv[s].rz = 0
	:: else
	fi;
#endif
	ack(s)
}
#endif

/* the clock of server s */
#define CLOCK(s)	(now - srv[s].skew)

/* can server s mint (a primary of the cluster, or the copy) */
#define MINTER(s)	(srv[s].up && ((srv[s].role == R_PRIM && P == s) || srv[s].role == R_COPY))

/* the lead in force on s's line (ghost), into lin */
inline lead_in_force(s)
{
	lin = 0;
	lf_first = 1;
	tX = 0;
	lf_r = srv[s].head;
	do
	:: lf_r == 0 -> break
	:: lf_r != 0 ->
		if
		:: rkind[lf_r] == K_LEADS ->
			if
			:: lf_first -> lin = rgin[lf_r]; lf_first = 0
			:: !lf_first && CLOCK(s) < tX + rgin[lf_r] && rgin[lf_r] > lin ->
				lin = rgin[lf_r]
			:: else
			fi;
			tX = rgset[lf_r]
		:: else
		fi;
		lf_r = rprev[lf_r]
	od;
	if
	:: srv[s].drift > lin -> lin = srv[s].drift
	:: else
	fi;
	if
	:: MIN > lin -> lin = MIN
	:: else
	fi
}

/* whether cell c (an issued ID) is on s's history: into tG */
#define CELL_IN_HIST(s, c) \
	(id[c] != 0 && \
	 ((!ID_HAS(c, ID_COPY) && ID_HAS(c, ID_RST) && srv[s].gall) || \
	  ((lmask & (1 << (ID_POS(c) - 1))) != 0 && \
	   !(srv[s].cpos != 0 && ID_HAS(c, ID_X)))))

/* the largest ID on s's history (hmt, hmf), and whether all lie behind its clock */
inline history_max(s)
{
	line_mask(srv[s].head);
	hmt = 0;
	hmf = 0;
	behind = 1;
	tA = 1;
	do
	:: tA <= NF ->
		tB = 0;
		do
		:: tB < TT ->
			if
			:: CELL_IN_HIST(s, (tA - 1) * TT + tB) ->
				if
				:: tB > hmt || (tB == hmt && tA > hmf) -> hmt = tB; hmf = tA
				:: else
				fi;
				if
				:: tB > CLOCK(s) -> behind = 0
				:: else
				fi
			:: else
			fi;
			tB++
		:: else -> break
		od;
		tA++
	:: else -> break
	od;
	skip
}

/* MINT: server s asked for a batch reaching as far ahead as it may */
inline op_mint(s)
{
	printf("EV MINT s=%d now=%d\n", s, now);
	history_max(s);
	lead_in_force(s);
	if
	:: REFUSED_REQ(s) ->
		printf("RS mint s=%d out=%d\n", s, M_REQUEST);
		/* P3: a request it must answer, not answered on its line */
		line_mask(srv[s].head);
		tC = 0;
		tD = 1;
		do
		:: tD < nrec ->
			if
			:: rkind[tD] == K_CONFIRM && rgq[tD] == srv[s].gq &&
			   (lmask & (1 << tD)) != 0 -> tC = 1
			:: else
			fi;
			tD++
		:: else -> break
		od;
		if
		:: CHECKS(4) && (srv[s].gq == 0 || tC) ->
			printf("PV P3 s=%d refused for a request it need not answer (gq=%d answered=%d)\n",
				   s, srv[s].gq, tC);
			assert(false)
		:: else
		fi
	:: else ->
#ifndef RULES13
		write_new(s, CLOCK(s));
#else
		snowflake_extend_reservation(s, CLOCK(s), CLOCK(s) + srv[s].drift);
#endif
		tC = (srv[s].drift < srv[s].bound -> srv[s].drift : srv[s].bound);
		tD = (CLOCK(s) > srv[s].last -> CLOCK(s) : srv[s].last + 1);
		tE = CLOCK(s) + tC;
		if
		:: tD <= tE ->
			printf("RS mint s=%d out=%d t0=%d t1=%d lim=%d fld=%d\n", s,
				   M_ISSUED, tD, tE, tC, srv[s].field);
			/* P2: above every ID of its history */
			if
			:: CHECKS(2) && (tD < hmt || (tD == hmt && srv[s].field <= hmf)) ->
				printf("PV P2 s=%d issues (t=%d f=%d) below (t=%d f=%d) of its history\n",
					   s, tD, srv[s].field, hmt, hmf);
				assert(false)
			:: else
			fi;
			assert(tE < TT && srv[s].field >= 1 && srv[s].field <= NF);
			tF = tD;
			do
			:: tF <= tE ->
				/* P1: never twice */
				if
				:: CHECKS(1) && id[(srv[s].field - 1) * TT + tF] != 0 ->
					printf("PV P1 s=%d issues (t=%d f=%d) again\n", s, tF,
						   srv[s].field);
					assert(false)
				:: else
				fi;
				id[(srv[s].field - 1) * TT + tF] = srv[s].head + 1 +
					(s == 3 -> ID_COPY : 0) +
					(s != 3 && srv[3].cpos == srv[s].head + 1 -> ID_X : 0);
				tF++
			:: else -> break
			od;
			srv[s].last = tE;
			if
			:: srv[s].fres < tE -> srv[s].fres = tE
			:: else
			fi;
			tmint = now
		:: tD > tE && tD > CLOCK(s) + srv[s].drift + WAIT ->
			printf("RS mint s=%d out=%d t0=%d t1=%d lim=%d fld=%d\n", s,
				   M_REFUSED, tD, tE, tC, srv[s].field);
			/* P3: refused only as far ahead as the lead in force */
			if
			:: CHECKS(4) && behind && !srv[s].skew && tD > CLOCK(s) + lin + 1 ->
				printf("PV P3 s=%d refused: next ID %d units ahead, lead in force %d\n",
					   s, tD - CLOCK(s), lin);
				assert(false)
			:: else
			fi
		:: else ->
			printf("RS mint s=%d out=%d t0=%d t1=%d lim=%d fld=%d\n", s,
				   M_WAIT, tD, tE, tC, srv[s].field)
		fi
	fi
}

/* LEAD: snowflake.max_drift_ms of s set to d (a reload), then its next write */
inline op_lead(s, d)
{
	printf("EV LEAD s=%d d=%d now=%d\n", s, d, now);
	nlead++;
	srv[s].drift = d;
	srv[s].gset = now;
	/* a standby the primary cannot see takes the raise first (the docs) */
	tH = 0;
	do
	:: tH < 3 ->
		if
		:: srv[tH].role == R_STBY && srv[tH].drift < d ->
			on_line(srv[tH].head, srv[s].head, tG);
			if
			:: !tG -> srv[tH].drift = d; printf("RS cfg s=%d d=%d\n", tH, d)
			:: else
			fi
		:: else
		fi;
		tH++
	:: else -> break
	od;
	if
	:: REFUSED_REQ(s)
	:: else ->
#ifndef RULES13
		write_new(s, CLOCK(s))
#else
		snowflake_extend_reservation(s, CLOCK(s), srv[s].last)
#endif
	fi
}

/* DELIVER: standby s receives and replays the next record of the primary's line */
inline op_deliver(s, r)
{
	printf("EV DELIVER s=%d r=%d\n", s, r);
	srv[s].head = r;
	replay_rec(s, r)
}

/* CRASH: s loses its memory */
inline op_crash(s)
{
	printf("EV CRASH s=%d\n", s);
	srv[s].up = 0;
	srv[s].ctl = (srv[s].role == R_STBY -> C_REC : C_RUN)
}

/* STOP: a clean shutdown of the primary (a shutdown checkpoint) */
inline op_stop(s)
{
	printf("EV STOP s=%d\n", s);
	srv[s].up = 0;
	srv[s].ctl = C_SHUT;
	srv[s].ckpt = srv[s].head;
	if
	:: !srv[s].fpend ->
		srv[s].fres = srv[s].last;
#ifdef RULES13
		old_write_file(s)
#endif
	:: else
	fi
}

/* the facts of an ordinary start (no signal file but a standby's) */
inline facts_restart(s)
{
	f_ss = (srv[s].role == R_STBY);
	f_rs = 0;
	f_bl = 0;
	f_cr = (srv[s].ctl == C_REC || srv[s].ctl == C_SHUTREC);
	f_mv = (srv[s].fplace != s + 1)
}

/* START: a down server starts again, as the primary or as a standby */
inline op_start(s)
{
	printf("EV START s=%d now=%d\n", s, now);
	facts_restart(s);
	srv[s].up = 1;
	load(s);
	if
	:: srv[s].role == R_PRIM -> log_request(s)
	:: else
	fi
}

/* CKPT: a checkpoint (a restartpoint on a standby) */
inline op_ckpt(s)
{
	printf("EV CKPT s=%d\n", s);
	srv[s].ckpt = srv[s].head
}

/* PROMOTE: standby s becomes the primary on a new timeline (failover) */
inline op_promote(s)
{
	printf("EV PROMOTE s=%d now=%d\n", s, now);
	srv[P].role = R_DEPO;
	new_timeline(s);
	srv[s].role = R_PRIM;
	srv[s].gset = 0;
	P = s;
	log_request(s)
}

/* REJOIN: an old primary starts as a standby of the new one (switchover) */
inline op_rejoin(s)
{
	printf("EV REJOIN s=%d now=%d\n", s, now);
	srv[s].role = R_STBY;
	facts_restart(s);
	srv[s].up = 1;
	load(s)
}

/* copy server src's data directory into dst (durable state only) */
inline copy_srv(dst, src)
{
	dst.drift = src.drift;
	dst.nid = src.nid;
	dst.head = src.head;
	dst.ckpt = src.ckpt;
	dst.ctl = src.ctl;
	dst.fres = src.fres;
	dst.ffield = src.ffield;
	dst.ftli = src.ftli;
	dst.fplace = src.fplace;
#ifdef RULES13
	dst.fml = src.fml;
	dst.flw = src.flw;
	dst.fq = src.fq;
#else
	dst.lead = src.lead;
	dst.hor = src.hor;
	dst.ptli = src.ptli;
	dst.plsn = src.plsn;
	dst.rqid = src.rqid;
	dst.rqk = src.rqk;
	dst.nbase = src.nbase;
	dst.nspan = src.nspan;
#endif
	dst.gq = src.gq;
	dst.gall = src.gall;
	dst.cpos = src.cpos;
	dst.gset = src.gset
}

/* clear the memory of a server about to start */
inline clear_mem(s)
{
	srv[s].skew = 0;
	srv[s].last = 0;
	srv[s].bound = 0;
#ifdef RULES13
	srv[s].rq = 0;
	srv[s].ml = 0;
	srv[s].lw = 0
#else
	srv[s].rz = 0;
	srv[s].rzrec = 0;
	srv[s].rql = 0
#endif
}

/* CLONE: a base backup of the primary made into standby s */
inline op_clone(s)
{
	printf("EV CLONE s=%d now=%d\n", s, now);
	copy_srv(srv[s], srv[P]);
	clear_mem(s);
	srv[s].role = R_STBY;
	srv[s].ckpt = srv[s].head;
	srv[s].cpos = 0;
	f_ss = 1;
	f_rs = 0;
	f_bl = 1;
	f_cr = 0;
	f_mv = 1;
	srv[s].up = 1;
	load(s)
}

/* IMG: a base backup (kind 1) or a volume snapshot (kind 0) of s */
inline op_img(s, kind)
{
	printf("EV IMG s=%d kind=%d\n", s, kind);
	copy_srv(img, srv[s]);
	img.label = kind;
	img.irec = nrec;
	tA = 0;
	do
	:: tA < NF * TT ->
		if
		:: id[tA] != 0 -> id[tA] = id[tA] | ID_IMG
		:: else
		fi;
		tA++
	:: else -> break
	od;
	img.ctl = (srv[s].up -> (srv[s].role == R_STBY -> C_REC : C_RUN) : srv[s].ctl);
	if
	:: kind == 1 -> img.ckpt = srv[s].head
	:: else
	fi;
	ihave = 1
}

/*
 * The ghost's request at a start from an image (a restore, a copy): the
 * documented cases (operations.md): a restore, a copy or a moved data
 * directory with the node id its file records asks (snowflake.confirm_restore),
 * a start that continues a timeline with that node field asks, a node id
 * in the original's span asks; one with a node id of its own does not
 * (and drops what its file asked); otherwise what the file asked stands.
 */
inline ghost_ask(s, restore)
{
	node_field(s, srv[s].ftli, tB);
	tC = (srv[s].nid != 1 && srv[s].nid <= SPAN);
	if
	:: tC || (tB == srv[s].ffield && (f_bl || f_cr || (CONFIRM_RESTORE && (restore || f_mv)))) ->
		ngq++;
		srv[s].gq = ngq
	:: !tC && tB != srv[s].ffield ->
		/* a node id of its own: nothing to confirm, nor what the file asked */
		srv[s].gq = 0
	:: else
		/* what its file asked still stands */
	fi
}

/*
 * RESTORE: the image restored in place of the lost primary: mode 1 a
 * point-in-time recovery replaying k more records of the archive (the
 * primary's line) and ending with a new timeline; mode 0 started as it is
 * (a snapshot or cold copy in place).  The standbys are discarded.  Its
 * snowflake.max_drift_ms is the largest any lead record after the image
 * and not replayed says (operations.md's condition).
 */
inline op_restore(k, mode)
{
	printf("EV RESTORE k=%d mode=%d now=%d\n", k, mode, now);
	tH = 0;
	do
	:: tH < 3 ->
		if
		:: tH != P -> srv[tH].role = R_NONE; srv[tH].up = 0
		:: else
		fi;
		tH++
	:: else -> break
	od;
	rs_arch = srv[P].head;	/* the archive's line */
	copy_srv(srv[P], img);
	clear_mem(P);
	srv[P].role = R_PRIM;
	srv[P].cpos = 0;
	srv[P].gall = 1;
	srv[P].gset = 0;
	tA = 0;
	do
	:: tA < NF * TT ->
		if
		:: id[tA] != 0 && !ID_HAS(tA, ID_COPY) -> id[tA] = id[tA] | ID_RST
		:: else
		fi;
		tA++
	:: else -> break
	od;
	/* what the archive replays: k records after the image on that line */
	rs_tgt = srv[P].head;
	rs_i = 0;
	do
	:: mode == 1 && rs_i < k ->
		next_on_line(rs_tgt, rs_arch, rs_x);
		assert(rs_x != 0);
		rs_tgt = rs_x;
		rs_i++
	:: else -> break
	od;
	/* its setting: the largest after the image and not replayed */
	line_mask(rs_tgt);
	rs_i = img.irec;
	do
	:: rs_i < nrec ->
		if
		:: rkind[rs_i] == K_LEADS && (lmask & (1 << rs_i)) == 0 &&
		   rwho[rs_i] != 3 && rgin[rs_i] > srv[P].drift ->
			srv[P].drift = rgin[rs_i]
		:: else
		fi;
		rs_i++
	:: else -> break
	od;
	printf("RS cfg s=%d d=%d\n", P, srv[P].drift);
	f_ss = 0;
	f_rs = mode;
	f_bl = img.label;
	f_cr = (img.ctl == C_REC || img.ctl == C_SHUTREC);
	f_mv = (srv[P].fplace != P + 1);
	ghost_ask(P, mode);
	srv[P].up = 1;
	load(P);
	/* the archive's records, then the new timeline */
	do
	:: srv[P].head != rs_tgt ->
		next_on_line(srv[P].head, rs_tgt, rs_x);
		srv[P].head = rs_x;
		replay_rec(P, rs_x)
	:: else -> break
	od;
	if
	:: mode == 1 -> new_timeline(P)
	:: else
	fi;
	log_request(P)
}

/* COPY: the image started beside the cluster as server 3, node id nid */
inline op_copy(cnid)
{
	printf("EV COPY nid=%d now=%d\n", cnid, now);
	copy_srv(srv[3], img);
	clear_mem(3);
	srv[3].role = R_COPY;
	srv[3].nid = cnid;
	srv[3].cpos = img.head + 1;
	srv[3].gset = 0;
	tA = 0;
	do
	:: tA < NF * TT ->
		if
		:: ID_POS(tA) == img.head + 1 && !ID_HAS(tA, ID_IMG) -> id[tA] = id[tA] | ID_X
		:: else
		fi;
		tA++
	:: else -> break
	od;
	f_ss = 0;
	f_rs = 0;
	f_bl = img.label;
	f_cr = (img.ctl == C_REC || img.ctl == C_SHUTREC);
	f_mv = 1;
	ghost_ask(3, 0);
	srv[3].up = 1;
	load(3);
	/* its first WAL: a branch of its own */
	assert(nrec < NR);
	rr = nrec;
	nrec++;
	rprev[rr] = srv[3].head;
	rtli[rr] = rtli[srv[3].head];
	rlsn[rr] = rlsn[srv[3].head] + 1;
	rkind[rr] = K_EOR;
	srv[3].head = rr;
	printf("RS rec s=3 r=%d kind=%d tli=%d lsn=%d a=0 b=0\n", rr, K_EOR,
		   rtli[rr], rlsn[rr]);
	log_request(3)
}

/* CONFIRM: a superuser confirms s's node id (snowflake_confirm_restore) */
inline op_confirm(s)
{
	printf("EV CONFIRM s=%d\n", s);
#ifndef RULES13
	tA = srv[s].rqid;
	sf_rule_confirm(s, srv[s].nid, SPAN);
	srv[s].fplace = s + 1;
	write_rec(s, K_CONFIRM, tA, srv[s].nid);
	srv[s].ptli = rtli[rr];
	srv[s].plsn = rlsn[rr];
#else
	snowflake_confirm_restore_state(s);
	/* not in 1.3's WAL: a marker the ghost reads, the rules do not */
	write_rec(s, K_CONFIRM, 0, 0);
#endif
	printf("RS confirm s=%d\n", s)
}

/*
 * STEP: the clock of s steps back one unit (until the next tick).  Only a
 * server that placed its floor in this life: a successor whose clock is
 * behind its predecessor's at its first ID is outside the documented
 * bound (guarantees.md, "The floor covers clock skew only up to the
 * failover's own gap"); the step then lasts across its crashes.
 */
inline op_step(s)
{
	printf("EV STEP s=%d\n", s);
	srv[s].skew = 1
}

/* TICK: the clock moves on; stepped-back clocks are corrected */
inline op_tick()
{
	now++;
	printf("EV TICK now=%d\n", now);
	srv[0].skew = 0;
	srv[1].skew = 0;
	srv[2].skew = 0;
	srv[3].skew = 0
}

/* recompute the derived state */
inline derive()
{
	tA = 0;
	do
	:: tA < 3 ->
		nxt[tA] = 0;
		rjok[tA] = 0;
		if
		:: srv[tA].role == R_STBY && srv[tA].up ->
			next_on_line(srv[tA].head, srv[P].head, g_r);
			nxt[tA] = g_r
		:: srv[tA].role == R_DEPO && !srv[tA].up ->
			on_line(srv[tA].head, srv[P].head, g_ok);
			rjok[tA] = g_ok
		:: else
		fi;
		tA++
	:: else -> break
	od;
	navail = 0;
	if
	:: ihave -> count_after(img.head, srv[P].head); navail = g_n
	:: else
	fi
}

/* ------------------------------------------------------------------ */
/* The operations' guards                                             */
/* ------------------------------------------------------------------ */

/* a server index usable now: 2 only once 1 was touched (symmetry) */
#define SYM(s)		((s) != 2 || !bc)
#define TOUCH(s)	if :: (s) == 1 -> bc = 0 :: else fi
#define ROOM		(nops < MAXOPS)
#define OP(s)		nops++; TOUCH(s)
/* -DCAUGHT_UP: a standby is promoted only once it has every record */
#ifdef CAUGHT_UP
#define CAUGHT		1
#else
#define CAUGHT		0
#endif
#ifdef FREE_TICKS
/* ticks and deliveries bounded by TMAX and the records only */
#define FREE		true
#define FOP(s)		TOUCH(s)
#else
/* ticks and deliveries are operations of the history too */
#define FREE		ROOM
#define FOP(s)		OP(s)
#endif
/* after every operation: the derived state, the choice forgotten */
#define DONE		derive(); g_s = 0; g_d = 0

#define CAN_MINT(s)	(ON(O_MINT) && ROOM && MINTER(s))
/* no lowering before a start placed its floor: a standby's raised setting stays */
/*
 * -DLEADS=N: the values the history's changes of the setting take, in
 * order, four bits each from the lowest (Promela has no hex: run.sh passes
 * $((0x213)), 3, then 1, then 2, then no more): a targeted run follows a
 * finding's script of raises and lowerings and explores everything else
 * around it.
 */
#ifndef LEADS
#define LEADS		0
#endif
#define LEAD_OK(d)	(LEADS == 0 || ((LEADS >> (4 * nlead)) & 15) == (d))
#define CAN_LEAD(d)	(ROOM && MINTER(P) && srv[P].drift != (d) && LEAD_OK(d) && \
			 (((d) > srv[P].drift && ON(O_RAISE)) || \
			  ((d) < srv[P].drift && ON(O_LOWER) && !srv[P].fpend)))
#define CAN_CRASH(s)	(ON(O_CRASH) && ROOM && srv[s].up && SYM(s))
#define CAN_STOP	(ON(O_STOP) && ROOM && srv[P].up && srv[P].role == R_PRIM)
#define CAN_START(s)	(ON(O_START) && ROOM && !srv[s].up && SYM(s) && \
			 ((srv[s].role == R_PRIM && P == (s) && now > tmint) || \
			  srv[s].role == R_STBY))
#define CAN_CKPT(s)	(ON(O_CKPT) && ROOM && srv[s].up && (s) == P && srv[s].ckpt != srv[s].head)
#define CAN_PROMOTE(s)	(ON(O_PROMOTE) && ROOM && srv[s].up && srv[s].role == R_STBY && \
			 !srv[P].up && now > tmint && SYM(s) && (!CAUGHT || nxt[s] == 0))
#define CAN_REJOIN(s)	(ON(O_REJOIN) && ROOM && rjok[s] && SYM(s))
#define CAN_CLONE(s)	(ON(O_CLONE) && ROOM && !srv[s].up && (s) != P && srv[P].up && SYM(s))
#define CAN_IMG(s)	(ON(O_IMG) && ROOM && !ihave && SYM(s) && \
			 (srv[s].role == R_PRIM || srv[s].role == R_STBY))
#define CAN_RESTORE(k)	(ON(O_RESTORE) && ROOM && ihave && !srv[P].up && now > tmint && navail >= (k))
#define CAN_COPY	(ON(O_COPY) && ROOM && ihave && srv[3].role == R_NONE && now > tmint)
#define CAN_CONFIRM(s)	(ON(O_CONFIRM) && ROOM && MINTER(s) && REFUSED_REQ(s) && ((s) != 3 || srv[3].gq == 0))
#define CAN_STEP	(ON(O_STEP) && ROOM && MINTER(P) && !srv[P].fpend && !srv[P].skew && now > 1)
#define CAN_DELIVER(s)	(FREE && nxt[s] != 0 && SYM(s))

/*
 * The operations a run explores (-DOPS=..., default all): targeted runs
 * (run.sh) enable those a history needs.  Ticks and deliveries always.
 */
#define O_MINT		1
#define O_RAISE		2
#define O_LOWER		4
#define O_CRASH		8
#define O_STOP		16
#define O_START		32
#define O_CKPT		64
#define O_PROMOTE	128
#define O_REJOIN	256
#define O_CLONE		512
#define O_IMG		1024
#define O_RESTORE	2048
#define O_COPY		4096
#define O_CONFIRM	8192
#define O_STEP		16384
#ifndef OPS
#define OPS			32767
#endif
#define ON(o)		((OPS & (o)) != 0)

/* choose g_s among the cluster's servers for which C holds */
#define PICK3(C) \
	if \
	:: C(0) -> g_s = 0 \
	:: C(1) -> g_s = 1 \
	:: C(2) -> g_s = 2 \
	fi

/* ------------------------------------------------------------------ */
/* The history                                                        */
/* ------------------------------------------------------------------ */

inline init_history()
{
	assert(NR <= 15 && NR <= 31);
	/* the root record: timeline 1, LSN 0 */
	rtli[0] = 1;
	tlpar[1] = 0;
	/* A, the primary, has started and written; B and C are its standbys */
	tA = 0;
	do
	:: tA < 3 ->
		srv[tA].up = 1;
		srv[tA].drift = 1;
		srv[tA].nid = 1;
		srv[tA].ffield = 1;
		srv[tA].ftli = 1;
		srv[tA].fplace = tA + 1;
#ifdef RULES13
		srv[tA].fml = 1;
		srv[tA].ml = 1;
#else
		srv[tA].lead = MIN;
		srv[tA].nbase = 1;
		srv[tA].nspan = SPAN;
#endif
		srv[tA].bound = 1;
		srv[tA].gset = 1;
		srv[tA].role = (tA == 0 -> R_PRIM : R_STBY);
		srv[tA].ctl = (tA == 0 -> C_RUN : C_REC);
		srv[tA].fpend = (tA != 0);
		srv[tA].wa = (tA == 0 -> 1 : NO);
		srv[tA].wb = (tA == 0 -> 0 : NO);
		tA++
	:: else -> break
	od;
	srv[0].field = 1;
	/* targeted runs: a primary and fewer standbys (-DSTANDBYS=0 or 1) */
	tA = STANDBYS + 1;
	do
	:: tA < 3 -> srv[tA].role = R_NONE; srv[tA].up = 0; tA++
	:: else -> break
	od;
	P = 0
}

active proctype history()
{
	d_step { init_history(); derive() };
end:
	do
	:: atomic {
		if
		:: CAN_LEAD(1) -> g_d = 1
		:: CAN_LEAD(2) -> g_d = 2
		:: DMAX >= 3 && CAN_LEAD(3) -> g_d = 3
		fi;
		d_step { OP(P); op_lead(P, g_d); DONE }
	   }
	:: atomic {
		if
		:: CAN_MINT(P) -> g_s = P
		:: CAN_MINT(3) -> g_s = 3
		fi;
		d_step { OP(g_s); op_mint(g_s); DONE }
	   }
	:: atomic { CAN_STEP -> d_step { OP(P); op_step(P); DONE } }
	:: atomic { PICK3(CAN_DELIVER); d_step { FOP(g_s); op_deliver(g_s, nxt[g_s]); DONE } }
	:: d_step { now < TMAX && FREE -> FOP(0); op_tick(); DONE }
	:: atomic { PICK3(CAN_CRASH); d_step { OP(g_s); op_crash(g_s); DONE } }
	:: atomic { CAN_STOP -> d_step { OP(P); op_stop(P); DONE } }
	:: atomic { PICK3(CAN_START); d_step { OP(g_s); op_start(g_s); DONE } }
	:: atomic { PICK3(CAN_CKPT); d_step { OP(g_s); op_ckpt(g_s); DONE } }
	:: atomic { PICK3(CAN_PROMOTE); d_step { OP(g_s); op_promote(g_s); DONE } }
	:: atomic { PICK3(CAN_REJOIN); d_step { OP(g_s); op_rejoin(g_s); DONE } }
	:: atomic { PICK3(CAN_CLONE); d_step { OP(g_s); op_clone(g_s); DONE } }
	:: atomic {
		if
		:: CAN_IMG(0) && srv[0].up -> g_s = 0; g_d = 1
		:: CAN_IMG(1) && srv[1].up -> g_s = 1; g_d = 1
		:: CAN_IMG(2) && srv[2].up -> g_s = 2; g_d = 1
		:: CAN_IMG(0) -> g_s = 0; g_d = 0
		:: CAN_IMG(1) -> g_s = 1; g_d = 0
		:: CAN_IMG(2) -> g_s = 2; g_d = 0
		fi;
		d_step { OP(g_s); op_img(g_s, g_d); DONE }
	   }
	:: atomic {
		if
		:: CAN_CONFIRM(P) -> g_s = P
		:: CAN_CONFIRM(3) -> g_s = 3
		fi;
		d_step { OP(g_s); op_confirm(g_s); DONE }
	   }
	:: atomic {
		if
		:: CAN_RESTORE(0) -> g_s = 0; g_d = 0
		:: CAN_RESTORE(0) -> g_s = 0; g_d = 1
		:: CAN_RESTORE(1) -> g_s = 1; g_d = 1
		:: CAN_RESTORE(2) -> g_s = 2; g_d = 1
		:: CAN_RESTORE(3) -> g_s = 3; g_d = 1
		fi;
		d_step { OP(0); op_restore(g_s, g_d); DONE }
	   }
	:: atomic {
		if
		:: CAN_COPY -> g_d = 1
		:: CAN_COPY -> g_d = 2
		:: SPAN >= 2 && CAN_COPY -> g_d = 3
		fi;
		d_step { OP(3); op_copy(g_d); DONE }
	   }
	od
}
