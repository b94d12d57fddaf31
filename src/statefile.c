/*-------------------------------------------------------------------------
 *
 * statefile.c
 *	  The state file "snowflake.state": its format, reading it, and
 *	  replacing it durably; the file of the server's life without the
 *	  preload, "snowflake.settings" (statefile.h; its bytes are
 *	  fileformat.c's); and reading pg_control,
 *	  whose record of the last shutdown the start logic compares with the
 *	  state file's (shared.c).
 *
 * The file records the layout, epoch and node id the IDs were minted with,
 * a reservation (a millisecond that no issued ID has passed), the exact
 * last ID after a clean shutdown, and the lineage of the IDs (the system
 * identifier and timeline they were last issued under, and the largest
 * lead over the clock any of them may have had), the clean shutdown it was
 * written at, if it was, and the postmaster whose life wrote it.  What the values mean,
 * and when the file is written, is decided in shared.c (loading) and
 * reservation.c (the reservation, the floor and an adoption).
 *
 * The file is written whole to a temporary file, fsynced, renamed over the
 * old one, and the directory is fsynced, also with fsync = off (sf_fsync).
 * This file takes no lock: callers serialise writes with the "snowflake"
 * LWLock.  Nothing on the write path raises an error: failures are
 * returned to the caller, which decides whether to raise (a write before
 * any ID is handed out) or only to log (a write ahead of need, after IDs
 * were issued).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <unistd.h>

#include "access/xlog_internal.h"
#include "catalog/pg_control.h"
#include "miscadmin.h"
#include "pgstat.h"
#include "storage/fd.h"

#include "compat.h"
#include "fileformat.h"
#include "statefile.h"

/*
 * Version 1 (snowflake 1.0), still read after an upgrade.  Spelled out in
 * full rather than sharing a prefix with the current version: a released
 * file format stays as it was whatever the current one becomes.
 */
typedef struct SnowflakeStateFileV1
{
	uint32		magic;
	uint32		version;
	int64		epoch_ms;
	int32		timestamp_bits;
	int32		node_bits;
	int32		sequence_bits;
	int32		node_id;
	int64		reserved_ms;
	int64		last;
	uint32		flags;
	pg_crc32c	crc;
} SnowflakeStateFileV1;

/*
 * Version 2 (snowflake 1.1), still read after an upgrade, spelled out for
 * the same reason.
 */
typedef struct SnowflakeStateFileV2
{
	uint32		magic;
	uint32		version;
	int64		epoch_ms;
	int32		timestamp_bits;
	int32		node_bits;
	int32		sequence_bits;
	int32		node_id;
	int64		reserved_ms;
	int64		last;
	uint32		flags;
	uint32		timeline;
	uint64		system_id;
	int64		max_lead_ms;
	int64		lead_lowered_ms;
	pg_crc32c	crc;
} SnowflakeStateFileV2;

static pg_crc32c
sf_crc(const void *data, size_t len)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, data, len);
	FIN_CRC32C(crc);
	return crc;
}

/* The current format has no padding: it is written as the struct's bytes. */
StaticAssertDecl(sizeof(SnowflakeStateFile) == 112,
				 "SnowflakeStateFile must be 112 bytes without padding");

/* Set the checksum of a filled image, last before writing it. */
void
snowflake_state_seal(SnowflakeStateFile *f)
{
	f->crc = sf_crc(f, offsetof(SnowflakeStateFile, crc));
}

/*
 * A version 1 image as a current one; 1.0 recorded no lineage, nor the
 * clean shutdown it was written at.
 */
static void
sf_convert_v1(const SnowflakeStateFileV1 *v1, SnowflakeStateFile *f)
{
	memset(f, 0, sizeof(*f));
	f->magic = v1->magic;
	f->version = SNOWFLAKE_STATE_VERSION;
	f->epoch_ms = v1->epoch_ms;
	f->timestamp_bits = v1->timestamp_bits;
	f->node_bits = v1->node_bits;
	f->sequence_bits = v1->sequence_bits;
	f->node_id = v1->node_id;
	f->reserved_ms = v1->reserved_ms;
	f->last = v1->last;
	/* Without a lineage, the first ID of 1.1 takes the floor. */
	f->flags = v1->flags & SNOWFLAKE_STATE_FLOOR;
}

