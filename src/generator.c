/*-------------------------------------------------------------------------
 *
 * generator.c
 *	  The hot path: minting snowflake IDs from the shared generator.
 *
 * The state is one packed value, last = (ms << sequence_bits) | seq, in
 * shared memory under a spinlock.  The next run of IDs starts at
 * max(now << sequence_bits, last + 1): within one millisecond the sequence
 * counts up, and when it overflows it carries into the next millisecond
 * ("borrowing" time from the future) rather than spinning.  The lead of the
 * borrowed time over the wall clock is bounded by snowflake.max_drift_ms;
 * past that the caller sleeps, outside the spinlock, for at most
 * snowflake.max_wait_ms, or fails.  IDs are issued only up to the durable
 * reservation kept by reservation.c.
 *
 * The spinlock section only compares, advances and copies values out: the
 * clock is read before it, and every decision that can sleep, write a file
 * or raise an error is taken after it is released.  snowflake_stats() and
 * the background writer read and reset what the spinlock guards through the
 * functions at the end of this file and take no lock themselves;
 * reservation.c and shared.c take it for their own short sections (the
 * reservation, the floor, the writer's PID), under the same rules.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "common/pg_prng.h"
#include "miscadmin.h"
#include "portability/instr_time.h"
#include "storage/latch.h"
#include "utils/guc.h"

#include "compat.h"
#include "config.h"
#include "generator.h"
#include "reservation.h"
#include "shared.h"
#include "statefile.h"

/* This backend has found the generator ready (see snowflake_generate). */
static bool sf_backend_ready = false;

/* At most one clock regression LOG line per this many milliseconds. */
#define SNOWFLAKE_REGRESSION_LOG_INTERVAL_MS	10000

/*
 * How often a call that needs a raised lead looks again whether every
 * standby has flushed the raise's record (the standbys do not wake it).
 */
#define SNOWFLAKE_STANDBY_POLL_MS	5

/*
 * Count one refused call; waited_ms >= 0 counts a call that slept that
 * long before it failed.
 */
static void
sf_count_refused(SnowflakeShared *s, int64 waited_ms)
{
	SpinLockAcquire(&s->mutex);
	s->counters.refused++;
	if (waited_ms >= 0)
	{
		s->counters.waits++;
		s->counters.wait_ms += waited_ms;
	}
	SpinLockRelease(&s->mutex);
}

/*
 * sf_refuse_unusable
 *		Raise the error of a state file that could not be read at startup.
 */
static pg_noinline void
sf_refuse_unusable(const SnowflakeShared *s)
{
	const char *detail = s->refusal_detail[SNOWFLAKE_STATE_UNUSABLE];

	if (s->refusal_errno != 0)
	{
		errno = s->refusal_errno;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("%s: %m", detail),
				 errhint("The state file is read at server start. Correct the cause and restart the server.")));
	}
	ereport(ERROR,
			(errcode(ERRCODE_DATA_CORRUPTED),
			 errmsg("%s", detail),
			 errhint("The state file is read at server start. See the section \"Troubleshooting\" of the snowflake README before removing it and restarting the server.")));
}

/*
 * The node id is not set because the settings could not give this server
 * one at preload (config.c: single-user mode, where a node id that cannot
 * be derived does not stop the server): raise why, as the start of a
 * server started normally would have.  Returns otherwise.
 */
static void
sf_refuse_unchosen(void)
{
	const char *bad_name;
	const char *detail;
	const char *hint;

	if (!snowflake_config_node_failure(&bad_name, &detail, &hint))
		return;
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid value for parameter \"%s\": \"%s\"",
					bad_name, GetConfigOption(bad_name, false, false)),
			 errdetail("%s", detail),
			 errhint("%s", hint)));
}

/*
 * snowflake_refusal_error
 *		Raise the error of the first refusal of the set refusals (not
 *		empty), as every call that generates raises it: what stands in the
 *		way and what to do.  Returns only for a node id to confirm after a
 *		restore while the server is in recovery, where the node id is not
 *		known yet: the caller raises recovery's error instead.
 */
