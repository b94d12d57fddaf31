/*-------------------------------------------------------------------------
 *
 * shared.h
 *	  The generator's shared state, SnowflakeShared, and its life (shared.c):
 *	  creating or attaching it, loading it from the state file, recording
 *	  the exact last ID at shutdown.
 *
 * Where SnowflakeShared lives (one instance per server):
 *	- preloaded (shared_preload_libraries, every major): in the main shared
 *	  memory, created and loaded by the postmaster at startup and after a
 *	  crash re-initialisation (shared.c, sf_shmem_startup);
 *	- not preloaded, PostgreSQL 17 and later: in a segment of the DSM
 *	  registry, created by the first process that calls a snowflake
 *	  function, configured from the server configuration by the first one
 *	  under "lock", and loaded from the state file by the first one that
 *	  needs the generator (shared.c, snowflake_attach).  A crash
 *	  re-initialisation drops the registry; the next use creates it again,
 *	  with the node id, span and layout of the server's life, kept in the
 *	  file "snowflake.settings" by the process that first configured it
 *	  (or, if that write failed, by the first call that generates IDs:
 *	  decoding never waits for that write, generation does).
 *	  Nothing in the struct may be a pointer into memory that differs
 *	  between processes: the segment and this library may be mapped at
 *	  other addresses in each of them.
 *
 * Locking rules for SnowflakeShared:
 *	- the fields above "lock_data" are fixed once "configured" is set
 *	  (by the postmaster at initialisation, or under "lock" by the first
 *	  process that attaches the DSM segment) and read without a lock
 *	  afterwards, except "refusals", set once when the state is loaded and
 *	  whose bits are only ever cleared after that, one at a time, by an
 *	  adoption or the confirmation of a restored server's node id while
 *	  holding "lock" exclusively (read without it, as one aligned word: a
 *	  refusal is only ever lifted, after the state file says so, and
 *	  "loaded" is published after it with a barrier), and the fields marked
 *	  "lock" below, read and written only under it;
 *	- "mutex" (a spinlock) protects the generator state, the counters and
 *	  the background writer's registration.  It is held for a few
 *	  instructions: the clock is read before taking it, and no error,
 *	  allocation, system call or sleep happens while it is held.  Only
 *	  generator.c (the hot path; the counters and the generator's position
 *	  for others), reservation.c (publishing a reservation, the floor, an
 *	  adoption) and shared.c (the writer's registration, the last ID at
 *	  shutdown) take it;
 *	- "worker_latch" is set by the background writer (worker.c) when it
 *	  starts and cleared when it exits, and read without a lock: a caller
 *	  that sets a latch its owner has just left wakes nobody, harmlessly;
 *	  "writer_sleeping" likewise, set by the writer before it sleeps with
 *	  no timer and cleared when it wakes; a wake-up missed in that window
 *	  costs at most one caller's own reservation write, never an ID;
 *	- "lock" (an LWLock of the "snowflake" tranche: a named tranche when
 *	  preloaded, the segment's "lock_data" otherwise) serialises writes of
 *	  the state file, and the changes that go with them (a new
 *	  reservation, the promotion floor, an adoption's new "last"), and the
 *	  configuring and loading of a DSM segment.  The spinlock may be taken
 *	  while holding it, never the other way round.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_SHARED_H
#define SNOWFLAKE_SHARED_H

#include "datatype/timestamp.h"
#include "port/pg_bitutils.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "storage/spin.h"

#include "history.h"
#include "layout.h"
#include "nodesource.h"
#include "statefile.h"

/* Name of the LWLock tranche and of the shared memory segment. */
#define SNOWFLAKE_NAME	"snowflake"

/*
 * Marks an initialised SnowflakeShared of this struct layout.  Change it
 * whenever the struct changes: a library replaced while a server runs
 * without the preload must not read a segment its predecessor created.
 */
#define SNOWFLAKE_SHARED_MAGIC	0x534E4637	/* "SNF7" */

/* Size of the DSM registry segment: fixed, room to spare. */
#define SNOWFLAKE_DSM_SIZE	8192

/* Why a floor applies, as stored in shared memory (a message fragment). */
#define SNOWFLAKE_REASON_LEN	160

/* At most one LOG line per this many milliseconds for a repeated problem. */
#define SNOWFLAKE_LOG_INTERVAL_MS	60000

/*
 * Why the generator refuses to run: independent obligations, each decided
 * when the state is loaded (shared.c, sf_load) whatever else is refused,
 * and each lifted only by its own remedy, under "lock" (an adoption, the
 * confirmation of a restore, a restart with the cause removed).  No
 * obligation is ever added after the load.  The order of the values is the
 * order in which calls report them (the first one in force) and in which
 * the remedies must come: one that rewrites the state file waits for the
 * obligations before it, so that it never writes over what they protect.
 */
