/*-------------------------------------------------------------------------
 *
 * state_file.c
 *	  Fuzz target: the reader of the state file, "snowflake.state"
 *	  (snowflake_state_parse, src/fileformat.c, which snowflake_state_read
 *	  calls on the bytes it read), and the checksum the writer seals an
 *	  image with (snowflake_state_seal).
 *
 * The input: the values of a current (version 4) file, a byte saying how
 * many of its bits to flip (0 to 5) and pairs of bytes saying which, a
 * byte saying how much shorter (down to 56 bytes, version 1's size) or
 * longer (up to 64 bytes more, with the input's next bytes) to make it;
 * all of the input is also read as a file itself.  The target knows the
 * formats from their documentation (statefile.h, and the comments on
 * versions 1 to 3 in fileformat.c), not from the code under test: the size
 * and checksum offset of each version and where its fields are.
 * Properties:
 *	- any bytes are refused, saying why as the documentation says ("file
 *	  ... is corrupt (...)", the first of: a size no version has, another
 *	  magic number, a version no snowflake wrote, the size of another
 *	  version, a wrong checksum), or read as what they say: a version 4
 *	  file as values that, sealed again, are those very bytes; a file of
 *	  versions 1 to 3 as its fields, with what it did not record empty (no
 *	  floor: every start applies one; no horizon, WAL position or node
 *	  span), its lead at least the minimum every start assumes (1000 ms),
 *	  and 1.2's request to confirm a node id as a restore's with id 1,
 *	  which is its canonical form: sealed
 *	  as a version 4 file, that reads back as the same values;
 *	- a file sealed from any values reads back as them;
 *	- one to five flipped bits of a version 4 file are refused, always
 *	  (CRC-32C finds every such change in a file this short, and a flip of
 *	  the version makes the size wrong);
 *	- a shorter or a longer file, with or without flipped bits, is refused
 *	  unless its bytes are a whole file of an older version with its
 *	  checksum (1 in 2^32 for random damage; the fuzzer, which chooses the
 *	  values, can forge it), and then it is read with the reservation and
 *	  the last ID written, unless a flipped bit fell in them: never a lower
 *	  reservation than the one written by chance.
 *
 * Test only: never part of the extension.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fileformat.h"

#include "fuzz.h"

#define DETAIL_LEN 256
#define V4_SIZE 136

/* Each version's size and checksum offset, as documented. */
static const struct
{
	uint32		version;
	size_t		size;
	size_t		crc_offset;
}			versions[] = {
	{1, 56, 52}, {2, 88, 80}, {3, 112, 108}, {4, V4_SIZE, 132}
};

static uint32
get32(const uint8 *b, size_t off)
{
	uint32		v;

	memcpy(&v, b + off, 4);
	return v;
}

static uint64
get64(const uint8 *b, size_t off)
{
	uint64		v;

	memcpy(&v, b + off, 8);
	return v;
}

/*
 * What the documentation says of n bytes: NULL and *want the image they
 * are read as, or the reason they are refused.
 */
