/*-------------------------------------------------------------------------
 *
 * textform.c
 *	  Text forms of snowflake IDs: pure encoding and decoding arithmetic
 *	  (the forms and their rules are in textform.h).
 *
 * No PostgreSQL state is used here: no memory allocation, no ereport, no
 * GUC access.  The only state is the decoding maps, built from the
 * alphabets at the first call and never changed after.
 *
 * Decoding reads the text once, left to right, and reports the first
 * problem in this order: the prefix (compared byte for byte), then the
 * first character that is neither a digit of the form nor (base32 only) a
 * hyphen, or that is a digit past a fixed width; then too few digits (none
 * at all, for the forms without a width); then a leading zero (forms
 * without a width); then a value above 2^63 - 1.  So a text with a
 * syntax error is never reported as out of range, and no text decodes to
 * an ID other than the one its digits spell.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "textform.h"

/* What the decoding maps hold besides digit values. */
#define SF_NOT_DIGIT	0xFF
#define SF_HYPHEN		0xFE

typedef struct SfTextFormDef
{
	const char *name;
	const char *alphabet;		/* digit values 0, 1, ... in order */
	int			base;
	int			width;			/* 0: no padding, no leading zeros */
} SfTextFormDef;

static const SfTextFormDef sf_forms[] = {
	[SNOWFLAKE_BASE32] = {"base32", "0123456789ABCDEFGHJKMNPQRSTVWXYZ", 32, 13},
	[SNOWFLAKE_BASE62] = {"base62",
	"0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz", 62, 11},
	[SNOWFLAKE_BASE58] = {"base58",
	"123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz", 58, 0},
	[SNOWFLAKE_BASE36] = {"base36", "0123456789abcdefghijklmnopqrstuvwxyz", 36, 0},
	[SNOWFLAKE_HEX] = {"hex", "0123456789abcdef", 16, 16},
};

#define SF_NFORMS	(SNOWFLAKE_HEX + 1)

/* Byte -> digit value, SF_NOT_DIGIT or SF_HYPHEN, per form. */
static uint8 sf_maps[SF_NFORMS][256];
static bool sf_maps_ready = false;

/*
 * sf_build_maps
 *		Fill the decoding maps from the alphabets: each digit as written;
 *		for the forms that ignore case (base32, base36, hex), its other
 *		case too; for base32, Crockford's aliases (I and L read as 1, O as
 *		0, either case) and the hyphen, which decoding skips.
 */
static void
sf_build_maps(void)
{
	for (int f = 0; f < SF_NFORMS; f++)
	{
		const char *a = sf_forms[f].alphabet;
		bool		any_case = f != SNOWFLAKE_BASE62 && f != SNOWFLAKE_BASE58;

		memset(sf_maps[f], SF_NOT_DIGIT, 256);
		for (int v = 0; a[v] != '\0'; v++)
		{
			unsigned char c = (unsigned char) a[v];

			sf_maps[f][c] = (uint8) v;
			if (any_case && c >= 'a' && c <= 'z')
				sf_maps[f][c - 'a' + 'A'] = (uint8) v;
			if (any_case && c >= 'A' && c <= 'Z')
				sf_maps[f][c - 'A' + 'a'] = (uint8) v;
		}
	}
	sf_maps[SNOWFLAKE_BASE32]['I'] = sf_maps[SNOWFLAKE_BASE32]['i'] = 1;
	sf_maps[SNOWFLAKE_BASE32]['L'] = sf_maps[SNOWFLAKE_BASE32]['l'] = 1;
	sf_maps[SNOWFLAKE_BASE32]['O'] = sf_maps[SNOWFLAKE_BASE32]['o'] = 0;
	sf_maps[SNOWFLAKE_BASE32]['-'] = SF_HYPHEN;
	sf_maps_ready = true;
}

/* The form's name, as the error messages write it. */
const char *
snowflake_text_form_name(SnowflakeTextForm form)
{
	return sf_forms[form].name;
}

/* The form's fixed number of digits, or 0 for the forms without one. */
int
snowflake_text_form_width(SnowflakeTextForm form)
{
	return sf_forms[form].width;
}