/*
 * A version 2 image as a current one.  1.1 recorded no clean shutdown
 * (clean_checkpoint 0), so the first start of this version after 1.1
 * applies the floor once, whatever the file says (shared.c).
 */
static void
sf_convert_v2(const SnowflakeStateFileV2 *v2, SnowflakeStateFile *f)
{
	memset(f, 0, sizeof(*f));
	f->magic = v2->magic;
	f->version = SNOWFLAKE_STATE_VERSION;
	f->epoch_ms = v2->epoch_ms;
	f->timestamp_bits = v2->timestamp_bits;
	f->node_bits = v2->node_bits;
	f->sequence_bits = v2->sequence_bits;
	f->node_id = v2->node_id;
	f->reserved_ms = v2->reserved_ms;
	f->last = v2->last;
	f->flags = v2->flags & SNOWFLAKE_STATE_FLOOR;
	f->timeline = v2->timeline;
	f->system_id = v2->system_id;
	f->max_lead_ms = v2->max_lead_ms;
	f->lead_lowered_ms = v2->lead_lowered_ms;
}

/*
 * snowflake_state_read
 *		Read and check the state file into *f (a version 1 or 2 file is
 *		converted).  Returns 1 if read, 0 if there is no file, -1 if it is
 *		unusable: then *err is the errno of a failed system call (or 0 for
 *		a corrupt file), and detail says what failed, without the reason.
 */
int
snowflake_state_read(SnowflakeStateFile *f, int *err, char *detail, size_t len)
{
	union
	{
		SnowflakeStateFile v3;
		SnowflakeStateFileV2 v2;
		SnowflakeStateFileV1 v1;
		char		extra[sizeof(SnowflakeStateFile) + 1];
	}			buf;
	int			fd;
	ssize_t		n;
	const char *corrupt = NULL;

	fd = OpenTransientFile(SNOWFLAKE_STATE_FILE, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (errno == ENOENT)
			return 0;
		*err = errno;
		strlcpy(detail, "could not open file \"" SNOWFLAKE_STATE_FILE "\"", len);
		return -1;
	}
	n = read(fd, &buf, sizeof(buf));
	*err = errno;
	CloseTransientFile(fd);
	if (n < 0)
	{
		strlcpy(detail, "could not read file \"" SNOWFLAKE_STATE_FILE "\"", len);
		return -1;
	}
	*err = 0;

	if (n == sizeof(SnowflakeStateFileV1) && buf.v1.magic == SNOWFLAKE_STATE_MAGIC &&
		buf.v1.version == 1)
	{
		if (buf.v1.crc != sf_crc(&buf.v1, offsetof(SnowflakeStateFileV1, crc)))
			corrupt = "checksum mismatch";
		else
		{
			sf_convert_v1(&buf.v1, f);
			return 1;
		}
	}
	else if (n == sizeof(SnowflakeStateFileV2) && buf.v2.magic == SNOWFLAKE_STATE_MAGIC &&
			 buf.v2.version == 2)
	{
		if (buf.v2.crc != sf_crc(&buf.v2, offsetof(SnowflakeStateFileV2, crc)))
			corrupt = "checksum mismatch";
		else
		{
			sf_convert_v2(&buf.v2, f);
			return 1;
		}
	}
	else if (n != sizeof(SnowflakeStateFile))
		corrupt = "wrong size";
	else if (buf.v3.magic != SNOWFLAKE_STATE_MAGIC)
		corrupt = "bad magic number";
	else if (buf.v3.version != SNOWFLAKE_STATE_VERSION)
		corrupt = "unknown version";
	else if (buf.v3.crc != sf_crc(&buf.v3, offsetof(SnowflakeStateFile, crc)))
		corrupt = "checksum mismatch";

	if (corrupt != NULL)
	{
		snprintf(detail, len, "file \"%s\" is corrupt (%s)",
				 SNOWFLAKE_STATE_FILE, corrupt);
		return -1;
	}
	*f = buf.v3;
	return 1;
}

/*
 * snowflake_control_read
 *		Read what the start logic needs of pg_control into *c.  False if it
 *		cannot be read, is of another format or fails its checksum (never
 *		the case for a server that started; the caller then trusts nothing).
 *		Never raises an error: it runs in the postmaster at startup and at
 *		exit, where PostgreSQL's own reader would.
 */
