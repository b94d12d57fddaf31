/*-------------------------------------------------------------------------
 *
 * worker.c
 *	  The background writer: keeps the reservation ahead of the IDs issued.
 *
 * Without it, a caller whose ID passes the reservation writes the state file
 * itself (write, fsync, rename, fsync of the directory) before its ID is
 * returned: at a few calls a second that is nearly every call.  The writer
 * takes that off the callers.  While IDs are being issued it extends the
 * reservation whenever the later of the clock and the last issued ID comes
 * within SNOWFLAKE_RENEW_MS of its end, on its own timer (a caller at any
 * rate finds room) and when a caller crossing that point sets its latch (a
 * burst).  A caller still writes for itself when the reservation is really
 * used up: a burst or batch faster than the writer, the writer stopped or
 * behind, or the first call after idling.
 *
 * When no ID has been issued for snowflake.writer_idle_timeout, the writer
 * writes nothing: it sleeps until a caller wakes it, and says so in
 * SnowflakeShared.writer_sleeping, so that the next call to issue an ID
 * wakes it whether or not that call is near the reservation's end (calls a
 * few seconds apart could otherwise step over the renewal point and find
 * the reservation used up).  A caller that had to write a reservation
 * itself also wakes it.  With snowflake.background_writer
 * off, the writer withdraws its latch and callers write as they would
 * without it.
 *
 * The writer publishes its latch in SnowflakeShared.worker_latch while it
 * runs; callers read it without a lock.  It writes through the same
 * function as the callers, under the snowflake LWLock, so a write of either
 * kind finds the other's done; a failed write is logged at most once a
 * minute and retried, and callers that find the reservation used up report
 * the error themselves, as without the writer.
 *
 * A floor still pending when the writer starts (after a promotion, a
 * restore or a lost state file: see reservation.c) is applied by it at once, so
 * that the lead the floor imposes has elapsed by the time the first ID is
 * asked for.  Apart from that one write, a writer that sees no IDs issued
 * writes nothing.
 *
 * Registered in _PG_init when the library is preloaded.  It starts once
 * recovery has finished (so never on a standby, and after a promotion), is
 * restarted by the postmaster if it exits with an error, after a crash, or
 * after it was ended by anyone but the postmaster (pg_terminate_backend(),
 * a kill): SIGTERM from the postmaster means shutdown, and the writer exits
 * with code 0, not to be restarted; from any other process it exits with
 * code 1, and the postmaster starts it again SNOWFLAKE_WRITER_RESTART_S
 * later.  That is safe because the writer holds nothing across its exit:
 * each write is whole under the LWLock, and a new writer starts from the
 * shared state.  At shutdown the postmaster records the exact last ID.
 *
 * Without the preload (PostgreSQL 17 and later), a call that has issued IDs
 * and finds no writer running registers one with
 * RegisterDynamicBackgroundWorker (snowflake_worker_ensure): the first
 * generating call of the server's life, and again after a writer was
 * terminated.  Attempts are at least SNOWFLAKE_WORKER_REQUEST_MS apart while
 * none has started.  It is restarted by the postmaster like the preloaded
 * one, including after a crash re-initialisation, where it creates the
 * shared state again itself.  What differs: it is not started on a standby
 * (the first call after a promotion starts it, and applies the floor
 * itself), and nothing records the exact last ID at shutdown.  When no
 * background worker slot is free (max_worker_processes), the registration
 * fails, which is logged at most once a minute, and callers write the
 * reservation themselves, as with snowflake.background_writer off.
 *
 * Only one writer runs: a writer that finds another one's PID published in
 * the shared state exits at once (with code 0, so it is not restarted).
 *
 * This file takes no lock itself: what the spinlock guards is read and
 * changed through generator.c (the generator's position) and shared.c (the
 * writer's registration).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <signal.h>

#include "miscadmin.h"
#include "postmaster/bgworker.h"
#include "postmaster/interrupt.h"
#include "storage/ipc.h"
#include "storage/latch.h"
#include "storage/lwlock.h"
#include "utils/guc.h"

#include "compat.h"
#include "config.h"
#include "generator.h"
#include "reservation.h"
#include "shared.h"
#include "worker.h"

/* How long the writer waits before retrying a write that failed. */
#define SNOWFLAKE_WRITER_RETRY_MS	100

/* ... and before retrying a floor it could not write (nobody waits yet). */
#define SNOWFLAKE_WRITER_FLOOR_RETRY_MS	1000

/* Seconds the postmaster waits before restarting a writer that failed. */
#define SNOWFLAKE_WRITER_RESTART_S	1

/* How often the writer looks whether the standbys have a raise's record. */
#define SNOWFLAKE_WRITER_RAISE_POLL_MS	10

