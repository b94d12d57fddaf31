/*-------------------------------------------------------------------------
 *
 * reservation.c
 *	  The reservation: how far IDs may go before the state file must say
 *	  so; the floor that places the first ID of every life past anything an
 *	  earlier life, or another copy of the data directory, can have issued;
 *	  the adoption of a changed layout or of a derived node id that differs
 *	  from the state file's; the confirmation of a node id; and the
 *	  history's lead replayed from WAL.
 *
 * The generator never issues an ID above the reservation held in shared
 * memory (SnowflakeShared.reserved_ms), and that value is raised only after
 * the state file saying so has been written and fsynced: a restart that
 * resumes strictly above the file's reservation (shared.c) never issues an
 * ID twice.  Callers whose IDs wait for it, callers whose IDs are issued
 * already (early, ahead of need) and the background writer all write
 * through snowflake_extend_reservation.
 *
 * The first write of every life (shared.c: every load owes it) places the
 * first ID past the floor, now plus the largest lead any ID of the history
 * may have had, before it is handed out, and records the lineage of the
 * life's IDs: the system identifier and timeline they are issued under,
 * and their node field.  With the preload it also writes that lead into
 * WAL (walrecord.c), as it does whenever the lead changes, before IDs may
 * lead the clock by it.
 *
 * Locking: everything here runs under the "snowflake" LWLock, which
 * serialises writes of the state file; the spinlock is taken inside it only
 * to read or publish the generator's values (shared.h).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "miscadmin.h"

#include "config.h"
#include "fileformat.h"
#include "reservation.h"
#include "shared.h"
#include "statefile.h"
#include "walrecord.h"

/* A life's lineage: the system, timeline and node field of its IDs. */
typedef struct SfLineage
{
	uint64		system_id;
	uint32		tli;
	int			node;
} SfLineage;

/*
 * sf_check_lineage
 *		The lineage the state file is to record this life's IDs under, in
 *		*lin: the recorded one once a write of this life has recorded it,
 *		else the life's own (outside recovery), checked against the recorded
 *		one: if the file's IDs were issued under another system or timeline
 *		(a promotion, a restored backup, point-in-time recovery), the floor
 *		that the life owes is said to be a failover's.  Returns true if *lin
 *		is new, to be written, then made the recorded lineage once the write
 *		has succeeded (sf_record_lineage).  Called with the LWLock held.
 *
 * Until then only what moves the generator forwards happens here, and may
 * happen again at the next attempt: the node field of the life's IDs,
 * under which none is issued before a write succeeds.  A write that fails records nothing, so that what a clean
 * shutdown records after it is still the state file's node id: a failed
 * adoption of a derived node id is no adoption at the next start.
 */
static bool
sf_check_lineage(SnowflakeShared *s, SfLineage *lin)
{
	if (s->lineage_checked)
	{
		lin->system_id = s->recorded_system_id;
		lin->tli = s->recorded_tli;
		lin->node = s->recorded_node;
		return false;
	}
	lin->system_id = GetSystemIdentifier();
	lin->tli = GetWALInsertionTimeLine();
	lin->node = snowflake_node_field(s, lin->tli);

	/*
	 * The node field of this life's IDs, fixed before the first of them:
	 * the timeline cannot change while the server issues IDs (only the end
	 * of a recovery starts a new one, and nothing is issued during
	 * recovery).  Another node field than the last IDs' starts in the next
	 * millisecond, so that no ID of the life is smaller than an earlier one.
	 */
	if (lin->node >= 0)
	{
		int			sb = s->layout.sequence_bits;

		SpinLockAcquire(&s->mutex);
		s->node_part = (int64) lin->node << sb;
		if (lin->node != s->recorded_node && s->last >= 0 &&
			(s->last >> sb) < snowflake_max_ms(&s->layout))
			s->last = (((s->last >> sb) + 1) << sb) - 1;
		SpinLockRelease(&s->mutex);
	}
	else
		lin->node = s->recorded_node;
	if (s->floor_cause != SNOWFLAKE_FLOOR_START)
		return true;			/* a restore's start, said at the load */
	if (s->recorded_system_id != 0 && s->recorded_system_id != lin->system_id)
	{
		strlcpy(s->floor_reason, "the state file records another system identifier",
				sizeof(s->floor_reason));
		s->floor_cause = SNOWFLAKE_FLOOR_FAILOVER;
	}
	else if (s->recorded_tli != 0 && s->recorded_tli != lin->tli)
	{
		strlcpy(s->floor_reason, "the server was promoted (the state file records another timeline)",
				sizeof(s->floor_reason));
		s->floor_cause = SNOWFLAKE_FLOOR_FAILOVER;
	}
	return true;
}

