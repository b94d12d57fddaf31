/*-------------------------------------------------------------------------
 *
 * settings_file.c
 *	  Fuzz target: the reader of the settings file, "snowflake.settings"
 *	  (snowflake_life_parse, src/fileformat.c, which snowflake_life_read
 *	  calls on the bytes it read).
 *
 * The input: the values of a file (44 bytes), a byte saying how many bits
 * of the file written from them to flip (0 to 5) and pairs of bytes
 * saying which, a byte saying how much shorter or longer to make it; all
 * of the input is also read as a file itself.  Properties:
 *	- any bytes are refused, with a sentence saying why, or read as what
 *	  they say: values that, written again, are those bytes;
 *	- a file written from any values reads back as them;
 *	- flipping one to five of its bits (CRC-32C finds every such change in
 *	  a file this short), cutting it short or making it longer makes it
 *	  refused, never read as other values.
 *
 * Test only: never part of the extension.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "fileformat.h"

#include "fuzz.h"

#define WHY_LEN 256

static bool
same_values(const SnowflakeLifeFile *a, const SnowflakeLifeFile *b)
{
	return a->postmaster_pid == b->postmaster_pid &&
		a->start_time == b->start_time &&
		a->layout.epoch_ms == b->layout.epoch_ms &&
		a->layout.timestamp_bits == b->layout.timestamp_bits &&
		a->layout.node_bits == b->layout.node_bits &&
		a->layout.sequence_bits == b->layout.sequence_bits &&
		a->node_id == b->node_id && a->node_id_span == b->node_id_span;
}

/* Read n bytes (in memory of their own); true if read, *f the values. */
static bool
parse(const char *bytes, size_t n, SnowflakeLifeFile *f)
{
	char	   *buf = malloc(n);
	char		detail[WHY_LEN];
	const char *why;
	size_t		len;

	memcpy(buf, bytes, n);
	memset(detail, 0x7F, sizeof(detail));
	why = snowflake_life_parse(buf, n, f, detail, sizeof(detail));
	free(buf);
	if (why == NULL)
		return true;
	len = strnlen(why, WHY_LEN);
	FUZZ_CHECK(len > 0 && len < WHY_LEN && isupper((unsigned char) why[0]) &&
			   why[len - 1] == '.', "not a sentence: %.*s", (int) len, why);
	return false;
}

/* Any bytes: refused, or read as what they say. */
static void
check_any(const uint8 *data, size_t size)
{
	SnowflakeLifeFile f;
	char		again[SNOWFLAKE_LIFE_SIZE];

	if (!parse((const char *) data, size, &f))
		return;
	snowflake_life_serialize(&f, again);
	FUZZ_CHECK(size == SNOWFLAKE_LIFE_SIZE && memcmp(again, data, size) == 0,
			   "%zu bytes read as values that are written otherwise", size);
}

int
LLVMFuzzerTestOneInput(const uint8 *data, size_t size)
{
	const uint8 *all = data;
	size_t		all_size = size;
	SnowflakeLifeFile f;
	SnowflakeLifeFile back;
	char		file[SNOWFLAKE_LIFE_SIZE + 256];
	int			flips;
	int			resize;
	size_t		n = SNOWFLAKE_LIFE_SIZE;
	bool		changed = false;

	check_any(all, all_size);

	memset(&f, 0, sizeof(f));
	f.postmaster_pid = (int32) fuzz_take(&data, &size, 4);
	f.start_time = (int64) fuzz_take(&data, &size, 8);
	f.layout.epoch_ms = (int64) fuzz_take(&data, &size, 8);
	f.layout.timestamp_bits = (int32) fuzz_take(&data, &size, 4);
	f.layout.node_bits = (int32) fuzz_take(&data, &size, 4);
	f.layout.sequence_bits = (int32) fuzz_take(&data, &size, 4);
	f.node_id = (int32) fuzz_take(&data, &size, 4);
	f.node_id_span = (int32) fuzz_take(&data, &size, 4);
	memset(file, 0, sizeof(file));
	snowflake_life_serialize(&f, file);
	FUZZ_CHECK(parse(file, SNOWFLAKE_LIFE_SIZE, &back) && same_values(&f, &back),
			   "a file written from values does not read back as them");

	/* Damage it: bit flips, then a new length. */
	flips = (int) (fuzz_take(&data, &size, 1) % 6);
	for (int i = 0; i < flips; i++)
	{
		int			bit = (int) (fuzz_take(&data, &size, 2) % (SNOWFLAKE_LIFE_SIZE * 8));

		file[bit / 8] ^= (char) (1 << (bit % 8));
	}
	resize = (int) (int8) fuzz_take(&data, &size, 1);
	if (resize < 0)
		n += resize / 3;		/* down to 10 bytes */
	else if (resize > 0 && resize <= 64)
	{
		n += resize;
		memcpy(file + SNOWFLAKE_LIFE_SIZE, data, Min(size, (size_t) resize));
	}
	{
		char		orig[SNOWFLAKE_LIFE_SIZE];

		snowflake_life_serialize(&f, orig);
		changed = n != SNOWFLAKE_LIFE_SIZE || memcmp(orig, file, n) != 0;
	}
	if (changed)
		FUZZ_CHECK(!parse(file, n, &back),
				   "a file with %d bits flipped, %zu bytes long, was read as values", flips, n);
	else
		FUZZ_CHECK(parse(file, n, &back) && same_values(&f, &back),
				   "an undamaged file was not read back");
	return 0;
}