typedef enum SnowflakeRefusal
{
	SNOWFLAKE_STATE_UNUSABLE,	/* state file unreadable or corrupt */
	SNOWFLAKE_LAYOUT_CHANGED,	/* epoch/layout differ from the state file */
	SNOWFLAKE_NODE_UNSET,		/* snowflake.node_id is -1 */
	SNOWFLAKE_NODE_CHANGED,		/* a derived node id differs from the one
								 * of this data directory's IDs */
	SNOWFLAKE_NODE_UNCONFIRMED, /* started from a restore, or left recovery
								 * without a new timeline: the node id is to
								 * be confirmed (snowflake_confirm_restore) */
	SNOWFLAKE_REFUSALS			/* how many there are */
} SnowflakeRefusal;

/* The bit of a refusal in SnowflakeShared.refusals. */
#define SNOWFLAKE_REFUSED(why)	((uint32) 1 << (why))

/* The refusals that come before why (see SnowflakeRefusal). */
#define SNOWFLAKE_REFUSED_BEFORE(why)	(SNOWFLAKE_REFUSED(why) - 1)

/* The first refusal of a set that is not empty, as calls report it. */
static inline SnowflakeRefusal
snowflake_first_refusal(uint32 refusals)
{
	Assert(refusals != 0);
	return (SnowflakeRefusal) pg_rightmost_one_pos32(refusals);
}

/* Counters shown by snowflake_stats(), protected by the spinlock. */
typedef struct SnowflakeCounters
{
	int64		issued;			/* IDs handed out */
	int64		borrowed_ms;	/* milliseconds entered ahead of the clock */
	int64		regressions;	/* backward clock steps seen */
	int64		max_regression_ms;	/* the largest of them */
	int64		waits;			/* calls that slept for the clock */
	int64		wait_ms;		/* total time slept */
	int64		refused;		/* calls that raised an error */
	int64		reservation_writes; /* state file writes */
	int64		background_writes;	/* ... of them by the background writer */
	int64		caller_writes;	/* ... of them by a calling backend */
	int64		caller_wait_us; /* time calls spent on reservation writes,
								 * their own or one they waited for */
	TimestampTz reset_time;		/* when the counters were last zeroed */
} SnowflakeCounters;