/*
 * sf_record_lineage
 *		The write recording the life's lineage lin has succeeded: it is the
 *		recorded one from now on.  Called with the LWLock held.
 */
static void
sf_record_lineage(SnowflakeShared *s, const SfLineage *lin)
{
	if (s->node_id_span > 1 && s->node_id_derived)
		ereport(LOG,
				(errmsg("snowflake IDs carry node id %d on timeline %u",
						lin->node, lin->tli),
				 errdetail("With node id %d, derived from %s, and \"%s\" = %d, each timeline takes the next node id in turn.",
						   s->node_id, s->node_id_source,
						   "snowflake.node_id_span", s->node_id_span)));
	else if (s->node_id_span > 1)
		ereport(LOG,
				(errmsg("snowflake IDs carry node id %d on timeline %u",
						lin->node, lin->tli),
				 errdetail("With \"%s\" = %d and \"%s\" = %d, each timeline takes the next node id in turn.",
						   "snowflake.node_id", s->node_id,
						   "snowflake.node_id_span", s->node_id_span)));
	s->recorded_node = lin->node;
	s->recorded_system_id = lin->system_id;
	s->recorded_tli = lin->tli;
	/* snowflake_stats reads recorded_node once this is set, without a lock. */
	pg_write_barrier();
	s->lineage_checked = true;
}

/* The state file's image of a reservation up to target, under lineage lin. */
static void
sf_reservation_image(SnowflakeStateFile *f, const SnowflakeShared *s,
					 int64 target, const SfLineage *lin)
{
	snowflake_state_image(f, s, target, -1);
	f->system_id = lin->system_id;
	f->timeline = lin->tli;
	f->node_id = lin->node;
	snowflake_state_seal(f);
}

/*
 * The floor of a new life, taken under snowflake_lock: the last ID is
 * raised to just below now_ms + lead (at most the layout's end), so that
 * the next one is past anything an earlier life can have issued.  Returns
 * that millisecond, which the reservation must cover.  The highest floor
 * applied is recorded with its cause: the lead of later IDs is told by it
 * (generator.c), across restarts.
 */
static int64
sf_raise_to_floor(SnowflakeShared *s, int64 now_ms, int64 lead)
{
	int64		floor_ms = Min(now_ms + lead, snowflake_max_ms(&s->layout));
	int64		floor_packed;

	/* Before the epoch no ID can lie below the floor (nor a shift be negative). */
	floor_packed = floor_ms <= 0 ? -1 :
		(floor_ms << s->layout.sequence_bits) - 1;
	SpinLockAcquire(&s->mutex);
	if (s->last < floor_packed)
		s->last = floor_packed;
	SpinLockRelease(&s->mutex);
	if (floor_ms >= s->floor_ms)
	{
		/* An earlier floor still ahead of the clock keeps its causes. */
		s->recorded_floor_cause = s->floor_cause |
			(s->floor_ms > now_ms ? s->recorded_floor_cause : 0);
		s->floor_ms = floor_ms;
	}
	return floor_ms;
}

