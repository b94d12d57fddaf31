/*-------------------------------------------------------------------------
 *
 * fileformat.c
 *	  The bytes of the state file, "snowflake.state", and of the settings
 *	  file, "snowflake.settings" (their formats are in statefile.h): the
 *	  checksum a state file image is sealed with, the settings serialized
 *	  field by field, and the checks of bytes read back (magic number,
 *	  version, size, checksum) before they are believed, with the
 *	  conversion of the state file's older versions.
 *
 * No I/O and no PostgreSQL state (no palloc, no ereport): statefile.c
 * reads and writes the files, and the fuzz targets test/fuzz/state_file.c
 * and test/fuzz/settings_file.c call these functions on any bytes.  No
 * lock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fileformat.h"
#include "history.h"

/*
 * snowflake_crc32c
 *		CRC-32C of len bytes at data, as the files of snowflake and
 *		pg_control carry it.
 */
pg_crc32c
snowflake_crc32c(const void *data, size_t len)
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
	sf_put32(buf, SNOWFLAKE_LIFE_SIZE - 4, snowflake_crc32c(buf, SNOWFLAKE_LIFE_SIZE - 4));
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
	if (sf_get32(buf, SNOWFLAKE_LIFE_SIZE - 4) != snowflake_crc32c(buf, SNOWFLAKE_LIFE_SIZE - 4))
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

/*
 * Version 3 (snowflake 1.2), still read after an upgrade, spelled out for
 * the same reason.  Its record of a clean shutdown and of the postmaster
 * that wrote it meant that the file could be trusted without a floor;
 * every start applies the floor now, and they are not read.
 */
typedef struct SnowflakeStateFileV3
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
	uint64		clean_checkpoint;
	uint64		clean_system_id;
	int64		life_start;
	int32		life_pid;
	pg_crc32c	crc;
} SnowflakeStateFileV3;

/*
 * The id a request to confirm the node id recorded by 1.2
 * (SNOWFLAKE_STATE_UNCONFIRMED) takes: none was recorded, and any id that
 * no confirmation of 1.3 names will do.
 */
#define SF_V3_REQUEST_ID	UINT64CONST(1)

/* The current format has no padding: it is written as the struct's bytes. */
StaticAssertDecl(sizeof(SnowflakeStateFile) == SNOWFLAKE_STATE_MAX_SIZE,
				 "SnowflakeStateFile must be 136 bytes without padding");

/* Set the checksum of a filled image, last before writing it. */
void
snowflake_state_seal(SnowflakeStateFile *f)
{
	f->crc = snowflake_crc32c(f, offsetof(SnowflakeStateFile, crc));
}

/*
 * The fields every version has, from the start of an older image, into a
 * current one with nothing of its own recorded yet (no floor, no place).
 * The layout of the first 64 bytes is the same in every version.
 */
static void
sf_convert_common(const SnowflakeStateFileV1 *old, SnowflakeStateFile *f)
{
	memset(f, 0, sizeof(*f));
	f->magic = old->magic;
	f->version = SNOWFLAKE_STATE_VERSION;
	f->epoch_ms = old->epoch_ms;
	f->timestamp_bits = old->timestamp_bits;
	f->node_bits = old->node_bits;
	f->sequence_bits = old->sequence_bits;
	f->node_id = old->node_id;
	f->reserved_ms = old->reserved_ms;
	f->last = old->last;
	f->floor_ms = -1;
	f->floor_cause = 0;
	f->max_lead_ms = SNOWFLAKE_MIN_LEAD_MS;
}

/*
 * An older image as a current one: 1.0 recorded no lineage; 1.1 no
 * request to confirm a node id; 1.2 recorded what is no longer read.  The
 * floor flag of 1.0 to 1.2 is not kept: every start owes the floor now.
 * Their lead is kept in force whether or not it was being lowered (the
 * time it was lowered at is not a horizon); no WAL position, node span or
 * request id was recorded.
 */
static void
sf_convert(const char *buf, int version, SnowflakeStateFile *f)
{
	const SnowflakeStateFileV2 *v2 = (const SnowflakeStateFileV2 *) buf;

	sf_convert_common((const SnowflakeStateFileV1 *) buf, f);
	if (version == 1)
		return;
	f->timeline = v2->timeline;
	f->system_id = v2->system_id;
	f->max_lead_ms = Max(v2->max_lead_ms, SNOWFLAKE_MIN_LEAD_MS);
	if (version == 3 &&
		(((const SnowflakeStateFileV3 *) buf)->flags & SNOWFLAKE_STATE_UNCONFIRMED))
	{
		f->request_id = SF_V3_REQUEST_ID;
		f->request_kind = SF_REQUEST_RESTORE;
	}
}

/*
 * The size and checksum offset of a state file of a version, or 0 if no
 * version of snowflake wrote it.
 */
static size_t
sf_version_size(uint32 version, size_t *crc_offset)
{
	switch (version)
	{
		case 1:
			*crc_offset = offsetof(SnowflakeStateFileV1, crc);
			return sizeof(SnowflakeStateFileV1);
		case 2:
			*crc_offset = offsetof(SnowflakeStateFileV2, crc);
			return sizeof(SnowflakeStateFileV2);
		case 3:
			*crc_offset = offsetof(SnowflakeStateFileV3, crc);
			return sizeof(SnowflakeStateFileV3);
		case SNOWFLAKE_STATE_VERSION:
			*crc_offset = offsetof(SnowflakeStateFile, crc);
			return sizeof(SnowflakeStateFile);
	}
	return 0;
}

/*
 * snowflake_state_parse
 *		Check the n bytes buf of a state file, of any version, and read them
 *		into *f as a current image.  Returns 1 if they are a state file, -1
 *		if not: then detail says why ("file ... is corrupt (...)").  Pure:
 *		no I/O, no PostgreSQL state, no error raised.
 *
 * A file is accepted only whole: the size of its version and its checksum
 * over exactly those bytes, so that a damaged file is refused, never read
 * as another version's or as a lower reservation than the one written.
 */
int
snowflake_state_parse(const char *buf, size_t n, SnowflakeStateFile *f,
					  char *detail, size_t len)
{
	uint32		magic;
	uint32		version;
	size_t		size = 0;
	size_t		crc_offset = 0;
	pg_crc32c	crc;
	const char *corrupt = NULL;

	if (n >= 8)
	{
		memcpy(&magic, buf, sizeof(magic));
		memcpy(&version, buf + 4, sizeof(version));
		size = sf_version_size(version, &crc_offset);
	}
	if (n != sizeof(SnowflakeStateFileV1) && n != sizeof(SnowflakeStateFileV2) &&
		n != sizeof(SnowflakeStateFileV3) && n != sizeof(SnowflakeStateFile))
		corrupt = "wrong size";
	else if (magic != SNOWFLAKE_STATE_MAGIC)
		corrupt = "bad magic number";
	else if (size == 0)
		corrupt = "unknown version";
	else if (n != size)
		corrupt = "wrong size";
	else
	{
		memcpy(&crc, buf + crc_offset, sizeof(crc));
		if (crc != snowflake_crc32c(buf, crc_offset))
			corrupt = "checksum mismatch";
	}
	if (corrupt != NULL)
	{
		snprintf(detail, len, "file \"%s\" is corrupt (%s)",
				 SNOWFLAKE_STATE_FILE, corrupt);
		return -1;
	}
	if (version == SNOWFLAKE_STATE_VERSION)
		memcpy(f, buf, sizeof(*f));
	else
		sf_convert(buf, (int) version, f);
	return 1;
}