bool
snowflake_control_read(SnowflakeControl *c)
{
	ControlFileData cf;
	pg_crc32c	crc;
	int			fd;
	ssize_t		n;

	fd = BasicOpenFile(XLOG_CONTROL_FILE, O_RDONLY | PG_BINARY);
	if (fd < 0)
		return false;
	n = read(fd, &cf, sizeof(cf));
	close(fd);
	if (n != sizeof(cf) || cf.pg_control_version != PG_CONTROL_VERSION)
		return false;
	crc = sf_crc(&cf, offsetof(ControlFileData, crc));
	if (!EQ_CRC32C(crc, cf.crc))
		return false;
	c->state = (uint32) cf.state;
	c->checkpoint = (uint64) cf.checkPoint;
	c->timeline = (uint32) cf.checkPointCopy.ThisTimeLineID;
	c->min_recovery_tli = (uint32) cf.minRecoveryPointTLI;
	c->system_id = cf.system_identifier;
	return true;
}

/*
 * Wait events of the state file's I/O, shown in pg_stat_activity.  The
 * postmaster (writing at startup) uses the generic one: a custom event's
 * number would not survive the re-initialisation after a crash.
 */
static uint32
sf_io_event(void)
{
	return IsUnderPostmaster ? SNOWFLAKE_WAIT_EVENT_IO() : PG_WAIT_EXTENSION;
}

/* Record a failed step; closes fd (if >= 0) keeping errno. */
static bool
sf_write_failed(SfWriteFailure *failure, SfWriteStep step, int fd)
{
	failure->step = step;
	failure->err = errno;
	pgstat_report_wait_end();
	if (fd >= 0)
		close(fd);
	return false;
}

/*
 * sf_fsync
 *		fsync fd, whatever the fsync setting.  pg_fsync() returns at once
 *		with fsync = off, but the reservation is a promise about IDs handed
 *		out already (to clients, queues, other databases), not about this
 *		server's data: a power loss with the reservation lost would bring
 *		those IDs back after a restart with the clock behind.  The file is
 *		written at most a few times a second, so it is always made durable;
 *		with fsync on, pg_fsync() honours wal_sync_method's write-through.
 */
static int
sf_fsync(int fd)
{
	if (enableFsync)
		return pg_fsync(fd);
	return fsync(fd);
}

/*
 * sf_replace_file
 *		Replace file with len bytes of data: write tmp_file, fsync it if
 *		durable, rename it over file, and then fsync the directory if
 *		durable.  No partial file is ever visible under the real name.  A
 *		durable write (the state file) shows its wait event meanwhile.
 *
 * Returns true on success; on failure false, with the step, its errno and
 * the names in *failure for snowflake_report_write_failure().  Never raises
 * an error: files are opened with BasicOpenFile (no allocated descriptor to
 * run out of), and PostgreSQL's durable_rename() is not used because it
 * PANICs on an fsync failure (data_sync_retry); this whole-file rewrite
 * into a fresh temporary file can safely be retried instead.
 */
static bool
sf_replace_file(const char *file, const char *tmp_file, const void *data,
				size_t len, bool durable, SfWriteFailure *failure)
{
	int			fd;

	failure->file = file;
	failure->tmp_file = tmp_file;
	if (durable)
		pgstat_report_wait_start(sf_io_event());
	fd = BasicOpenFile(tmp_file, O_WRONLY | O_CREAT | O_TRUNC | PG_BINARY);
	if (fd < 0)
		return sf_write_failed(failure, SF_WRITE_CREATE, -1);
	errno = 0;
	if (write(fd, data, len) != (ssize_t) len)
	{
		if (errno == 0)
			errno = ENOSPC;
		return sf_write_failed(failure, SF_WRITE_WRITE, fd);
	}
	if (durable && sf_fsync(fd) != 0)
		return sf_write_failed(failure, SF_WRITE_FSYNC, fd);
	if (close(fd) != 0)
		return sf_write_failed(failure, SF_WRITE_CLOSE, -1);
	if (rename(tmp_file, file) != 0)
		return sf_write_failed(failure, SF_WRITE_RENAME, -1);

	/* Make the rename itself durable. */
	if (durable)
	{
		fd = BasicOpenFile(".", O_RDONLY | PG_BINARY);
		if (fd < 0 || sf_fsync(fd) != 0)
			return sf_write_failed(failure, SF_WRITE_FSYNC_DIR, fd);
		close(fd);
	}
	pgstat_report_wait_end();
	return true;
}

