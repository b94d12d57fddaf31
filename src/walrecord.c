/*-------------------------------------------------------------------------
 *
 * walrecord.c
 *	  The history's largest lead in WAL: a custom WAL resource manager with
 *	  one record, which carries the largest lead over the clock that any ID
 *	  of this server's history may have (snowflake.max_drift_ms, as the
 *	  state file records it), so that every server that replays the WAL (a
 *	  standby, a restore, crash recovery) knows it.
 *
 * Every start places the first ID past the clock plus that lead (shared.c).
 * A standby or a backup made before the lead was raised on the primary
 * carries the old value in its state file and its configuration; the
 * raise reaches it through this record instead.  The record is written,
 * and flushed, before IDs may lead the clock by the new value: at the
 * first reservation write of a server's life and whenever the lead
 * changes (reservation.c).  Its redo records the lead in the replaying
 * server's state file (reservation.c, snowflake_replay_lead).  What no WAL
 * can carry: a restore to a point before the record, or a copy that
 * replays none of it (a cold copy, a volume snapshot of an older state).
 *
 * Why not the reservation too: it would have to be flushed before the IDs
 * it covers are handed out, adding a WAL flush to every reservation write,
 * and an asynchronous standby can still miss the last one; the floor covers
 * those IDs by the clock and the lead, which the restore conditions state
 * (docs/guarantees.md).
 *
 * Custom resource managers exist from PostgreSQL 15 on and are registered
 * only from shared_preload_libraries; without the preload nothing is
 * written here, and the lead is capped instead (config.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xloginsert.h"
#include "access/xlogreader.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"

#include "compat.h"
#include "reservation.h"
#include "walrecord.h"

/* The record's info code, and its contents. */
#define XLOG_SNOWFLAKE_LEAD		0x00

typedef struct SfLeadRecord
{
	int64		max_lead_ms;	/* the history's largest lead */
	int64		lead_lowered_ms;	/* when a lower one was first seen, or 0 */
} SfLeadRecord;

static void
sf_rmgr_redo(XLogReaderState *record)
{
	uint8		info = XLogRecGetInfo(record) & ~XLR_INFO_MASK;
	SfLeadRecord rec;

	if (info != XLOG_SNOWFLAKE_LEAD || XLogRecGetDataLen(record) != sizeof(rec))
		elog(PANIC, "snowflake redo: unknown record (info %u, %u bytes)",
			 info, (unsigned) XLogRecGetDataLen(record));
	memcpy(&rec, XLogRecGetData(record), sizeof(rec));
	snowflake_replay_lead(rec.max_lead_ms, rec.lead_lowered_ms);
}

static void
sf_rmgr_desc(StringInfo buf, XLogReaderState *record)
{
	SfLeadRecord rec;

	if (XLogRecGetDataLen(record) != sizeof(rec))
		return;
	memcpy(&rec, XLogRecGetData(record), sizeof(rec));
	appendStringInfo(buf, "max_lead %lld ms", (long long) rec.max_lead_ms);
	if (rec.lead_lowered_ms != 0)
		appendStringInfo(buf, ", lowered since %lld", (long long) rec.lead_lowered_ms);
}

static const char *
sf_rmgr_identify(uint8 info)
{
	return (info & ~XLR_INFO_MASK) == XLOG_SNOWFLAKE_LEAD ? "LEAD" : NULL;
}

static RmgrData sf_rmgr = {
	.rm_name = SNOWFLAKE_RMGR_NAME,
	.rm_redo = sf_rmgr_redo,
	.rm_desc = sf_rmgr_desc,
	.rm_identify = sf_rmgr_identify
};

/*
 * snowflake_wal_init
 *		Register the resource manager when the library is being preloaded;
 *		called from _PG_init.  Fails the server's start if another
 *		extension took the id.
 */
void
snowflake_wal_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	RegisterCustomRmgr(SNOWFLAKE_RMGR_ID, &sf_rmgr);
}

/*
 * snowflake_wal_log_lead
 *		Write the history's largest lead into WAL and flush it.  Called with
 *		the snowflake LWLock held, outside recovery, with the preload; may
 *		raise an error (as any WAL insertion).
 */
void
snowflake_wal_log_lead(int64 max_lead_ms, int64 lead_lowered_ms)
{
	SfLeadRecord rec;
	XLogRecPtr	lsn;

	rec.max_lead_ms = max_lead_ms;
	rec.lead_lowered_ms = lead_lowered_ms;
	XLogBeginInsert();
	XLogRegisterData((char *) &rec, sizeof(rec));
	lsn = XLogInsert(SNOWFLAKE_RMGR_ID, XLOG_SNOWFLAKE_LEAD);
	XLogFlush(lsn);
}
