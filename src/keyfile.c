/*-------------------------------------------------------------------------
 *
 * keyfile.c
 *	  Parsing the key file of public IDs (the format is in keyfile.h).
 *
 * No PostgreSQL state is used here: no memory allocation, no ereport, no
 * GUC access.  The parser reads the bytes it is given once, line by line,
 * and stops at the first problem, reporting its line and kind, never the
 * text: the caller words the error.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "keyfile.h"

static inline bool
kf_blank(char c)
{
	return c == ' ' || c == '\t';
}

/* A hexadecimal digit's value, or -1. */
static inline int
kf_hex(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/*
 * kf_field
 *		The next field of a line, between *p and end: false at the end of
 *		the line or at a comment.
 */
static bool
kf_field(const char **p, const char *end, const char **field, size_t *len)
{
	const char *s = *p;

	while (s < end && kf_blank(*s))
		s++;
	if (s == end || *s == '#')
	{
		*p = end;
		return false;
	}
	*field = s;
	while (s < end && !kf_blank(*s) && *s != '#')
		s++;
	*len = (size_t) (s - *field);
	*p = s;
	return true;
}

/* A key id: 0 to 31, decimal, no sign, no leading zero; else -1. */
static int
kf_key_id(const char *f, size_t len)
{
	int			id = 0;

	if (len < 1 || len > 2 || (len == 2 && f[0] == '0'))
		return -1;
	for (size_t k = 0; k < len; k++)
	{
		if (f[k] < '0' || f[k] > '9')
			return -1;
		id = id * 10 + (f[k] - '0');
	}
	return id < SNOWFLAKE_KEY_IDS ? id : -1;
}

/* Whether the field is the word "current", in any case. */
static bool
kf_is_current(const char *f, size_t len)
{
	static const char word[] = "current";

	if (len != sizeof(word) - 1)
		return false;
	for (size_t k = 0; k < len; k++)
		if ((f[k] | 0x20) != word[k])
			return false;
	return true;
}

/*
 * kf_line
 *		One line, without its newline, into *out.
 */
static SnowflakeKeyFileStatus
kf_line(const char *s, const char *end, SnowflakeKeyFile *out, int *key_id)
{
	const char *f;
	size_t		len;
	int			id;
	bool		current = false;
	const char *hex;
	size_t		hex_len;

	if (!kf_field(&s, end, &f, &len))
		return SNOWFLAKE_KEY_FILE_OK;	/* blank, or a comment */
	id = kf_key_id(f, len);
	if (id < 0)
		return SNOWFLAKE_KEY_FILE_BAD_ID;
	if (!kf_field(&s, end, &hex, &hex_len))
		return SNOWFLAKE_KEY_FILE_NO_KEY;
	if (hex_len != 32 && hex_len != 48 && hex_len != 64)
		return SNOWFLAKE_KEY_FILE_BAD_KEY;
	for (size_t k = 0; k < hex_len; k++)
		if (kf_hex(hex[k]) < 0)
			return SNOWFLAKE_KEY_FILE_BAD_KEY;
	if (kf_field(&s, end, &f, &len))
	{
		if (!kf_is_current(f, len) || kf_field(&s, end, &f, &len))
			return SNOWFLAKE_KEY_FILE_EXTRA;
		current = true;
	}
	*key_id = id;
	if (out->keys[id].present)
		return SNOWFLAKE_KEY_FILE_DUPLICATE;
	if (current && out->current >= 0)
		return SNOWFLAKE_KEY_FILE_TWO_CURRENT;

	for (size_t k = 0; k < hex_len / 2; k++)
		out->keys[id].bytes[k] = (uint8) (kf_hex(hex[2 * k]) << 4 | kf_hex(hex[2 * k + 1]));
	out->keys[id].len = (uint8) (hex_len / 2);
	out->keys[id].present = true;
	out->nkeys++;
	if (current)
		out->current = id;
	return SNOWFLAKE_KEY_FILE_OK;
}

SnowflakeKeyFileStatus
snowflake_key_file_parse(const char *buf, size_t len, SnowflakeKeyFile *out,
						 int *line, int *key_id)
{
	const char *p = buf;
	const char *end = buf + len;

	memset(out, 0, sizeof(*out));
	out->current = -1;
	*line = 0;
	*key_id = -1;
	while (p < end)
	{
		const char *eol = memchr(p, '\n', (size_t) (end - p));
		const char *stop = eol ? eol : end;
		SnowflakeKeyFileStatus status;

		(*line)++;
		if (memchr(p, '\0', (size_t) (stop - p)) != NULL)
			return SNOWFLAKE_KEY_FILE_NUL;
		status = kf_line(p, (stop > p && stop[-1] == '\r') ? stop - 1 : stop,
						 out, key_id);
		if (status != SNOWFLAKE_KEY_FILE_OK)
			return status;
		p = eol ? eol + 1 : end;
	}
	return SNOWFLAKE_KEY_FILE_OK;
}
