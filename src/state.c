/*-------------------------------------------------------------------------
 *
 * state.c
 *	  The generator's shared memory and its state file.
 *
 * One SnowflakeShared struct lives in shared memory (locking rules in
 * snowflake.h).  Its durable twin is the state file "snowflake.state" in the
 * data directory: it records the layout, epoch and node id the IDs were
 * minted with, and a reservation, a millisecond that no issued ID has passed.
 * The generator never issues an ID above the reservation held in shared
 * memory, and that value is raised only after the file saying so has been
 * written and fsynced, so a restart (clean or after a crash) that resumes
 * strictly above the file's reservation can never issue an ID twice.  A clean
 * shutdown records the exact last ID instead.
 *
 * The file is written whole to a temporary file, fsynced, renamed over the
 * old one, and the directory is fsynced.  Writes are serialised by the
 * "snowflake" LWLock; the spinlock is taken only to read or publish values.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "miscadmin.h"
#include "port/pg_crc32c.h"
#include "storage/fd.h"
#include "storage/ipc.h"
#include "storage/shmem.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "snowflake.h"

#define SNOWFLAKE_STATE_MAGIC	0x534E464B	/* "SNFK" */
#define SNOWFLAKE_STATE_VERSION	1

/* The state file's contents, written and read as one block. */
typedef struct SnowflakeStateFile
{
	uint32		magic;
	uint32		version;
	int64		epoch_ms;
	int32		timestamp_bits;
	int32		node_bits;
	int32		sequence_bits;
	int32		node_id;
	int64		reserved_ms;	/* no issued ID has a later millisecond */
	int64		last;			/* packed last ID after a clean shutdown, or
								 * -1 while the server runs */
	uint32		flags;			/* SNOWFLAKE_STATE_* below */
	pg_crc32c	crc;			/* over everything above */
} SnowflakeStateFile;

/*
 * The first ID after recovery has yet to be placed past the IDs a previous
 * primary may have issued.  Set when the server starts in recovery, cleared
 * by the first reservation written above that floor: unlike standby.signal
 * it survives the promotion, so a restart, a crash or a power loss between
 * the promotion and the first ID cannot lose the obligation.
 */
#define SNOWFLAKE_STATE_PROMOTION	0x0001

SnowflakeShared *snowflake_shared = NULL;

static void sf_shmem_shutdown(int code, Datum arg);

/*
 * snowflake_require_shared
 *		The shared state, or the error for a server where the library was
 *		not preloaded (55000).
 */
SnowflakeShared *
snowflake_require_shared(void)
{
	if (unlikely(snowflake_shared == NULL))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake must be loaded via \"shared_preload_libraries\""),
				 errhint("Add snowflake to \"shared_preload_libraries\" in postgresql.conf and restart the server.")));
	return snowflake_shared;
}

Size
snowflake_shmem_size(void)
{
	return MAXALIGN(sizeof(SnowflakeShared));
}

/* Ask for our shared memory and LWLock; called from shmem_request_hook. */
void
snowflake_shmem_request(void)
{
	RequestAddinShmemSpace(snowflake_shmem_size());
	RequestNamedLWLockTranche(SNOWFLAKE_NAME, 1);
}

static pg_crc32c
sf_state_crc(const SnowflakeStateFile *f)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, f, offsetof(SnowflakeStateFile, crc));
	FIN_CRC32C(crc);
	return crc;
}

/* Fill a state file image from the shared layout. */
static void
sf_state_image(SnowflakeStateFile *f, const SnowflakeShared *s,
			   int64 reserved_ms, int64 last, bool promotion)
{
	memset(f, 0, sizeof(*f));
	f->magic = SNOWFLAKE_STATE_MAGIC;
	f->version = SNOWFLAKE_STATE_VERSION;
	f->epoch_ms = s->layout.epoch_ms;
	f->timestamp_bits = s->layout.timestamp_bits;
	f->node_bits = s->layout.node_bits;
	f->sequence_bits = s->layout.sequence_bits;
	f->node_id = s->node_id;
	f->reserved_ms = reserved_ms;
	f->last = last;
	f->flags = promotion ? SNOWFLAKE_STATE_PROMOTION : 0;
	f->crc = sf_state_crc(f);
}