/*
 * sf_log_lead
 *		With the preload, write the history's largest lead into WAL
 *		(walrecord.c) if this life has not written it yet, under
 *		snowflake_lock, before IDs may lead the clock by it.  Also when
 *		only its lowering changed: a lead in force again (a raise back to
 *		the largest value, lead_lowered_ms 0) must reach the standbys, or
 *		one that recorded the lowering would let it elapse while this
 *		server's IDs still lead by it.
 */
static void
sf_log_lead(SnowflakeShared *s)
{
	if (!s->preloaded ||
		(s->wal_lead_ms == s->max_lead_ms && s->wal_lowered_ms == s->lead_lowered_ms))
		return;
	snowflake_wal_log_lead(s->max_lead_ms, s->lead_lowered_ms);
	s->wal_lead_ms = s->max_lead_ms;
	s->wal_lowered_ms = s->lead_lowered_ms;
}

/*
 * Publishes a reservation written durably up to target, under
 * snowflake_lock: the new reservation, the lead bound it was written under
 * (drift), and the counters of writes by kind, with the time of the write
 * for snowflake_stats (the clock read before the spinlock).
 */
static void
sf_publish_write(SnowflakeShared *s, int64 target, int64 drift,
				 SfExtendMode mode)
{
	int64		written_unix = snowflake_clock_ms();

	SpinLockAcquire(&s->mutex);
	s->reserved_ms = target;
	s->durable_ms = target;
	s->lead_bound_ms = drift;
	s->counters.reservation_writes++;
	s->last_write_unix_ms = written_unix;
	if (mode == SF_EXTEND_BACKGROUND)
		s->counters.background_writes++;
	else
		s->counters.caller_writes++;
	SpinLockRelease(&s->mutex);
}

/*
 * sf_cover_issued
 *		The millisecond a reservation write must reach at least: needed_ms,
 *		and never below an ID already issued.  Sets *reserved to the
 *		reservation in force.
 *
 * After a clean shutdown the generator resumes from the exact last ID with
 * the reservation one millisecond below it (sf_resume), so that the first
 * call writes; a write made while the clock is still behind that
 * millisecond (the background writer's, needing nothing) must cover it
 * too, or a crash would resume inside it and issue its IDs again.
 */
static int64
sf_cover_issued(SnowflakeShared *s, int64 needed_ms, int64 *reserved)
{
	int64		last;

	SpinLockAcquire(&s->mutex);
	*reserved = s->reserved_ms;
	last = s->last;
	SpinLockRelease(&s->mutex);
	if (last >= 0)
		needed_ms = Max(needed_ms, last >> s->layout.sequence_bits);
	return needed_ms;
}

/*
 * snowflake_extend_reservation
 *		Durably raise the reservation so that IDs up to needed_ms may be
 *		issued.  now_ms is the caller's clock reading (ms since the epoch).
 *
 * Takes the snowflake LWLock.  The first write of a server's life checks
 * the lineage and records it, and when the floor applies, raises the
 * generator's last value to now plus the history's largest lead first.
 * The new reservation reaches SNOWFLAKE_RESERVE_AHEAD_MS past the later of
 * needed_ms and now_ms.  Nothing is written if the reservation already
 * covers needed_ms and the life's lineage is recorded (another process
 * wrote it while this one waited for the lock).
 *
 * A caller whose IDs wait for the reservation (SF_EXTEND_NEEDED) gets false
 * with the failure if the file cannot be written, and nothing changes; it
 * raises the error (nothing was issued).  An early extension, made by a
 * caller whose IDs are already issued (SF_EXTEND_EARLY), gives way if
 * another process holds the lock; it and the background writer's
 * (SF_EXTEND_BACKGROUND) never raise: a failure is logged at most once a
 * minute, and the next caller to find the reservation used up retries the
 * write and reports the error.
 */