void
snowflake_refusal_error(const SnowflakeShared *s, uint32 refusals)
{
	SnowflakeRefusal why = snowflake_first_refusal(refusals);
	const char *detail = s->refusal_detail[why];

	switch (why)
	{
		case SNOWFLAKE_STATE_UNUSABLE:
			sf_refuse_unusable(s);
			break;
		case SNOWFLAKE_LAYOUT_CHANGED:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("snowflake epoch or layout differs from the one recorded in \"%s\"",
							SNOWFLAKE_STATE_FILE),
					 errdetail("%s", detail),
					 errhint("Restore the recorded settings, or have a superuser run SELECT snowflake_adopt_layout() to adopt the configured ones; indexes and generated columns that decode IDs must then be rebuilt.")));
			break;
		case SNOWFLAKE_NODE_UNSET:
			sf_refuse_unchosen();
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("parameter \"%s\" is not set", "snowflake.node_id"),
					 errhint("Set \"%s\" in postgresql.conf to a value between 0 and %lld that no other server minting IDs uses, and restart the server.",
							 "snowflake.node_id",
							 (long long) snowflake_max_node(&s->layout))));
			break;
		case SNOWFLAKE_NODE_CHANGED:
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("derived snowflake node id differs from the one recorded in \"%s\"",
							SNOWFLAKE_STATE_FILE),
					 errdetail("%s", detail),
					 errhint("If the change is intended, run SELECT snowflake_adopt_node_id() as a superuser; otherwise restore the host name or the settings and restart the server.")));
			break;
		case SNOWFLAKE_NODE_UNCONFIRMED:
			/* In recovery, the node id is not known yet: that error first. */
			if (RecoveryInProgress())
				break;
			if (s->ask == SF_ASK_IN_SPAN || s->ask == SF_ASK_PENDING_IN_SPAN)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("snowflake node id %d is not confirmed: it falls within the span of the node id its history mints under",
								snowflake_node_field(s, GetWALInsertionTimeLine())),
						 errdetail("%s", detail),
						 errhint("If this server runs beside the one it was copied from, give it a \"%s\" outside that span and restart it; if it replaces it, have a superuser run SELECT snowflake_confirm_restore(%d).",
								 "snowflake.node_id",
								 snowflake_node_field(s, GetWALInsertionTimeLine()))));
			if (s->ask == SF_ASK_CONTINUED_BACKUP ||
				s->ask == SF_ASK_CONTINUED_STANDBY ||
				s->ask == SF_ASK_PENDING_CONTINUED)
				ereport(ERROR,
						(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
						 errmsg("snowflake node id %d is not confirmed after leaving recovery without a new timeline",
								snowflake_node_field(s, GetWALInsertionTimeLine())),
						 errdetail("%s Its node id is the one its predecessor mints with on this timeline, and that server may still run.",
								   detail),
						 errhint("If the server it continues no longer mints, have a superuser run SELECT snowflake_confirm_restore(%d); otherwise give it its own \"%s\" and restart it. A standby is started with standby.signal and promoted with pg_ctl promote, which gives it a new timeline.",
								 snowflake_node_field(s, GetWALInsertionTimeLine()),
								 "snowflake.node_id")));
			ereport(ERROR,
					(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
					 errmsg("snowflake node id %d is not confirmed after a restore",
							snowflake_node_field(s, GetWALInsertionTimeLine())),
					 errdetail("%s A restored copy that runs beside its original with the same node id mints the same keys (\"%s\" is on).",
							   detail, "snowflake.confirm_restore"),
					 errhint("If this server replaces the one it was restored from, have a superuser run SELECT snowflake_confirm_restore(%d); if it runs beside it, give it its own \"%s\" and restart it.",
							 snowflake_node_field(s, GetWALInsertionTimeLine()),
							 "snowflake.node_id")));
			break;
		case SNOWFLAKE_REFUSALS:
			break;
	}
}

/*
 * sf_refuse_call
 *		Raise the error that explains why this server cannot generate now;
 *		returns if, looked at again, nothing stands in the way (an adoption
 *		may just have lifted the last refusal).
 */
