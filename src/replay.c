/*-------------------------------------------------------------------------
 *
 * replay.c
 *	  The replay of snowflake's WAL record (walrecord.c): the custom resource
 *	  manager, registered when the library is preloaded, whose redo merges
 *	  each record into what the replaying server knows of its history
 *	  (history.c, sf_rule_replay) and records the result in its state file,
 *	  so that every later start of that server (a standby promoted, a
 *	  restore, a restart after a crash) counts it.
 *
 * A record is placed by its timeline and end LSN; the state file records
 * the position of the last record it reflects, so that a record replayed
 * again (after a restart, from an earlier checkpoint) is recognised as
 * seen and changes nothing, and one of an abandoned branch is merged, not
 * obeyed.  The timelines' ancestry comes from their history files
 * (readTimeLineHistory).  A record that needs a later release of snowflake
 * stops replay, naming it: its redo cannot skip what it does not
 * understand.
 *
 * Runs in the startup process (recovery, a standby's replay); takes the
 * "snowflake" LWLock to change the shared state and write the state file
 * (shared.h).  Nothing here is called by the rest of the library.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/timeline.h"
#include "access/xlog.h"
#include "access/xlog_internal.h"
#include "access/xlogreader.h"
#include "access/xlogrecovery.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/pg_list.h"

#include "compat.h"
#include "history.h"
#include "replay.h"
#include "shared.h"
#include "statefile.h"
#include "walrecord.h"

/* The most steps of a timeline's ancestry compared (more: diverged). */
#define SF_MAX_STEPS	64

/*
 * A timeline's ancestry as sf_rule_order takes it, oldest first, itself
 * last (end SF_POS_END); returns the number of steps.
 */
static int
sf_timeline_steps(uint32 tli, SfTimelineStep *steps)
{
	List	   *history = readTimeLineHistory((TimeLineID) tli);
	int			n = Min(list_length(history), SF_MAX_STEPS);
	ListCell   *lc;
	int			i = n;

	/* readTimeLineHistory lists the newest first. */
	foreach(lc, history)
	{
		TimeLineHistoryEntry *e = (TimeLineHistoryEntry *) lfirst(lc);

		if (--i < 0)
			break;
		steps[i].tli = e->tli;
		steps[i].end = XLogRecPtrIsInvalid(e->end) ? SF_POS_END : e->end;
	}
	list_free_deep(history);
	return n;
}

/* How the record at rec relates to what the state of s reflects. */
static SfOrder
sf_replay_order(const SnowflakeShared *s, SfPos rec)
{
	SfTimelineStep seen_steps[SF_MAX_STEPS];
	SfTimelineStep rec_steps[SF_MAX_STEPS];
	SfPos		seen = s->history.pos;
	int			nseen = 0;
	int			nrec;

	/* A position of another system's WAL says nothing of this one. */
	if (s->recorded_system_id != 0 &&
		s->recorded_system_id != GetSystemIdentifier())
		seen.tli = 0;
	if (seen.tli != 0 && seen.tli != rec.tli)
		nseen = sf_timeline_steps(seen.tli, seen_steps);
	nrec = sf_timeline_steps(rec.tli, rec_steps);
	return sf_rule_order(seen, seen_steps, nseen, rec, rec_steps, nrec);
}

/*
 * sf_replay_refusal
 *		A request or a confirmation replayed by a server in recovery: it
 *		mints nothing now, and when it is promoted it waits for a
 *		confirmation exactly while its history has a request pending.
 */
static void
sf_replay_refusal(SnowflakeShared *s)
{
	if (s->history.request_id == 0)
	{
		s->refusals &= ~SNOWFLAKE_REFUSED(SNOWFLAKE_NODE_UNCONFIRMED);
		return;
	}
	if (s->refusals & SNOWFLAKE_REFUSED(SNOWFLAKE_NODE_UNCONFIRMED))
		return;
	s->ask = s->history.request_kind == SF_REQUEST_CONTINUED ?
		SF_ASK_PENDING_CONTINUED :
		s->history.request_kind == SF_REQUEST_IN_SPAN ?
		SF_ASK_PENDING_IN_SPAN : SF_ASK_PENDING_RESTORE;
	strlcpy(s->refusal_detail[SNOWFLAKE_NODE_UNCONFIRMED],
			"This server replayed the WAL of a server whose node id is to be confirmed, and no confirmation followed.",
			sizeof(s->refusal_detail[SNOWFLAKE_NODE_UNCONFIRMED]));
	s->refusals |= SNOWFLAKE_REFUSED(SNOWFLAKE_NODE_UNCONFIRMED);
}

/* Record what replay changed in the state file (or say why not). */
static void
sf_replay_record(SnowflakeShared *s)
{
	SnowflakeStateFile f;
	SfWriteFailure failure;

	if (s->refusals & (SNOWFLAKE_REFUSED(SNOWFLAKE_STATE_UNUSABLE) |
					   SNOWFLAKE_REFUSED(SNOWFLAKE_LAYOUT_CHANGED)))
	{
		ereport(WARNING,
				(errmsg("snowflake history replayed from WAL is not recorded in \"%s\"",
						SNOWFLAKE_STATE_FILE),
				 errdetail("The state file is unusable or records another layout; what was replayed applies to this server's life only.")));
		return;
	}
	snowflake_state_image(&f, s, s->durable_ms, -1);
	if (!snowflake_state_write(&f, &failure))
		snowflake_report_write_failure_hint(FATAL, &failure,
											"What the primary's WAL says of the history's leads and node id must be recorded before replay goes on.",
											"Make the state file in the data directory writable by the server again, then start it again.");
}

