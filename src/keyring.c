/*-------------------------------------------------------------------------
 *
 * keyring.c
 *	  The configured keys of public IDs: the setting that names the key
 *	  file, reading and checking the file, and the keys prepared for FF1.
 *
 * The keys are secrets, so they are kept out of everything PostgreSQL
 * shows or logs.  They are never a setting's value: a value is logged at a
 * reload when it changes ('parameter "..." changed to "..."'), can be read
 * from pg_settings, pg_file_settings or pg_db_role_setting by roles that
 * are not superusers in several ways, and an extension's setting is a
 * placeholder, readable by any role, in a session that has not loaded the
 * library.  The setting snowflake.public_keys_file names a file instead
 * (as ssl_key_file does), relative to the data directory or absolute, set
 * by superusers only (PGC_SUSET, so ALTER DATABASE ... SET gives a
 * database a key file of its own) and shown only to them and to members of
 * pg_read_all_settings; it is a path, never a key.  The file must be a
 * regular file owned by the server's user with no group or world access,
 * or owned by root and at most group-readable, as PostgreSQL requires of
 * its SSL key.  No message quotes the file (keyfile.c reports line numbers
 * and kinds), and none sent to a client names it: the path goes to the
 * server log only (errdetail_log), for the operator.
 *
 * Each backend reads the file at the first use of a key, and again when
 * the setting or the file (its identity, size, modification or status
 * change time) has changed: it is looked at, with stat(), at most once per
 * statement and transaction (the start times of the client's statement
 * and of the transaction are the mark: the statements of one query string
 * sent at once, in one transaction, share one look; a procedure that
 * commits looks again in each transaction it starts), so that a statement
 * sees one set of keys, a change takes effect at the next statement
 * without a reload, and the cost per call stays a comparison.  The
 * functions that use the keys are PARALLEL RESTRICTED (snowflake--1.2--1.3.sql):
 * a parallel worker, which would read the file anew, never does.  A file
 * that cannot be read or parsed fails the call and leaves no key in use,
 * so no stale key outlives a broken file.  Replace the file atomically
 * (write a new one, then rename it over the old).
 *
 * The file is opened without blocking (O_NONBLOCK) and checked to be a
 * regular file before a byte is read: a FIFO or a device at its path (a
 * role that can write to its directory can put one there) fails the call
 * at once instead of holding the backend in open() or read(), where no
 * statement_timeout or cancel reaches it.
 *
 * Backend-local state only: no shared memory, no lock.  Each key's
 * libcrypto context is allocated by libcrypto and freed, wiped, when the
 * keys are read again or the file fails.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "access/xact.h"
#include "lib/stringinfo.h"
#include "storage/fd.h"
#include "utils/guc.h"
#include "utils/memutils.h"

#include "keyfile.h"
#include "keyring.h"

/* The file's modification and status change times, to the nanosecond. */
#if defined(__APPLE__)
#define SF_MTIME_NS(st) ((int64) (st)->st_mtimespec.tv_sec * 1000000000 + (st)->st_mtimespec.tv_nsec)
#define SF_CTIME_NS(st) ((int64) (st)->st_ctimespec.tv_sec * 1000000000 + (st)->st_ctimespec.tv_nsec)
#else
#define SF_MTIME_NS(st) ((int64) (st)->st_mtim.tv_sec * 1000000000 + (st)->st_mtim.tv_nsec)
#define SF_CTIME_NS(st) ((int64) (st)->st_ctim.tv_sec * 1000000000 + (st)->st_ctim.tv_nsec)
#endif

/* snowflake.public_keys_file */
static char *sf_keys_file = NULL;

/* The keys in use, and the file they came from. */
typedef struct SfKeyring
{
	bool		loaded;
	char	   *path;			/* the setting's value when read */
	dev_t		dev;
	ino_t		ino;
	off_t		size;
	int64		mtime_ns;
	int64		ctime_ns;
	int			current;		/* the current key's id, or -1 */
	int			nkeys;
	bool		present[SNOWFLAKE_KEY_IDS];
	SnowflakeFF1Key keys[SNOWFLAKE_KEY_IDS];
} SfKeyring;

static SfKeyring sf_ring;

