/*-------------------------------------------------------------------------
 *
 * shared.c
 *	  The life of the generator's shared state: creating or attaching it,
 *	  loading it from the state file, and recording the exact last ID at a
 *	  clean shutdown.
 *
 * One SnowflakeShared struct lives in shared memory (locking rules in
 * shared.h).  Its durable twin is the state file (statefile.c): the
 * generator never issues an ID above the reservation held in shared memory,
 * and that value is raised only after the file saying so has been written
 * and fsynced (reservation.c).
 *
 * One rule at every start, with no proof asked of the data directory:
 * every load of the state (a server's start, the re-initialisation of its
 * shared memory after a crash, and without the preload the first use of
 * the generator in a life) resumes strictly above what the state file
 * records, and owes the floor, which the life's first reservation write
 * applies before any ID is handed out: the first ID lies past the clock
 * plus the largest lead over the clock that any member of the history may
 * have allowed (snowflake_floor_lead).  A clean restart, a crash, a volume
 * snapshot, a base backup, a cold copy restored in place after its
 * original ran on and a promoted standby are treated alike: no file is
 * trusted to cover IDs that a copy of it knows nothing of, so no sequence
 * of events can find a start that would issue an ID twice (given a clock
 * that does not lag the history's, docs/guarantees.md).  The obligation is
 * kept in shared memory only: a write that fails leaves it owed, and any
 * later start owes it anyway.  The cost is one lead at every start.
 *
 * Node ids that cannot repeat along a history: a server that leaves
 * recovery without a new timeline (a standby or a base backup started
 * without its signal file, an old primary rewound and started as a
 * primary) continues its predecessor's timeline, and so its node field:
 * such a start, which only the postmaster's first load can see (pg_control
 * and the signal files, before recovery changes them), is recorded in the
 * state file as a request to confirm the node id, whatever else is
 * refused.  So is a restore with snowflake.confirm_restore on (backup_label
 * or recovery.signal, or a data directory found at another path).  The
 * request is written before recovery begins, or the server does not start
 * (startcheck.c), and lifted only by snowflake_confirm_restore()
 * or by a start with another node id than the file records (the server
 * was given its own).  Node fields along a timeline's ancestry are apart
 * (snowflake_node_field).
 *
 * Without the preload (PostgreSQL 17 and later), the shared state is a
 * segment of the DSM registry that the first process to call a snowflake
 * function creates (snowflake_attach): it is configured once from the
 * server configuration (the values recorded in the settings file for the
 * server's life; a failed write of it holds back generation, never
 * decoding), and the state file is read when the generator is first needed
 * (snowflake_require_shared), under the same rule.  A crash
 * re-initialisation drops the registry: the next use loads again.
 *
 * The spinlock is taken here only to read the last ID at shutdown and for
 * the background writer's registration (snowflake_writer_*).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <unistd.h>

#include <limits.h>
#include <stdlib.h>

#include "access/xlog.h"
#include "access/xlogrecovery.h"
#include "catalog/pg_control.h"
#include "common/hashfn.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/builtins.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "config.h"
#include "fileformat.h"
#include "shared.h"
#include "startcheck.h"
#include "statefile.h"

SnowflakeShared *snowflake_shared = NULL;

/* The "snowflake" LWLock, as this process addresses it. */
LWLock	   *snowflake_lock = NULL;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

/*
 * The postmaster's own memory, which a crash re-initialisation keeps:
 * whether it loaded the state once already (only its first load sees how
 * the server starts, before recovery changes pg_control and the signal
 * files).
 */
static bool sf_pm_loaded = false;

static void sf_shmem_shutdown(int code, Datum arg);
static void sf_load(SnowflakeShared *s);

static Size
sf_shmem_size(void)
{
	StaticAssertStmt(sizeof(SnowflakeShared) <= SNOWFLAKE_DSM_SIZE,
					 "SnowflakeShared must fit SNOWFLAKE_DSM_SIZE");
	return MAXALIGN(sizeof(SnowflakeShared));
}

/* shmem_request_hook: ask for our shared memory and LWLock. */
static void
sf_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	RequestAddinShmemSpace(sf_shmem_size());
	RequestNamedLWLockTranche(SNOWFLAKE_NAME, 1);
}

/*
 * snowflake_node_field
 *		The node field IDs carry on timeline tli (0: unknown, taken as 1):
 *		snowflake.node_id plus the timeline's offset within
 *		snowflake.node_id_span, or -1 while the node id is not set.
 *
 * The offset is the timeline number's, (tli - 1) % span, unless one of the
 * span - 1 timelines before it in its own history took it: then the lowest
 * one none of them took (history.c, sf_rule_node_offset).  A promoted
 * server's node field thus differs from those of the span - 1 timelines
 * before it, whichever numbers servers of other branches took meanwhile (a
 * restore drill that archived into the same WAL archive takes a number,
 * and the next real failover skips it), and is the number's when none was
 * skipped.
 */
int
snowflake_node_field(const SnowflakeShared *s, uint32 tli)
{
	static uint32 offset_tli = 0;
	static int	offset_span = 0;
	static int	offset = 0;

	if (s->node_id < 0)
		return -1;
	if (s->node_id_span == 1 || tli <= 1)
		return s->node_id;
	if (tli != offset_tli || s->node_id_span != offset_span)
	{
		offset = snowflake_timeline_offset(tli, s->node_id_span);
		offset_tli = tli;
		offset_span = s->node_id_span;
	}
	return s->node_id + offset;
}

/*
 * Fill a state file image: the layout and node id of the server, the given
 * reservation and last ID, the lineage and floor in shared memory, what it
 * knows of the history (its leads, the last WAL record it reflects, a
 * request to confirm the node id, the node span), and the data directory's
 * place.
 */
