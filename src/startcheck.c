/*-------------------------------------------------------------------------
 *
 * startcheck.c
 *	  What a start tells, and asks of the operator: whether it asks for the
 *	  node id to be confirmed before the server mints (a start that leaves
 *	  recovery without a new timeline; a restore, with
 *	  snowflake.confirm_restore on), recording that request in the state
 *	  file before recovery changes what tells such a start; whether the
 *	  state file may record another server's IDs; where the data directory
 *	  is.
 *
 * With the preload, only the postmaster's first look at a start, before
 * the startup process runs, sees pg_control and the signal files as the
 * last life left them (first_look below); a crash re-initialisation sees
 * only its own crash.  Without the preload a start cannot be seen at all:
 * nothing is asked then, and the docs say so.
 *
 * Nothing here keeps state or takes a lock: the caller (shared.c, loading
 * the shared state) holds what is needed, and records the refusal.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "catalog/pg_control.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "utils/builtins.h"

#include "compat.h"
#include "config.h"
#include "fileformat.h"
#include "startcheck.h"
#include "statefile.h"

/*
 * snowflake_file_of_another_life
 *		Whether the state file f may record IDs that another server minted
 *		(the primary a standby or a copy was made from, a life on another
 *		timeline or system), rather than only this data directory's own:
 *		then a node id that differs from the one it records is no sign that
 *		the data directory moved (shared.c, sf_check_derived_node).  A crash or an
 *		unclean copy of this data directory restarted in place, on the
 *		timeline the file records, is this data directory's own history.
 *
 * With the preload this runs in the postmaster before recovery: the
 * timeline is that of pg_control's latest checkpoint, or, soon after a
 * promotion, of its minimum recovery point.  A promotion does not wait for
 * a checkpoint: it writes an end-of-recovery record on the new timeline,
 * sets pg_control's minimum recovery point to it (CreateEndOfRecoveryRecord:
 * the next crash recovery must replay up to it) and asks for a checkpoint
 * that is spread out like any other.  Until that checkpoint completes, the
 * latest checkpoint is of the old timeline while the IDs of the new one may
 * be minted already; a crash then leaves pg_control in production (or in
 * crash recovery, if that crashed too) with the new timeline as the minimum
 * recovery point's, which every completed checkpoint resets to 0.  In
 * archive recovery the minimum recovery point is the replay's, and a
 * standby's file is another server's: only the states of crash recovery
 * and production take it.  Without the preload, at the first use of the
 * generator, after recovery: the timeline in use.
 */
bool
snowflake_file_of_another_life(const SnowflakeStateFile *f, bool have_file,
						bool preloaded)
{
	SnowflakeControl control;

	if (!have_file || f->timeline == 0)
		return true;
	if (!preloaded)
		return RecoveryInProgress() ||
			GetSystemIdentifier() != f->system_id ||
			GetWALInsertionTimeLine() != f->timeline;
	if (access(STANDBY_SIGNAL_FILE, F_OK) == 0 ||
		access(RECOVERY_SIGNAL_FILE, F_OK) == 0 ||
		access(BACKUP_LABEL_FILE, F_OK) == 0)
		return true;
	if (!snowflake_control_read(&control))
		return false;
	if (control.state == DB_SHUTDOWNED_IN_RECOVERY ||
		control.system_id != f->system_id)
		return true;
	if (control.timeline == f->timeline)
		return false;
	return !((control.state == DB_IN_PRODUCTION ||
			  control.state == DB_IN_CRASH_RECOVERY) &&
			 control.min_recovery_tli == f->timeline);
}
/*
 * snowflake_request_unrecorded
 *		Stop the postmaster's start (FATAL): it is a restore whose node id is
 *		to be confirmed (restore says why), and the state file cannot record
 *		that, because its write failed (failure) or because the file is
 *		unusable (failure NULL: err and what say why, as shared.c read
 *		it).  See snowflake_record_request.
 */