/*
 * Set by the SIGTERM handler when the signal came from another process than
 * the postmaster (pg_terminate_backend(), a kill): the writer then exits
 * with code 1, so that the postmaster restarts it.
 */
static volatile sig_atomic_t sf_terminated = false;

/*
 * Without the preload: how long a registered writer may take to start
 * before a call registers another.
 */
#define SNOWFLAKE_WORKER_REQUEST_MS	10000

/* The background writer's description, for either kind of registration. */
static void
sf_worker_fill(BackgroundWorker *worker)
{
	memset(worker, 0, sizeof(*worker));
	/* A connection to no database: that puts it in pg_stat_activity. */
	worker->bgw_flags = BGWORKER_SHMEM_ACCESS | BGWORKER_BACKEND_DATABASE_CONNECTION;
	worker->bgw_start_time = BgWorkerStart_RecoveryFinished;
	worker->bgw_restart_time = SNOWFLAKE_WRITER_RESTART_S;
	strlcpy(worker->bgw_library_name, "snowflake", sizeof(worker->bgw_library_name));
	strlcpy(worker->bgw_function_name, "snowflake_worker_main",
			sizeof(worker->bgw_function_name));
	strlcpy(worker->bgw_name, "snowflake reservation writer",
			sizeof(worker->bgw_name));
	strlcpy(worker->bgw_type, "snowflake reservation writer",
			sizeof(worker->bgw_type));
}

/*
 * snowflake_worker_init
 *		Register the background writer when the library is being preloaded;
 *		called from _PG_init.  Without the preload, a call that has issued
 *		IDs starts it (snowflake_worker_ensure).
 */
void
snowflake_worker_init(void)
{
	BackgroundWorker worker;

	if (!process_shared_preload_libraries_in_progress)
		return;
	sf_worker_fill(&worker);
	RegisterBackgroundWorker(&worker);
}

/*
 * snowflake_worker_ensure
 *		Without the preload, start a background writer if none runs and
 *		none was asked for lately; called after a call has issued IDs.
 *
 * Does nothing when preloaded (the postmaster keeps the writer running), in
 * any process but a client backend, or with snowflake.background_writer
 * off.  Never raises: when no background worker slot is free the call goes
 * on, and callers keep writing the reservation themselves; that is logged
 * at most once a minute.
 */
void
snowflake_worker_ensure(SnowflakeShared *s)
{
	BackgroundWorker worker;
	BackgroundWorkerHandle *handle;
	int64		now = snowflake_clock_ms();

	if (s->preloaded || MyBackendType != B_BACKEND ||
		!snowflake_background_writer)
		return;

	if (!snowflake_writer_request(s, now, SNOWFLAKE_WORKER_REQUEST_MS))
		return;

	sf_worker_fill(&worker);
	worker.bgw_notify_pid = 0;
	if (RegisterDynamicBackgroundWorker(&worker, &handle))
	{
		pfree(handle);
		return;
	}

	if (snowflake_writer_log_due(s, now))
		ereport(LOG,
				(errmsg("could not start the snowflake reservation writer"),
				 errdetail("No background worker slot is free: calls that issue IDs write the reservation themselves, waiting for the disk."),
				 errhint("Raise \"%s\" (a restart is needed).",
						 "max_worker_processes")));
}

/*
 * At exit, however it comes: callers stop waking this process, and without
 * the preload, a writer that is not going to be restarted (exit code 0)
 * lets the next call register another at once.
 */
static void
sf_writer_detach(int code, Datum arg)
{
	SnowflakeShared *s = snowflake_shared;

	if (s == NULL)
		return;
	if (s->worker_latch == MyLatch)
	{
		s->worker_latch = NULL;
		s->writer_sleeping = false;
	}
	snowflake_writer_release(s, MyProcPid, code == 0);
}

/*
 * What the writer remembers between two looks at the generator: the last
 * ID it saw, and the time (Unix ms) until which it keeps the reservation
 * ahead.
 */
typedef struct SfWriterState
{
	int64		seen_last;
	int64		active_until;
} SfWriterState;

/*
 * sf_writer_step
 *		Look at the generator, extend the reservation if IDs are being
 *		issued and it is near its end, and return how long to sleep before
 *		the next look (ms), or -1 to sleep until woken.
 */