void
snowflake_state_image(SnowflakeStateFile *f, const SnowflakeShared *s,
					  int64 reserved_ms, int64 last)
{
	memset(f, 0, sizeof(*f));
	f->magic = SNOWFLAKE_STATE_MAGIC;
	f->version = SNOWFLAKE_STATE_VERSION;
	f->epoch_ms = s->layout.epoch_ms;
	f->timestamp_bits = s->layout.timestamp_bits;
	f->node_bits = s->layout.node_bits;
	f->sequence_bits = s->layout.sequence_bits;
	f->node_id = s->recorded_node;
	f->reserved_ms = reserved_ms;
	f->last = last;
	f->timeline = s->recorded_tli;
	f->system_id = s->recorded_system_id;
	f->max_lead_ms = s->history.leads.lead_ms;
	f->horizon_unix_ms = s->history.leads.horizon_unix_ms;
	f->floor_ms = s->floor_ms;
	f->floor_cause = (uint32) s->recorded_floor_cause;
	f->place = s->place;
	f->pos_tli = s->history.pos.tli;
	f->pos_lsn = s->history.pos.lsn;
	f->request_id = s->history.request_id;
	f->request_kind = (uint32) s->history.request_kind;
	f->node_base = s->history.node_base;
	f->node_span = s->history.node_span;
	snowflake_state_seal(f);
}

/* Add a refusal, with its detail message (when the state is loaded only). */
static void
sf_refuse(SnowflakeShared *s, SnowflakeRefusal why, int err,
		  const char *detail)
{
	s->refusals |= SNOWFLAKE_REFUSED(why);
	if (why == SNOWFLAKE_STATE_UNUSABLE)
		s->refusal_errno = err;
	strlcpy(s->refusal_detail[why], detail, sizeof(s->refusal_detail[why]));
}

/*
 * sf_log_node_change
 *		Say at startup that the node field of the IDs changes.  On timeline 1
 *		(or an unknown one) the field is snowflake.node_id itself, whatever
 *		the span; on a later one it is the node id plus the timeline's offset
 *		within the span, and the file records only the field, so both
 *		settings are named with the values that give the new one.
 */
static void
sf_log_node_change(const SnowflakeShared *s, const SnowflakeStateFile *f,
				   int node)
{
	/* A derived node id's change is sf_check_derived_node's to judge. */
	if (s->node_id_derived)
		return;
	if (f->timeline <= 1)
		ereport(LOG,
				(errmsg("parameter \"%s\" changed from %d to %d",
						"snowflake.node_id", f->node_id, node),
				 errdetail("IDs minted from now on carry node id %d, from the next millisecond on.",
						   node)));
	else
		ereport(LOG,
				(errmsg("snowflake node id changed from %d to %d on timeline %u",
						f->node_id, node, f->timeline),
				 errdetail("On timeline %u, \"%s\" = %d and \"%s\" = %d give node id %d; IDs minted from now on carry it, from the next millisecond on.",
						   f->timeline, "snowflake.node_id", s->node_id,
						   "snowflake.node_id_span", s->node_id_span, node)));
}


/*
 * sf_resume
 *		Decide where generation resumes after reading a state file of the
 *		configured layout (history.c, sf_rule_resume).
 */
static void
sf_resume(SnowflakeShared *s, const SnowflakeStateFile *f)
{
	SfResume	r;
	int			node = snowflake_node_field(s, f->timeline);

	/*
	 * The node field the recorded timeline gives with the configured
	 * settings; another timeline's (a promotion) is checked at the first
	 * write, with the lineage (reservation.c).
	 */
	if (node >= 0 && f->node_id != node)
		sf_log_node_change(s, f, node);
	sf_rule_resume(f, &s->layout, node, &r);
	s->last = r.last;
	s->reserved_ms = r.reserved_ms;
	s->durable_ms = r.durable_ms;
	s->resume_ms = s->last >> s->layout.sequence_bits;
}

/*
 * sf_layout_changed
 *		Refuse generation because the file records another epoch or layout,
 *		and remember where the old IDs end, for a later adoption.
 */
static void
sf_layout_changed(SnowflakeShared *s, const SnowflakeStateFile *f)
{
	char		detail[2 * SNOWFLAKE_DETAIL_LEN];
	char		rec_epoch[64];
	char		cfg_epoch[64];
	int64		old_ms = f->last >= 0 ? (f->last >> f->sequence_bits) :
		f->reserved_ms;
	int			old_shift = f->node_bits + f->sequence_bits;

	snowflake_format_ms(f->epoch_ms, rec_epoch, sizeof(rec_epoch));
	snowflake_format_ms(s->layout.epoch_ms, cfg_epoch, sizeof(cfg_epoch));
	snprintf(detail, sizeof(detail),
			 "The state file records epoch %s and layout %d/%d/%d (timestamp/node/sequence bits); the server is configured with epoch %s and layout %d/%d/%d.",
			 rec_epoch, f->timestamp_bits, f->node_bits, f->sequence_bits,
			 cfg_epoch, s->layout.timestamp_bits, s->layout.node_bits,
			 s->layout.sequence_bits);
	sf_refuse(s, SNOWFLAKE_LAYOUT_CHANGED, 0, detail);

	/*
	 * Where the old IDs end: their last millisecond in absolute time, and a
	 * bound above every one of them (the last millisecond's IDs with every
	 * node and sequence bit set).
	 */
	s->recorded_end_unix_ms = f->epoch_ms + old_ms;
	s->recorded_max_id = old_ms < 0 ? -1 :
		(int64) ((((uint64) old_ms + 1) << old_shift) - 1);
}

