/*-------------------------------------------------------------------------
 *
 * reservation.c
 *	  The writes of the state file by a server that mints: the reservation
 *	  (how far IDs may go before the state file must say so), the floor
 *	  that places the first ID of every life past anything an earlier life,
 *	  or another copy of the data directory, can have issued, the history's
 *	  leads as snowflake.max_drift_ms changes (and a raise that waits for
 *	  the standbys before it is relied on), the adoption of a changed layout
 *	  or of a derived node id, and the request and confirmation of a node
 *	  id.  What each write decides is history.c's (its rules); this file
 *	  gathers the facts and carries the decisions out.
 *
 * The generator never issues an ID above the reservation held in shared
 * memory (SnowflakeShared.reserved_ms), and that value is raised only after
 * the state file saying so has been written and fsynced: a restart that
 * resumes strictly above the file's reservation (sf_rule_resume) never
 * issues an ID twice.  Callers whose IDs wait for it, callers whose IDs
 * are issued already (early, ahead of need) and the background writer all
 * write through snowflake_extend_reservation.
 *
 * The first write of every life (shared.c: every load owes it) places the
 * first ID past the floor (sf_rule_floor) before it is handed out, and
 * records the lineage of the life's IDs: the system identifier and
 * timeline they are issued under, and their node field.  A change of the
 * lead is recorded as sf_rule_lead says: with the preload, a record of the
 * history's leads goes into WAL (walrecord.c) before the state file
 * reflects it, and a raised bound is published only once every standby
 * this primary can see has flushed that record (snowflake_raise_settle,
 * called by callers that wait for it and by the background writer).
 *
 * Locking: everything here runs under the "snowflake" LWLock, which
 * serialises writes of the state file and WAL records of the history;
 * the spinlock is taken inside it only to read or publish the generator's
 * values (shared.h).  snowflake_raise_settle takes the spinlock only.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xloginsert.h"
#include "miscadmin.h"
#include "replication/slot.h"
#include "replication/walsender.h"

#include "config.h"
#include "fileformat.h"
#include "history.h"
#include "reservation.h"
#include "shared.h"
#include "standbys.h"
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
 * raised to just below floor_ms (at most the layout's end), so that the
 * next one is past anything an earlier life can have issued.  Returns that
 * millisecond, which the reservation must cover.  The highest floor
 * applied is recorded with its cause: the lead of later IDs is told by it
 * (generator.c), across restarts.
 */