/*
 * snowflake_state_write
 *		Durably replace the state file with the given image (see
 *		sf_replace_file).  Returns false, with *failure set, on failure;
 *		never raises an error.
 */
bool
snowflake_state_write(const SnowflakeStateFile *f, SfWriteFailure *failure)
{
	return sf_replace_file(SNOWFLAKE_STATE_FILE, SNOWFLAKE_STATE_TMP_FILE,
						   f, sizeof(*f), true, failure);
}

/*
 * snowflake_life_read
 *		Read the values of the server's life (statefile.h) into *f.  Returns
 *		1 if read, 0 if there is no such file, -1 if it is unusable (of
 *		another format, corrupt, unreadable): then detail says why, as a
 *		sentence.  Never raises an error.
 */
int
snowflake_life_read(SnowflakeLifeFile *f, char *detail, size_t len)
{
	char		buf[SNOWFLAKE_LIFE_SIZE + 1];
	const char *why;
	int			fd;
	ssize_t		n;

	fd = BasicOpenFile(SNOWFLAKE_LIFE_FILE, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (errno == ENOENT)
			return 0;
		snprintf(detail, len, "Could not open it: %m.");
		return -1;
	}
	n = read(fd, buf, sizeof(buf));
	if (n < 0)
		snprintf(detail, len, "Could not read it: %m.");
	close(fd);
	if (n < 0)
		return -1;

	why = snowflake_life_parse(buf, n, f, detail, len);
	if (why != NULL)
	{
		if (why != detail)
			strlcpy(detail, why, len);
		return -1;
	}
	return 1;
}

/*
 * snowflake_life_write
 *		Replace the file of the server's life with *f, serialized field by
 *		field (statefile.h): written aside and renamed, so that a crash never
 *		leaves half of it, but not fsynced.  False, with *failure set, on
 *		failure; never raises an error.
 */
bool
snowflake_life_write(const SnowflakeLifeFile *f, SfWriteFailure *failure)
{
	char		buf[SNOWFLAKE_LIFE_SIZE];

	snowflake_life_serialize(f, buf);
	return sf_replace_file(SNOWFLAKE_LIFE_FILE, SNOWFLAKE_LIFE_TMP_FILE, buf,
						   sizeof(buf), false, failure);
}

/*
 * snowflake_report_write_failure
 *		Report a failed write of the state file or the settings file at
 *		elevel, with the operating system's reason and an optional detail.
 */
void
snowflake_report_write_failure(int elevel, const SfWriteFailure *failure,
							   const char *detail)
{
	snowflake_report_write_failure_hint(elevel, failure, detail, NULL);
}

/* The same, with an optional hint. */
void
snowflake_report_write_failure_hint(int elevel, const SfWriteFailure *failure,
									const char *detail, const char *hint)
{
	/* One ereport for every step; each message stays a literal format. */
#define SF_REPORT_WRITE_FAILURE(...) \
	ereport(elevel, \
			(errcode_for_file_access(), \
			 errmsg(__VA_ARGS__), \
			 detail ? errdetail_internal("%s", detail) : 0, \
			 hint ? errhint("%s", hint) : 0))

	errno = failure->err;
	switch (failure->step)
	{
		case SF_WRITE_CREATE:
			SF_REPORT_WRITE_FAILURE("could not create file \"%s\": %m",
									failure->tmp_file);
			break;
		case SF_WRITE_WRITE:
			SF_REPORT_WRITE_FAILURE("could not write file \"%s\": %m",
									failure->tmp_file);
			break;
		case SF_WRITE_FSYNC:
			SF_REPORT_WRITE_FAILURE("could not fsync file \"%s\": %m",
									failure->tmp_file);
			break;
		case SF_WRITE_CLOSE:
			SF_REPORT_WRITE_FAILURE("could not close file \"%s\": %m",
									failure->tmp_file);
			break;
		case SF_WRITE_RENAME:
			SF_REPORT_WRITE_FAILURE("could not rename file \"%s\" to \"%s\": %m",
									failure->tmp_file, failure->file);
			break;
		case SF_WRITE_FSYNC_DIR:
			SF_REPORT_WRITE_FAILURE("could not fsync the data directory: %m");
			break;
	}
#undef SF_REPORT_WRITE_FAILURE
}