/*
 * sf_unused_layout_replaced
 *		Whether the file's epoch or layout, which differ from the
 *		configured ones, issued no ID, so that the configured ones may take
 *		their place (an epoch set in the future by mistake, then corrected);
 *		if so, f is made the file of the configured layout and that is
 *		logged.
 *
 * Every ID lies at or below the reservation in the file (it is written
 * durably before the ID is issued) and in a millisecond at or past the
 * epoch, and a clean shutdown records the exact last ID.  So a file whose
 * reservation lies before the epoch and that records no last ID proves
 * that nothing was issued under its layout; anything else is refused, as
 * before.
 */
static bool
sf_unused_layout_replaced(SnowflakeShared *s, SnowflakeStateFile *f)
{
	char		rec_epoch[64];
	char		cfg_epoch[64];

	if (f->reserved_ms >= 0 || f->last >= 0)
		return false;

	snowflake_format_ms(f->epoch_ms, rec_epoch, sizeof(rec_epoch));
	snowflake_format_ms(s->layout.epoch_ms, cfg_epoch, sizeof(cfg_epoch));
	ereport(LOG,
			(errmsg("snowflake epoch and layout recorded in \"%s\" replaced by the configured ones",
					SNOWFLAKE_STATE_FILE),
			 errdetail("The state file records epoch %s and layout %d/%d/%d (timestamp/node/sequence bits) and no ID issued under them; the server is configured with epoch %s and layout %d/%d/%d.",
					   rec_epoch, f->timestamp_bits, f->node_bits,
					   f->sequence_bits, cfg_epoch, s->layout.timestamp_bits,
					   s->layout.node_bits, s->layout.sequence_bits)));
	f->epoch_ms = s->layout.epoch_ms;
	f->timestamp_bits = s->layout.timestamp_bits;
	f->node_bits = s->layout.node_bits;
	f->sequence_bits = s->layout.sequence_bits;
	f->reserved_ms = -1;		/* an empty history, as without a file */
	f->last = -1;
	snowflake_state_seal(f);
	return true;
}

/*
 * sf_ask_in_span
 *		At a load whose node id falls in the span of the node id the state
 *		file records its history's IDs under: say so (WARNING), and the
 *		detail of the refusal.
 */
static void
sf_ask_in_span(SnowflakeShared *s, char *detail, size_t len)
{
	int			base = s->history.node_base;
	int			last = base + s->history.node_span - 1;

	snprintf(detail, len,
			 "The state file was written by a server minting with node id %d and \"%s\" = %d, whose standbys take node ids %d to %d when promoted; this server is configured with node id %d.",
			 base, "snowflake.node_id_span", s->history.node_span, base, last,
			 s->node_id);
	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("snowflake node id %d falls within the span of node ids %d to %d recorded in \"%s\"",
					s->node_id, base, last, SNOWFLAKE_STATE_FILE),
			 errdetail("%s Calls that issue IDs fail until the node id is confirmed; decoding works.",
					   detail),
			 errhint("If this server runs beside the one it was copied from, give it a node id outside %d to %d and restart it; if it replaces it, have a superuser run SELECT snowflake_confirm_restore(%d).",
					 base, last, s->node_id)));
}

/* A new request's id: random, never 0. */
static uint64
sf_new_request_id(void)
{
	uint64		id = 0;

	if (!pg_strong_random(&id, sizeof(id)) || id == 0)
		id = ((uint64) MyProcPid << 32) ^ (uint64) GetCurrentTimestamp() ^ 1;
	return id;
}

/*
 * sf_check_restored_node
 *		Refuse generation until the node id is confirmed when this load asks
 *		for it, or an earlier one did and no confirmation came (history.c,
 *		sf_rule_start_request), recording a new request before recovery
 *		begins; else, at a standby's first start, record where its data
 *		directory is.  f is the file as read (or an empty history's image),
 *		of the configured layout if layout_ok; s->history is loaded from it.
 *		Without the preload no start is seen: nothing is asked.
 */
static void
sf_check_restored_node(SnowflakeShared *s, SnowflakeStateFile *f,
					   bool have_file, bool layout_ok)
{
	SfStartFacts facts;
	char		detail[2 * SNOWFLAKE_DETAIL_LEN];
	uint64		had = s->history.request_id;
	bool		first_look = !sf_pm_loaded;

	if (!s->preloaded)
	{
		snowflake_warn_confirm_unloaded();
		return;
	}
	snowflake_start_facts(f, have_file, first_look, s->place, &facts);
	facts.node_changed = have_file && s->node_id >= 0 &&
		snowflake_node_field(s, f->timeline) != f->node_id;
	facts.in_span = have_file && layout_ok &&
		sf_rule_node_in_span(&s->history, s->node_id, s->node_id_span);
	s->ask = sf_rule_start_request(&facts, &s->history, sf_new_request_id());
	if (s->ask == SF_ASK_IN_SPAN)
		sf_ask_in_span(s, detail, sizeof(detail));
	else if (s->ask != SF_ASK_NONE)
		strlcpy(detail, snowflake_ask_sentence(s->ask), sizeof(detail));
	if (s->ask != SF_ASK_NONE)
	{
		sf_refuse(s, SNOWFLAKE_NODE_UNCONFIRMED, 0, detail);
		if (s->history.request_id != had)
			snowflake_record_request(f, s->place, &s->history, detail);
	}
	else if (have_file && layout_ok)
		snowflake_record_standby_place(f, s->place, first_look);
}

/*
 * sf_state_unusable
 *		The state file could not be read (err: errno, or 0 for a corrupt
 *		file; detail: what failed): refuse generation, and say so at once.
 *		A request to confirm the node id that this start makes cannot be
 *		recorded then, and the postmaster does not start.
 */
