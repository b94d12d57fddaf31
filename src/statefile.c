/*-------------------------------------------------------------------------
 *
 * statefile.c
 *	  The state file "snowflake.state": reading it and replacing it
 *	  durably; the file of the server's life without the preload,
 *	  "snowflake.settings" (statefile.h; the bytes of both are
 *	  fileformat.c's); and reading what the start logic needs of
 *	  pg_control and of timeline history files (shared.c).
 *
 * The file records the layout, epoch and node id the IDs were minted with,
 * a reservation (a millisecond that no issued ID has passed), the exact
 * last ID after a clean shutdown, the lineage of the IDs (the system
 * identifier and timeline they were last issued under, and the largest
 * lead over the clock any of them may have had), the highest floor applied
 * and why, and where the data directory was.  What the values mean, and
 * when the file is written, is decided in shared.c (loading) and
 * reservation.c (the reservation, the floor and an adoption).  The bytes
 * themselves, their checks, checksum and older versions, are
 * fileformat.c's (snowflake_state_parse, snowflake_state_seal), kept apart
 * from the I/O so that they can be fuzzed without a server.
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
#include "history.h"
#include "statefile.h"

/*
 * snowflake_state_read
 *		Read and check the state file into *f (an older version is
 *		converted).  Returns 1 if read, 0 if there is no file, -1 if it is
 *		unusable: then *err is the errno of a failed system call (or 0 for
 *		a corrupt file), and detail says what failed, without the reason.
 */
int
snowflake_state_read(SnowflakeStateFile *f, int *err, char *detail, size_t len)
{
	/* Room for the largest version and one byte more, to see a longer file. */
	char		buf[SNOWFLAKE_STATE_MAX_SIZE + 1];
	int			fd;
	ssize_t		n;

	fd = OpenTransientFile(SNOWFLAKE_STATE_FILE, O_RDONLY | PG_BINARY);
	if (fd < 0)
	{
		if (errno == ENOENT)
			return 0;
		*err = errno;
		strlcpy(detail, "could not open file \"" SNOWFLAKE_STATE_FILE "\"", len);
		return -1;
	}
	n = read(fd, buf, sizeof(buf));
	*err = errno;
	CloseTransientFile(fd);
	if (n < 0)
	{
		strlcpy(detail, "could not read file \"" SNOWFLAKE_STATE_FILE "\"", len);
		return -1;
	}
	*err = 0;
	return snowflake_state_parse(buf, (size_t) n, f, detail, len);
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
	crc = snowflake_crc32c(&cf, offsetof(ControlFileData, crc));
	if (!EQ_CRC32C(crc, cf.crc))
		return false;
	c->state = (uint32) cf.state;
	c->timeline = (uint32) cf.checkPointCopy.ThisTimeLineID;
	c->min_recovery_tli = (uint32) cf.minRecoveryPointTLI;
	c->system_id = cf.system_identifier;
	return true;
}

/*
 * snowflake_history_parse
 *		The timelines that come before timeline tli in its history, oldest
 *		first, from the n bytes buf of its history file ("parent-timeline
 *		switch-point reason" lines; comments and blank lines aside) into
 *		ancestors[0 .. max): returns how many, or -1 if the bytes are not
 *		such a history (an entry whose timeline is not below tli, or not
 *		above the one before it) or there are more than max.  Pure: no I/O,
 *		no PostgreSQL state.
 */
int
snowflake_history_parse(const char *buf, size_t n, uint32 tli,
						uint32 *ancestors, int max)
{
	int			count = 0;
	uint64		prev = 0;
	size_t		i = 0;

	while (i < n)
	{
		size_t		end = i;
		uint64		parent = 0;
		size_t		p;

		while (end < n && buf[end] != '\n')
			end++;
		p = i;
		while (p < end && (buf[p] == ' ' || buf[p] == '\t' || buf[p] == '\r'))
			p++;
		if (p < end && buf[p] != '#')
		{
			size_t		digits = p;

			while (p < end && buf[p] >= '0' && buf[p] <= '9' && p - digits < 10)
				parent = parent * 10 + (uint64) (buf[p++] - '0');
			if (p == digits || p == end || (buf[p] != ' ' && buf[p] != '\t') ||
				parent <= prev || parent >= tli || count >= max)
				return -1;
			ancestors[count++] = (uint32) parent;
			prev = parent;
		}
		i = end + 1;
	}
	return count;
}

/*
 * snowflake_timeline_offset
 *		The offset within the span of the node field of timeline tli
 *		(history.c, sf_rule_node_offset), from its history file in pg_wal: its
 *		number's, (tli - 1) % span, when that file is missing, unreadable
 *		or not a history (PostgreSQL writes the history file of every
 *		timeline it creates before using it, and keeps it).  Never raises
 *		an error.
 */
int
snowflake_timeline_offset(uint32 tli, int span)
{
	static char buf[65536];
	uint32		chain[SNOWFLAKE_MAX_ANCESTORS + 1];
	char		path[MAXPGPATH];
	int			fd;
	ssize_t		n;
	int			count = -1;

	if (tli <= 1 || span <= 1)
		return 0;
	TLHistoryFilePath(path, tli);
	fd = BasicOpenFile(path, O_RDONLY | PG_BINARY);
	if (fd >= 0)
	{
		n = read(fd, buf, sizeof(buf));
		close(fd);
		if (n > 0 && n < (ssize_t) sizeof(buf))
			count = snowflake_history_parse(buf, (size_t) n, tli, chain,
											SNOWFLAKE_MAX_ANCESTORS);
	}
	if (count < 0)
		return (int) ((tli - 1) % (uint32) span);
	chain[count] = tli;
	return sf_rule_node_offset(chain, count + 1, span);
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
