/*-------------------------------------------------------------------------
 *
 * fileformat.c
 *	  The bytes of the settings file, "snowflake.settings" (statefile.h):
 *	  the values serialized field by field, and the checks of bytes read
 *	  back (magic number, version, size, checksum) before they are
 *	  believed.
 *
 * No I/O and no PostgreSQL state (no palloc, no ereport): statefile.c
 * reads and writes the file, and the fuzz target test/fuzz/settings_file.c
 * calls these functions on any bytes.  No lock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fileformat.h"

static pg_crc32c
sf_crc(const void *data, size_t len)
{
	pg_crc32c	crc;

	INIT_CRC32C(crc);
	COMP_CRC32C(crc, data, len);
	FIN_CRC32C(crc);
	return crc;
}

/* Fixed-width fields, in the machine's byte order. */
static inline void
sf_put32(char *buf, int offset, uint32 v)
{
	memcpy(buf + offset, &v, sizeof(v));
}

static inline void
sf_put64(char *buf, int offset, uint64 v)
{
	memcpy(buf + offset, &v, sizeof(v));
}

static inline uint32
sf_get32(const char *buf, int offset)
{
	uint32		v;

	memcpy(&v, buf + offset, sizeof(v));
	return v;
}

static inline uint64
sf_get64(const char *buf, int offset)
{
	uint64		v;

	memcpy(&v, buf + offset, sizeof(v));
	return v;
}

/*
 * snowflake_life_serialize
 *		The bytes of the settings file for *f: SNOWFLAKE_LIFE_SIZE of them
 *		into buf, checksum last.
 */
void
snowflake_life_serialize(const SnowflakeLifeFile *f, char *buf)
{
	sf_put32(buf, 0, SNOWFLAKE_LIFE_MAGIC);
	sf_put32(buf, 4, SNOWFLAKE_LIFE_VERSION);
	sf_put32(buf, 8, (uint32) f->postmaster_pid);
	sf_put64(buf, 12, (uint64) f->start_time);
	sf_put64(buf, 20, (uint64) f->layout.epoch_ms);
	sf_put32(buf, 28, (uint32) f->layout.timestamp_bits);
	sf_put32(buf, 32, (uint32) f->layout.node_bits);
	sf_put32(buf, 36, (uint32) f->layout.sequence_bits);
	sf_put32(buf, 40, (uint32) f->node_id);
	sf_put32(buf, 44, (uint32) f->node_id_span);
	sf_put32(buf, SNOWFLAKE_LIFE_SIZE - 4, sf_crc(buf, SNOWFLAKE_LIFE_SIZE - 4));
}

/*
 * sf_life_check
 *		Why the n bytes read from the settings file are not a file of the
 *		current format, as a sentence for a log message, or NULL if they
 *		are one.
 */
static const char *
sf_life_check(const char *buf, size_t n, char *detail, size_t len)
{
	uint32		magic = n >= 4 ? sf_get32(buf, 0) : 0;
	uint32		version = n >= 8 ? sf_get32(buf, 4) : 0;

	if (magic == SNOWFLAKE_LIFE_OLD_MAGIC)
		return "It has the unversioned format of builds of snowflake 1.2 made before its release.";
	if (magic != SNOWFLAKE_LIFE_MAGIC)
		return "It does not start with the magic number of a snowflake settings file.";
	if (n < 8)
		version = SNOWFLAKE_LIFE_VERSION;	/* truncated: said below */
	if (version > SNOWFLAKE_LIFE_VERSION)
	{
		snprintf(detail, len,
				 "It has format version %u, written by a newer version of snowflake; this one reads format version %d.",
				 version, SNOWFLAKE_LIFE_VERSION);
		return detail;
	}
	if (version != SNOWFLAKE_LIFE_VERSION)
	{
		snprintf(detail, len, "It has format version %u, which no version of snowflake wrote.",
				 version);
		return detail;
	}
	if (n < SNOWFLAKE_LIFE_SIZE)
	{
		snprintf(detail, len, "It is truncated: %d bytes long instead of %d.",
				 (int) n, SNOWFLAKE_LIFE_SIZE);
		return detail;
	}
	if (n > SNOWFLAKE_LIFE_SIZE)
	{
		snprintf(detail, len, "It is longer than the %d bytes of its format.",
				 SNOWFLAKE_LIFE_SIZE);
		return detail;
	}
	if (sf_get32(buf, SNOWFLAKE_LIFE_SIZE - 4) != sf_crc(buf, SNOWFLAKE_LIFE_SIZE - 4))
		return "Its checksum does not match its contents.";
	return NULL;
}

/*
 * snowflake_life_parse
 *		The values of the n bytes read from the settings file into *f, and
 *		NULL; or, if they are not a file of the current format (another
 *		format, truncated, longer, corrupt), why, as a sentence (a constant
 *		or detail, len bytes), and *f untouched.
 */
const char *
snowflake_life_parse(const char *buf, size_t n, SnowflakeLifeFile *f,
					 char *detail, size_t len)
{
	const char *why = sf_life_check(buf, n, detail, len);

	if (why != NULL)
		return why;
	f->postmaster_pid = (int32) sf_get32(buf, 8);
	f->start_time = (int64) sf_get64(buf, 12);
	f->layout.epoch_ms = (int64) sf_get64(buf, 20);
	f->layout.timestamp_bits = (int32) sf_get32(buf, 28);
	f->layout.node_bits = (int32) sf_get32(buf, 32);
	f->layout.sequence_bits = (int32) sf_get32(buf, 36);
	f->node_id = (int32) sf_get32(buf, 40);
	f->node_id_span = (int32) sf_get32(buf, 44);
	return NULL;
}
