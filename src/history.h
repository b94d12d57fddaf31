/*-------------------------------------------------------------------------
 *
 * history.h
 *	  The rules of a key space's history (history.c): where a start places
 *	  its first ID, how a change of snowflake.max_drift_ms is recorded and
 *	  when a raised lead may be relied on, how a replayed WAL record merges
 *	  with what a server knows, which node field a timeline takes, and when
 *	  a node id must be confirmed before a server mints.
 *
 * Pure: no I/O, no PostgreSQL state, no lock, no error raised.  Every
 * function here is a transition of the model that test/model/snowflake.pml
 * describes and Spin explores (test/model/README.md); the comment of each
 * names its transition, and the model names the function.  The callers
 * gather the facts (the state file, pg_control, the timeline history, the
 * standbys' positions) and carry out the result (write the file, the WAL
 * record, publish the bound): shared.c, reservation.c, startcheck.c,
 * walrecord.c, standbys.c.
 *
 * Times are milliseconds: "unix" ones since 1970-01-01 00:00:00 UTC, all
 * others (IDs' timestamps) since the configured epoch.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_HISTORY_H
#define SNOWFLAKE_HISTORY_H

#include "layout.h"
#include "statefile.h"

/*
 * The smallest lead over the clock that every start assumes the history's
 * IDs may have, whatever any member allowed: a constant of the library,
 * which never shrinks in a later release.  A lead up to it needs no WAL
 * record (a successor assumes it anyway), so a server whose history never
 * raised snowflake.max_drift_ms above it writes none; without the preload,
 * where nothing can be WAL-logged, IDs never lead by more (config.h).
 */
#define SNOWFLAKE_MIN_LEAD_MS	1000

/*
 * A position in WAL: the timeline and the end of a record on it, as the
 * state file records the last record it reflects.  {0, 0}: none.
 */
typedef struct SfPos
{
	uint32		tli;
	uint64		lsn;
} SfPos;

/*
 * One step of a timeline's history, as its history file gives it: timeline
 * tli was followed until end, the LSN at which its child branched off.  A
 * timeline's ancestry is its steps from the oldest, then itself with end
 * SF_POS_END.
 */
typedef struct SfTimelineStep
{
	uint32		tli;
	uint64		end;
} SfTimelineStep;

#define SF_POS_END	PG_UINT64_MAX

/* How a replayed record's position relates to what a server has seen. */
typedef enum SfOrder
{
	SF_ORDER_SEEN,				/* at or before the position seen: reflected */
	SF_ORDER_NEWER,				/* after it, on the same line of history */
	SF_ORDER_DIVERGED			/* on another branch: neither before nor after */
} SfOrder;

/*
 * What a history knows of its leads: lead_ms, the largest lead over the
 * clock that a member may let its IDs have from now on (at least
 * SNOWFLAKE_MIN_LEAD_MS), and horizon_unix_ms, a bound on the timestamps of
 * the IDs issued under larger leads since lowered (0: none).  IDs of the
 * history lie at or below max(horizon, clock + lead).
 */
typedef struct SfLeads
{
	int64		lead_ms;
	int64		horizon_unix_ms;
} SfLeads;

/* Why a node id is to be confirmed before a server mints. */
typedef enum SfRequestKind
{
	SF_REQUEST_NONE = 0,
	SF_REQUEST_RESTORE = 1,		/* a restore or a moved data directory, with
								 * snowflake.confirm_restore on */
	SF_REQUEST_CONTINUED = 2,	/* left recovery without a new timeline */
	SF_REQUEST_IN_SPAN = 3		/* a node id inside the span of the server
								 * the state file was written by */
} SfRequestKind;

/*
 * What the state file knows of its history beside the reservation: the
 * leads, the last WAL record reflected, a request to confirm the node id
 * (an id that its confirmation names, 0: none, and its kind), and the node
 * id and span the history's IDs were minted under (node_span 0: unknown, a
 * file of 1.2 or earlier).
 */
typedef struct SfHistory
{
	SfLeads		leads;
	SfPos		pos;
	uint64		request_id;
	SfRequestKind request_kind;
	int32		node_base;
	int32		node_span;
} SfHistory;

/* The kinds of snowflake's WAL record (walrecord.c). */
typedef enum SfRecordKind
{
	SF_RECORD_LEADS = 1,		/* the history's leads changed */
	SF_RECORD_REQUEST = 2,		/* a node id is to be confirmed */
	SF_RECORD_CONFIRM = 3		/* ... and was confirmed */
} SfRecordKind;

/* A record's contents, decoded (walrecord.c). */
typedef struct SfRecord
{
	SfRecordKind kind;
	SfLeads		leads;			/* SF_RECORD_LEADS */
	uint64		request_id;		/* SF_RECORD_REQUEST, SF_RECORD_CONFIRM */
	SfRequestKind request_kind; /* SF_RECORD_REQUEST */
	int32		node_base;		/* SF_RECORD_CONFIRM: the node id and span */
	int32		node_span;		/* confirmed */
} SfRecord;