static const char *
expect(const uint8 *b, size_t n, SnowflakeStateFile *want)
{
	int			v = -1;
	bool		known_size = false;
	pg_crc32c	crc;

	for (int i = 0; i < (int) lengthof(versions); i++)
		known_size |= versions[i].size == n;
	if (!known_size)
		return "wrong size";
	if (get32(b, 0) != SNOWFLAKE_STATE_MAGIC)
		return "bad magic number";
	for (int i = 0; i < (int) lengthof(versions); i++)
		if (versions[i].version == get32(b, 4))
			v = i;
	if (v < 0)
		return "unknown version";
	if (versions[v].size != n)
		return "wrong size";
	INIT_CRC32C(crc);
	COMP_CRC32C(crc, b, versions[v].crc_offset);
	FIN_CRC32C(crc);
	if (crc != get32(b, versions[v].crc_offset))
		return "checksum mismatch";

	if (versions[v].version == 4)
	{
		memcpy(want, b, V4_SIZE);
		return NULL;
	}
	/* An older version: its fields, what it did not record empty. */
	memset(want, 0, sizeof(*want));
	want->magic = SNOWFLAKE_STATE_MAGIC;
	want->version = 4;
	want->epoch_ms = (int64) get64(b, 8);
	want->timestamp_bits = (int32) get32(b, 16);
	want->node_bits = (int32) get32(b, 20);
	want->sequence_bits = (int32) get32(b, 24);
	want->node_id = (int32) get32(b, 28);
	want->reserved_ms = (int64) get64(b, 32);
	want->last = (int64) get64(b, 40);
	want->floor_ms = -1;
	/* The lead every start assumes at least (history.h). */
	want->max_lead_ms = 1000;
	if (versions[v].version >= 2)
	{
		want->timeline = get32(b, 52);
		want->system_id = get64(b, 56);
		want->max_lead_ms = Max((int64) get64(b, 64), 1000);
	}
	/* 1.2's request to confirm a node id is kept, as a restore's (kind 1). */
	if (versions[v].version == 3 && (get32(b, 48) & SNOWFLAKE_STATE_UNCONFIRMED))
	{
		want->request_id = 1;
		want->request_kind = 1;
	}
	return NULL;
}

/*
 * Read n bytes (in memory of their own) and check the result against the
 * documentation; true if read, *f the image.
 */
static bool
check_file(const uint8 *bytes, size_t n, SnowflakeStateFile *f)
{
	uint8	   *buf = malloc(n);
	char		detail[DETAIL_LEN];
	char		want_detail[DETAIL_LEN];
	SnowflakeStateFile want;
	const char *why = expect(bytes, n, &want);
	int			got;

	memcpy(buf, bytes, n);
	memset(detail, 0x7F, sizeof(detail));
	memset(f, 0xA5, sizeof(*f));
	got = snowflake_state_parse((const char *) buf, n, f, detail, sizeof(detail));
	free(buf);
	if (why != NULL)
	{
		snprintf(want_detail, sizeof(want_detail),
				 "file \"snowflake.state\" is corrupt (%s)", why);
		FUZZ_CHECK(got == -1, "%zu bytes read, the documentation says: %s", n, why);
		FUZZ_CHECK(strnlen(detail, DETAIL_LEN) < DETAIL_LEN &&
				   strcmp(detail, want_detail) == 0,
				   "refused saying \"%.*s\", not \"%s\"", DETAIL_LEN, detail, want_detail);
		return false;
	}
	FUZZ_CHECK(got == 1, "%zu bytes of a version %u file refused: %.*s",
			   n, get32(bytes, 4), DETAIL_LEN, detail);
	FUZZ_CHECK(memcmp(f, &want, sizeof(want)) == 0,
			   "%zu bytes of a version %u file read as other values", n, get32(bytes, 4));
	return true;
}

/* Any bytes: refused, or read as what they say, in their canonical form. */
static void
check_any(const uint8 *data, size_t size)
{
	SnowflakeStateFile f;
	SnowflakeStateFile again;
	SnowflakeStateFile back;

	if (!check_file(data, size, &f))
		return;
	again = f;
	snowflake_state_seal(&again);
	if (size == V4_SIZE)
		FUZZ_CHECK(memcmp(&again, data, V4_SIZE) == 0,
				   "a version 4 file read as values that are sealed otherwise");
	else
		FUZZ_CHECK(check_file((const uint8 *) &again, V4_SIZE, &back) &&
				   memcmp(&back, &again, V4_SIZE) == 0,
				   "a version %u file's canonical form does not read back", get32(data, 4));
}

