/*-------------------------------------------------------------------------
 *
 * rules13.h
 *	  The rules of snowflake 1.3 (commit 92d2e11), the ones issue 52's
 *	  findings break, as pure functions: test/model/rules13.c transcribes
 *	  them from shared.c, reservation.c, startcheck.c, statefile.c and
 *	  generator.c, without I/O, locks or errors, so that test/model/replay.c
 *	  can drive them with the model checker's trails (snowflake.pml built
 *	  with -DRULES13 names the same functions).
 *
 * Test only: never part of the extension.  Times are milliseconds, as in
 * the code transcribed.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_RULES13_H
#define SNOWFLAKE_RULES13_H

#include "layout.h"
#include "statefile.h"

/* The history's largest lead, as SnowflakeShared and the state file keep it. */
typedef struct R13Lead
{
	int64		max_lead_ms;
	int64		lead_lowered_ms;	/* 0: in force */
} R13Lead;

/* What the 1.3 rules read and change of a server's shared state. */
typedef struct R13Gen
{
	int64		last;			/* packed last ID, -1 if none */
	int64		reserved_ms;	/* the reservation in force */
	int64		lead_bound_ms;	/* lead_bound_ms */
	R13Lead		lead;			/* max_lead_ms, lead_lowered_ms */
	int64		wal_lead_ms;	/* the lead this life wrote into WAL, -1 */
	int64		wal_lowered_ms;
	bool		floor_pending;
	int64		floor_ms;		/* the highest floor applied, -1 */
	bool		lineage_checked;
} R13Gen;

/* What snowflake_extend_reservation did (r13_extend_reservation). */
typedef struct R13Write
{
	int64		lead;			/* snowflake_floor_lead's value */
	int64		floor_ms;		/* the floor applied, -1 if none */
	bool		write;			/* the state file written, the bound published */
	bool		log;			/* a WAL record of the lead written */
} R13Write;

/* What a load sees (startcheck.c: signal files, pg_control, the file). */
typedef struct R13Facts
{
	bool		first_look;
	bool		standby_signal;
	bool		recovery_signal;
	bool		backup_label;
	bool		control_in_recovery;	/* shut down in recovery, or in
										 * archive recovery */
	bool		confirm_restore;
	bool		moved;			/* the file records another place */
	bool		node_id_set;
	int			file_node_field;	/* the configured field on the file's
									 * timeline */
} R13Facts;

/* A request to confirm the node id (the state file's flags). */
#define R13_REQ_NONE		0
#define R13_REQ_RESTORE		1
#define R13_REQ_CONTINUED	2

/* 1.3's state file flags (statefile.h at 92d2e11, version 3) */
#define R13_STATE_UNCONFIRMED	0x0002
#define R13_STATE_CONTINUED		0x0004

extern int64 r13_history_lead(R13Lead *s, int64 drift, int64 now_unix_ms);
extern int64 r13_raise_to_floor(R13Gen *g, const SnowflakeLayout *layout,
								int64 now_ms, int64 lead);
extern bool r13_log_lead(R13Gen *g);
extern void r13_extend_reservation(R13Gen *g, const SnowflakeLayout *layout,
								   int64 needed_ms, int64 now_ms,
								   int64 drift, int64 ahead_ms, R13Write *w);
extern bool r13_replay_lead(R13Lead *s, int64 max_lead_ms,
							int64 lead_lowered_ms);
extern int	r13_start_request(const R13Facts *facts, uint32 *flags,
							  int file_node_id, bool *is_new);
extern int	r13_chain_offset(const uint32 *chain, int n, int span);
extern int	r13_node_field(int node_id, int span, const uint32 *chain, int n);
extern void r13_resume(R13Gen *g, const SnowflakeStateFile *f,
					   const SnowflakeLayout *layout, int node);
extern int64 r13_issue_limit(const R13Gen *g, int64 drift);

#endif							/* SNOWFLAKE_RULES13_H */