/* What a change of the lead asks of the caller (sf_rule_lead). */
typedef struct SfLeadStep
{
	int64		bound_ms;		/* the lead IDs may have from now on */
	int64		raise_ms;		/* a larger one, once the record is on every
								 * standby the primary can see; or -1 */
	bool		log;			/* write the leads into WAL (and wait for
								 * the standbys before raise_ms) */
} SfLeadStep;

/* Where generation resumes from a state file (sf_rule_resume). */
typedef struct SfResume
{
	int64		last;			/* packed last ID, -1 if none */
	int64		reserved_ms;	/* the reservation in force */
	int64		durable_ms;		/* the reservation the file holds */
} SfResume;

/*
 * What a load of the state tells (startcheck.c gathers it,
 * sf_rule_start_request judges).  The signal files and pg_control's state
 * are seen only at the postmaster's first load with the preload
 * (first_look); a crash re-initialisation sees its own crash only.
 */
typedef struct SfStartFacts
{
	bool		first_look;		/* the postmaster's first load, preloaded */
	bool		standby_signal;
	bool		recovery_signal;
	bool		backup_label;
	bool		control_in_recovery;	/* pg_control: shut down in recovery,
										 * or in archive recovery */
	bool		confirm_restore;	/* snowflake.confirm_restore */
	bool		moved;			/* the file was written at another path */
	bool		node_changed;	/* a node id is set, and the node field it
								 * gives on the file's timeline is not the
								 * one the file records */
	bool		in_span;		/* ... and lies in the span of the node id
								 * the file was written under
								 * (sf_rule_node_in_span) */
} SfStartFacts;

/*
 * Why a server is to confirm its node id before it mints
 * (sf_rule_start_request): what this start asks, or a request recorded
 * earlier and not confirmed since.
 */
typedef enum SfAsk
{
	SF_ASK_NONE,
	SF_ASK_CONTINUED_BACKUP,	/* base backup without a signal file */
	SF_ASK_CONTINUED_STANDBY,	/* standby or rewound, without standby.signal */
	SF_ASK_RESTORE_ARCHIVE,		/* recovery.signal, confirm_restore on */
	SF_ASK_RESTORE_BACKUP,		/* backup_label, confirm_restore on */
	SF_ASK_MOVED,				/* another path, confirm_restore on */
	SF_ASK_IN_SPAN,				/* a node id in the recorded span */
	SF_ASK_PENDING_CONTINUED,	/* recorded earlier: continued timeline */
	SF_ASK_PENDING_RESTORE,		/* recorded earlier: restore (with
								 * confirm_restore on) */
	SF_ASK_PENDING_IN_SPAN		/* recorded earlier: node id in span */
} SfAsk;

extern SNOWFLAKE_INTERNAL int64 sf_rule_floor(const SfLeads *leads,
											 int64 now_unix_ms,
											 int64 own_drift_ms);
extern SNOWFLAKE_INTERNAL void sf_rule_resume(const SnowflakeStateFile *f,
											 const SnowflakeLayout *layout,
											 int node_field, SfResume *r);
extern SNOWFLAKE_INTERNAL int64 sf_rule_start_bound(int64 drift_ms);
extern SNOWFLAKE_INTERNAL SfLeadStep sf_rule_lead(SfLeads *leads, int64 bound_ms,
												 int64 drift_ms,
												 int64 issued_unix_ms);
extern SNOWFLAKE_INTERNAL int sf_rule_raise_lagging(uint64 record_lsn,
												   const uint64 *flushed, int n);
extern SNOWFLAKE_INTERNAL SfOrder sf_rule_order(SfPos seen,
											   const SfTimelineStep *seen_steps,
											   int nseen, SfPos rec,
											   const SfTimelineStep *rec_steps,
											   int nrec);
extern SNOWFLAKE_INTERNAL bool sf_rule_replay(SfHistory *h, const SfRecord *rec,
											 SfPos pos, SfOrder order);
extern SNOWFLAKE_INTERNAL bool sf_rule_confirm(SfHistory *h, int node_id,
											  int span);
extern SNOWFLAKE_INTERNAL int sf_rule_node_offset(const uint32 *chain, int n,
												 int span);
extern SNOWFLAKE_INTERNAL bool sf_rule_node_in_span(const SfHistory *h,
												   int node_id, int span);
extern SNOWFLAKE_INTERNAL SfAsk sf_rule_start_request(const SfStartFacts *facts,
													 SfHistory *h,
													 uint64 new_id);

#endif							/* SNOWFLAKE_HISTORY_H */