bool
snowflake_extend_reservation(int64 needed_ms, int64 now_ms, SfExtendMode mode,
							 SfWriteFailure *failure)
{
	SnowflakeShared *s = snowflake_shared;
	SnowflakeStateFile f;
	int64		reserved;
	int64		target;
	int64		now_unix = now_ms + s->layout.epoch_ms;
	int64		drift = snowflake_drift_ms();
	int64		bound;
	int64		lead;
	bool		floor;
	bool		new_lineage;
	SfLineage	lin;

	if (mode != SF_EXTEND_EARLY)
		LWLockAcquire(snowflake_lock, LW_EXCLUSIVE);
	else if (!LWLockConditionalAcquire(snowflake_lock, LW_EXCLUSIVE))
		return true;

	/*
	 * The clock again, once the lock is held: the wait for it may have been
	 * long (behind a slow fsync), and the bound lowered below is stamped
	 * with this time.
	 */
	now_unix = Max(now_unix, snowflake_clock_ms());
	now_ms = now_unix - s->layout.epoch_ms;

	new_lineage = sf_check_lineage(s, &lin);

	/*
	 * One bound for every process: the lead IDs may have is this process's
	 * max_drift_ms from now on, whatever a backend still running under an
	 * older value allows itself.  Lowering it is safe at once, and the
	 * recorded lead keeps the old value until it has elapsed since then
	 * (snowflake_history_lead); raising it waits for the write that records
	 * the new lead.
	 */
	SpinLockAcquire(&s->mutex);
	if (drift < s->lead_bound_ms)
		s->lead_bound_ms = drift;
	bound = s->lead_bound_ms;
	SpinLockRelease(&s->mutex);
	lead = snowflake_floor_lead(s, now_unix);
	floor = s->floor_pending;
	if (floor)
		needed_ms = Max(needed_ms, sf_raise_to_floor(s, now_ms, lead));

	needed_ms = sf_cover_issued(s, needed_ms, &reserved);
	if (reserved < needed_ms || floor || drift > bound || new_lineage)
	{
		target = Min(Max(Max(needed_ms, now_ms) + SNOWFLAKE_RESERVE_AHEAD_MS,
						 reserved),
					 snowflake_max_ms(&s->layout));
		sf_reservation_image(&f, s, target, &lin);
		if (!snowflake_state_write(&f, failure))
		{
			if (mode != SF_EXTEND_NEEDED &&
				now_unix >= s->early_failure_logged_ms + SNOWFLAKE_LOG_INTERVAL_MS)
			{
				s->early_failure_logged_ms = now_unix;
				snowflake_report_write_failure(LOG, failure,
											   "The snowflake reservation could not be extended ahead of need; a call that finds it used up will retry and report the error.");
			}
			LWLockRelease(snowflake_lock);
			return mode != SF_EXTEND_NEEDED;
		}
		sf_log_lead(s);
		sf_publish_write(s, target, drift, mode);
		if (new_lineage)
			sf_record_lineage(s, &lin);
		if (floor)
			ereport(LOG,
					(errmsg("snowflake IDs resume at %lld ms past the clock, because %s",
							(long long) (s->floor_ms - now_ms), s->floor_reason)));
		s->floor_pending = false;
	}
	LWLockRelease(snowflake_lock);
	return true;
}

/*
 * snowflake_adopt_layout_state
 *		Accept the configured epoch and layout in place of the recorded ones.
 *
 * Writes a state file for the configured layout whose reservation lies above
 * both the old IDs' last millisecond (translated to the new epoch) and the
 * current time (now_unix_ms), then lets generation proceed.  Unless force is
 * set, refuses if the new layout's IDs would not all be larger than the old
 * ones (narrower node or sequence fields, or a later epoch, can make them
 * smaller and collide with stored keys).  The floor, owed in shared memory,
 * is applied by the first reservation write after it, and a request to
 * confirm the node id is carried into the new file: only the layout's
 * refusal is lifted.  The caller has checked that the user is a
 * superuser.
 * Raises ERROR if there is nothing to adopt or the file cannot be written.
 */