static void
sf_state_unusable(SnowflakeShared *s, int err, const char *detail)
{
	SnowflakeStateFile none;
	SfStartFacts facts;
	SfHistory	h;
	SfAsk		ask;

	memset(&none, 0, sizeof(none));
	memset(&h, 0, sizeof(h));
	if (s->preloaded)
	{
		snowflake_start_facts(&none, false, !sf_pm_loaded, s->place, &facts);
		ask = sf_rule_start_request(&facts, &h, 1);
		if (ask != SF_ASK_NONE)
			snowflake_request_unrecorded(snowflake_ask_sentence(ask), NULL,
										 err, detail);
	}
	sf_refuse(s, SNOWFLAKE_STATE_UNUSABLE, err, detail);

	/*
	 * Said at startup too, not only by the first call: the server starts
	 * and decodes, but issues no ID until this is put right.
	 */
	errno = err;
	ereport(WARNING,
			(err != 0 ? errcode_for_file_access() :
			 errcode(ERRCODE_DATA_CORRUPTED),
			 err != 0 ? errmsg("%s: %m", detail) : errmsg("%s", detail),
			 errdetail("Calls that issue IDs fail until the file can be read at a restart; decoding works."),
			 errhint("See the section \"Troubleshooting\" of the snowflake README before removing the file and restarting the server.")));
}

/*
 * sf_owe_floor
 *		Every load owes the floor: say why, for the log line of the write
 *		that applies it and for the errors of calls that its lead refuses.
 */
static void
sf_owe_floor(SnowflakeShared *s)
{
	const char *reason;

	s->floor_cause = SNOWFLAKE_FLOOR_START;
	if (!s->preloaded)
		reason = "the generator starts (without the preload, at its first use after the server started or restarted after a crash)";
	else if (sf_pm_loaded)
		reason = "the server restarted after a crash";
	else if (snowflake_restore_start() != NULL)
	{
		reason = "the server started from a restore";
		s->floor_cause = SNOWFLAKE_FLOOR_RESTORE;
	}
	else
		reason = "the server started";
	s->floor_pending = true;
	strlcpy(s->floor_reason, reason, sizeof(s->floor_reason));
}

/*
 * sf_log_lower_lead
 *		At a start whose configured lead is below the history's: say so,
 *		since the history's applies until it has elapsed.
 */
static void
sf_log_lower_lead(SnowflakeShared *s)
{
	int64		drift = snowflake_drift_ms();
	int64		lead = s->history.leads.lead_ms;

	if (drift >= lead || lead <= SNOWFLAKE_MIN_LEAD_MS)
		return;
	ereport(LOG,
			(errmsg("\"%s\" (%lld ms) is lower than the largest lead over the clock in this data directory's history (%lld ms)",
					"snowflake.max_drift_ms", (long long) drift,
					(long long) lead),
			 errdetail("The first ID of this start is placed past the clock plus %lld ms; the lower value applies from its first reservation write on.",
					   (long long) lead)));
}

/*
 * sf_load_state
 *		Read the state file when the shared state is loaded (sf_load) and
 *		decide where generation resumes: strictly above what the file
 *		records, and past the floor that every load owes.  Problems are
 *		recorded in shared memory and raised by each generation attempt, so
 *		that the server still starts and decoding keeps working.
 */
static void
sf_load_state(SnowflakeShared *s)
{
	SnowflakeStateFile f;
	int			got;
	int			err;
	char		detail[2 * SNOWFLAKE_DETAIL_LEN];
	bool		differs;
	bool		replaced;

	/* A temporary file left by a write that a crash interrupted. */
	if (unlink(SNOWFLAKE_STATE_TMP_FILE) != 0 && errno != ENOENT &&
		errno != EISDIR && errno != EPERM)
		ereport(LOG,
				(errcode_for_file_access(),
				 errmsg("could not remove file \"%s\": %m",
						SNOWFLAKE_STATE_TMP_FILE)));

	sf_owe_floor(s);
	s->place = snowflake_data_directory_place();
	got = snowflake_state_read(&f, &err, detail, sizeof(detail));
	if (got < 0)
	{
		sf_state_unusable(s, err, detail);
		return;
	}
	if (got == 0)
		/* An image of an empty history: nothing issued, lineage unknown. */
		snowflake_state_image(&f, s, -1, -1);

	s->recorded_tli = f.timeline;
	s->recorded_system_id = f.system_id;
	s->recorded_node = f.node_id;
	s->history.leads.lead_ms = Max(f.max_lead_ms, SNOWFLAKE_MIN_LEAD_MS);
	s->history.leads.horizon_unix_ms = f.horizon_unix_ms;
	s->history.pos.tli = f.pos_tli;
	s->history.pos.lsn = f.pos_lsn;
	s->history.request_id = f.request_id;
	s->history.request_kind = (SfRequestKind) f.request_kind;
	s->history.node_base = f.node_base;
	s->history.node_span = f.node_span;
	s->lead_bound_ms = sf_rule_start_bound(SNOWFLAKE_MIN_LEAD_MS);
	s->floor_ms = f.floor_ms;
	s->recorded_floor_cause = (int) f.floor_cause;
	sf_log_lower_lead(s);

	differs = got > 0 &&
		(f.epoch_ms != s->layout.epoch_ms ||
		 f.timestamp_bits != s->layout.timestamp_bits ||
		 f.node_bits != s->layout.node_bits ||
		 f.sequence_bits != s->layout.sequence_bits);
	replaced = differs && sf_unused_layout_replaced(s, &f);
	if (differs && !replaced)
		sf_layout_changed(s, &f);
	else if (got > 0)
		sf_resume(s, &f);

	s->file_foreign = replaced ||
		snowflake_file_of_another_life(&f, got > 0, s->preloaded);
	sf_check_restored_node(s, &f, got > 0, !differs);
}

/*
 * sf_init_shared
 *		Initialise a new SnowflakeShared: nothing configured or loaded yet.
 *		Cannot fail (it may run inside the DSM registry's init callback).
 */