void
snowflake_request_unrecorded(const char *restore, const SfWriteFailure *failure,
					  int err, const char *what)
{
	char		detail[3 * SNOWFLAKE_DETAIL_LEN];

	snprintf(detail, sizeof(detail),
			 "%s It mints nothing until its node id is confirmed, and the state file must record that before recovery removes what tells such a start, so the server does not start.%s",
			 restore,
			 failure != NULL ? "" : " An unusable state file is left as it is.");
	if (failure != NULL)
		snowflake_report_write_failure_hint(FATAL, failure, detail,
											"Make the state file in the data directory writable by the server again (permissions, free space, the disk), then start the server again.");
	errno = err;
	ereport(FATAL,
			(err != 0 ? errcode_for_file_access() :
			 errcode(ERRCODE_DATA_CORRUPTED),
			 err != 0 ? errmsg("%s: %m", what) : errmsg("%s", what),
			 errdetail_internal("%s", detail),
			 errhint("See the section \"Troubleshooting\" of the snowflake README before removing the state file, then start the server again.")));
}
/*
 * snowflake_restore_start
 *		With the preload, at the postmaster's first load: how the server
 *		starts from a restore (a base backup, or archive recovery), as a
 *		sentence of a message, or NULL if it does not (a standby's start, a
 *		crash, a clean start: none is a copy of another server's history
 *		being brought back).
 */
const char *
snowflake_restore_start(void)
{
	if (access(STANDBY_SIGNAL_FILE, F_OK) == 0)
		return NULL;
	if (access(RECOVERY_SIGNAL_FILE, F_OK) == 0)
		return "This server started in archive recovery (recovery.signal): a restore.";
	if (access(BACKUP_LABEL_FILE, F_OK) == 0)
		return "This server started from a base backup (backup_label): a restore.";
	return NULL;
}
/*
 * snowflake_data_directory_place
 *		A hash of the data directory's absolute path, with symbolic links
 *		resolved (never 0): a copy of a data directory beside its original
 *		is at another path.
 */
uint64
snowflake_data_directory_place(void)
{
	char		path[PATH_MAX];
	const char *dir = realpath(DataDir, path) != NULL ? path : DataDir;
	uint64		h = hash_bytes_extended((const unsigned char *) dir,
										(int) strlen(dir), 0);

	return h != 0 ? h : 1;
}
/*
 * snowflake_start_facts
 *		What this load of the state tells, for sf_rule_start_request: at the
 *		postmaster's first look with the preload (first_look), the signal
 *		files and pg_control's state as the last life left them, and whether
 *		the state file f (have_file) was written at another path than place;
 *		whether snowflake.confirm_restore is on.  The node id facts are the
 *		caller's.
 */
void
snowflake_start_facts(const SnowflakeStateFile *f, bool have_file,
					  bool first_look, uint64 place, SfStartFacts *facts)
{
	SnowflakeControl control;

	memset(facts, 0, sizeof(*facts));
	facts->first_look = first_look;
	facts->confirm_restore = snowflake_confirm_restore_enabled;
	if (!first_look)
		return;
	facts->standby_signal = access(STANDBY_SIGNAL_FILE, F_OK) == 0;
	facts->recovery_signal = access(RECOVERY_SIGNAL_FILE, F_OK) == 0;
	facts->backup_label = access(BACKUP_LABEL_FILE, F_OK) == 0;
	facts->control_in_recovery = snowflake_control_read(&control) &&
		(control.state == DB_SHUTDOWNED_IN_RECOVERY ||
		 control.state == DB_IN_ARCHIVE_RECOVERY);
	facts->moved = have_file && f->place != 0 && f->place != place;
}

/*
 * snowflake_ask_sentence
 *		Why a server waits for its node id to be confirmed, as a sentence of
 *		a message (history.h, SfAsk), or NULL for SF_ASK_NONE.  A node id
 *		in the recorded span is said by the caller, with the numbers.
 */
