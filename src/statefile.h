/*-------------------------------------------------------------------------
 *
 * statefile.h
 *	  The formats of the state file, "snowflake.state", and of the file of
 *	  the server's life without the preload, "snowflake.settings"; reading
 *	  them and replacing them; and what the start logic reads of
 *	  PostgreSQL's own files: pg_control and timeline history files
 *	  (statefile.c).
 *
 * Neither file holds a lock of its own: their callers serialise writes
 * with the "snowflake" LWLock (shared.h), or write from the postmaster
 * alone.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_STATEFILE_H
#define SNOWFLAKE_STATEFILE_H

#include "port/pg_crc32c.h"

#include "layout.h"

/* The state file, relative to the data directory, and its temporary twin. */
#define SNOWFLAKE_STATE_FILE		"snowflake.state"
#define SNOWFLAKE_STATE_TMP_FILE	"snowflake.state.tmp"

#define SNOWFLAKE_STATE_MAGIC	0x534E464B	/* "SNFK" */
#define SNOWFLAKE_STATE_VERSION	4

/*
 * The state file's contents, written and read as one block (136 bytes, no
 * padding inside: every field sits at a multiple of its size).  Version 4
 * is snowflake 1.3's.  Version 3 (snowflake 1.2, 112 bytes) recorded the
 * clean shutdown it was written at and the postmaster that wrote it instead
 * of the fields from floor_ms on, and a time a lead was lowered where
 * horizon_unix_ms is; version 2 (1.1) ended after that field, version 1
 * (1.0) after flags.  All three are still read (fileformat.c).
 *
 * The fields from max_lead_ms to node_span are what the history knows
 * (history.h, SfHistory): statefile.c and fileformat.c only carry them.
 */
typedef struct SnowflakeStateFile
{
	uint32		magic;
	uint32		version;
	int64		epoch_ms;
	int32		timestamp_bits;
	int32		node_bits;
	int32		sequence_bits;
	int32		node_id;		/* the node field of the last IDs */
	int64		reserved_ms;	/* no issued ID has a later millisecond */
	int64		last;			/* packed last ID after a clean shutdown, or
								 * -1 while the server runs */
	uint32		flags;			/* none in version 4 */
	uint32		timeline;		/* timeline IDs were last issued on, 0 if
								 * unknown */
	uint64		system_id;		/* system identifier, 0 if unknown */
	int64		max_lead_ms;	/* the history's lead (SfLeads.lead_ms) */
	int64		horizon_unix_ms;	/* and its horizon (SfLeads) */
	/* From version 4 (snowflake 1.3): */
	int64		floor_ms;		/* the highest floor applied, ms since the
								 * epoch, or -1 */
	uint64		place;			/* a hash of the data directory's path when
								 * written, 0 if unknown (shared.c) */
	uint64		pos_lsn;		/* the last WAL record reflected: its end */
	uint64		request_id;		/* a request to confirm the node id, or 0 */
	uint32		pos_tli;		/* ... and that record's timeline, or 0 */
	uint32		floor_cause;	/* why that floor: SnowflakeFloorCause bits */
	uint32		request_kind;	/* the request's SfRequestKind */
	int32		node_base;		/* the node id the history mints under */
	int32		node_span;		/* and its span, 0 if unknown */
	pg_crc32c	crc;			/* over everything above */
} SnowflakeStateFile;

/*
 * Why a floor was applied, as recorded with it (bits: a floor placed while
 * an earlier one was still ahead of the clock keeps its causes): the error
 * of a call that cannot be served within the lead names them
 * (generator.c).
 */
typedef enum SnowflakeFloorCause
{
	SNOWFLAKE_FLOOR_START = 0x01,	/* a start of the server, or of its shared
									 * state after a crash */
	SNOWFLAKE_FLOOR_RESTORE = 0x02, /* a start from a base backup or archive
									 * recovery */
	SNOWFLAKE_FLOOR_FAILOVER = 0x04 /* another timeline or system: a
									 * promotion */
} SnowflakeFloorCause;

/*
 * Version 3 said in its flags that the server started from a restore with
 * snowflake.confirm_restore on and that its node id was yet to be
 * confirmed; version 4 records a request with its id and kind instead
 * (fileformat.c converts it).
 */
#define SNOWFLAKE_STATE_UNCONFIRMED	0x0002

/*
 * What the start logic needs of pg_control: the cluster's state when the
 * file was last written (a DBState), the timeline of the latest checkpoint
 * and of the minimum recovery point (0 if none), and the system
 * identifier.
 */