static void
sf_init_shared(SnowflakeShared *s)
{
	memset(s, 0, sizeof(SnowflakeShared));
	SpinLockInit(&s->mutex);
	s->last = -1;
	s->reserved_ms = -1;
	s->durable_ms = -1;
	s->last_write_unix_ms = -1;
	s->resume_ms = -1;
	s->floor_ms = -1;
	s->wal_leads.lead_ms = -1;
	s->raise_ms = -1;
	s->history.leads.lead_ms = SNOWFLAKE_MIN_LEAD_MS;
	s->clock_ms = 0;
	s->counters.reset_time = GetCurrentTimestamp();
	s->recorded_end_unix_ms = -1;
	s->recorded_max_id = -1;
	s->magic = SNOWFLAKE_SHARED_MAGIC;
}

/*
 * Fix the layout, node id and node id span of a SnowflakeShared, and where
 * the node id came from.
 */
static void
sf_configure(SnowflakeShared *s, const SnowflakeLayout *layout, int node_id,
			 int span, const SnowflakeNodeSource *src)
{
	s->layout = *layout;
	s->node_id = node_id;
	s->node_id_span = span;
	s->node_id_derived = src->derived;
	strlcpy(s->node_id_source, node_id >= 0 ? src->text : "",
			sizeof(s->node_id_source));
	s->node_part = node_id >= 0 ? ((int64) node_id << layout->sequence_bits) : 0;
	s->recorded_node = node_id;
}

/*
 * sf_shmem_startup
 *		shmem_startup_hook: create or attach the shared state, in the
 *		postmaster at startup and after a crash re-initialisation, with the
 *		layout and node id validated at preload (config.c).
 */
static void
sf_shmem_startup(void)
{
	bool		found;
	SnowflakeShared *s;
	SnowflakeLayout layout;
	int			node_id;
	int			span;
	SnowflakeNodeSource src;

	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();

	snowflake_config_server(&layout, &node_id, &span, &src);
	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	s = ShmemInitStruct(SNOWFLAKE_NAME, sf_shmem_size(), &found);
	snowflake_shared = s;
	snowflake_lock = &(GetNamedLWLockTranche(SNOWFLAKE_NAME))->lock;
	if (!found)
	{
		sf_init_shared(s);
		s->preloaded = true;
		sf_configure(s, &layout, node_id, span, &src);
		s->configured = true;
		sf_load(s);
		if (!IsUnderPostmaster)
			sf_pm_loaded = true;
	}
	LWLockRelease(AddinShmemInitLock);

	if (!IsUnderPostmaster)
		on_shmem_exit(sf_shmem_shutdown, (Datum) 0);
}

/*
 * sf_check_derived_node
 *		With a node id derived from the host name or the environment
 *		(nodesource.c), refuse generation when the state file vouches for
 *		IDs this data directory minted with another node field on the
 *		timeline it records: the data directory moved to another member,
 *		the host was renamed, or the node id settings changed.  Intended or
 *		not, a superuser confirms it (snowflake_adopt_node_id()): a derived
 *		node id never changes silently.  A changed snowflake.node_id, which
 *		someone set by hand, is accepted with a LOG line (sf_resume).
 *
 * Runs after sf_load_state, on what it leaves in shared memory: the node
 * field and timeline the file records, and whether it may be another
 * server's.  A file that may be (none, a start in recovery or from a base
 * backup, another timeline: a file pg_basebackup or pg_rewind copied from
 * another member) says nothing of this member's own IDs: the change is
 * only logged then.  A crash or a snapshot restored in place leaves the
 * file this data directory's own: a data directory moved to another host
 * after a crash is refused as after a clean shutdown.  Judged whatever else is refused (another layout, a restore to
 * confirm), except when the state file is unusable: it records nothing
 * then.
 */
static void
sf_check_derived_node(SnowflakeShared *s)
{
	char		detail[2 * SNOWFLAKE_DETAIL_LEN];
	int			node;

	if (!s->node_id_derived ||
		(s->refusals & SNOWFLAKE_REFUSED(SNOWFLAKE_STATE_UNUSABLE)))
		return;
	node = snowflake_node_field(s, s->recorded_tli);
	if (node == s->recorded_node)
		return;
	if (s->file_foreign)
	{
		ereport(LOG,
				(errmsg("snowflake node id changed from %d to %d on timeline %u",
						s->recorded_node, node, Max(s->recorded_tli, 1)),
				 errdetail("The node id derived from %s is %d there. The state file may record IDs of another server (this is a standby's or a copy's start, or the file records another timeline or system): IDs minted from now on carry the derived node id.",
						   s->node_id_source, node)));
		return;
	}
	snprintf(detail, sizeof(detail),
			 "The state file records IDs this data directory minted with node id %d on timeline %u; the node id derived from %s is %d there.",
			 s->recorded_node, Max(s->recorded_tli, 1), s->node_id_source,
			 node);
	sf_refuse(s, SNOWFLAKE_NODE_CHANGED, 0, detail);
	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("derived snowflake node id differs from the one recorded in \"%s\"",
					SNOWFLAKE_STATE_FILE),
			 errdetail("%s Calls that issue IDs fail until a superuser adopts the derived node id; decoding works.",
					   detail),
			 errhint("If the change is intended, run SELECT snowflake_adopt_node_id() as a superuser; otherwise restore the host name or the settings and restart the server.")));
}

/*
 * sf_load
 *		Read the state file and decide where generation resumes, or why it
 *		is refused.  Runs once per life of the shared state: in the
 *		postmaster when preloaded, else under the LWLock in the first
 *		process that needs the generator.  Never raises for a problem of
 *		the file: it is recorded as a refusal, raised by every generation
 *		attempt, so that decoding keeps working.
 */
