/*-------------------------------------------------------------------------
 *
 * key_file.c
 *	  Fuzz target: the parser of the key file of public IDs
 *	  (snowflake_key_file_parse, src/keyfile.c, which keyring.c calls on
 *	  the bytes it read from the file snowflake.public_keys_file names).
 *
 * The input is the file.  The target knows the format from its
 * documentation (keyfile.h, docs/public-ids.md), not from the code under
 * test, and parses it again itself.  Properties:
 *	- any bytes are refused with the line and the kind of problem the
 *	  documentation gives, the first in the file (a zero byte, a line that
 *	  does not start with a key id from 0 to 31 written without sign or
 *	  leading zero, a key id without a key, a key that is not 32, 48 or 64
 *	  hexadecimal digits, anything after the key but the word "current" in
 *	  any case, a key id given twice, a second current key), with the key
 *	  id at fault; or read as exactly the keys its lines give, the current
 *	  one, and how many;
 *	- what is read, written back as a file of its own (one line per key,
 *	  lower-case hexadecimal), reads back as the same keys;
 *	- the parser reads nothing past the bytes it is given (the input is
 *	  in memory of its own size).
 *
 * Test only: never part of the extension.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "keyfile.h"

#include "fuzz.h"

/* What the documentation says a file holds, or what is wrong with it. */
typedef struct OracleFile
{
	SnowflakeKeyFileStatus status;
	int			line;
	int			key_id;
	SnowflakeKeyFile keys;
} OracleFile;

static int
oracle_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* The fields of one line (no newline, no carriage return): split. */
static int
oracle_fields(const char *s, size_t len, const char **field, size_t *flen, int max)
{
	int			n = 0;
	size_t		i = 0;

	while (i < len)
	{
		size_t		start;

		while (i < len && (s[i] == ' ' || s[i] == '\t'))
			i++;
		if (i == len || s[i] == '#')
			break;
		start = i;
		while (i < len && s[i] != ' ' && s[i] != '\t' && s[i] != '#')
			i++;
		if (n < max)
		{
			field[n] = s + start;
			flen[n] = i - start;
		}
		n++;
	}
	return n;
}

/* One line: the status the documentation gives it; its key into *keys. */
static SnowflakeKeyFileStatus
oracle_line(const char *s, size_t len, SnowflakeKeyFile *keys, int *key_id)
{
	const char *f[4];
	size_t		fl[4];
	int			n = oracle_fields(s, len, f, fl, 4);
	int			id = 0;
	bool		current = false;

	if (n == 0)
		return SNOWFLAKE_KEY_FILE_OK;
	if (fl[0] < 1 || fl[0] > 2 || (fl[0] == 2 && f[0][0] == '0'))
		return SNOWFLAKE_KEY_FILE_BAD_ID;
	for (size_t k = 0; k < fl[0]; k++)
	{
		if (f[0][k] < '0' || f[0][k] > '9')
			return SNOWFLAKE_KEY_FILE_BAD_ID;
		id = id * 10 + (f[0][k] - '0');
	}
	if (id > 31)
		return SNOWFLAKE_KEY_FILE_BAD_ID;
	if (n == 1)
		return SNOWFLAKE_KEY_FILE_NO_KEY;
	if (fl[1] != 32 && fl[1] != 48 && fl[1] != 64)
		return SNOWFLAKE_KEY_FILE_BAD_KEY;
	for (size_t k = 0; k < fl[1]; k++)
		if (oracle_hex(f[1][k]) < 0)
			return SNOWFLAKE_KEY_FILE_BAD_KEY;
	if (n > 3 || (n == 3 && !(fl[2] == 7 && pg_strncasecmp(f[2], "current", 7) == 0)))
		return SNOWFLAKE_KEY_FILE_EXTRA;
	current = n == 3;
	*key_id = id;
	if (keys->keys[id].present)
		return SNOWFLAKE_KEY_FILE_DUPLICATE;
	if (current && keys->current >= 0)
		return SNOWFLAKE_KEY_FILE_TWO_CURRENT;
	keys->keys[id].present = true;
	keys->keys[id].len = (uint8) (fl[1] / 2);
	for (size_t k = 0; k < fl[1] / 2; k++)
		keys->keys[id].bytes[k] = (uint8) (oracle_hex(f[1][2 * k]) * 16 + oracle_hex(f[1][2 * k + 1]));
	keys->nkeys++;
	if (current)
		keys->current = id;
	return SNOWFLAKE_KEY_FILE_OK;
}