/*
 * The start times of the statement and of the transaction that last
 * checked the file.
 */
static bool sf_checked = false;
static TimestampTz sf_checked_at = 0;
static TimestampTz sf_checked_xact = 0;

void
snowflake_keyring_init(void)
{
	DefineCustomStringVariable("snowflake.public_keys_file",
							   "Sets the file that holds the keys of public IDs.",
							   "Relative to the data directory, or absolute. The file holds no setting's value; each session reads it again, at its next statement, when it changes.",
							   &sf_keys_file,
							   "",
							   PGC_SUSET,
							   GUC_SUPERUSER_ONLY,
							   NULL, NULL, NULL);
}

/* Free every key in use, wiping what derives from them. */
static void
sf_ring_clear(void)
{
	for (int id = 0; id < SNOWFLAKE_KEY_IDS; id++)
		if (sf_ring.present[id])
			snowflake_ff1_key_free(&sf_ring.keys[id]);
	if (sf_ring.path != NULL)
		pfree(sf_ring.path);
	memset(&sf_ring, 0, sizeof(sf_ring));
	sf_ring.current = -1;
	sf_checked = false;
}

/*
 * sf_check_stat
 *		What PostgreSQL requires of its SSL key file, and a size limit.
 */
static void
sf_check_stat(const struct stat *st, const char *path)
{
	if (!S_ISREG(st->st_mode))
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("public ID key file is not a regular file"),
				 errdetail_log("The file is \"%s\".", path)));
	if (st->st_uid != geteuid() && st->st_uid != 0)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("public ID key file must be owned by the database user or root"),
				 errdetail_log("The file is \"%s\".", path)));
	if ((st->st_uid == geteuid() && (st->st_mode & (S_IRWXG | S_IRWXO))) ||
		(st->st_uid == 0 && (st->st_mode & (S_IWGRP | S_IXGRP | S_IRWXO))))
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("public ID key file has group or world access"),
				 errdetail("It must have permissions u=rw (0600) or less if owned by the database user, or u=rw,g=r (0640) or less if owned by root."),
				 errdetail_log("File \"%s\" must have permissions u=rw (0600) or less if owned by the database user, or u=rw,g=r (0640) or less if owned by root.", path)));
	if (st->st_size > SNOWFLAKE_KEY_FILE_MAX)
		ereport(ERROR,
				(errcode(ERRCODE_CONFIG_FILE_ERROR),
				 errmsg("public ID key file is too large"),
				 errdetail("It has %lld bytes; a key file has at most %d.",
						   (long long) st->st_size, SNOWFLAKE_KEY_FILE_MAX),
				 errdetail_log("File \"%s\" has %lld bytes; a key file has at most %d.",
							   path, (long long) st->st_size, SNOWFLAKE_KEY_FILE_MAX)));
}

/*
 * sf_read_file
 *		The whole key file into a palloc'd buffer (which the caller wipes),
 *		its status into *st.  Opened without blocking, and its status checked
 *		before anything is read (a FIFO fails here at once).
 */
static char *
sf_read_file(const char *path, struct stat *st, size_t *len)
{
	int			fd;
	char	   *buf;
	ssize_t		got;

	fd = OpenTransientFile(path, O_RDONLY | O_NONBLOCK | PG_BINARY);
	if (fd < 0)
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open public ID key file: %m"),
				 errdetail_log("The file is \"%s\".", path)));
	if (fstat(fd, st) != 0)
		elog(ERROR, "could not stat public ID key file \"%s\": %m", path);
	sf_check_stat(st, path);

	/* One byte more than allowed: a file that grew is too large. */
	buf = palloc(SNOWFLAKE_KEY_FILE_MAX + 1);
	*len = 0;
	while (*len <= SNOWFLAKE_KEY_FILE_MAX &&
		   (got = read(fd, buf + *len, SNOWFLAKE_KEY_FILE_MAX + 1 - *len)) != 0)
	{
		if (got < 0)
		{
			int			save_errno = errno;

			explicit_bzero(buf, SNOWFLAKE_KEY_FILE_MAX + 1);
			errno = save_errno;
			ereport(ERROR,
					(errcode_for_file_access(),
					 errmsg("could not read public ID key file: %m"),
					 errdetail_log("The file is \"%s\".", path)));
		}
		*len += (size_t) got;
	}
	CloseTransientFile(fd);
	if (*len > SNOWFLAKE_KEY_FILE_MAX)
	{
		explicit_bzero(buf, SNOWFLAKE_KEY_FILE_MAX + 1);
		st->st_size = (off_t) *len;
		sf_check_stat(st, path);
	}
	return buf;
}