static void
sf_load(SnowflakeShared *s)
{
	sf_load_state(s);
	sf_check_derived_node(s);
	if (s->node_id < 0)
		sf_refuse(s, SNOWFLAKE_NODE_UNSET, 0, "");
	/* Whoever sees "loaded" set sees the refusal and the state too. */
	pg_write_barrier();
	s->loaded = true;
}

/* This postmaster's life file with the given values. */
static void
sf_life_image(SnowflakeLifeFile *life, const SnowflakeLayout *layout,
			  int node_id, int span)
{
	memset(life, 0, sizeof(*life));
	life->postmaster_pid = PostmasterPid;
	life->start_time = PgStartTime;
	life->layout = *layout;
	life->node_id = node_id;
	life->node_id_span = span;
}

#ifdef SNOWFLAKE_HAVE_DSM_REGISTRY

/*
 * The DSM registry's init callback: runs once, in the process that creates
 * the segment, while the registry holds a lock.  It must not fail (17 and
 * 18 would leave the segment half made), so it only initialises memory and
 * the LWLock; the configuration comes after, under that LWLock.
 */
static void
sf_dsm_init(void *ptr)
{
	SnowflakeShared *s = (SnowflakeShared *) ptr;

	sf_init_shared(s);
	s->tranche_id = sf_new_tranche(SNOWFLAKE_NAME);
	LWLockInitialize(&s->lock_data, s->tranche_id);
}

/* The layout, node id and span, as a message fragment. */
static void
sf_describe_settings(char *buf, size_t len, const SnowflakeLayout *layout,
					 int node_id, int span)
{
	char		epoch[64];
	char		nodes[64];

	snowflake_format_ms(layout->epoch_ms, epoch, sizeof(epoch));
	if (span == 1)
		snprintf(nodes, sizeof(nodes), "node id %d", node_id);
	else
		snprintf(nodes, sizeof(nodes), "node id %d with span %d", node_id, span);
	snprintf(buf, len, "%s, epoch %s and layout %d/%d/%d", nodes,
			 epoch, layout->timestamp_bits, layout->node_bits,
			 layout->sequence_bits);
}

/*
 * sf_warn_settings
 *		A process that found the segment configured already: WARNING if the
 *		configuration it reads (valid or not, as snowflake_file_settings
 *		said) differs from the values in force, which stay until a restart.
 */
static void
sf_warn_settings(const SnowflakeShared *s, bool valid,
				 const SnowflakeLayout *layout, int node_id, int span,
				 const char *bad_name, const char *detail)
{
	if (!valid)
	{
		char		in_force[2 * SNOWFLAKE_DETAIL_LEN];

		sf_describe_settings(in_force, sizeof(in_force), &s->layout, s->node_id,
							 s->node_id_span);
		snowflake_report_settings(WARNING, bad_name, detail);
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake keeps the settings in force since its shared state was created"),
				 errdetail("In force: %s.", in_force),
				 errhint("Correct the server configuration; a change of these settings takes effect at the next restart.")));
	}
	else if (node_id != s->node_id || span != s->node_id_span ||
			 layout->epoch_ms != s->layout.epoch_ms ||
			 layout->timestamp_bits != s->layout.timestamp_bits ||
			 layout->node_bits != s->layout.node_bits ||
			 layout->sequence_bits != s->layout.sequence_bits)
	{
		char		in_force[2 * SNOWFLAKE_DETAIL_LEN];
		char		configured[2 * SNOWFLAKE_DETAIL_LEN];

		sf_describe_settings(in_force, sizeof(in_force), &s->layout, s->node_id,
							 s->node_id_span);
		sf_describe_settings(configured, sizeof(configured), layout, node_id,
							 span);
		ereport(WARNING,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake settings changed since its shared state was created"),
				 errdetail("In force: %s. Configured: %s.", in_force, configured),
				 errhint("A change of the node id, epoch or layout takes effect at the next restart of the server.")));
	}
}

/*
 * sf_life_of_this_server
 *		The values recorded in the settings file, if it is there, readable
 *		and this postmaster's (a crash re-initialisation dropped the
 *		segment).  A file that is there but cannot be used (another format,
 *		corrupt) is logged, and replaced by the caller.
 */
static bool
sf_life_of_this_server(SnowflakeLifeFile *life)
{
	char		why[2 * SNOWFLAKE_DETAIL_LEN];
	int			got = snowflake_life_read(life, why, sizeof(why));

	if (got < 0)
		ereport(LOG,
				(errcode(ERRCODE_DATA_CORRUPTED),
				 errmsg("ignoring snowflake settings file \"%s\"",
						SNOWFLAKE_LIFE_FILE),
				 errdetail("%s The node id, span and layout are taken from the server configuration, and the file is written again.",
						   why)));
	return got > 0 && life->postmaster_pid == PostmasterPid &&
		life->start_time == PgStartTime;
}

/*
 * sf_configure_segment
 *		Fix the values of a segment not configured yet; called with its
 *		LWLock held, which it keeps.  Returns true if they come from the
 *		configuration (valid: whether it is, else its error is raised, the
 *		lock released first), false if from this server's life, after a
 *		crash re-initialisation.
 *
 * The configuration's values are recorded in the settings file for the
 * rest of the server's life.  A failed write does not stop them from being
 * fixed: decoding never depends on a write.  It is logged, and generation
 * is refused until a call that generates writes the file
 * (snowflake_life_settle).  A derived node id is logged where it is fixed.
 * After a crash re-initialisation its source is the configuration's where
 * that still gives the values of the file, else the file.
 */