/* The step of a state file write that failed, and its errno. */
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
} SfWriteFailure;

/* Record a failed step; closes fd (if >= 0) keeping errno. */
static bool
sf_write_failed(SfWriteFailure *failure, SfWriteStep step, int fd)
{
	failure->step = step;
	failure->err = errno;
	if (fd >= 0)
		CloseTransientFile(fd);
	return false;
}

/*
 * sf_write_state
 *		Durably replace the state file with the given image: write a
 *		temporary file, fsync it, rename it over the state file, fsync the
 *		directory.  No partial file is ever visible under the real name.
 *
 * Returns true on success; on failure false, with the step and its errno in
 * *failure for sf_report_write_failure().
 */
static bool
sf_write_state(const SnowflakeStateFile *f, SfWriteFailure *failure)
{
	int			fd;

	fd = OpenTransientFile(SNOWFLAKE_STATE_TMP_FILE,
						   O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
		return sf_write_failed(failure, SF_WRITE_CREATE, -1);
	errno = 0;
	if (write(fd, f, sizeof(*f)) != sizeof(*f))
	{
		if (errno == 0)
			errno = ENOSPC;
		return sf_write_failed(failure, SF_WRITE_WRITE, fd);
	}
	if (pg_fsync(fd) != 0)
		return sf_write_failed(failure, SF_WRITE_FSYNC, fd);
	if (CloseTransientFile(fd) != 0)
		return sf_write_failed(failure, SF_WRITE_CLOSE, -1);
	if (rename(SNOWFLAKE_STATE_TMP_FILE, SNOWFLAKE_STATE_FILE) != 0)
		return sf_write_failed(failure, SF_WRITE_RENAME, -1);

	/* Make the rename itself durable. */
	fd = OpenTransientFile(".", O_RDONLY | PG_BINARY);
	if (fd < 0 || pg_fsync(fd) != 0)
		return sf_write_failed(failure, SF_WRITE_FSYNC_DIR, fd);
	CloseTransientFile(fd);
	return true;
}

/*
 * sf_report_write_failure
 *		Report a failed state file write at elevel, with the operating
 *		system's reason and an optional detail.
 */
static void
sf_report_write_failure(int elevel, const SfWriteFailure *failure,
						const char *detail)
{
	errno = failure->err;
	switch (failure->step)
	{
		case SF_WRITE_CREATE:
			ereport(elevel,
					(errcode_for_file_access(),
					 errmsg("could not create file \"%s\": %m",
							SNOWFLAKE_STATE_TMP_FILE),
					 detail ? errdetail_internal("%s", detail) : 0));
			break;
		case SF_WRITE_WRITE:
			ereport(elevel,
					(errcode_for_file_access(),
					 errmsg("could not write file \"%s\": %m",
							SNOWFLAKE_STATE_TMP_FILE),
					 detail ? errdetail_internal("%s", detail) : 0));
			break;
		case SF_WRITE_FSYNC:
			ereport(elevel,
					(errcode_for_file_access(),
					 errmsg("could not fsync file \"%s\": %m",
							SNOWFLAKE_STATE_TMP_FILE),
					 detail ? errdetail_internal("%s", detail) : 0));
			break;
		case SF_WRITE_CLOSE:
			ereport(elevel,
					(errcode_for_file_access(),
					 errmsg("could not close file \"%s\": %m",
							SNOWFLAKE_STATE_TMP_FILE),
					 detail ? errdetail_internal("%s", detail) : 0));
			break;
		case SF_WRITE_RENAME:
			ereport(elevel,
					(errcode_for_file_access(),
					 errmsg("could not rename file \"%s\" to \"%s\": %m",
							SNOWFLAKE_STATE_TMP_FILE, SNOWFLAKE_STATE_FILE),
					 detail ? errdetail_internal("%s", detail) : 0));
			break;
		case SF_WRITE_FSYNC_DIR:
			ereport(elevel,
					(errcode_for_file_access(),
					 errmsg("could not fsync the data directory: %m"),
					 detail ? errdetail_internal("%s", detail) : 0));
			break;
	}
}

/* Set the refusal state with a detail message (startup only). */
static void
sf_refuse(SnowflakeShared *s, SnowflakeRefusal why, int err,
		  const char *detail)
{
	s->refusal = why;
	s->refusal_errno = err;
	strlcpy(s->refusal_detail, detail, sizeof(s->refusal_detail));
}

/*
 * sf_load_state
 *		Read the state file at shared memory initialisation and decide where
 *		generation resumes.  Runs in the postmaster; problems are recorded
 *		in shared memory and raised by each generation attempt, so that the
 *		server still starts and decoding keeps working.
 */
static void
sf_load_state(SnowflakeShared *s)
{
	SnowflakeStateFile f;
	int			fd;
	ssize_t		n;
	char		detail[2 * SNOWFLAKE_DETAIL_LEN];
	int64		max_packed;
	bool		node_changed;

	fd = OpenTransientFile(SNOWFLAKE_STATE_FILE, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (errno == ENOENT)
			return;				/* first start: nothing issued yet */
		sf_refuse(s, SNOWFLAKE_STATE_UNUSABLE, errno,
				  "could not open file \"" SNOWFLAKE_STATE_FILE "\"");
		return;
	}
	n = read(fd, &f, sizeof(f));
	if (n < 0)
	{
		int			save_errno = errno;

		CloseTransientFile(fd);
		sf_refuse(s, SNOWFLAKE_STATE_UNUSABLE, save_errno,
				  "could not read file \"" SNOWFLAKE_STATE_FILE "\"");
		return;
	}
	CloseTransientFile(fd);

	if (n != sizeof(f) || f.magic != SNOWFLAKE_STATE_MAGIC ||
		f.version != SNOWFLAKE_STATE_VERSION || f.crc != sf_state_crc(&f))
	{
		snprintf(detail, sizeof(detail),
				 "file \"%s\" is corrupt (%s)", SNOWFLAKE_STATE_FILE,
				 n != sizeof(f) ? "wrong size" :
				 f.magic != SNOWFLAKE_STATE_MAGIC ? "bad magic number" :
				 f.version != SNOWFLAKE_STATE_VERSION ? "unknown version" :
				 "checksum mismatch");
		sf_refuse(s, SNOWFLAKE_STATE_UNUSABLE, 0, detail);
		return;
	}
	s->promotion_pending = (f.flags & SNOWFLAKE_STATE_PROMOTION) != 0;

	if (f.epoch_ms != s->layout.epoch_ms ||
		f.timestamp_bits != s->layout.timestamp_bits ||
		f.node_bits != s->layout.node_bits ||
		f.sequence_bits != s->layout.sequence_bits)
	{
		char		rec_epoch[64];
		char		cfg_epoch[64];

		snowflake_format_ms(f.epoch_ms, rec_epoch, sizeof(rec_epoch));
		snowflake_format_ms(s->layout.epoch_ms, cfg_epoch, sizeof(cfg_epoch));
		snprintf(detail, sizeof(detail),
				 "The state file records epoch %s and layout %d/%d/%d (timestamp/node/sequence bits); the server is configured with epoch %s and layout %d/%d/%d.",
				 rec_epoch, f.timestamp_bits, f.node_bits, f.sequence_bits,
				 cfg_epoch, s->layout.timestamp_bits, s->layout.node_bits,
				 s->layout.sequence_bits);
		sf_refuse(s, SNOWFLAKE_LAYOUT_CHANGED, 0, detail);

		/*
		 * Where the old IDs end, for a later adoption: their last
		 * millisecond in absolute time, and a bound above every one of them
		 * (the last millisecond's IDs with every node and sequence bit set).
		 */
		{
			int64		old_ms = f.last >= 0 ?
				(f.last >> f.sequence_bits) : f.reserved_ms;
			int			old_shift = f.node_bits + f.sequence_bits;

			s->recorded_end_unix_ms = f.epoch_ms + old_ms;
			s->recorded_max_id = old_ms < 0 ? -1 :
				(int64) ((((uint64) old_ms + 1) << old_shift) - 1);
		}
		return;
	}

	node_changed = f.node_id != s->node_id;
	if (node_changed)
		ereport(LOG,
				(errmsg("parameter \"%s\" changed from %d to %d",
						"snowflake.node_id", f.node_id, s->node_id),
				 errdetail("IDs minted from now on carry node id %d, from the next millisecond on.",
						   s->node_id)));

	/*
	 * Resume strictly above what the file proves.  After a clean shutdown
	 * that is the exact last ID; the reservation is put just below its
	 * millisecond so that the first ID written in it rewrites the file
	 * first (the file says "clean" until then, and a crash must not bring
	 * that exact value back).
	 */
	max_packed = (int64) ((UINT64CONST(1) <<
						   (s->layout.timestamp_bits + s->layout.sequence_bits)) - 1);
	if (f.last >= 0 && !node_changed)
	{
		s->last = Min(f.last, max_packed);
		s->reserved_ms = (s->last >> s->layout.sequence_bits) - 1;
	}
	else if (f.last >= 0)
	{
		/*
		 * With another node id, an ID in the last ID's millisecond could be
		 * smaller than it: resume in the next millisecond.
		 */
		int64		last_ms = f.last >> s->layout.sequence_bits;

		s->reserved_ms = last_ms;
		s->last = last_ms >= snowflake_max_ms(&s->layout) ? max_packed :
			((last_ms + 1) << s->layout.sequence_bits) - 1;
	}
	else
	{
		s->reserved_ms = f.reserved_ms;
		if (f.reserved_ms >= snowflake_max_ms(&s->layout))
			s->last = max_packed;
		else
			s->last = ((f.reserved_ms + 1) << s->layout.sequence_bits) - 1;
	}
}

/*
 * snowflake_shmem_startup
 *		Create or attach the shared state; called from shmem_startup_hook in
 *		the postmaster, at startup and after a crash re-initialisation.
 */
void
snowflake_shmem_startup(const SnowflakeLayout *layout, int node_id)
{
	bool		found;
	SnowflakeShared *s;

	LWLockAcquire(AddinShmemInitLock, LW_EXCLUSIVE);
	s = ShmemInitStruct(SNOWFLAKE_NAME, snowflake_shmem_size(), &found);
	snowflake_shared = s;
	if (!found)
	{
		memset(s, 0, snowflake_shmem_size());
		s->layout = *layout;
		s->node_id = node_id;
		s->node_part = node_id >= 0 ? ((int64) node_id << layout->sequence_bits) : 0;
		s->lock = &(GetNamedLWLockTranche(SNOWFLAKE_NAME))->lock;
		SpinLockInit(&s->mutex);
		s->last = -1;
		s->reserved_ms = -1;
		s->clock_ms = 0;
		s->counters.reset_time = GetCurrentTimestamp();
		s->recorded_end_unix_ms = -1;
		s->recorded_max_id = -1;

		sf_load_state(s);
		if (s->refusal == SNOWFLAKE_READY && node_id < 0)
			sf_refuse(s, SNOWFLAKE_NODE_UNSET, 0, "");

		/*
		 * A server that starts as a standby or from a backup may take over
		 * from a primary that issued IDs after this state file was copied.
		 * Its first ID after recovery is placed past anything that primary
		 * can have issued (see snowflake_extend_reservation); the state file
		 * keeps that obligation until it is met.
		 */
		if (s->refusal == SNOWFLAKE_LAYOUT_CHANGED &&
			(access("standby.signal", F_OK) == 0 ||
			 access("recovery.signal", F_OK) == 0))
			s->promotion_pending = true;	/* written by an adoption */
		else if ((s->refusal == SNOWFLAKE_READY ||
				  s->refusal == SNOWFLAKE_NODE_UNSET) &&
				 (access("standby.signal", F_OK) == 0 ||
				  access("recovery.signal", F_OK) == 0))
		{
			SnowflakeStateFile f;
			SfWriteFailure failure;

			sf_state_image(&f, s, s->last >> layout->sequence_bits, -1, true);
			if (sf_write_state(&f, &failure))
				s->promotion_pending = true;
			else
			{
				sf_report_write_failure(LOG, &failure,
										"Generation is refused until the state file can be written at a restart.");
				sf_refuse(s, SNOWFLAKE_STATE_UNUSABLE, failure.err,
						  "could not write file \"" SNOWFLAKE_STATE_TMP_FILE "\"");
			}
		}
	}
	LWLockRelease(AddinShmemInitLock);

	if (!IsUnderPostmaster)
		on_shmem_exit(sf_shmem_shutdown, (Datum) 0);
}

/*
 * sf_shmem_shutdown
 *		At a clean postmaster shutdown, record the exact last ID.
 */
static void
sf_shmem_shutdown(int code, Datum arg)
{
	SnowflakeShared *s = snowflake_shared;
	SnowflakeStateFile f;
	SfWriteFailure failure;
	int64		last;

	/* After a crash, or if the file must be left as it is, do nothing. */
	if (code != 0 || s == NULL || s->refusal == SNOWFLAKE_STATE_UNUSABLE ||
		s->refusal == SNOWFLAKE_LAYOUT_CHANGED)
		return;

	/*
	 * Every other process is gone, but one killed by an immediate shutdown
	 * may have died holding the spinlock: read without it where an aligned
	 * 8-byte read cannot be torn, rather than spin until "stuck spinlock".
	 */
#ifdef PG_HAVE_8BYTE_SINGLE_COPY_ATOMICITY
	last = s->last;
#else
	SpinLockAcquire(&s->mutex);
	last = s->last;
	SpinLockRelease(&s->mutex);
#endif

	if (last < 0)
		return;					/* nothing was ever issued */

	sf_state_image(&f, s, last >> s->layout.sequence_bits, last,
				   s->promotion_pending);
	if (!sf_write_state(&f, &failure))
		sf_report_write_failure(LOG, &failure,
								"The exact last snowflake ID was not recorded; the next start resumes above the reservation.");
}

/*
 * snowflake_extend_reservation
 *		Durably raise the reservation so that IDs up to needed_ms may be
 *		issued.  now_ms is the caller's clock reading and promotion_floor_ms
 *		the first millisecond that may be used if this server has just left
 *		recovery (the caller passes now plus the lead allowed to a primary).
 *
 * Takes the snowflake LWLock.  When the reservation is used up (early is
 * false), raises ERROR with the operating system's reason if the file cannot
 * be written, in which case nothing changes; the caller retries its
 * generation attempt afterwards.  An early extension, made by a caller whose
 * IDs are already issued, gives way if another backend holds the lock and
 * only logs a failure: the next caller to find the reservation used up
 * retries the write and reports the error.
 */
void
snowflake_extend_reservation(int64 needed_ms, int64 now_ms,
							 int64 promotion_floor_ms, bool early)
{
	SnowflakeShared *s = snowflake_shared;
	SnowflakeStateFile f;
	int64		reserved;
	int64		target;
	SfWriteFailure failure;

	if (!early)
		LWLockAcquire(s->lock, LW_EXCLUSIVE);
	else if (!LWLockConditionalAcquire(s->lock, LW_EXCLUSIVE))
		return;

	if (s->promotion_pending)
	{
		int64		floor_packed;

		floor_packed = (Min(promotion_floor_ms,
							snowflake_max_ms(&s->layout)) <<
						s->layout.sequence_bits) - 1;
		SpinLockAcquire(&s->mutex);
		if (s->last < floor_packed)
			s->last = floor_packed;
		SpinLockRelease(&s->mutex);
		needed_ms = Max(needed_ms, promotion_floor_ms);
	}

	SpinLockAcquire(&s->mutex);
	reserved = s->reserved_ms;
	SpinLockRelease(&s->mutex);

	/* After a promotion the write also clears the file's obligation. */
	if (reserved < needed_ms || s->promotion_pending)
	{
		target = Min(Max(Max(needed_ms, now_ms) + SNOWFLAKE_RESERVE_AHEAD_MS,
						 reserved),
					 snowflake_max_ms(&s->layout));
		sf_state_image(&f, s, target, -1, false);
		if (!sf_write_state(&f, &failure))
		{
			if (early)
			{
				sf_report_write_failure(LOG, &failure,
										"The snowflake reservation could not be extended ahead of need.");
				LWLockRelease(s->lock);
				return;
			}
			SpinLockAcquire(&s->mutex);
			s->counters.refused++;
			SpinLockRelease(&s->mutex);
			sf_report_write_failure(ERROR, &failure,
									"The snowflake reservation could not be made durable, so no ID was issued.");
		}
		SpinLockAcquire(&s->mutex);
		s->reserved_ms = target;
		s->counters.reservation_writes++;
		SpinLockRelease(&s->mutex);
	}

	/* Only now that the file covers the floor is the promotion settled. */
	s->promotion_pending = false;
	LWLockRelease(s->lock);
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
 * smaller and collide with stored keys).  The caller has checked that the
 * user is a superuser.  Raises ERROR if there is nothing to adopt or the
 * file cannot be written.
 */
void
snowflake_adopt_layout_state(int64 now_unix_ms, bool force)
{
	SnowflakeShared *s = snowflake_shared;
	SnowflakeStateFile f;
	int64		resume_ms;
	int64		first_id;
	SfWriteFailure failure;

	LWLockAcquire(s->lock, LW_EXCLUSIVE);
	if (s->refusal != SNOWFLAKE_LAYOUT_CHANGED)
	{
		LWLockRelease(s->lock);
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
		LWLockRelease(s->lock);
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("the configured snowflake layout cannot represent the current time"),
				 errdetail("Generation would resume %lld milliseconds after the configured epoch, outside the timestamp field.",
						   (long long) resume_ms)));
	}

	first_id = resume_ms << (s->layout.node_bits + s->layout.sequence_bits);
	if (first_id <= s->recorded_max_id && !force)
	{
		LWLockRelease(s->lock);
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("IDs of the configured snowflake layout would not all be larger than existing ones"),
				 errdetail("The first new ID would be %lld, but IDs up to %lld may already exist.",
						   (long long) first_id, (long long) s->recorded_max_id),
				 errhint("New IDs could collide with stored keys. Restore the recorded settings, or widen the node or sequence fields instead; call snowflake_adopt_layout(force => true) only if no key minted under the old layout will meet a new one.")));
	}

	/* Reserve nothing yet: the first ID writes a real reservation. */
	sf_state_image(&f, s, resume_ms - 1, -1, s->promotion_pending);
	if (!sf_write_state(&f, &failure))
		sf_report_write_failure(ERROR, &failure,
								"The changed layout was not adopted.");

	SpinLockAcquire(&s->mutex);
	s->last = (resume_ms << s->layout.sequence_bits) - 1;
	s->reserved_ms = resume_ms - 1;
	s->counters.reservation_writes++;
	SpinLockRelease(&s->mutex);

	s->refusal = s->node_id < 0 ? SNOWFLAKE_NODE_UNSET : SNOWFLAKE_READY;
	s->refusal_detail[0] = '\0';
	LWLockRelease(s->lock);

	ereport(LOG,
			(errmsg("snowflake layout %d/%d/%d adopted%s",
					s->layout.timestamp_bits, s->layout.node_bits,
					s->layout.sequence_bits, force ? " by force" : "")));
}