/*
 * snowflake_text_encode
 *		Write the digits of id (0 to 2^63 - 1) in the form into out (room
 *		for SNOWFLAKE_TEXT_MAX_DIGITS bytes, no terminator); return how many
 *		were written.
 *
 * The fixed-width forms fill their width from the right, the zero digit
 * padding the left; the others write the digits from the most significant
 * one that is not zero (0 itself is the zero digit).  Each form's divisions
 * are by a constant, which the compiler turns into multiplications.
 */
int
snowflake_text_encode(SnowflakeTextForm form, uint64 id, char *out)
{
	const char *a = sf_forms[form].alphabet;
	char		buf[SNOWFLAKE_TEXT_MAX_DIGITS];
	char	   *p = buf + sizeof(buf);
	int			n;

	Assert(id <= (uint64) PG_INT64_MAX);
	switch (form)
	{
		case SNOWFLAKE_BASE32:
			for (int i = 12; i >= 0; i--, id >>= 5)
				out[i] = a[id & 31];
			return 13;
		case SNOWFLAKE_HEX:
			for (int i = 15; i >= 0; i--, id >>= 4)
				out[i] = a[id & 15];
			return 16;
		case SNOWFLAKE_BASE62:
			for (int i = 10; i >= 0; i--, id /= 62)
				out[i] = a[id % 62];
			return 11;
		case SNOWFLAKE_BASE58:
			do
				*--p = a[id % 58];
			while ((id /= 58) != 0);
			break;
		case SNOWFLAKE_BASE36:
			do
				*--p = a[id % 36];
			while ((id /= 36) != 0);
			break;
	}
	n = (int) (buf + sizeof(buf) - p);
	memcpy(out, p, n);
	return n;
}

/*
 * sf_match_prefix
 *		Compare the text's start with the prefix, byte for byte (case
 *		counts, whatever the form).
 */
static SnowflakeTextStatus
sf_match_prefix(const char *text, size_t len, const char *prefix,
				size_t prefix_len, size_t *where)
{
	for (size_t i = 0; i < prefix_len; i++)
	{
		if (i == len)
		{
			*where = len;
			return SNOWFLAKE_TEXT_SHORT_PREFIX;
		}
		if (text[i] != prefix[i])
		{
			*where = i;
			return SNOWFLAKE_TEXT_BAD_PREFIX;
		}
	}
	return SNOWFLAKE_TEXT_OK;
}

/*
 * sf_decode_digits
 *		Decode text[start .. len) as digits of a form (map, base, width),
 *		checks in the order the file's head gives.  Inlined into each
 *		form's call with its constants.
 */
static pg_attribute_always_inline SnowflakeTextStatus
sf_decode_digits(const uint8 *map, uint64 base, int width,
				 const char *text, size_t start, size_t len,
				 int64 *id, size_t *where, int *ndigits)
{
	uint64		v = 0;
	bool		over = false;
	int			n = 0;
	size_t		first = start;

	for (size_t i = start; i < len; i++)
	{
		uint8		d = map[(unsigned char) text[i]];

		if (d >= base)
		{
			if (d == SF_HYPHEN)
				continue;
			*where = i;
			return SNOWFLAKE_TEXT_BAD_DIGIT;
		}
		if (n == width && width > 0)
		{
			*where = i;
			return SNOWFLAKE_TEXT_TOO_LONG;
		}
		if (n++ == 0)
			first = i;
		/* v * base + d <= 2^63 - 1, checked without wrapping around */
		if (over || v > (uint64) PG_INT64_MAX / base)
			over = true;
		else
		{
			v = v * base + d;
			over = v > (uint64) PG_INT64_MAX;
		}
	}
	*ndigits = n;
	if (n == 0 || n < width)
		return SNOWFLAKE_TEXT_TOO_SHORT;
	if (width == 0 && n > 1 && map[(unsigned char) text[first]] == 0)
	{
		*where = first;
		return SNOWFLAKE_TEXT_LEADING_ZERO;
	}
	if (over)
		return SNOWFLAKE_TEXT_OUT_OF_RANGE;
	*id = (int64) v;
	return SNOWFLAKE_TEXT_OK;
}

/*
 * snowflake_text_decode
 *		The ID a text of the form spells after the prefix (prefix_len 0:
 *		none).  On failure, *where is the byte offset of the offending
 *		character in text (for the prefix's and digits' errors) and
 *		*ndigits how many digits were read (for TOO_SHORT).
 */