static bool
sf_configure_segment(SnowflakeShared *s, bool valid,
					 const SnowflakeLayout *layout, int node_id, int span,
					 const SnowflakeNodeSource *src,
					 const char *bad_name, const char *detail)
{
	SnowflakeLifeFile life;
	SfWriteFailure failure;
	SnowflakeNodeSource life_src;
	bool		fresh = !sf_life_of_this_server(&life);

	if (fresh)
	{
		if (!valid)
		{
			LWLockRelease(&s->lock_data);
			snowflake_report_settings(ERROR, bad_name, detail);
		}
		sf_life_image(&life, layout, node_id, span);
		if (!snowflake_life_write(&life, &failure))
		{
			snowflake_report_write_failure(LOG, &failure,
										   "The snowflake node id and layout in force are recorded there for the life of the server. Decoding works; generating IDs is refused until the file is written, which each call that generates tries again.");
			s->life_pending = true;
		}
		snowflake_node_log(src);
	}
	if (fresh || (valid && life.node_id == node_id &&
				  life.node_id_span == span))
		life_src = *src;
	else
		snowflake_node_source_fixed(&life_src, life.node_id,
									SNOWFLAKE_LIFE_FILE);
	sf_configure(s, &life.layout, life.node_id, life.node_id_span, &life_src);
	pg_write_barrier();
	s->configured = true;
	return fresh;
}

/*
 * sf_attach_segment
 *		Attach (creating it if need be) the DSM registry segment, and make
 *		sure it is configured.
 *
 * The server configuration, as this process sees it, is read first: a
 * node id or layout set for a database, a role or the session is refused
 * (22023) whatever the segment's state.  The first process to take the
 * LWLock on a segment not configured yet fixes the configuration's values
 * for the segment's life, or raises the configuration's error (nothing is
 * fixed then): see sf_configure_segment.  A process that finds the values
 * fixed already uses them, with a WARNING if the configuration now says
 * something else (a change needs a restart, as with the preload).
 */
static SnowflakeShared *
sf_attach_segment(void)
{
	SnowflakeShared *s;
	SnowflakeLayout layout;
	int			node_id;
	int			span;
	SnowflakeNodeSource src;
	const char *bad_name;
	char		detail[SNOWFLAKE_DETAIL_LEN];
	bool		not_server;
	bool		valid;
	bool		found;

	valid = snowflake_file_settings(&layout, &node_id, &span, &src, &bad_name,
									detail, &not_server);
	if (!valid && not_server)
		snowflake_report_settings(ERROR, bad_name, detail);

	s = sf_get_named_segment(SNOWFLAKE_NAME, SNOWFLAKE_DSM_SIZE, sf_dsm_init,
							 &found);
	if (s->magic != SNOWFLAKE_SHARED_MAGIC)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake's shared state was created by another version of its library"),
				 errhint("Restart the server to use the installed version.")));
	sf_name_tranche(s->tranche_id, SNOWFLAKE_NAME);

	if (!s->configured)
	{
		bool		fresh = false;

		LWLockAcquire(&s->lock_data, LW_EXCLUSIVE);
		if (!s->configured)
			fresh = sf_configure_segment(s, valid, &layout, node_id, span,
										 &src, bad_name, detail);
		LWLockRelease(&s->lock_data);
		if (fresh)
			return s;
	}
	pg_read_barrier();

	sf_warn_settings(s, valid, &layout, node_id, span, bad_name, detail);
	return s;
}
#endif							/* SNOWFLAKE_HAVE_DSM_REGISTRY */

/*
 * snowflake_life_settle
 *		Without the preload: write the settings file that the process which
 *		fixed the values in force could not write (sf_configure_segment),
 *		if it is still to be written.  Returns false, with *failure set, if
 *		it cannot be: the caller refuses to generate (decoding goes on).
 *		Takes the LWLock.
 */
bool
snowflake_life_settle(SnowflakeShared *s, SfWriteFailure *failure)
{
	bool		written = true;

	LWLockAcquire(snowflake_lock, LW_EXCLUSIVE);
	if (s->life_pending)
	{
		SnowflakeLifeFile life;

		sf_life_image(&life, &s->layout, s->node_id, s->node_id_span);
		written = snowflake_life_write(&life, failure);
		if (written)
			s->life_pending = false;
	}
	LWLockRelease(snowflake_lock);
	return written;
}

/*
 * snowflake_attach
 *		The shared state with its layout and node id fixed, for this
 *		process; NULL on PostgreSQL 15 and 16 without the preload.
 *
 * Preloaded, it exists from startup.  Otherwise, on 17 and later, the DSM
 * registry segment is attached the first time (see sf_attach_segment for
 * the errors); the state file is read later, by snowflake_require_shared.
 */
SnowflakeShared *
snowflake_attach(void)
{
	if (likely(snowflake_shared != NULL))
		return snowflake_shared;
#ifdef SNOWFLAKE_HAVE_DSM_REGISTRY
	{
		SnowflakeShared *s = sf_attach_segment();

		snowflake_lock = &s->lock_data;
		snowflake_shared = s;
	}
#endif
	return snowflake_shared;
}

/*
 * sf_warn_capped_drift
 *		Without the preload, say once per process that generates IDs that a
 *		snowflake.max_drift_ms above the cap is not used (config.h).
 */
static void
sf_warn_capped_drift(void)
{
	static bool warned = false;

	if (warned || snowflake_max_drift_ms <= SNOWFLAKE_NO_PRELOAD_MAX_DRIFT_MS)
		return;
	warned = true;
	ereport(WARNING,
			(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
			 errmsg("parameter \"%s\" is capped at %d ms without the preload",
					"snowflake.max_drift_ms", SNOWFLAKE_NO_PRELOAD_MAX_DRIFT_MS),
			 errdetail("It is set to %d ms. Without \"shared_preload_libraries\" no WAL record carries a raised lead to standbys and restores, so IDs never lead the clock by more than %d ms.",
					   snowflake_max_drift_ms, SNOWFLAKE_NO_PRELOAD_MAX_DRIFT_MS),
			 errhint("Add snowflake to \"shared_preload_libraries\" in postgresql.conf and restart the server to allow a larger lead.")));
}