/* The settings that shape IDs, as decoders without the preload read them. */
static const char *const sf_layout_settings[] = {
	"snowflake.epoch",
	"snowflake.timestamp_bits",
	"snowflake.node_bits",
	"snowflake.sequence_bits",
};

#define SF_NUM_LAYOUT_SETTINGS ((int) lengthof(sf_layout_settings))

/*
 * snowflake_configured_layout
 *		The layout decoders must use.
 *
 * With the library preloaded it is the one validated at startup.  Without,
 * the postmaster-context settings cannot be defined, but postgresql.conf's
 * values are still visible as placeholders: they are read and validated
 * here, so that decoding never silently uses a layout other than the
 * configured one.  A placeholder set for a database, a role or a session
 * is refused: the layout belongs to the server, and an IMMUTABLE decoder
 * must not answer differently per session.  Returns false, with *bad_name
 * naming the offending setting (or NULL for a bad combination) and a
 * detail, if the configuration is invalid.
 *
 * The result is cached per backend and reused while the settings' texts
 * stay the same (a reload may change them).
 */
bool
snowflake_configured_layout(SnowflakeLayout *layout, const char **bad_name,
							char *detail)
{
	static char *cached_text[SF_NUM_LAYOUT_SETTINGS];
	static SnowflakeLayout cached_layout;
	static bool cached = false;
	const char *text[SF_NUM_LAYOUT_SETTINGS];
	int		   *width[] = {NULL, &layout->timestamp_bits,
		&layout->node_bits, &layout->sequence_bits};
	const int	dflt[] = {0, SNOWFLAKE_DEFAULT_TIMESTAMP_BITS,
		SNOWFLAKE_DEFAULT_NODE_BITS, SNOWFLAKE_DEFAULT_SEQUENCE_BITS};
	bool		same = cached;

	if (snowflake_shared != NULL)
	{
		*layout = snowflake_shared->layout;
		return true;
	}

	for (int i = 0; i < SF_NUM_LAYOUT_SETTINGS; i++)
	{
		text[i] = GetConfigOption(sf_layout_settings[i], true, false);
		/* From 17 a placeholder removed by a reload reads as "". */
		if (text[i] != NULL && text[i][0] == '\0')
			text[i] = NULL;
		if (same && (text[i] == NULL) != (cached_text[i] == NULL))
			same = false;
		if (same && text[i] != NULL && strcmp(text[i], cached_text[i]) != 0)
			same = false;
	}
	if (same)
	{
		*layout = cached_layout;
		return true;
	}

	for (int i = 0; i < SF_NUM_LAYOUT_SETTINGS; i++)
	{
		*bad_name = sf_layout_settings[i];
		if (text[i] != NULL &&
			sf_guc_source(sf_layout_settings[i]) > PGC_S_ARGV)
		{
			snprintf(detail, SNOWFLAKE_DETAIL_LEN,
					 "The snowflake layout is read from the server configuration only, but this value was set for a database, a role or the session.");
			return false;
		}
		if (i == 0)
		{
			if (!snowflake_parse_epoch(text[i] ? text[i] : SNOWFLAKE_DEFAULT_EPOCH,
									   &layout->epoch_ms, detail))
				return false;
		}
		else if (text[i] == NULL)
			*width[i] = dflt[i];
		else if (!snowflake_parse_int(text[i], width[i]))
		{
			snprintf(detail, SNOWFLAKE_DETAIL_LEN,
					 "The value must be a plain decimal integer.");
			return false;
		}
	}
	*bad_name = NULL;
	if (!snowflake_layout_check(layout, detail))
		return false;

	for (int i = 0; i < SF_NUM_LAYOUT_SETTINGS; i++)
	{
		if (cached_text[i] != NULL)
			pfree(cached_text[i]);
		cached_text[i] = text[i] ?
			MemoryContextStrdup(TopMemoryContext, text[i]) : NULL;
	}
	cached_layout = *layout;
	cached = true;
	return true;
}