static pg_noinline void
sf_refuse_call(void)
{
	SnowflakeShared *s = snowflake_attach();
	SfWriteFailure failure;
	uint32		refusals;

	/*
	 * Without the preload, the values in force are recorded for the life of
	 * the server before the first ID (shared.c), before the state file is
	 * loaded: a disk that is full now fails this call, not the whole life.
	 */
	if (s != NULL && unlikely(s->life_pending) &&
		!snowflake_life_settle(s, &failure))
	{
		sf_count_refused(s, -1);
		snowflake_report_write_failure(ERROR, &failure,
									   "Without the preload, the node id and layout in force are recorded there for the life of the server before IDs are generated, so no ID was issued. Decoding is not affected.");
	}

	s = snowflake_require_shared();
	refusals = s->refusals;

	if (refusals == 0 && !RecoveryInProgress())
		return;

	sf_count_refused(s, -1);
	/* A request to confirm the node id reaches the standbys (reservation.c). */
	if ((refusals & SNOWFLAKE_REFUSED(SNOWFLAKE_NODE_UNCONFIRMED)) &&
		!RecoveryInProgress())
		snowflake_log_request(s);
	if (refusals != 0)
		snowflake_refusal_error(s, refusals);

	/* The only other reason to get here. */
	Assert(RecoveryInProgress());
	ereport(ERROR,
			(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
			 errmsg("cannot generate snowflake IDs during recovery"),
			 errhint("Generate IDs on the primary: a standby generates none until it is promoted.")));
}

/*
 * sf_note_regression
 *		A clock reading lower than the latest one seen was used.  Readings
 *		are taken before the spinlock, so a reading delayed by scheduling
 *		can look like a regression: read the clock again, and only if even
 *		the fresh reading is behind has the clock really gone backwards.
 */
static pg_noinline void
sf_note_regression(SnowflakeShared *s, int64 seen_ms)
{
	int64		fresh = snowflake_clock_ms() - s->layout.epoch_ms;
	int64		step = 0;
	bool		log_it = false;

	if (fresh >= seen_ms)
		return;

	SpinLockAcquire(&s->mutex);
	if (s->clock_ms > fresh)
	{
		step = s->clock_ms - fresh;
		if (s->clock_ms > s->clock_high_ms)
			s->clock_high_ms = s->clock_ms;
		s->clock_ms = fresh;
		s->counters.regressions++;
		if (step > s->counters.max_regression_ms)
			s->counters.max_regression_ms = step;
		if (fresh >= s->regression_logged_ms + SNOWFLAKE_REGRESSION_LOG_INTERVAL_MS ||
			fresh < s->regression_logged_ms)
		{
			s->regression_logged_ms = fresh;
			log_it = true;
		}
	}
	SpinLockRelease(&s->mutex);

	if (log_it)
		ereport(LOG,
				(errmsg("system clock went backwards by %lld ms", (long long) step),
				 errdetail("Snowflake IDs stay unique and increasing: up to snowflake.max_drift_ms (%d ms) is absorbed by running ahead of the clock, beyond that calls wait or fail until the clock catches up.",
						   (int) snowflake_drift_ms())));
}

/*
 * Sleep for up to ms milliseconds, waking for interrupts, and return how long
 * this call has slept in all, in whole milliseconds, measured on the
 * monotonic clock from *started (set by the first sleep).  The latch may end
 * a sleep early, so the time actually slept is what counts.
 */
static int64
sf_sleep_for(int64 ms, instr_time *started, uint32 event)
{
	instr_time	now;

	if (INSTR_TIME_IS_ZERO(*started))
		INSTR_TIME_SET_CURRENT(*started);
	(void) WaitLatch(MyLatch, WL_LATCH_SET | WL_TIMEOUT | WL_EXIT_ON_PM_DEATH,
					 (long) ms, event);
	ResetLatch(MyLatch);
	CHECK_FOR_INTERRUPTS();

	INSTR_TIME_SET_CURRENT(now);
	INSTR_TIME_SUBTRACT(now, *started);
	return (int64) INSTR_TIME_GET_MILLISEC(now);
}

/* Sleep for the clock (sf_sleep_for). */
static int64
sf_sleep(int64 ms, instr_time *started)
{
	return sf_sleep_for(ms, started, SNOWFLAKE_WAIT_EVENT());
}

/*
 * With snowflake.spread_sequence, where a new millisecond's sequence starts:
 * a random offset in the lower half of the sequence field, drawn from this
 * backend's generator before the spinlock is taken.
 */
static pg_noinline uint64
sf_spread_offset(int sequence_bits)
{
	if (sequence_bits < 2)
		return 0;
	return pg_prng_uint64(&pg_global_prng_state) &
		((UINT64CONST(1) << (sequence_bits - 1)) - 1);
}