/*
 * snowflake_require_shared
 *		The shared state, loaded from the state file; on 15 and 16 without
 *		the preload, the error saying so (55000).
 *
 * Without the preload, the first process that needs the generator reads
 * the state file here, under the LWLock (sf_load): problems of the file
 * become refusals, as at a preloaded startup.  Errors of the
 * configuration are those of snowflake_attach.
 */
SnowflakeShared *
snowflake_require_shared(void)
{
	SnowflakeShared *s = snowflake_attach();

	if (unlikely(s == NULL))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake must be loaded via \"shared_preload_libraries\""),
				 errhint("Add snowflake to \"shared_preload_libraries\" in postgresql.conf and restart the server.")));
	if (unlikely(!s->loaded))
	{
		LWLockAcquire(snowflake_lock, LW_EXCLUSIVE);
		if (!s->loaded)
			sf_load(s);
		LWLockRelease(snowflake_lock);
	}
	pg_read_barrier();
	if (unlikely(!s->preloaded))
		sf_warn_capped_drift();
	return s;
}

/*
 * sf_shmem_shutdown
 *		At a clean postmaster shutdown (or the end of a single-user
 *		backend), record the exact last ID, read after every other process
 *		is gone.  The next start resumes above it (and past the floor, as
 *		every start does).
 *
 * Nothing is written after a crash or in recovery (pg_control says so),
 * when no ID was issued in this life (the file records all there is), nor
 * when the file must be left as it is (unusable, another layout).
 */
static void
sf_shmem_shutdown(int code, Datum arg)
{
	SnowflakeShared *s = snowflake_shared;
	SnowflakeStateFile f;
	SnowflakeControl control;
	SfWriteFailure failure;
	int64		last;

	if (code != 0 || s == NULL || s->floor_pending ||
		(s->refusals & (SNOWFLAKE_REFUSED(SNOWFLAKE_STATE_UNUSABLE) |
						SNOWFLAKE_REFUSED(SNOWFLAKE_LAYOUT_CHANGED))))
		return;
	if (!snowflake_control_read(&control) || control.state != DB_SHUTDOWNED)
		return;

	/*
	 * Every other process is gone, but one killed by an immediate shutdown
	 * may have died holding the spinlock: read without it where an aligned
	 * 8-byte read cannot be torn, rather than spin until "stuck spinlock".
	 * (An immediate shutdown leaves pg_control in production: not here.)
	 */
#ifdef PG_HAVE_8BYTE_SINGLE_COPY_ATOMICITY
	last = s->last;
#else
	SpinLockAcquire(&s->mutex);
	last = s->last;
	SpinLockRelease(&s->mutex);
#endif

	snowflake_state_image(&f, s, last >> s->layout.sequence_bits, last);
	if (!snowflake_state_write(&f, &failure))
		snowflake_report_write_failure(LOG, &failure,
									   "The exact last snowflake ID was not recorded; the next start resumes above the reservation.");
}

/*
 * snowflake_writer_request
 *		Whether a call may register a background writer now: none runs and
 *		none was asked for in the last interval_ms (or the clock went back).
 *		If so, the request is recorded.
 */
bool
snowflake_writer_request(SnowflakeShared *s, int64 now_unix_ms,
						 int64 interval_ms)
{
	bool		attempt = false;

	SpinLockAcquire(&s->mutex);
	if (s->worker_pid == 0 &&
		(s->worker_requested_ms == 0 || now_unix_ms < s->worker_requested_ms ||
		 now_unix_ms >= s->worker_requested_ms + interval_ms))
	{
		s->worker_requested_ms = now_unix_ms;
		attempt = true;
	}
	SpinLockRelease(&s->mutex);
	return attempt;
}

/*
 * snowflake_writer_log_due
 *		Whether a failed registration of the background writer is to be
 *		logged now (at most once per SNOWFLAKE_LOG_INTERVAL_MS); if so, the
 *		time is recorded.
 */
bool
snowflake_writer_log_due(SnowflakeShared *s, int64 now_unix_ms)
{
	bool		log_it = false;

	SpinLockAcquire(&s->mutex);
	if (now_unix_ms >= s->worker_failure_logged_ms + SNOWFLAKE_LOG_INTERVAL_MS ||
		now_unix_ms < s->worker_failure_logged_ms)
	{
		s->worker_failure_logged_ms = now_unix_ms;
		log_it = true;
	}
	SpinLockRelease(&s->mutex);
	return log_it;
}

/*
 * snowflake_writer_claim
 *		Publish pid as the running background writer, unless another one
 *		runs: returns 0 if claimed, else the other writer's PID.
 */
int
snowflake_writer_claim(SnowflakeShared *s, int pid)
{
	int			other;

	SpinLockAcquire(&s->mutex);
	other = s->worker_pid;
	if (other == 0)
		s->worker_pid = pid;
	SpinLockRelease(&s->mutex);
	return other;
}

/*
 * snowflake_writer_release
 *		The background writer pid exits; clean (it will not be restarted)
 *		lets the next call register another at once.
 */
void
snowflake_writer_release(SnowflakeShared *s, int pid, bool clean)
{
	SpinLockAcquire(&s->mutex);
	if (s->worker_pid == pid)
	{
		s->worker_pid = 0;
		if (clean)
			s->worker_requested_ms = 0;
	}
	SpinLockRelease(&s->mutex);
}

/*
 * snowflake_shared_init
 *		Install the shared memory hooks when the library is being preloaded;
 *		called from _PG_init.  Without the preload, the shared state is
 *		attached at first use instead (snowflake_attach).
 */
void
snowflake_shared_init(void)
{
	if (!process_shared_preload_libraries_in_progress)
		return;
	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = sf_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = sf_shmem_startup;
}