/*
 * sf_parse_error
 *		Raise the error of a key file that did not parse: its line and what
 *		is wrong, never its text.
 */
static void
sf_parse_error(SnowflakeKeyFileStatus status, int line, int key_id,
			   const char *path)
{
	char		what[160];

	switch (status)
	{
		case SNOWFLAKE_KEY_FILE_BAD_ID:
			snprintf(what, sizeof(what), "it does not start with a key id, a whole number from 0 to %d", SNOWFLAKE_KEY_IDS - 1);
			break;
		case SNOWFLAKE_KEY_FILE_NO_KEY:
			snprintf(what, sizeof(what), "its key id is not followed by a key");
			break;
		case SNOWFLAKE_KEY_FILE_BAD_KEY:
			snprintf(what, sizeof(what), "its key is not 32, 48 or 64 hexadecimal digits (AES-128, AES-192 or AES-256)");
			break;
		case SNOWFLAKE_KEY_FILE_EXTRA:
			snprintf(what, sizeof(what), "its key is followed by something other than the word \"current\"");
			break;
		case SNOWFLAKE_KEY_FILE_DUPLICATE:
			snprintf(what, sizeof(what), "key id %d appears on an earlier line", key_id);
			break;
		case SNOWFLAKE_KEY_FILE_TWO_CURRENT:
			snprintf(what, sizeof(what), "key %d is marked \"current\", as an earlier key is", key_id);
			break;
		case SNOWFLAKE_KEY_FILE_NUL:
			snprintf(what, sizeof(what), "it holds a zero byte");
			break;
		case SNOWFLAKE_KEY_FILE_OK:
			elog(ERROR, "unexpected key file status %d", (int) status);
	}
	ereport(ERROR,
			(errcode(ERRCODE_CONFIG_FILE_ERROR),
			 errmsg("invalid public ID key file"),
			 errdetail("Line %d: %s.", line, what),
			 errdetail_log("File \"%s\", line %d: %s.", path, line, what)));
}

/*
 * sf_ring_load
 *		Read, parse and check the key file, prepare its keys, and put them
 *		in use in place of the old ones.  On any error no key stays in use.
 */
static void
sf_ring_load(const char *path)
{
	struct stat st;
	size_t		len;
	char	   *buf;
	SnowflakeKeyFile *file;
	SnowflakeKeyFileStatus status;
	SnowflakeFF1Key fresh[SNOWFLAKE_KEY_IDS];
	int			line;
	int			key_id;

	sf_ring_clear();
	buf = sf_read_file(path, &st, &len);
	file = palloc(sizeof(SnowflakeKeyFile));
	status = snowflake_key_file_parse(buf, len, file, &line, &key_id);
	explicit_bzero(buf, SNOWFLAKE_KEY_FILE_MAX + 1);
	pfree(buf);
	for (int id = 0; status == SNOWFLAKE_KEY_FILE_OK && id < SNOWFLAKE_KEY_IDS; id++)
	{
		if (!file->keys[id].present)
			continue;
		if (snowflake_ff1_key_init(&fresh[id], file->keys[id].bytes,
								   file->keys[id].len) == SNOWFLAKE_FF1_OK)
			continue;
		while (--id >= 0)
			if (file->keys[id].present)
				snowflake_ff1_key_free(&fresh[id]);
		explicit_bzero(file, sizeof(SnowflakeKeyFile));
		elog(ERROR, "could not prepare a public ID key: libcrypto failed");
	}
	if (status != SNOWFLAKE_KEY_FILE_OK)
	{
		explicit_bzero(file, sizeof(SnowflakeKeyFile));
		sf_parse_error(status, line, key_id, path);
	}

	for (int id = 0; id < SNOWFLAKE_KEY_IDS; id++)
	{
		sf_ring.present[id] = file->keys[id].present;
		if (sf_ring.present[id])
			sf_ring.keys[id] = fresh[id];
	}
	sf_ring.nkeys = file->nkeys;
	sf_ring.current = file->current;
	explicit_bzero(file, sizeof(SnowflakeKeyFile));
	pfree(file);
	explicit_bzero(fresh, sizeof(fresh));
	sf_ring.path = MemoryContextStrdup(TopMemoryContext, path);
	sf_ring.dev = st.st_dev;
	sf_ring.ino = st.st_ino;
	sf_ring.size = st.st_size;
	sf_ring.mtime_ns = SF_MTIME_NS(&st);
	sf_ring.ctime_ns = SF_CTIME_NS(&st);
	sf_ring.loaded = true;
}