/* What one attempt under the spinlock saw, for the decisions after it. */
typedef struct SfAttempt
{
	uint64		first;			/* packed value of the first ID */
	int64		end_ms;			/* millisecond of the last ID */
	int64		last;			/* the generator's value before */
	int64		reserved;		/* the reservation */
	int64		clock_seen;		/* the latest clock reading before */
	int64		limit;			/* the lead allowed: the caller's drift, at
								 * most the server's bound */
} SfAttempt;

/*
 * sf_try_issue
 *		The critical section: issue count IDs if they fit within the lead
 *		allowed over now and within the reservation.  now must lie within the
 *		timestamp field (0 .. max_ms); waited_ms >= 0 counts a call that
 *		slept that long.  A run that enters a new millisecond starts at
 *		spread within it (0 unless snowflake.spread_sequence is on); one that
 *		continues the last millisecond follows the last ID.  Nothing here can
 *		fail, allocate or block.
 */
static inline bool
sf_try_issue(SnowflakeShared *s, int64 now, int64 count, int64 drift,
			 int64 waited_ms, uint64 spread, SfAttempt *a)
{
	int			sb = s->layout.sequence_bits;
	bool		issued;
	uint64		start = (uint64) now << sb;

	SpinLockAcquire(&s->mutex);
	a->last = s->last;
	if (start >= (uint64) a->last + 1)
		a->first = start + spread;
	else
		a->first = (uint64) a->last + 1;
	a->end_ms = (int64) ((a->first + count - 1) >> sb);
	a->clock_seen = s->clock_ms;
	if (now > a->clock_seen)
		s->clock_ms = now;
	a->reserved = s->reserved_ms;
	a->limit = Min(drift, s->lead_bound_ms);
	issued = a->end_ms <= now + a->limit && a->end_ms <= a->reserved;
	if (likely(issued))
	{
		s->last = (int64) (a->first + count - 1);
		s->counters.issued += count;
		if (a->end_ms > now && a->end_ms > (a->last >> sb))
			s->counters.borrowed_ms += a->end_ms - Max(now, a->last >> sb);
		if (waited_ms >= 0)
		{
			s->counters.waits++;
			s->counters.wait_ms += waited_ms;
		}
	}
	SpinLockRelease(&s->mutex);
	return issued;
}

/*
 * sf_refuse_floor
 *		Raise the error for a call refused by the lead a floor put IDs at:
 *		the first ID of every start lies past the clock plus the history's
 *		largest lead, and the highest floor is recorded with its causes
 *		(reservation.c), so the error names a restore or a failover whose
 *		floor still holds, also after a restart.
 */
static pg_noinline void
sf_refuse_floor(const SnowflakeShared *s, int64 behind, int64 drift)
{
	int			causes = s->recorded_floor_cause;

	ereport(ERROR,
			(errcode(ERRCODE_SYSTEM_ERROR),
			 errmsg("snowflake IDs are %lld ms ahead of the system clock after %s",
					(long long) behind,
					(causes & SNOWFLAKE_FLOOR_RESTORE) ? "a restore" :
					(causes & SNOWFLAKE_FLOOR_FAILOVER) ? "a failover" : "a start"),
			 errdetail("The first ID of every start, restore and failover is placed past any ID this data directory's history, or a copy of it, can have issued: past the clock plus the largest lead it allowed (%lld ms); IDs may lead the clock by %d ms (%s) and a call may wait %d ms (%s); no ID was issued.",
					   (long long) Max(s->floor_lead_ms, s->history.leads.lead_ms),
					   (int) drift,
					   "snowflake.max_drift_ms", snowflake_max_wait_ms,
					   "snowflake.max_wait_ms"),
			 errhint("Generation resumes by itself once the clock catches up.")));
}

/*
 * sf_refuse_lead
 *		Raise the error for a call that cannot be served within the lead
 *		allowed over the clock, even after waiting what it may (58000).
 *		Tells IDs placed past a floor (in this life, or resumed inside the
 *		reservation of an earlier life's floor), a clock that went
 *		backwards (in this life, or across a restart: the lead was inherited
 *		from the IDs of an earlier life), and IDs that ran ahead of a steady
 *		clock in a burst.
 */