void
snowflake_adopt_layout_state(int64 now_unix_ms, bool force)
{
	SnowflakeShared *s = snowflake_shared;
	SnowflakeStateFile f;
	int64		resume_ms;
	int64		first_id;
	int64		written_unix;
	SfWriteFailure failure;

	LWLockAcquire(snowflake_lock, LW_EXCLUSIVE);
	if (!(s->refusals & SNOWFLAKE_REFUSED(SNOWFLAKE_LAYOUT_CHANGED)))
	{
		LWLockRelease(snowflake_lock);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("no changed snowflake layout to adopt"),
				 errdetail("The server's epoch and layout are those recorded in \"%s\", or that file is unusable.",
						   SNOWFLAKE_STATE_FILE)));
	}

	resume_ms = Max(s->recorded_end_unix_ms - s->layout.epoch_ms + 1,
					now_unix_ms - s->layout.epoch_ms);
	if (resume_ms < 0 || resume_ms > snowflake_max_ms(&s->layout))
	{
		LWLockRelease(snowflake_lock);
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("the configured snowflake layout cannot represent the current time"),
				 errdetail("Generation would resume %lld milliseconds after the configured epoch, outside the timestamp field.",
						   (long long) resume_ms)));
	}

	first_id = resume_ms << (s->layout.node_bits + s->layout.sequence_bits);
	if (first_id <= s->recorded_max_id && !force)
	{
		LWLockRelease(snowflake_lock);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("IDs of the configured snowflake layout would not all be larger than existing ones"),
				 errdetail("The first new ID would be %lld, but IDs up to %lld may already exist.",
						   (long long) first_id, (long long) s->recorded_max_id),
				 errhint("New IDs could collide with stored keys. Restore the recorded settings, or widen the node or sequence fields instead; call snowflake_adopt_layout(force => true) only if no key minted under the old layout will meet a new one.")));
	}

	/*
	 * Reserve nothing yet: the first ID writes a real reservation, and
	 * checks the lineage then (the file keeps the recorded one).
	 */
	snowflake_state_image(&f, s, resume_ms - 1, -1);
	if (!snowflake_state_write(&f, &failure))
	{
		LWLockRelease(snowflake_lock);
		snowflake_report_write_failure(ERROR, &failure,
									   "The changed layout was not adopted.");
	}

	written_unix = snowflake_clock_ms();
	SpinLockAcquire(&s->mutex);
	s->last = (resume_ms << s->layout.sequence_bits) - 1;
	s->reserved_ms = resume_ms - 1;
	s->durable_ms = resume_ms - 1;
	s->resume_ms = resume_ms - 1;
	s->counters.reservation_writes++;
	s->counters.caller_writes++;
	s->last_write_unix_ms = written_unix;
	SpinLockRelease(&s->mutex);

	/* The other refusals stand, each until its own remedy (shared.h). */
	s->refusals &= ~SNOWFLAKE_REFUSED(SNOWFLAKE_LAYOUT_CHANGED);
	LWLockRelease(snowflake_lock);

	ereport(LOG,
			(errmsg("snowflake layout %d/%d/%d adopted%s",
					s->layout.timestamp_bits, s->layout.node_bits,
					s->layout.sequence_bits, force ? " by force" : "")));
}

/*
 * snowflake_adopt_node_state
 *		Accept a derived node id that differs from the one of the IDs the
 *		state file records (shared.c, sf_check_derived_node); returns the
 *		node id IDs carry from now on.
 *
 * The state file is written first, recording the new node field with a
 * reservation past every ID issued: the life's first write, whose lineage
 * check moves the generator to the next millisecond, so that no ID with
 * the new node id is smaller than an earlier one.  Only then are calls let
 * through (unless another refusal stands), and a restart does not ask
 * again.  The caller has checked that the user is a superuser, and that no
 * refusal before this one stands (shared.h).  Raises ERROR if there is
 * nothing to adopt or the file cannot be written (generation stays refused
 * then, also after a restart: the file keeps the old node id).
 */