typedef struct SnowflakeShared
{
	uint32		magic;			/* SNOWFLAKE_SHARED_MAGIC once initialised */
	bool		preloaded;		/* in the main shared memory */
	bool		configured;		/* the fields below are set */
	bool		loaded;			/* the state file has been read */

	/* Fixed once configured (see the locking rules above). */
	SnowflakeLayout layout;
	int			node_id;		/* -1 when not set */
	int			node_id_span;	/* node ids taken in turn, one per timeline */
	bool		node_id_derived;	/* from the host name or the environment */
	char		node_id_source[SNOWFLAKE_SOURCE_LEN];	/* where node_id came
														 * from, for the stats
														 * ("" when not set) */
	uint32		refusals;		/* SNOWFLAKE_REFUSED() bits, 0 when ready */
	SfAsk		ask;			/* why SNOWFLAKE_NODE_UNCONFIRMED stands */
	char		refusal_detail[SNOWFLAKE_REFUSALS][2 * SNOWFLAKE_DETAIL_LEN];
	int			refusal_errno;	/* errno of a state file failure */
	/* With SNOWFLAKE_LAYOUT_CHANGED: where the recorded layout's IDs end. */
	int64		recorded_end_unix_ms;	/* their last millisecond, or -1 */
	int64		recorded_max_id;	/* a bound above every one, or -1 */
	int64		resume_ms;		/* millisecond of the last ID at startup (or
								 * an adoption), before any of this life */

	/* Without the preload: the LWLock and its tranche. */
	int			tranche_id;
	LWLock		lock_data;

	/*
	 * Without the preload: the values in force are not yet recorded in the
	 * settings file (its write failed when they were fixed).  Set before
	 * "configured", cleared under lock once the file is written; read
	 * without it as a hint (it only ever goes from true to false).
	 */
	bool		life_pending;

	/*
	 * The node field of this life's IDs shifted into place: set under lock
	 * at the life's first reservation write (the lineage check), before any
	 * ID of the life is issued, and published to callers by the spinlock
	 * with that reservation; read without a lock by a caller that has been
	 * issued an ID.  node_id << sequence_bits until then.
	 */
	int64		node_part;

	/*
	 * Protected by lock: the lineage and the floor (see reservation.c).  The
	 * recorded_* fields are what the state file records: changed only after
	 * a write that records the new values has succeeded.
	 */
	uint64		recorded_system_id; /* as in the state file, 0 if unknown */
	uint32		recorded_tli;	/* as in the state file, 0 if unknown */
	int			recorded_node;	/* node field as in the state file */
	bool		lineage_checked;	/* this life's lineage is recorded (its
									 * first write) */
	bool		floor_pending;	/* the next write applies the floor: set at
								 * every load, cleared by the life's first
								 * write */
	char		floor_reason[SNOWFLAKE_REASON_LEN]; /* why, for the log */
	int			floor_cause;	/* and as a SnowflakeFloorCause */
	bool		file_foreign;	/* the state file may record another
								 * server's IDs (a standby's or a copy's
								 * start, another timeline or system), not
								 * only this data directory's own */
	int64		floor_ms;		/* the highest floor applied (recorded in the
								 * file with its cause), ms since epoch */
	int64		floor_lead_ms;	/* the lead over the clock this life's floor
								 * was placed with, 0 before it */
	int			recorded_floor_cause;	/* that floor's SnowflakeFloorCause
										 * bits */
	SfHistory	history;		/* what the state file knows of the
								 * history: its leads, the last WAL record
								 * it reflects, a request to confirm the
								 * node id, the node span (history.h) */
	SfLeads		wal_leads;		/* the leads this life last wrote into WAL
								 * (lead_ms -1: none yet) */
	uint64		wal_leads_lsn;	/* and the end of that record */
	bool		request_logged; /* this life wrote the pending request into
								 * WAL */
	uint64		place;			/* hash of the data directory's path */
	int64		early_failure_logged_ms;	/* Unix ms of the last LOG line */

	/* The background writer's latch while it runs, else NULL. */
	Latch	   *volatile worker_latch;
	/* Set while the writer sleeps until woken (it saw no IDs for a while). */
	volatile bool writer_sleeping;

	/*
	 * Protected by mutex.  Written for every ID, so kept on cache lines of
	 * their own, away from the fixed fields every backend reads.
	 */
#ifdef pg_attribute_aligned
	slock_t		mutex pg_attribute_aligned(PG_CACHE_LINE_SIZE);
#else
	slock_t		mutex;
#endif
	int64		last;			/* packed (ms << sequence_bits | seq) of the
								 * last issued ID */
	int64		reserved_ms;	/* IDs up to this millisecond may be issued:
								 * a restart resumes above it */
	int64		durable_ms;		/* the reservation in the file (above
								 * reserved_ms after a clean shutdown) */
	int64		lead_bound_ms;	/* every process issues IDs at most this far
								 * ahead of the clock, whatever its own
								 * max_drift_ms: never above the history's
								 * lead that every standby the primary can
								 * see knows (raised only once they have
								 * the record, lowered at once; see
								 * reservation.c) */
	int64		raise_ms;		/* a larger bound waiting for the standbys to
								 * flush the WAL record that ends at
								 * raise_lsn, or -1 */
	uint64		raise_lsn;
	int64		clock_ms;		/* latest wall clock reading, ms since epoch */
	int64		clock_high_ms;	/* the highest reading before the clock last
								 * went backwards */
	SnowflakeCounters counters;
	int64		last_write_unix_ms; /* Unix ms of this life's last reservation
									 * write, or -1; not a counter: a reset
									 * leaves it */
	int64		regression_logged_ms;	/* clock_ms when a regression was last
										 * logged */
	/* The background writer: the one running, and when one was asked for. */
	int			worker_pid;		/* its PID while it runs, else 0 */
	int64		worker_requested_ms;	/* Unix ms of the last dynamic
										 * registration, or 0 */
	int64		worker_failure_logged_ms;	/* Unix ms of the last LOG line
											 * about a failed registration */
} SnowflakeShared;

extern SNOWFLAKE_INTERNAL SnowflakeShared *snowflake_shared;
extern SNOWFLAKE_INTERNAL LWLock *snowflake_lock;

extern SNOWFLAKE_INTERNAL void snowflake_shared_init(void);
extern SNOWFLAKE_INTERNAL SnowflakeShared *snowflake_attach(void);
extern SNOWFLAKE_INTERNAL SnowflakeShared *snowflake_require_shared(void);
extern SNOWFLAKE_INTERNAL bool snowflake_life_settle(SnowflakeShared *s,
												  SfWriteFailure *failure);
extern SNOWFLAKE_INTERNAL int snowflake_node_field(const SnowflakeShared *s,
												 uint32 tli);
extern SNOWFLAKE_INTERNAL void snowflake_state_image(SnowflakeStateFile *f,
												  const SnowflakeShared *s,
												  int64 reserved_ms, int64 last);

/* The background writer's registration, under the spinlock. */
extern SNOWFLAKE_INTERNAL bool snowflake_writer_request(SnowflakeShared *s,
													 int64 now_unix_ms,
													 int64 interval_ms);
extern SNOWFLAKE_INTERNAL bool snowflake_writer_log_due(SnowflakeShared *s,
													 int64 now_unix_ms);
extern SNOWFLAKE_INTERNAL int snowflake_writer_claim(SnowflakeShared *s, int pid);
extern SNOWFLAKE_INTERNAL void snowflake_writer_release(SnowflakeShared *s, int pid,
													 bool clean);

#endif							/* SNOWFLAKE_SHARED_H */