static pg_noinline void
sf_refuse_lead(SnowflakeShared *s, const SfAttempt *a, int64 now,
			   int64 drift, int64 waited_ms)
{
	int64		behind = a->end_ms - now;
	int64		last_ms = a->last >> s->layout.sequence_bits;
	int64		high;
	bool		from_floor;

	sf_count_refused(s, waited_ms);
	SpinLockAcquire(&s->mutex);
	high = Max(s->clock_ms, s->clock_high_ms);
	SpinLockRelease(&s->mutex);
	/* A floor was placed at its clock plus the lead: not a later clock's. */
	from_floor = s->floor_ms >= 0 &&
		sf_rule_floor(&s->history.leads, now + s->layout.epoch_ms,
					  s->floor_lead_ms) - s->layout.epoch_ms >= s->floor_ms &&
		(last_ms <= s->floor_ms ||
		 (last_ms <= s->resume_ms &&
		  s->resume_ms <= s->floor_ms + SNOWFLAKE_RESERVE_AHEAD_MS + 1));
	if (now < high || (!from_floor && last_ms <= s->resume_ms))
		ereport(ERROR,
				(errcode(ERRCODE_SYSTEM_ERROR),
				 errmsg("system clock is %lld ms behind the last issued snowflake ID",
						(long long) behind),
				 errdetail("IDs may lead the clock by %d ms (%s) and a call may wait %d ms (%s); no ID was issued.",
						   (int) drift, "snowflake.max_drift_ms",
						   snowflake_max_wait_ms, "snowflake.max_wait_ms"),
				 errhint("Generation resumes by itself once the clock catches up. Check the server's time synchronisation.")));
	if (from_floor)
		sf_refuse_floor(s, behind, drift);
	ereport(ERROR,
			(errcode(ERRCODE_SYSTEM_ERROR),
			 errmsg("snowflake IDs are %lld ms ahead of the system clock after a burst",
					(long long) behind),
			 errdetail("More IDs were asked for than the sequence field holds per millisecond, and the time borrowed from the future exceeds what IDs may lead the clock by, %d ms (%s), plus what a call may wait, %d ms (%s); no ID was issued.",
					   (int) drift, "snowflake.max_drift_ms",
					   snowflake_max_wait_ms, "snowflake.max_wait_ms"),
			 errhint("Ask for fewer IDs at once, or raise \"%s\" or \"%s\".",
					 "snowflake.max_wait_ms", "snowflake.max_drift_ms")));
}

/*
 * Wake the background writer, if it runs, and say whether it does.  Called
 * outside the spinlock; SetLatch costs a memory barrier and a test when the
 * latch is set already.
 */
static inline bool
sf_wake_writer(SnowflakeShared *s)
{
	Latch	   *latch = s->worker_latch;

	if (latch == NULL)
		return false;
	SetLatch(latch);
	return true;
}

/*
 * After an attempt, outside the spinlock: note a clock regression; wake the
 * background writer if it sleeps (IDs are being issued again: it must keep
 * the reservation ahead before calls at a few a second step over the
 * renewal point); and once issued IDs come within SNOWFLAKE_RENEW_MS of the
 * reservation's end, wake it to extend the reservation.  Without a writer
 * (not started yet, switched off, or gone), write the next reservation
 * early here, if no one else is at it, so that callers seldom find it used
 * up and wait for the write.
 */
static inline void
sf_after_attempt(SnowflakeShared *s, int64 now, const SfAttempt *a,
				 bool issued)
{
	if (unlikely(now < a->clock_seen))
		sf_note_regression(s, a->clock_seen);
	if (issued && unlikely(s->writer_sleeping))
		(void) sf_wake_writer(s);
	if (issued &&
		unlikely(a->end_ms > a->reserved - SNOWFLAKE_RENEW_MS) &&
		a->reserved < snowflake_max_ms(&s->layout) &&
		!sf_wake_writer(s))
	{
		SfWriteFailure failure;

		/* Never raises: these IDs are issued already. */
		(void) snowflake_extend_reservation(a->reserved + 1, now,
											SF_EXTEND_EARLY, &failure);
	}
}

/*
 * sf_extend_needed
 *		Extend a reservation that is used up, for a caller whose IDs wait for
 *		it, timing the wait; raise the write's error (nothing was issued).
 *		Then wake the background writer: IDs are being issued again.
 */