static void
oracle_parse(const char *buf, size_t len, OracleFile *o)
{
	size_t		start = 0;

	memset(o, 0, sizeof(*o));
	o->keys.current = -1;
	o->key_id = -1;
	o->status = SNOWFLAKE_KEY_FILE_OK;
	while (start < len)
	{
		size_t		end = start;
		size_t		stop;

		while (end < len && buf[end] != '\n')
			end++;
		o->line++;
		if (memchr(buf + start, '\0', end - start) != NULL)
		{
			o->status = SNOWFLAKE_KEY_FILE_NUL;
			return;
		}
		stop = (end > start && buf[end - 1] == '\r') ? end - 1 : end;
		o->status = oracle_line(buf + start, stop - start, &o->keys, &o->key_id);
		if (o->status != SNOWFLAKE_KEY_FILE_OK)
			return;
		start = end + 1;
	}
}

/* Two files' keys are the same. */
static bool
same_keys(const SnowflakeKeyFile *a, const SnowflakeKeyFile *b)
{
	if (a->nkeys != b->nkeys || a->current != b->current)
		return false;
	for (int id = 0; id < SNOWFLAKE_KEY_IDS; id++)
	{
		if (a->keys[id].present != b->keys[id].present)
			return false;
		if (a->keys[id].present &&
			(a->keys[id].len != b->keys[id].len ||
			 memcmp(a->keys[id].bytes, b->keys[id].bytes, a->keys[id].len) != 0))
			return false;
	}
	return true;
}

int
LLVMFuzzerTestOneInput(const uint8 *data, size_t size)
{
	char	   *buf = malloc(size ? size : 1);
	SnowflakeKeyFile *file = malloc(sizeof(SnowflakeKeyFile));
	SnowflakeKeyFile *again = malloc(sizeof(SnowflakeKeyFile));
	OracleFile *o = malloc(sizeof(OracleFile));
	int			line = -1;
	int			key_id = -2;
	SnowflakeKeyFileStatus s;

	memcpy(buf, data, size);
	s = snowflake_key_file_parse(buf, size, file, &line, &key_id);
	oracle_parse(buf, size, o);
	FUZZ_CHECK(s == o->status, "status %d, the documentation says %d (line %d)",
			   (int) s, (int) o->status, o->line);
	if (s != SNOWFLAKE_KEY_FILE_OK)
	{
		FUZZ_CHECK(line == o->line, "refused at line %d, the documentation says %d", line, o->line);
		if (s == SNOWFLAKE_KEY_FILE_DUPLICATE || s == SNOWFLAKE_KEY_FILE_TWO_CURRENT)
			FUZZ_CHECK(key_id == o->key_id, "key id %d at fault, the documentation says %d",
					   key_id, o->key_id);
	}
	else
	{
		char	   *text = malloc(SNOWFLAKE_KEY_IDS * 80);
		size_t		n = 0;

		FUZZ_CHECK(same_keys(file, &o->keys), "the keys read are not the keys the lines give");
		/* Written back, one key a line, read back as the same keys. */
		for (int id = 0; id < SNOWFLAKE_KEY_IDS; id++)
		{
			if (!file->keys[id].present)
				continue;
			n += sprintf(text + n, "%d ", id);
			for (int k = 0; k < file->keys[id].len; k++)
				n += sprintf(text + n, "%02x", file->keys[id].bytes[k]);
			n += sprintf(text + n, "%s\n", id == file->current ? " current" : "");
		}
		s = snowflake_key_file_parse(text, n, again, &line, &key_id);
		FUZZ_CHECK(s == SNOWFLAKE_KEY_FILE_OK && same_keys(file, again),
				   "the keys written back (\"%.*s\") read as status %d, or as other keys", (int) n, text, (int) s);
		explicit_bzero(text, SNOWFLAKE_KEY_IDS * 80);
		free(text);
	}
	explicit_bzero(file, sizeof(SnowflakeKeyFile));
	explicit_bzero(again, sizeof(SnowflakeKeyFile));
	free(buf);
	free(file);
	free(again);
	free(o);
	return 0;
}