static long
sf_writer_step(SnowflakeShared *s, SfWriterState *w)
{
	int64		now_unix = snowflake_clock_ms();
	int64		now = now_unix - s->layout.epoch_ms;
	SnowflakePosition pos;
	int64		last;
	int64		reserved;
	int64		ahead_of;
	int64		until_renewal;

	/*
	 * A floor not yet applied (a promotion, a restore, a lost state file):
	 * apply it now, so that the wait it imposes on the first IDs elapses
	 * before anyone asks for one.  Read without the LWLock as a hint; the
	 * write rechecks under it, and writes nothing if no floor is pending.
	 * No ID needs it: the reservation covers the floor and the clock (and
	 * any ID issued), and while the clock is further before the epoch than
	 * the history's lead plus SNOWFLAKE_RESERVE_AHEAD_MS it stays before
	 * the epoch too, so that the file proves that nothing was issued
	 * (shared.c, sf_unused_layout_replaced).  Nearer the epoch it reaches
	 * past it, and a corrected epoch is refused as before.
	 */
	if (unlikely(s->floor_pending))
	{
		SfWriteFailure failure;

		(void) snowflake_extend_reservation(PG_INT64_MIN, now,
											SF_EXTEND_BACKGROUND, &failure);
		if (s->floor_pending)
			return SNOWFLAKE_WRITER_FLOOR_RETRY_MS;
		/* The floor raised the last value: that is no ID issued. */
		snowflake_position(s, &pos);
		w->seen_last = pos.last;
	}

	snowflake_position(s, &pos);
	last = pos.last;
	reserved = pos.reserved_ms;

	/* IDs issued since the last look: keep the reservation ahead a while. */
	if (last != w->seen_last)
	{
		w->seen_last = last;
		w->active_until = now_unix + snowflake_writer_idle_timeout_ms;
	}
	if (now_unix >= w->active_until)
		return -1;

	ahead_of = Max(now, last >> s->layout.sequence_bits);
	if (reserved >= snowflake_max_ms(&s->layout))
		return -1;
	if (reserved - ahead_of < SNOWFLAKE_RENEW_MS)
	{
		SfWriteFailure failure;

		/* Reaches SNOWFLAKE_RESERVE_AHEAD_MS past the renewal point. */
		if (!snowflake_extend_reservation(ahead_of + SNOWFLAKE_RENEW_MS, now,
										  SF_EXTEND_BACKGROUND, &failure))
			return SNOWFLAKE_WRITER_RETRY_MS;
		snowflake_position(s, &pos);
		reserved = pos.reserved_ms;
		/* Not extended: the write failed (and was logged). */
		if (reserved - ahead_of < SNOWFLAKE_RENEW_MS)
			return SNOWFLAKE_WRITER_RETRY_MS;
	}

	/*
	 * Next look when the clock reaches the renewal point; IDs that run
	 * ahead of the clock get there sooner, and their callers wake us.
	 */
	until_renewal = reserved - SNOWFLAKE_RENEW_MS - now;
	return (long) Max(Min(until_renewal, SNOWFLAKE_LOG_INTERVAL_MS), 1);
}

/*
 * sf_writer_reloaded
 *		After a reload: a changed snowflake.max_drift_ms is recorded now,
 *		not at the next reservation write, which an idle server may not make
 *		for a long time: a lowering, so that a later start no longer pays
 *		the old lead (history.c, sf_rule_lead), and a raise, so that its WAL
 *		record is on the standbys by the time a call needs it.  The write
 *		writes nothing when the lead did not change.
 */
static void
sf_writer_reloaded(SnowflakeShared *s)
{
	SfWriteFailure failure;

	if (!snowflake_background_writer || s->refusals != 0 || !s->lineage_checked)
		return;
	(void) snowflake_extend_reservation(PG_INT64_MIN,
										snowflake_clock_ms() - s->layout.epoch_ms,
										SF_EXTEND_BACKGROUND, &failure);
}

/*
 * sf_writer_attach_and_claim
 *		Attach the shared state and publish this process as its one
 *		background writer; exits (with code 0, not to be restarted) when
 *		that cannot be done or another writer runs.
 *
 * Without the preload the shared state may not exist yet (after a crash
 * re-initialisation the postmaster restarts this writer before anyone
 * calls a function).  A writer that cannot attach it (an invalid
 * configuration) reports why and exits: the next call that issues IDs
 * starts another.
 */
static SnowflakeShared *
sf_writer_attach_and_claim(void)
{
	SnowflakeShared *volatile s;
	int			other;

	PG_TRY();
	{
		s = snowflake_require_shared();
	}
	PG_CATCH();
	{
		EmitErrorReport();
		FlushErrorState();
		LWLockReleaseAll();
		s = NULL;
	}
	PG_END_TRY();
	if (s == NULL)
		proc_exit(0);

	/* One writer at a time. */
	other = snowflake_writer_claim(s, MyProcPid);
	if (other != 0)
	{
		ereport(DEBUG1,
				(errmsg_internal("snowflake reservation writer with PID %d runs already",
								 other)));
		proc_exit(0);
	}
	/* Before the DSM segment is detached at exit (without the preload). */
	before_shmem_exit(sf_writer_detach, (Datum) 0);
	return s;
}

/*
 * sf_writer_sleep
 *		Wait for the latch, for at most timeout ms (-1: until woken).
 *
 * Sleeping with no timer, the writer asks callers to wake it, then looks
 * once more: IDs issued before the flag was visible woke nobody.
 */