static void
sf_extend_needed(SnowflakeShared *s, int64 needed_ms, int64 now,
				 int64 waited_ms)
{
	SfWriteFailure failure;
	instr_time	start;
	instr_time	spent;
	bool		ok;

	INSTR_TIME_SET_CURRENT(start);
	ok = snowflake_extend_reservation(needed_ms, now, SF_EXTEND_NEEDED,
									  &failure);
	INSTR_TIME_SET_CURRENT(spent);
	INSTR_TIME_SUBTRACT(spent, start);

	SpinLockAcquire(&s->mutex);
	s->counters.caller_wait_us += (int64) INSTR_TIME_GET_MICROSEC(spent);
	SpinLockRelease(&s->mutex);

	if (!ok)
	{
		sf_count_refused(s, waited_ms);
		snowflake_report_write_failure(ERROR, &failure,
									   "The snowflake reservation could not be made durable, so no ID was issued.");
	}
	(void) sf_wake_writer(s);
}

/*
 * sf_refuse_batch
 *		Raise the error for a batch longer than the lead allowed over the
 *		clock can hold (22023), whatever the clock says.
 */
static pg_noinline void
sf_refuse_batch(SnowflakeShared *s, int64 count)
{
	int			sb = s->layout.sequence_bits;

	sf_count_refused(s, -1);
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("a batch of %lld snowflake IDs cannot be issued within \"%s\"",
					(long long) count, "snowflake.max_drift_ms"),
			 errdetail("With %s = %d a batch of %lld IDs spans %lld milliseconds, more than the %d ms that IDs may lead the clock.",
					   "snowflake.sequence_bits", sb, (long long) count,
					   (long long) ((count - 1) >> sb) + 1,
					   (int) snowflake_drift_ms()),
			 errhint("Ask for fewer IDs per call.")));
}

/*
 * sf_refuse_clock
 *		Raise the error for a clock reading now (ms since the epoch) outside
 *		the timestamp field: before the epoch, or past its end (22003).
 */
static pg_noinline void
sf_refuse_clock(SnowflakeShared *s, int64 now)
{
	char		when[64];

	sf_count_refused(s, -1);
	snowflake_format_ms(now < 0 ? s->layout.epoch_ms :
						s->layout.epoch_ms + snowflake_max_ms(&s->layout),
						when, sizeof(when));
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 now < 0 ?
			 errmsg("current time is before the snowflake epoch") :
			 errmsg("current time is past the last millisecond the snowflake timestamp field can hold"),
			 now < 0 ?
			 errdetail("The epoch, %s, is %lld ms in the future.",
					   when, (long long) -now) :
			 errdetail("With %s = %d the last representable time is %s.",
					   "snowflake.timestamp_bits",
					   s->layout.timestamp_bits, when)));
}

/*
 * sf_refuse_exhausted
 *		Raise the error for IDs that would run past the timestamp field's
 *		last millisecond (22003).
 */
static pg_noinline void
sf_refuse_exhausted(SnowflakeShared *s)
{
	sf_count_refused(s, -1);
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("snowflake timestamp field exhausted"),
			 errdetail("With %s = %d no millisecond after %lld can be represented.",
					   "snowflake.timestamp_bits",
					   s->layout.timestamp_bits,
					   (long long) snowflake_max_ms(&s->layout))));
}

/* How long one call has slept for the clock so far. */
typedef struct SfWait
{
	int64		waited;			/* ms slept so far by this call */
	bool		slept;
	instr_time	start;
} SfWait;

/*
 * sf_refuse_unacked
 *		Raise the error for a call that needed a raised lead that is not
 *		relied on yet, because a standby the primary can see (lagging) has
 *		not flushed the WAL record that carries it (55000).
 */
static pg_noinline void
sf_refuse_unacked(SnowflakeShared *s, const SfAttempt *a, int64 now,
				  int64 drift, const SfStandby *lagging, int64 waited_ms)
{
	char		name[NAMEDATALEN + 64];
	uint64		lsn;

	SpinLockAcquire(&s->mutex);
	lsn = s->raise_lsn;
	SpinLockRelease(&s->mutex);
	sf_count_refused(s, waited_ms);
	snowflake_standby_name(lagging, name, sizeof(name));
	ereport(ERROR,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("snowflake IDs may not lead the clock by more than %lld ms until every standby has the raised lead",
					(long long) a->limit),
			 errdetail("\"%s\" was raised to %lld ms, but %s has flushed WAL up to %X/%X only, not the record of the raise at %X/%X: promoted without it, it could mint the same IDs. The call needed a lead of %lld ms and waited %d ms (%s); no ID was issued.",
					   "snowflake.max_drift_ms", (long long) drift, name,
					   LSN_FORMAT_ARGS((XLogRecPtr) lagging->flushed),
					   LSN_FORMAT_ARGS((XLogRecPtr) lsn),
					   (long long) (a->end_ms - now), snowflake_max_wait_ms,
					   "snowflake.max_wait_ms"),
			 errhint("Let the standby catch up, or drop a replication slot that no standby uses any more. Standbys this server cannot see are kept apart by \"%s\", or by raising the setting on them first.",
					 "snowflake.node_id_span")));
}