SnowflakeTextStatus
snowflake_text_decode(SnowflakeTextForm form, const char *text, size_t len,
					  const char *prefix, size_t prefix_len,
					  int64 *id, size_t *where, int *ndigits)
{
	SnowflakeTextStatus status;

	if (unlikely(!sf_maps_ready))
		sf_build_maps();
	status = sf_match_prefix(text, len, prefix, prefix_len, where);
	if (status != SNOWFLAKE_TEXT_OK)
		return status;

	switch (form)
	{
		case SNOWFLAKE_BASE32:
			return sf_decode_digits(sf_maps[SNOWFLAKE_BASE32], 32, 13, text,
									prefix_len, len, id, where, ndigits);
		case SNOWFLAKE_BASE62:
			return sf_decode_digits(sf_maps[SNOWFLAKE_BASE62], 62, 11, text,
									prefix_len, len, id, where, ndigits);
		case SNOWFLAKE_BASE58:
			return sf_decode_digits(sf_maps[SNOWFLAKE_BASE58], 58, 0, text,
									prefix_len, len, id, where, ndigits);
		case SNOWFLAKE_BASE36:
			return sf_decode_digits(sf_maps[SNOWFLAKE_BASE36], 36, 0, text,
									prefix_len, len, id, where, ndigits);
		case SNOWFLAKE_HEX:
			return sf_decode_digits(sf_maps[SNOWFLAKE_HEX], 16, 16, text,
									prefix_len, len, id, where, ndigits);
	}
	pg_unreachable();
}

/*
 * snowflake_public_text_encode
 *		The public text form's digits (publicid.c): the key id (0 to 31) as
 *		one Crockford base32 digit, then the public ID's 13; return 14.
 */
int
snowflake_public_text_encode(int key_id, uint64 value, char *out)
{
	Assert(key_id >= 0 && key_id < 32);
	out[0] = sf_forms[SNOWFLAKE_BASE32].alphabet[key_id];
	return 1 + snowflake_text_encode(SNOWFLAKE_BASE32, value, out + 1);
}

/*
 * snowflake_public_text_decode
 *		The key id and public ID a public text spells after the prefix: 14
 *		Crockford base32 digits, read as the base32 form reads its 13
 *		(either case, the aliases, hyphens skipped), the first the key id.
 *		The checks and their order are the base32 form's; *ndigits counts
 *		the key id's digit too.
 */
SnowflakeTextStatus
snowflake_public_text_decode(const char *text, size_t len, const char *prefix,
							 size_t prefix_len, int *key_id, int64 *value,
							 size_t *where, int *ndigits)
{
	const uint8 *map;
	SnowflakeTextStatus status;
	size_t		i;

	if (unlikely(!sf_maps_ready))
		sf_build_maps();
	map = sf_maps[SNOWFLAKE_BASE32];
	status = sf_match_prefix(text, len, prefix, prefix_len, where);
	if (status != SNOWFLAKE_TEXT_OK)
		return status;
	for (i = prefix_len; i < len && map[(unsigned char) text[i]] == SF_HYPHEN; i++)
		;
	if (i == len)
	{
		*ndigits = 0;
		return SNOWFLAKE_TEXT_TOO_SHORT;
	}
	if (map[(unsigned char) text[i]] >= 32)
	{
		*where = i;
		return SNOWFLAKE_TEXT_BAD_DIGIT;
	}
	*key_id = map[(unsigned char) text[i]];
	status = sf_decode_digits(map, 32, 13, text, i + 1, len, value, where,
							  ndigits);
	if (status == SNOWFLAKE_TEXT_TOO_SHORT)
		(*ndigits)++;
	return status;
}

/*
 * snowflake_prefix_check
 *		Whether a prefix is allowed: at most SNOWFLAKE_PREFIX_MAX bytes, each
 *		an ASCII letter or digit, "_", "-", "." or "~" (the characters a URL
 *		carries unescaped, RFC 3986).  When it is not, *where is the offset of
 *		the first byte that is not allowed, or len when it is too long.
 */
bool
snowflake_prefix_check(const char *prefix, size_t len, size_t *where)
{
	for (size_t i = 0; i < len; i++)
	{
		char		c = prefix[i];

		if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			  (c >= '0' && c <= '9') || c == '_' || c == '-' || c == '.' ||
			  c == '~'))
		{
			*where = i;
			return false;
		}
	}
	*where = len;
	return len <= SNOWFLAKE_PREFIX_MAX;
}