/*
 * sf_replay
 *		Merge the record rec, ending at pos, into the shared state and the
 *		state file, under the LWLock.
 */
static void
sf_replay(const SfRecord *rec, SfPos pos)
{
	SnowflakeShared *s = snowflake_shared;
	int64		lead_before;
	bool		changed;

	LWLockAcquire(snowflake_lock, LW_EXCLUSIVE);
	lead_before = s->history.leads.lead_ms;
	changed = sf_rule_replay(&s->history, rec, pos, sf_replay_order(s, pos));
	if (changed && rec->kind != SF_RECORD_LEADS)
		sf_replay_refusal(s);
	if (changed)
		sf_replay_record(s);
	LWLockRelease(snowflake_lock);

	if (changed && s->history.leads.lead_ms > lead_before)
		ereport(LOG,
				(errmsg("snowflake IDs of this server's history may lead the clock by %lld ms, as replayed from WAL",
						(long long) s->history.leads.lead_ms),
				 errdetail("The first ID of every start of this server is placed past the clock plus that lead.")));
}

static void
sf_rmgr_redo(XLogReaderState *record)
{
	SfRecord	rec;
	SfWalHeader hdr;
	SfPos		pos;
	TimeLineID	tli;

	switch (snowflake_wal_decode(XLogRecGetInfo(record), XLogRecGetData(record),
								 XLogRecGetDataLen(record), &rec, &hdr))
	{
		case SF_WAL_NEEDS_LATER:
			ereport(FATAL,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("snowflake WAL record at %X/%X needs snowflake %d.%d or later to be replayed",
							LSN_FORMAT_ARGS(record->ReadRecPtr),
							hdr.needs / 100, hdr.needs % 100),
					 errdetail("This server runs snowflake %s, which replays records of format %d; the record has format %d.",
							   SNOWFLAKE_VERSION, SNOWFLAKE_WAL_FORMAT, hdr.format),
					 errhint("Install snowflake %d.%d or later on this server and start it again. Standbys, restore hosts and DR sites are upgraded before their primary.",
							 hdr.needs / 100, hdr.needs % 100)));
			break;
		case SF_WAL_CORRUPT:
			ereport(FATAL,
					(errcode(ERRCODE_DATA_CORRUPTED),
					 errmsg("snowflake WAL record at %X/%X is too short (%u bytes)",
							LSN_FORMAT_ARGS(record->ReadRecPtr),
							(unsigned) XLogRecGetDataLen(record))));
			break;
		case SF_WAL_SKIP:
			return;
		case SF_WAL_OK:
			break;
	}
	(void) GetCurrentReplayRecPtr(&tli);
	pos.tli = (uint32) tli;
	pos.lsn = (uint64) record->EndRecPtr;
	sf_replay(&rec, pos);
}

static void
sf_rmgr_desc(StringInfo buf, XLogReaderState *record)
{
	SfRecord	rec;
	SfWalHeader hdr;

	switch (snowflake_wal_decode(XLogRecGetInfo(record), XLogRecGetData(record),
								 XLogRecGetDataLen(record), &rec, &hdr))
	{
		case SF_WAL_OK:
			break;
		case SF_WAL_NEEDS_LATER:
			appendStringInfo(buf, "needs snowflake %d.%d", hdr.needs / 100,
							 hdr.needs % 100);
			return;
		default:
			return;
	}
	switch (rec.kind)
	{
		case SF_RECORD_LEADS:
			appendStringInfo(buf, "lead %lld ms, horizon %lld",
							 (long long) rec.leads.lead_ms,
							 (long long) rec.leads.horizon_unix_ms);
			break;
		case SF_RECORD_REQUEST:
			appendStringInfo(buf, "request " UINT64_FORMAT " kind %d",
							 rec.request_id, (int) rec.request_kind);
			break;
		case SF_RECORD_CONFIRM:
			appendStringInfo(buf, "confirm " UINT64_FORMAT " node id %d span %d",
							 rec.request_id, rec.node_base, rec.node_span);
			break;
	}
}

static const char *
sf_rmgr_identify(uint8 info)
{
	return snowflake_wal_kind_name(info);
}

static RmgrData sf_rmgr = {
	.rm_name = SNOWFLAKE_RMGR_NAME,
	.rm_redo = sf_rmgr_redo,
	.rm_desc = sf_rmgr_desc,
	.rm_identify = sf_rmgr_identify
};

/*
 * snowflake_replay_init
 *		Register the resource manager when the library is being preloaded;
 *		called from _PG_init.  Fails the server's start if another
 *		extension took the id.
 */
void
snowflake_replay_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	RegisterCustomRmgr(SNOWFLAKE_RMGR_ID, &sf_rmgr);
}