/*
 * sf_wait_standbys
 *		A call needs a lead above the bound in force, and the raise it needs
 *		is recorded in WAL but waits for the standbys this primary can see
 *		to flush that record (reservation.c, snowflake_raise_settle): publish
 *		it if they have; else sleep a little (for them, or for the clock
 *		under the old bound, whichever lets the call through first), and
 *		refuse the call once it has waited what it may.
 */
static void
sf_wait_standbys(SnowflakeShared *s, const SfAttempt *a, int64 now,
				 int64 drift, SfWait *wait)
{
	SfStandby	lagging;
	int64		excess = a->end_ms - (now + a->limit);

	if (snowflake_raise_settle(s, &lagging))
		return;
	if (wait->waited + Min(excess, SNOWFLAKE_STANDBY_POLL_MS) > snowflake_max_wait_ms)
	{
		if (a->end_ms > now + drift)
			sf_refuse_lead(s, a, now, drift, wait->slept ? wait->waited : -1);
		sf_refuse_unacked(s, a, now, drift, &lagging,
						  wait->slept ? wait->waited : -1);
	}
	wait->waited = sf_sleep_for(Min(excess, SNOWFLAKE_STANDBY_POLL_MS),
								&wait->start, SNOWFLAKE_WAIT_EVENT_STANDBYS());
	wait->slept = true;
}

/*
 * sf_clear_the_way
 *		After an attempt that issued nothing, decide what was in the way,
 *		outside the spinlock, and remove it: refuse the call, sleep for the
 *		clock, or write the reservation (or wait for the write under way).
 *		The caller then tries again.
 */
static void
sf_clear_the_way(SnowflakeShared *s, const SfAttempt *a, int64 now,
				 int64 drift, SfWait *wait)
{
	int64		waited = wait->slept ? wait->waited : -1;

	if (a->end_ms > snowflake_max_ms(&s->layout))
		sf_refuse_exhausted(s);

	/*
	 * A floor not yet applied (a failover, a restore, a lost state file)
	 * comes first: the lead it sets is what the call must wait for.
	 */
	if (unlikely(s->floor_pending))
	{
		sf_extend_needed(s, a->end_ms, now, waited);
		return;
	}

	/*
	 * This process allows a larger lead than the server's bound (a reload
	 * raised max_drift_ms, or this backend still runs under a value a reload
	 * lowered): record the larger lead first, then wait for the standbys to
	 * have it (sf_wait_standbys).
	 */
	if (a->limit < drift && a->end_ms > now + a->limit)
	{
		int64		raise;

		SpinLockAcquire(&s->mutex);
		raise = s->raise_ms;
		SpinLockRelease(&s->mutex);
		if (raise != drift)
			sf_extend_needed(s, a->end_ms, now, waited);
		else
			sf_wait_standbys(s, a, now, drift, wait);
		return;
	}

	if (a->end_ms > now + drift)
	{
		int64		excess = a->end_ms - (now + drift);

		if (wait->waited + excess > snowflake_max_wait_ms)
			sf_refuse_lead(s, a, now, drift, waited);
		wait->waited = sf_sleep(excess, &wait->start);
		wait->slept = true;
		return;
	}

	/*
	 * Only the reservation is in the way (a burst, a batch, a first call
	 * after idling, the background writer stopped or behind): write a new
	 * one, or wait for the write under way.
	 */
	sf_extend_needed(s, a->end_ms, now, waited);
}

/*
 * sf_generate_slow
 *		Everything snowflake_generate's fast path does not handle: the first
 *		call of a backend, refusals, the clock outside the timestamp field,
 *		waiting for the clock, writing a reservation that is used up, and
 *		the errors.  Same contract as snowflake_generate.
 */