/*
 * sf_ring_refresh
 *		Make the keys in use those of the file the setting names now: at
 *		most once per statement and transaction, a stat() of the file, and
 *		when it or the setting changed, a new read.
 */
static void
sf_ring_refresh(void)
{
	TimestampTz stmt = GetCurrentStatementStartTimestamp();
	TimestampTz xact = GetCurrentTransactionStartTimestamp();
	const char *path = sf_keys_file != NULL ? sf_keys_file : "";
	struct stat st;

	if (likely(sf_checked && stmt == sf_checked_at && xact == sf_checked_xact))
		return;
	if (path[0] == '\0')
	{
		sf_ring_clear();
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("no public ID key file is configured"),
				 errhint("A superuser sets snowflake.public_keys_file to a file of keys (see docs/public-ids.md).")));
	}
	if (stat(path, &st) != 0)
	{
		int			save_errno = errno;

		sf_ring_clear();
		errno = save_errno;
		ereport(ERROR,
				(errcode_for_file_access(),
				 errmsg("could not open public ID key file: %m"),
				 errdetail_log("The file is \"%s\".", path)));
	}
	if (!sf_ring.loaded || strcmp(sf_ring.path, path) != 0 ||
		sf_ring.dev != st.st_dev || sf_ring.ino != st.st_ino ||
		sf_ring.size != st.st_size || sf_ring.mtime_ns != SF_MTIME_NS(&st) ||
		sf_ring.ctime_ns != SF_CTIME_NS(&st))
		sf_ring_load(path);
	sf_checked = true;
	sf_checked_at = stmt;
	sf_checked_xact = xact;
}

/*
 * sf_configured_keys
 *		errdetail listing the configured key ids: "The configured keys are
 *		1, 2 and 5." (the SQL edition words it alike).
 */
static int
sf_configured_keys(void)
{
	StringInfoData buf;
	int			seen = 0;

	if (sf_ring.nkeys == 0)
		return errdetail("No public ID key is configured.");
	initStringInfo(&buf);
	for (int id = 0; id < SNOWFLAKE_KEY_IDS; id++)
	{
		if (!sf_ring.present[id])
			continue;
		seen++;
		if (seen > 1)
			appendStringInfoString(&buf, seen == sf_ring.nkeys ? " and " : ", ");
		appendStringInfo(&buf, "%d", id);
	}
	if (sf_ring.nkeys == 1)
		return errdetail("The configured key is %s.", buf.data);
	return errdetail("The configured keys are %s.", buf.data);
}

SnowflakeFF1Key *
snowflake_keyring_key(int key_id)
{
	if (key_id < 0 || key_id >= SNOWFLAKE_KEY_IDS)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("public ID key %d is out of range", key_id),
				 errdetail("Key ids are between 0 and %d.", SNOWFLAKE_KEY_IDS - 1)));
	sf_ring_refresh();
	if (unlikely(!sf_ring.present[key_id]))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("public ID key %d is not configured", key_id),
				 sf_configured_keys(),
				 errhint("The keys are read from the file that snowflake.public_keys_file names.")));
	return &sf_ring.keys[key_id];
}

int
snowflake_keyring_current(void)
{
	sf_ring_refresh();
	if (unlikely(sf_ring.current < 0))
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("no public ID key is marked current"),
				 sf_configured_keys(),
				 errhint("Mark the key that new public IDs are made with \"current\" in the file that snowflake.public_keys_file names.")));
	return sf_ring.current;
}