const char *
snowflake_ask_sentence(SfAsk ask)
{
	switch (ask)
	{
		case SF_ASK_NONE:
		case SF_ASK_IN_SPAN:
			return NULL;
		case SF_ASK_CONTINUED_BACKUP:
			return "This server started from a base backup (backup_label) without standby.signal or recovery.signal: it leaves recovery without a new timeline, continuing the timeline of the server it was copied from.";
		case SF_ASK_CONTINUED_STANDBY:
			return "This server was a standby (or was rewound by pg_rewind) and started without standby.signal: it leaves recovery without a new timeline, continuing the timeline of the server it replicated.";
		case SF_ASK_RESTORE_ARCHIVE:
			return "This server started in archive recovery (recovery.signal): a restore.";
		case SF_ASK_RESTORE_BACKUP:
			return "This server started from a base backup (backup_label): a restore.";
		case SF_ASK_MOVED:
			return "This data directory was copied or moved: its state file was written at another path.";
		case SF_ASK_PENDING_CONTINUED:
			return "This server left recovery without a new timeline, and its node id has not been confirmed since.";
		case SF_ASK_PENDING_RESTORE:
			return "This server started from a restore, and its node id has not been confirmed since.";
		case SF_ASK_PENDING_IN_SPAN:
			return "This server started with a node id in the span of the node id its history mints under, and its node id has not been confirmed since.";
	}
	return NULL;
}

/*
 * snowflake_record_request
 *		Record, before recovery begins, a request to confirm the node id that
 *		this start makes (h's, history.c): what tells such a start
 *		(backup_label, recovery.signal, pg_control's state) is changed by the
 *		recovery it begins, and nothing else could tell it at the next start.
 *		f is the file as read (or an empty history's image), rewritten as it
 *		is but for the request and the place.  If it cannot be written, the
 *		postmaster does not start (snowflake_request_unrecorded), which
 *		leaves the sign of the start in place.
 */
void
snowflake_record_request(SnowflakeStateFile *f, uint64 place,
						 const SfHistory *h, const char *why)
{
	SfWriteFailure failure;

	f->place = place;
	f->request_id = h->request_id;
	f->request_kind = (uint32) h->request_kind;
	snowflake_state_seal(f);
	if (!snowflake_state_write(f, &failure))
		snowflake_request_unrecorded(why, &failure, 0, NULL);
}

/*
 * snowflake_record_standby_place
 *		A standby is a copy at another path by design: at its first start
 *		there (first_look), its state file (its primary's) is made to record
 *		this path, so that after its promotion a restart is not taken for a
 *		copy's start.  A failed write is only logged: the request it would
 *		cause can be confirmed.
 */
void
snowflake_record_standby_place(SnowflakeStateFile *f, uint64 place,
							   bool first_look)
{
	SfWriteFailure failure;

	if (!first_look || f->place == place || access(STANDBY_SIGNAL_FILE, F_OK) != 0)
		return;
	f->place = place;
	snowflake_state_seal(f);
	if (!snowflake_state_write(f, &failure))
		snowflake_report_write_failure(LOG, &failure,
									   "A standby's state file records where its data directory is; until it does, a restart after a promotion with \"snowflake.confirm_restore\" on asks for the node id to be confirmed.");
}

/*
 * snowflake_warn_confirm_unloaded
 *		Without the preload, snowflake.confirm_restore cannot work: a value
 *		given to it draws a WARNING.
 */
void
snowflake_warn_confirm_unloaded(void)
{
	const char *value = GetConfigOption("snowflake.confirm_restore",
										true, false);
	bool		on;

	if (value != NULL && parse_bool(value, &on) && on)
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("parameter \"%s\" has no effect without the preload",
						"snowflake.confirm_restore"),
				 errdetail("Without \"shared_preload_libraries\" the server's start cannot be seen, so a restore cannot be told from a restart."),
				 errhint("Add snowflake to \"shared_preload_libraries\" in postgresql.conf and restart the server.")));
}