int
snowflake_adopt_node_state(int64 now_unix_ms)
{
	SnowflakeShared *s = snowflake_shared;
	SfWriteFailure failure;
	int64		needed_ms;
	int			old_node;
	int			node;

	LWLockAcquire(snowflake_lock, LW_EXCLUSIVE);
	if (!(s->refusals & SNOWFLAKE_REFUSED(SNOWFLAKE_NODE_CHANGED)))
	{
		LWLockRelease(snowflake_lock);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("no changed snowflake node id to adopt"),
				 errdetail("This server's node id is the one recorded in \"%s\", or it is not derived, or that file is unusable.",
						   SNOWFLAKE_STATE_FILE)));
	}
	/* The caller raised an earlier refusal (a changed layout) first. */
	Assert(!(s->refusals & SNOWFLAKE_REFUSED_BEFORE(SNOWFLAKE_NODE_CHANGED)));
	old_node = s->recorded_node;
	SpinLockAcquire(&s->mutex);
	needed_ms = s->reserved_ms + 1;
	SpinLockRelease(&s->mutex);
	LWLockRelease(snowflake_lock);

	if (!snowflake_extend_reservation(needed_ms, now_unix_ms - s->layout.epoch_ms,
									  SF_EXTEND_NEEDED, &failure))
		snowflake_report_write_failure(ERROR, &failure,
									   "The derived snowflake node id was not adopted.");

	LWLockAcquire(snowflake_lock, LW_EXCLUSIVE);
	node = s->recorded_node;
	s->refusals &= ~SNOWFLAKE_REFUSED(SNOWFLAKE_NODE_CHANGED);
	LWLockRelease(snowflake_lock);

	ereport(LOG,
			(errmsg("snowflake node id %d adopted in place of %d", node, old_node),
			 errdetail("It was derived from %s.", s->node_id_source)));
	return node;
}

/*
 * sf_write_without_request
 *		Rewrite the state file as it is (its reservation, lineage, lead and
 *		floor) without the request to confirm the node id, then lift that
 *		refusal.  False, with *failure set and nothing lifted, if the file
 *		cannot be written.  Called with the LWLock held.
 */
static bool
sf_write_without_request(SnowflakeShared *s, SfWriteFailure *failure)
{
	SnowflakeStateFile f;
	int64		durable;

	SpinLockAcquire(&s->mutex);
	durable = s->durable_ms;
	SpinLockRelease(&s->mutex);
	snowflake_state_image(&f, s, durable, -1);
	f.flags &= ~(SNOWFLAKE_STATE_UNCONFIRMED | SNOWFLAKE_STATE_CONTINUED);
	snowflake_state_seal(&f);
	if (!snowflake_state_write(&f, failure))
		return false;
	s->refusals &= ~SNOWFLAKE_REFUSED(SNOWFLAKE_NODE_UNCONFIRMED);
	return true;
}

/*
 * snowflake_confirm_restore_state
 *		Confirm that this server mints with node id node, after a restore
 *		(snowflake.confirm_restore) or a start without a new timeline
 *		(shared.c): the state file is rewritten without the request, then
 *		generation proceeds (unless another refusal stands).  The caller
 *		has checked that the user is a superuser, that the server is not in
 *		recovery, and that no refusal before this one stands (shared.h).
 *		Raises ERROR if there is nothing to confirm, if node is not the node
 *		id IDs would carry, or if the file cannot be written (nothing
 *		changes then).
 */