static pg_noinline int64
sf_generate_slow(int64 count)
{
	SnowflakeShared *s;
	int			sb;
	SfWait		wait = {0};

	/* Attaches and loads the shared state first, without the preload. */
	if (!sf_backend_ready)
	{
		sf_refuse_call();
		sf_backend_ready = true;
	}

	s = snowflake_shared;
	sb = s->layout.sequence_bits;
	INSTR_TIME_SET_ZERO(wait.start);

	/* A batch spans at least this many milliseconds past its first. */
	if (unlikely(((count - 1) >> sb) > snowflake_drift_ms()))
		sf_refuse_batch(s, count);

	for (;;)
	{
		int64		drift = snowflake_drift_ms();
		int64		now = snowflake_clock_ms() - s->layout.epoch_ms;
		SfAttempt	a;
		bool		issued;

		if (unlikely(now < 0 || now > snowflake_max_ms(&s->layout)))
			sf_refuse_clock(s, now);

		issued = sf_try_issue(s, now, count, drift,
							  wait.slept ? wait.waited : -1,
							  unlikely(snowflake_spread_sequence) ?
							  sf_spread_offset(sb) : 0, &a);
		sf_after_attempt(s, now, &a, issued);
		if (issued)
			return (int64) a.first;

		sf_clear_the_way(s, &a, now, drift, &wait);
	}
}

/*
 * snowflake_generate
 *		Reserve count consecutive IDs and return the packed value of the
 *		first; the others follow it one by one.
 *
 * All or nothing: either every ID is issued, strictly above any issued
 * before by this server, or an error is raised and none is.  May sleep up to
 * snowflake.max_wait_ms in total, and may write the state file (under the
 * snowflake LWLock).  The first call of a process without the preload
 * attaches the shared state (shared.c), and raises its errors.  Raises 55000
 * when the library is not preloaded on PostgreSQL 15 and 16 or the
 * generator is refused, 25006 during recovery, 22003 outside the timestamp
 * field, 22023 for a batch that cannot fit within snowflake.max_drift_ms or
 * a node id or layout that is invalid or not the server's, 58000 when the
 * clock is too far behind.
 *
 * The fast path handles a ready backend whose IDs fit within the lead and
 * the reservation; everything else, including every error, is in
 * sf_generate_slow.  Once a backend has seen the generator ready outside
 * recovery, that cannot change for as long as it lives (a refusal is only
 * ever lifted, and a server leaves recovery for good), so one flag stands
 * for those checks.
 */
int64
snowflake_generate(int64 count)
{
	SnowflakeShared *s = snowflake_shared;

	if (likely(sf_backend_ready))
	{
		int64		now = snowflake_clock_ms() - s->layout.epoch_ms;
		int64		drift = snowflake_drift_ms();
		uint64		spread = unlikely(snowflake_spread_sequence) ?
			sf_spread_offset(s->layout.sequence_bits) : 0;
		SfAttempt	a;

		/* One unsigned comparison rejects both ends of the field. */
		if (likely((uint64) now <= (uint64) snowflake_max_ms(&s->layout)) &&
			likely(sf_try_issue(s, now, count, drift, -1, spread, &a)))
		{
			sf_after_attempt(s, now, &a, true);
			return (int64) a.first;
		}
	}
	return sf_generate_slow(count);
}

/*
 * snowflake_stats_snapshot
 *		Copy the last ID, the durable reservation and the counters, as one
 *		consistent reading, for snowflake_stats().
 */
void
snowflake_stats_snapshot(SnowflakeShared *s, SnowflakeStatsSnapshot *snap)
{
	SpinLockAcquire(&s->mutex);
	snap->last = s->last;
	snap->durable_ms = s->durable_ms;
	snap->last_write_unix_ms = s->last_write_unix_ms;
	snap->counters = s->counters;
	SpinLockRelease(&s->mutex);
}

/*
 * snowflake_counters_reset
 *		Zero the counters, stamped with now; the generator state is left
 *		alone.
 */
void
snowflake_counters_reset(SnowflakeShared *s, TimestampTz now)
{
	SpinLockAcquire(&s->mutex);
	memset(&s->counters, 0, sizeof(s->counters));
	s->counters.reset_time = now;
	SpinLockRelease(&s->mutex);
}

/*
 * snowflake_position
 *		The last ID, the reservation and the count of IDs issued, as one
 *		consistent reading, for the background writer.
 */
void
snowflake_position(SnowflakeShared *s, SnowflakePosition *pos)
{
	SpinLockAcquire(&s->mutex);
	pos->last = s->last;
	pos->reserved_ms = s->reserved_ms;
	pos->issued = s->counters.issued;
	SpinLockRelease(&s->mutex);
}