typedef struct SnowflakeControl
{
	uint32		state;
	uint32		timeline;
	uint32		min_recovery_tli;
	uint64		system_id;
} SnowflakeControl;

/* The step of a file write that failed, and its errno. */
typedef enum SfWriteStep
{
	SF_WRITE_CREATE,
	SF_WRITE_WRITE,
	SF_WRITE_FSYNC,
	SF_WRITE_CLOSE,
	SF_WRITE_RENAME,
	SF_WRITE_FSYNC_DIR
} SfWriteStep;

typedef struct SfWriteFailure
{
	SfWriteStep step;
	int			err;
	const char *file;			/* the file replaced (a constant) */
	const char *tmp_file;		/* and its temporary twin */
} SfWriteFailure;

/*
 * Without the preload (PostgreSQL 17 and later): the node id, span and
 * layout fixed for the life of the server (its postmaster), kept across a
 * crash re-initialisation, which drops the DSM registry (shared.c).  Not
 * fsynced: a power loss ends the postmaster's life too.
 *
 * The file is serialized field by field, in the machine's byte order (as
 * the data directory's other files), with no padding:
 *
 *	offset	size
 *	0		4	magic, SNOWFLAKE_LIFE_MAGIC
 *	4		4	format version, SNOWFLAKE_LIFE_VERSION
 *	8		4	the postmaster's PID
 *	12		8	its start time (PgStartTime)
 *	20		8	the epoch, Unix milliseconds
 *	28		4	timestamp bits
 *	32		4	node bits
 *	36		4	sequence bits
 *	40		4	node id (-1: not set)
 *	44		4	node id span
 *	48		4	CRC-32C of the 48 bytes above
 *
 * A later format keeps the first 8 bytes and raises the version.  The file
 * matters only within one life of the postmaster, so a file that cannot be
 * read (another format, corrupt) is replaced, the values taken from the
 * server configuration; shared.c logs why.
 */
#define SNOWFLAKE_LIFE_FILE		"snowflake.settings"
#define SNOWFLAKE_LIFE_TMP_FILE	"snowflake.settings.tmp"
#define SNOWFLAKE_LIFE_MAGIC	0x534E4653	/* "SNFS" */
#define SNOWFLAKE_LIFE_VERSION	1
#define SNOWFLAKE_LIFE_SIZE		52
/* Builds of 1.2 before its release wrote an unversioned struct image. */
#define SNOWFLAKE_LIFE_OLD_MAGIC	0x534E464C	/* "SNFL" */

/* The values the file records, in memory. */
typedef struct SnowflakeLifeFile
{
	int32		postmaster_pid; /* the postmaster these values belong to */
	int64		start_time;		/* and its start (PgStartTime) */
	SnowflakeLayout layout;
	int32		node_id;
	int32		node_id_span;
} SnowflakeLifeFile;

extern SNOWFLAKE_INTERNAL int snowflake_life_read(SnowflakeLifeFile *f,
											   char *detail, size_t len);
extern SNOWFLAKE_INTERNAL bool snowflake_life_write(const SnowflakeLifeFile *f,
												 SfWriteFailure *failure);

extern SNOWFLAKE_INTERNAL int snowflake_state_read(SnowflakeStateFile *f, int *err,
												char *detail, size_t len);
extern SNOWFLAKE_INTERNAL bool snowflake_state_write(const SnowflakeStateFile *f,
												  SfWriteFailure *failure);
extern SNOWFLAKE_INTERNAL void snowflake_report_write_failure(int elevel,
														   const SfWriteFailure *failure,
														   const char *detail);
extern SNOWFLAKE_INTERNAL void snowflake_report_write_failure_hint(int elevel,
																const SfWriteFailure *failure,
																const char *detail,
																const char *hint);
extern SNOWFLAKE_INTERNAL bool snowflake_control_read(SnowflakeControl *c);
/* The most ancestors of a timeline the node field's offset is taken from. */
#define SNOWFLAKE_MAX_ANCESTORS	1024

extern SNOWFLAKE_INTERNAL int snowflake_history_parse(const char *buf, size_t n,
												   uint32 tli, uint32 *ancestors,
												   int max);
extern SNOWFLAKE_INTERNAL int snowflake_timeline_offset(uint32 tli, int span);

#endif							/* SNOWFLAKE_STATEFILE_H */