void
snowflake_confirm_restore_state(int node)
{
	SnowflakeShared *s = snowflake_shared;
	SfWriteFailure failure;
	int			in_use;

	LWLockAcquire(snowflake_lock, LW_EXCLUSIVE);
	if (!(s->refusals & SNOWFLAKE_REFUSED(SNOWFLAKE_NODE_UNCONFIRMED)))
	{
		LWLockRelease(snowflake_lock);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("no restored snowflake node id to confirm"),
				 errdetail("Generation is not waiting for a confirmation of the node id: this server did not start from a restore with \"%s\" on, nor leave recovery without a new timeline, or its node id was confirmed already.",
						   "snowflake.confirm_restore")));
	}
	/* The caller raised an earlier refusal (a layout, no node id) first. */
	Assert(!(s->refusals &
			 SNOWFLAKE_REFUSED_BEFORE(SNOWFLAKE_NODE_UNCONFIRMED)));
	in_use = snowflake_node_field(s, GetWALInsertionTimeLine());
	if (node != in_use)
	{
		LWLockRelease(snowflake_lock);
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("snowflake node id %d is not the one this server mints with", node),
				 errdetail("This server mints with node id %d.", in_use),
				 errhint("If this server runs beside the one it was copied from, give it its own \"%s\" and restart it instead.",
						 "snowflake.node_id")));
	}
	if (!sf_write_without_request(s, &failure))
	{
		LWLockRelease(snowflake_lock);
		snowflake_report_write_failure(ERROR, &failure,
									   "The node id was not confirmed.");
	}
	LWLockRelease(snowflake_lock);
	ereport(LOG,
			(errmsg("snowflake node id %d confirmed", node)));
}

/*
 * snowflake_replay_lead
 *		The redo of a WAL record of the history's largest lead (walrecord.c),
 *		in a server that replays WAL: a larger lead than the one known here,
 *		or the same lead in force again (not lowered) or lowered later, is
 *		recorded in shared memory and in the state file, so that the floor
 *		of this server's starts covers it, also after a restart that
 *		replays WAL from a later point.  Takes the LWLock.
 *
 * If the file cannot be written the server stops (FATAL, in the startup
 * process): its next start replays the record again.  A file that is
 * unusable, or records another layout, is left as it is, and the lead is
 * kept in shared memory only (a WARNING says so).
 */
void
snowflake_replay_lead(int64 max_lead_ms, int64 lead_lowered_ms)
{
	SnowflakeShared *s = snowflake_shared;
	SnowflakeStateFile f;
	SfWriteFailure failure;
	bool		raised;

	LWLockAcquire(snowflake_lock, LW_EXCLUSIVE);
	raised = max_lead_ms > s->max_lead_ms;
	/* The same lead: in force if either says so (0), else the later lowering. */
	if (!raised)
		lead_lowered_ms = (lead_lowered_ms == 0 || s->lead_lowered_ms == 0) ? 0 :
			Max(lead_lowered_ms, s->lead_lowered_ms);
	if (max_lead_ms < s->max_lead_ms ||
		(!raised && lead_lowered_ms == s->lead_lowered_ms))
	{
		LWLockRelease(snowflake_lock);
		return;
	}
	s->max_lead_ms = max_lead_ms;
	s->lead_lowered_ms = lead_lowered_ms;
	if (s->refusals & (SNOWFLAKE_REFUSED(SNOWFLAKE_STATE_UNUSABLE) |
					   SNOWFLAKE_REFUSED(SNOWFLAKE_LAYOUT_CHANGED)))
	{
		LWLockRelease(snowflake_lock);
		ereport(WARNING,
				(errmsg("snowflake lead of %lld ms replayed from WAL is not recorded in \"%s\"",
						(long long) max_lead_ms, SNOWFLAKE_STATE_FILE),
				 errdetail("The state file is unusable or records another layout; the lead applies to this server's life only.")));
		return;
	}
	snowflake_state_image(&f, s, s->durable_ms, -1);
	if (!snowflake_state_write(&f, &failure))
		snowflake_report_write_failure_hint(FATAL, &failure,
											"The largest lead over the clock of the primary's IDs, replayed from WAL, must be recorded before replay goes on.",
											"Make the state file in the data directory writable by the server again, then start it again.");
	LWLockRelease(snowflake_lock);
	if (!raised)
		return;
	ereport(LOG,
			(errmsg("snowflake IDs of this server's history may lead the clock by %lld ms, as replayed from WAL",
					(long long) max_lead_ms),
			 errdetail("The first ID of every start of this server is placed past the clock plus that lead.")));
}