/* A version 4 image of values taken from the input, sealed. */
static void
take_values(const uint8 **data, size_t *size, SnowflakeStateFile *f)
{
	memset(f, 0, sizeof(*f));
	f->magic = SNOWFLAKE_STATE_MAGIC;
	f->version = SNOWFLAKE_STATE_VERSION;
	f->epoch_ms = (int64) fuzz_take(data, size, 8);
	f->timestamp_bits = (int32) fuzz_take(data, size, 4);
	f->node_bits = (int32) fuzz_take(data, size, 4);
	f->sequence_bits = (int32) fuzz_take(data, size, 4);
	f->node_id = (int32) fuzz_take(data, size, 4);
	f->reserved_ms = (int64) fuzz_take(data, size, 8);
	f->last = (int64) fuzz_take(data, size, 8);
	f->flags = (uint32) fuzz_take(data, size, 4);
	f->timeline = (uint32) fuzz_take(data, size, 4);
	f->system_id = fuzz_take(data, size, 8);
	f->max_lead_ms = (int64) fuzz_take(data, size, 8);
	f->horizon_unix_ms = (int64) fuzz_take(data, size, 8);
	f->floor_ms = (int64) fuzz_take(data, size, 8);
	f->place = fuzz_take(data, size, 8);
	f->pos_lsn = fuzz_take(data, size, 8);
	f->request_id = fuzz_take(data, size, 8);
	f->pos_tli = (uint32) fuzz_take(data, size, 4);
	f->floor_cause = (uint32) fuzz_take(data, size, 4);
	f->request_kind = (uint32) fuzz_take(data, size, 4);
	f->node_base = (int32) fuzz_take(data, size, 4);
	f->node_span = (int32) fuzz_take(data, size, 4);
	snowflake_state_seal(f);
}

int
LLVMFuzzerTestOneInput(const uint8 *data, size_t size)
{
	SnowflakeStateFile f;
	SnowflakeStateFile back;
	uint8		file[V4_SIZE + 64];
	int			flips;
	int			resize;
	size_t		n = V4_SIZE;
	bool		reservation_hit = false;

	check_any(data, size);

	take_values(&data, &size, &f);
	FUZZ_CHECK(check_file((const uint8 *) &f, V4_SIZE, &back) &&
			   memcmp(&f, &back, V4_SIZE) == 0,
			   "a file sealed from values does not read back as them");

	/* Damage it: bit flips, then a new length. */
	memset(file, 0, sizeof(file));
	memcpy(file, &f, V4_SIZE);
	flips = (int) (fuzz_take(&data, &size, 1) % 6);
	for (int i = 0; i < flips; i++)
	{
		int			bit = (int) (fuzz_take(&data, &size, 2) % (V4_SIZE * 8));

		file[bit / 8] ^= (uint8) (1 << (bit % 8));
		/* reserved_ms and last: bytes 32 to 47 in every version */
		reservation_hit |= bit / 8 >= 32 && bit / 8 < 48;
	}
	resize = (int) (int8) fuzz_take(&data, &size, 1);
	if (resize < 0)
		n += resize * 48 / 128; /* down to 56 bytes */
	else if (resize > 0 && resize <= 64)
	{
		n += resize;
		memcpy(file + V4_SIZE, data, Min(size, (size_t) resize));
	}

	if (n == V4_SIZE && memcmp(file, &f, V4_SIZE) == 0)
		FUZZ_CHECK(check_file(file, n, &back) && memcmp(&f, &back, V4_SIZE) == 0,
				   "an undamaged file was not read back");
	else if (n == V4_SIZE)
		FUZZ_CHECK(!check_file(file, n, &back),
				   "a file with %d bits flipped was read", flips);
	else if (check_file(file, n, &back))
	{
		FUZZ_CHECK(back.version == SNOWFLAKE_STATE_VERSION && get32(file, 4) != 4,
				   "a file of %zu bytes was read as version 4", n);
		FUZZ_CHECK(reservation_hit ||
				   (back.reserved_ms == f.reserved_ms && back.last == f.last),
				   "a file with %d bits flipped, %zu bytes long, was read with reservation %lld (written %lld), last ID %lld (written %lld)",
				   flips, n, (long long) back.reserved_ms, (long long) f.reserved_ms,
				   (long long) back.last, (long long) f.last);
	}
	return 0;
}