static void
sf_writer_sleep(SnowflakeShared *s, const SfWriterState *w, long timeout)
{
	if (timeout < 0 && s->worker_latch != NULL)
	{
		SnowflakePosition pos;

		s->writer_sleeping = true;
		pg_memory_barrier();
		snowflake_position(s, &pos);
		if (pos.last != w->seen_last)
			timeout = 0;
	}

	(void) WaitLatch(MyLatch,
					 WL_LATCH_SET | WL_EXIT_ON_PM_DEATH |
					 (timeout >= 0 ? WL_TIMEOUT : 0),
					 timeout, SNOWFLAKE_WAIT_EVENT_WRITER());
	if (s->writer_sleeping)
		s->writer_sleeping = false;
	ResetLatch(MyLatch);
}

/*
 * SIGTERM: a shutdown request, like SignalHandlerForShutdownRequest, that
 * also notes whether the postmaster sent it (a shutdown) or not.
 */
static void
sf_writer_sigterm(int signo, siginfo_t *info, void *context)
{
	int			save_errno = errno;

	if (info == NULL || info->si_pid != PostmasterPid)
		sf_terminated = true;
	ShutdownRequestPending = true;
	SetLatch(MyLatch);
	errno = save_errno;
}

/*
 * sf_writer_signals
 *		SIGHUP reloads the settings; SIGTERM (with its sender, to tell an
 *		administrator's pg_terminate_backend from a shutdown) ends the loop.
 */
static void
sf_writer_signals(void)
{
	struct sigaction sa;

	pqsignal(SIGHUP, SignalHandlerForConfigReload);
	memset(&sa, 0, sizeof(sa));
	sa.sa_sigaction = sf_writer_sigterm;
	sigemptyset(&sa.sa_mask);
	sa.sa_flags = SA_SIGINFO | SA_RESTART;
	if (sigaction(SIGTERM, &sa, NULL) < 0)
		elog(FATAL, "could not set the SIGTERM handler: %m");
}

/*
 * snowflake_worker_main
 *		Entry point of the background writer.
 */
void
snowflake_worker_main(Datum main_arg)
{
	SnowflakeShared *s;
	SnowflakePosition pos;
	SfWriterState w;

	sf_writer_signals();
	BackgroundWorkerUnblockSignals();
	BackgroundWorkerInitializeConnection(NULL, NULL, 0);

	s = sf_writer_attach_and_claim();

	/*
	 * IDs of an earlier life are no sign of activity.  Without the preload,
	 * a writer is started by a call that has just issued IDs (its own write,
	 * which would have woken a running writer, came before): IDs issued by
	 * this shared state are.
	 */
	snowflake_position(s, &pos);
	w.seen_last = pos.last;

	/* A request to confirm the node id reaches the standbys (reservation.c). */
	if (s->refusals & SNOWFLAKE_REFUSED(SNOWFLAKE_NODE_UNCONFIRMED))
		snowflake_log_request(s);
	w.active_until = !s->preloaded && pos.issued > 0 ?
		snowflake_clock_ms() + snowflake_writer_idle_timeout_ms : 0;

	while (!ShutdownRequestPending)
	{
		long		timeout = -1;

		if (ConfigReloadPending)
		{
			ConfigReloadPending = false;
			ProcessConfigFile(PGC_SIGHUP);
			sf_writer_reloaded(s);
		}

		/*
		 * Switched off (snowflake.background_writer), the writer stays, idle
		 * and unknown to callers, which then write early themselves.
		 */
		s->worker_latch = snowflake_background_writer ? MyLatch : NULL;

		/* A refused generator issues nothing: nothing to keep ahead. */
		if (snowflake_background_writer && s->refusals == 0)
		{
			timeout = sf_writer_step(s, &w);

			/*
			 * A raised lead waits for the standbys to flush its record
			 * (reservation.c): look again soon, so that it is relied on
			 * shortly after they have, whether or not a call waits for it.
			 */
			if (s->raise_ms >= 0 && !snowflake_raise_settle(s, NULL))
				timeout = timeout < 0 ? SNOWFLAKE_WRITER_RAISE_POLL_MS :
					Min(timeout, SNOWFLAKE_WRITER_RAISE_POLL_MS);
		}

		sf_writer_sleep(s, &w, timeout);
		CHECK_FOR_INTERRUPTS();
	}

	/* Ended by hand, not at shutdown: the postmaster starts it again. */
	if (sf_terminated)
	{
		ereport(LOG,
				(errmsg("terminating snowflake reservation writer due to administrator command"),
				 errdetail("The postmaster starts it again in %d s.",
						   SNOWFLAKE_WRITER_RESTART_S)));
		proc_exit(1);
	}
	proc_exit(0);
}