static int64
sf_raise_to_floor(SnowflakeShared *s, int64 now_ms, int64 floor_ms)
{
	int64		floor_packed;

	floor_ms = Min(floor_ms, snowflake_max_ms(&s->layout));
	s->floor_lead_ms = Max(floor_ms - 1 - now_ms, 0);
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

static bool
sf_leads_equal(const SfLeads *a, const SfLeads *b)
{
	return a->lead_ms == b->lead_ms && a->horizon_unix_ms == b->horizon_unix_ms;
}

/*
 * sf_log_record
 *		Write rec into WAL (its bytes: walrecord.c) and flush it, and make
 *		it the last record the history reflects.  Called with snowflake_lock
 *		held, outside recovery, with the preload; may raise an error (as any
 *		WAL insertion).  Returns the end of the record.
 */
static uint64
sf_log_record(SnowflakeShared *s, const SfRecord *rec)
{
	char		buf[SNOWFLAKE_WAL_MAX_SIZE];
	uint8		info;
	size_t		len = snowflake_wal_encode(rec, buf, &info);
	XLogRecPtr	lsn;

	XLogBeginInsert();
	XLogRegisterData(buf, (int) len);
	lsn = XLogInsert(SNOWFLAKE_RMGR_ID, info);
	XLogFlush(lsn);
	s->history.pos.tli = (uint32) GetWALInsertionTimeLine();
	s->history.pos.lsn = (uint64) lsn;
	return (uint64) lsn;
}

/*
 * Publishes a reservation written durably up to target, under
 * snowflake_lock: the new reservation, the lead bound (bound_ms) and a
 * raise waiting for the standbys (raise_ms, or -1 to keep the one there),
 * and the counters of writes by kind, with the time of the write for
 * snowflake_stats (the clock read before the spinlock).
 */
static void
sf_publish_write(SnowflakeShared *s, int64 target, int64 bound_ms,
				 int64 raise_ms, uint64 raise_lsn, SfExtendMode mode)
{
	int64		written_unix = snowflake_clock_ms();

	SpinLockAcquire(&s->mutex);
	s->reserved_ms = target;
	s->durable_ms = target;
	s->lead_bound_ms = bound_ms;
	if (raise_ms >= 0)
	{
		s->raise_ms = raise_ms;
		s->raise_lsn = raise_lsn;
	}
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
 *		reservation in force and *last to the last ID issued.
 *
 * After a clean shutdown the generator resumes from the exact last ID with
 * the reservation one millisecond below it (sf_rule_resume), so that the
 * first call writes; a write made while the clock is still behind that
 * millisecond (the background writer's, needing nothing) must cover it
 * too, or a crash would resume inside it and issue its IDs again.
 */
static int64
sf_cover_issued(SnowflakeShared *s, int64 needed_ms, int64 *reserved,
				int64 *last)
{
	SpinLockAcquire(&s->mutex);
	*reserved = s->reserved_ms;
	*last = s->last;
	SpinLockRelease(&s->mutex);
	if (*last >= 0)
		needed_ms = Max(needed_ms, *last >> s->layout.sequence_bits);
	return needed_ms;
}

/* What one reservation write decides before it writes (sf_plan_write). */
typedef struct SfWritePlan
{
	int64		needed_ms;		/* the reservation must reach it */
	int64		reserved;		/* the reservation in force */
	int64		bound;			/* the lead bound in force */
	bool		floor;			/* the life's floor is applied */
	bool		new_lineage;	/* the life's lineage is recorded */
	SfLineage	lin;
	SfLeads		leads;			/* the history's leads after the write */
	SfLeadStep	step;			/* what the lead rule asks (history.c) */
	bool		log;			/* the leads go into WAL first */
	bool		raise_new;		/* a raise starts waiting for the standbys */
} SfWritePlan;

/*
 * sf_plan_write
 *		Decide a reservation write for a caller that needs IDs up to
 *		needed_ms, at now_unix (Unix ms), with this process's lead drift:
 *		the lineage, the floor a life owes (sf_rule_floor: past the clock
 *		plus the history's lead, or its horizon), and what a change of the
 *		lead asks (sf_rule_lead): a lower bound at once, a raise recorded
 *		first and relied on once the standbys have the record.  Returns
 *		whether the state file is to be written.  Called with
 *		snowflake_lock held.
 */
static bool
sf_plan_write(SnowflakeShared *s, int64 needed_ms, int64 now_unix, int64 drift,
			  SfWritePlan *p)
{
	int64		now_ms = now_unix - s->layout.epoch_ms;
	int64		raise;
	int64		last;

	p->new_lineage = sf_check_lineage(s, &p->lin);
	SpinLockAcquire(&s->mutex);
	if (drift < s->lead_bound_ms)
		s->lead_bound_ms = drift;
	if (s->raise_ms >= 0 && s->raise_ms != drift)
		s->raise_ms = -1;		/* a raise to another value: asked again */
	p->bound = s->lead_bound_ms;
	raise = s->raise_ms;
	SpinLockRelease(&s->mutex);
	p->floor = s->floor_pending;
	if (p->floor)
		needed_ms = Max(needed_ms,
						sf_raise_to_floor(s, now_ms,
										  sf_rule_floor(&s->history.leads, now_unix, drift) -
										  s->layout.epoch_ms));
	p->needed_ms = sf_cover_issued(s, needed_ms, &p->reserved, &last);
	p->leads = s->history.leads;
	p->step = sf_rule_lead(&p->leads, p->bound, drift,
						   last >= 0 ? (last >> s->layout.sequence_bits) +
						   s->layout.epoch_ms : 0);
	if (!s->preloaded)
	{
		/* Nothing can be WAL-logged: the recorded leads stay as they are. */
		p->leads = s->history.leads;
		p->step.log = false;
	}
	p->log = p->step.log && !sf_leads_equal(&p->leads, &s->wal_leads);
	p->raise_new = p->step.raise_ms >= 0 && raise != p->step.raise_ms;
	return p->reserved < p->needed_ms || p->floor || p->new_lineage ||
		p->log || p->raise_new || p->step.bound_ms != p->bound;
}

/*
 * sf_write_planned
 *		Carry out a planned write (sf_plan_write) up to target: the leads
 *		into WAL first when they changed (so that the state file never
 *		reflects a record that WAL lacks), then the state file; then
 *		publish the reservation and the bound.  False with *failure if the
 *		file cannot be written (a WAL record written stays: it only tells
 *		standbys what this server's memory knows already).  Called with
 *		snowflake_lock held.
 */
static bool
sf_write_planned(SnowflakeShared *s, SfWritePlan *p, int64 target,
				 SfExtendMode mode, SfWriteFailure *failure)
{
	SnowflakeStateFile f;

	if (p->log)
	{
		SfRecord	rec = {.kind = SF_RECORD_LEADS, .leads = p->leads};

		s->wal_leads_lsn = sf_log_record(s, &rec);
		s->wal_leads = p->leads;
		s->history.leads = p->leads;
	}
	if (p->new_lineage)
	{
		s->history.node_base = s->node_id;
		s->history.node_span = s->node_id_span;
	}
	sf_reservation_image(&f, s, target, &p->lin);
	if (!snowflake_state_write(&f, failure))
		return false;
	sf_publish_write(s, target, p->step.bound_ms,
					 p->raise_new ? p->step.raise_ms : -1, s->wal_leads_lsn,
					 mode);
	return true;
}

/*
 * snowflake_extend_reservation
 *		Durably raise the reservation so that IDs up to needed_ms may be
 *		issued.  now_ms is the caller's clock reading (ms since the epoch).
 *
 * Takes the snowflake LWLock.  The first write of a server's life checks
 * the lineage and records it, and when the floor applies, raises the
 * generator's last value to the floor first (sf_plan_write).  The new
 * reservation reaches SNOWFLAKE_RESERVE_AHEAD_MS past the later of
 * needed_ms and now_ms.  Nothing is written if the reservation already
 * covers needed_ms and nothing else changed (another process wrote it
 * while this one waited for the lock).
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
	int64		now_unix = now_ms + s->layout.epoch_ms;
	SfWritePlan plan;
	int64		target;

	if (mode != SF_EXTEND_EARLY)
		LWLockAcquire(snowflake_lock, LW_EXCLUSIVE);
	else if (!LWLockConditionalAcquire(snowflake_lock, LW_EXCLUSIVE))
		return true;

	/*
	 * The clock again, once the lock is held: the wait for it may have been
	 * long (behind a slow fsync).
	 */
	now_unix = Max(now_unix, snowflake_clock_ms());
	now_ms = now_unix - s->layout.epoch_ms;
	if (sf_plan_write(s, needed_ms, now_unix, snowflake_drift_ms(), &plan))
	{
		target = Min(Max(Max(plan.needed_ms, now_ms) + SNOWFLAKE_RESERVE_AHEAD_MS,
						 plan.reserved),
					 snowflake_max_ms(&s->layout));
		if (!sf_write_planned(s, &plan, target, mode, failure))
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
		if (plan.new_lineage)
			sf_record_lineage(s, &plan.lin);
		if (plan.floor)
			ereport(LOG,
					(errmsg("snowflake IDs resume at %lld ms past the clock, because %s",
							(long long) (s->floor_ms - 1 - now_ms), s->floor_reason)));
		s->floor_pending = false;
	}
	LWLockRelease(snowflake_lock);
	return true;
}

/*
 * snowflake_raise_settle
 *		Publish a raised lead that waits for the standbys, once every standby
 *		this primary can see has flushed the WAL record that carries it
 *		(standbys.c, sf_rule_raise_lagging).  Returns true if no raise
 *		waits (any more); false if one does, with the first standby that
 *		lags in *lagging (when not NULL).  Takes no lock of snowflake's but
 *		the spinlock; allocates.
 */
bool
snowflake_raise_settle(SnowflakeShared *s, SfStandby *lagging)
{
	SfStandbys	standbys;
	uint64	   *flushed;
	int64		raise;
	uint64		lsn;
	int			lag;

	SpinLockAcquire(&s->mutex);
	raise = s->raise_ms;
	lsn = s->raise_lsn;
	SpinLockRelease(&s->mutex);
	if (raise < 0)
		return true;
	standbys.max = max_wal_senders + max_replication_slots;
	standbys.standbys = palloc(sizeof(SfStandby) * Max(standbys.max, 1));
	flushed = palloc(sizeof(uint64) * Max(standbys.max, 1));
	snowflake_standbys(&standbys);
	for (int i = 0; i < standbys.n; i++)
		flushed[i] = standbys.standbys[i].flushed;
	lag = sf_rule_raise_lagging(lsn, flushed, standbys.n);
	if (lag >= 0 && lagging != NULL)
		*lagging = standbys.standbys[lag];
	pfree(flushed);
	pfree(standbys.standbys);
	if (lag >= 0)
		return false;
	SpinLockAcquire(&s->mutex);
	if (s->raise_ms == raise && s->raise_lsn == lsn)
	{
		s->lead_bound_ms = Max(s->lead_bound_ms, raise);
		s->raise_ms = -1;
	}
	SpinLockRelease(&s->mutex);
	ereport(LOG,
			(errmsg("snowflake IDs may lead the clock by %lld ms from now on",
					(long long) raise),
			 errdetail("Every standby this server can see has flushed the WAL record of the raise (at %X/%X).",
					   LSN_FORMAT_ARGS((XLogRecPtr) lsn))));
	return true;
}

/*
 * snowflake_log_request
 *		With the preload, outside recovery: write the request to confirm the
 *		node id that this server's history has pending into WAL, once per
 *		life, so that every server that replays this WAL later (a standby
 *		made before the request, a restore) waits for the same
 *		confirmation.  A failed write of the state file is only logged: the
 *		record is in WAL.  Takes snowflake_lock.
 */
void
snowflake_log_request(SnowflakeShared *s)
{
	SnowflakeStateFile f;
	SfWriteFailure failure;

	if (!s->preloaded || RecoveryInProgress())
		return;
	LWLockAcquire(snowflake_lock, LW_EXCLUSIVE);
	if (s->history.request_id != 0 && !s->request_logged)
	{
		SfRecord	rec = {.kind = SF_RECORD_REQUEST,
			.request_id = s->history.request_id,
		.request_kind = s->history.request_kind};

		(void) sf_log_record(s, &rec);
		s->request_logged = true;
		snowflake_state_image(&f, s, s->durable_ms, -1);
		if (!snowflake_state_write(&f, &failure))
			snowflake_report_write_failure(LOG, &failure,
										   "The request to confirm the node id is in WAL; the state file records it at the next write.");
	}
	LWLockRelease(snowflake_lock);
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
 * sf_write_confirmed
 *		Record the confirmation of node id node_id: into WAL first (with the
 *		preload), naming the request it answers, so that every server that
 *		replays this WAL lifts the same request (replay.c), then the state
 *		file without the request, with this node id and span as the ones
 *		the history's span is counted from (sf_rule_confirm).  False, with
 *		*failure set and nothing changed in memory, if the file cannot be
 *		written.  Called with the LWLock held.
 */
static bool
sf_write_confirmed(SnowflakeShared *s, int node_id, SfWriteFailure *failure)
{
	SnowflakeStateFile f;
	SfHistory	before = s->history;
	int64		durable;

	if (s->preloaded)
	{
		SfRecord	rec = {.kind = SF_RECORD_CONFIRM,
			.request_id = s->history.request_id,
			.node_base = s->node_id,
		.node_span = s->node_id_span};

		(void) sf_log_record(s, &rec);
	}
	(void) sf_rule_confirm(&s->history, s->node_id, s->node_id_span);
	SpinLockAcquire(&s->mutex);
	durable = s->durable_ms;
	SpinLockRelease(&s->mutex);
	snowflake_state_image(&f, s, durable, -1);
	if (!snowflake_state_write(&f, failure))
	{
		/* The WAL position stays: the record is there. */
		before.pos = s->history.pos;
		s->history = before;
		return false;
	}
	s->refusals &= ~SNOWFLAKE_REFUSED(SNOWFLAKE_NODE_UNCONFIRMED);
	ereport(LOG,
			(errmsg("snowflake node id %d confirmed", node_id)));
	return true;
}

/*
 * snowflake_confirm_restore_state
 *		Confirm that this server mints with node id node, after a restore
 *		(snowflake.confirm_restore), a start without a new timeline, or a
 *		start with a node id in the span of the one its history mints under
 *		(shared.c): the confirmation is written (sf_write_confirmed), then
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
				 errdetail("Generation is not waiting for a confirmation of the node id: this server did not start from a restore with \"%s\" on, nor leave recovery without a new timeline, nor start with a node id in the span of the one its history mints under, or its node id was confirmed already.",
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
	if (!sf_write_confirmed(s, node, &failure))
	{
		LWLockRelease(snowflake_lock);
		snowflake_report_write_failure(ERROR, &failure,
									   "The node id was not confirmed.");
	}
	LWLockRelease(snowflake_lock);
}
