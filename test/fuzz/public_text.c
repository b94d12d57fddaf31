/*-------------------------------------------------------------------------
 *
 * public_text.c
 *	  Fuzz target: the public text of public IDs, its decoder and encoder
 *	  (snowflake_public_text_decode, snowflake_public_text_encode and
 *	  snowflake_prefix_check, src/textform.c, which
 *	  snowflake_from_public_base32() and snowflake_to_public_base32() call,
 *	  src/publicid.c), with and without a prefix.
 *
 * The input: a byte that says whether a prefix follows and how long it is
 * (high bit set: the low 7 bits are its length, up to 127, beyond the 63
 * allowed), the prefix, a byte and 8 bytes of a key id and a public ID for
 * the encoder, and the text.  The target knows the form from its
 * documentation (docs/public-ids.md: the prefix, then 14 Crockford base32
 * digits, the key id's then the public ID's 13, read as the base32 text
 * form reads, docs/text-forms.md), not from the code under test.
 * Properties:
 *	- the prefix is refused (22023) exactly when the rules refuse it, at
 *	  the offset they name;
 *	- the text decodes, or is refused with the status, offset and number
 *	  of digits the rules give, in their order (the text not starting with
 *	  the prefix; a character that is not a digit, or a digit past the
 *	  14th; fewer than 14 digits; 13 digits of the public ID above
 *	  2^63 - 1: 22P02, 22003 for the last), to the key id and public ID its
 *	  digits spell;
 *	- a decoded text encodes again to its canonical spelling (upper case,
 *	  the aliases read, no hyphens);
 *	- any key id (0 to 31) and public ID (0 to 2^63 - 1) encode to 14
 *	  digits of the alphabet that decode, after the prefix, to them again.
 *
 * Test only: never part of the extension.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "textform.h"

#include "fuzz.h"

static const char alphabet[] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ";

/* A character's value as a Crockford base32 digit, or -1. */
static int
oracle_digit(unsigned char c)
{
	const char *at;

	if (c >= 0x80)
		return -1;
	c = (unsigned char) toupper(c);
	if (c == 'I' || c == 'L')
		c = '1';
	else if (c == 'O')
		c = '0';
	if (c == 0 || (at = strchr(alphabet, c)) == NULL)
		return -1;
	return (int) (at - alphabet);
}

typedef struct OracleResult
{
	SnowflakeTextStatus status;
	size_t		where;
	int			ndigits;
	int			key_id;
	int64		value;
	char		canonical[SNOWFLAKE_PUBLIC_TEXT_DIGITS];
} OracleResult;

/* What the rules say of the text after the prefix. */
static void
oracle_decode(const char *text, size_t len, const char *prefix, size_t plen, OracleResult *r)
{
	uint64		v = 0;

	memset(r, 0, sizeof(*r));
	r->status = SNOWFLAKE_TEXT_OK;
	for (size_t i = 0; i < plen; i++)
	{
		if (i >= len || text[i] != prefix[i])
		{
			r->status = i >= len ? SNOWFLAKE_TEXT_SHORT_PREFIX : SNOWFLAKE_TEXT_BAD_PREFIX;
			r->where = i;
			return;
		}
	}
	for (size_t i = plen; i < len; i++)
	{
		int			d;

		if (text[i] == '-')
			continue;
		d = oracle_digit((unsigned char) text[i]);
		if (d < 0 || r->ndigits == SNOWFLAKE_PUBLIC_TEXT_DIGITS)
		{
			r->status = d < 0 ? SNOWFLAKE_TEXT_BAD_DIGIT : SNOWFLAKE_TEXT_TOO_LONG;
			r->where = i;
			return;
		}
		r->canonical[r->ndigits] = alphabet[d];
		if (r->ndigits == 0)
			r->key_id = d;
		else if (r->ndigits == 1 && d > 7)
			v = UINT64_MAX;		/* 65 bits: the first digit holds at most 3 */
		else if (v != UINT64_MAX)
			v = v * 32 + (uint64) d;
		r->ndigits++;
	}
	if (r->ndigits < SNOWFLAKE_PUBLIC_TEXT_DIGITS)
		r->status = SNOWFLAKE_TEXT_TOO_SHORT;
	else if (v > (uint64) PG_INT64_MAX)
		r->status = SNOWFLAKE_TEXT_OUT_OF_RANGE;
	else
		r->value = (int64) v;
}

/* The prefix rule: at most 63 bytes of [A-Za-z0-9_.~-]. */
static bool
oracle_prefix(const char *p, size_t len, size_t *where)
{
	*where = strspn(p, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.~");
	if (*where > len)
		*where = len;
	return *where == len && len <= SNOWFLAKE_PREFIX_MAX;
}

static void
check_encode(int key_id, uint64 value, const char *prefix, size_t plen)
{
	char	   *out = malloc(plen + SNOWFLAKE_PUBLIC_TEXT_DIGITS);
	int			n = snowflake_public_text_encode(key_id, value, out + plen);
	int			back_key = -1;
	int64		back = -1;
	size_t		where = 0;
	int			ndigits = 0;
	SnowflakeTextStatus s;

	FUZZ_CHECK(n == SNOWFLAKE_PUBLIC_TEXT_DIGITS, "key %d, %llu encoded in %d digits",
			   key_id, (unsigned long long) value, n);
	for (int i = 0; i < n; i++)
		FUZZ_CHECK(out[plen + i] != 0 && strchr(alphabet, out[plen + i]) != NULL,
				   "a character outside the alphabet");
	FUZZ_CHECK(out[plen] == alphabet[key_id], "the key id's digit is %c", out[plen]);
	memcpy(out, prefix, plen);
	s = snowflake_public_text_decode(out, plen + n, prefix, plen, &back_key, &back, &where, &ndigits);
	FUZZ_CHECK(s == SNOWFLAKE_TEXT_OK && back_key == key_id && back == (int64) value,
			   "key %d, %llu encoded to \"%.*s\", which decodes to status %d, key %d, %lld",
			   key_id, (unsigned long long) value, (int) (plen + n), out, (int) s, back_key,
			   (long long) back);
	free(out);
}

static void
check_decode(const char *text, size_t len, const char *prefix, size_t plen)
{
	OracleResult r;
	int			key_id = -1;
	int64		value = -1;
	size_t		where = (size_t) -1;
	int			ndigits = -1;
	SnowflakeTextStatus s;

	s = snowflake_public_text_decode(text, len, prefix, plen, &key_id, &value, &where, &ndigits);
	oracle_decode(text, len, prefix, plen, &r);
	FUZZ_CHECK(s == r.status, "\"%.*s\" (prefix \"%.*s\") gave status %d, the rules %d",
			   (int) len, text, (int) plen, prefix, (int) s, (int) r.status);
	if (s == SNOWFLAKE_TEXT_BAD_PREFIX || s == SNOWFLAKE_TEXT_SHORT_PREFIX ||
		s == SNOWFLAKE_TEXT_BAD_DIGIT || s == SNOWFLAKE_TEXT_TOO_LONG)
		FUZZ_CHECK(where == r.where, "status %d at offset %zu, the rules say %zu", (int) s, where, r.where);
	if (s == SNOWFLAKE_TEXT_TOO_SHORT)
		FUZZ_CHECK(ndigits == r.ndigits, "%d digits counted, the rules say %d", ndigits, r.ndigits);
	if (s == SNOWFLAKE_TEXT_OK)
	{
		char		again[SNOWFLAKE_PUBLIC_TEXT_DIGITS];

		FUZZ_CHECK(key_id == r.key_id && value == r.value && value >= 0,
				   "decoded key %d, %lld; the digits spell key %d, %lld",
				   key_id, (long long) value, r.key_id, (long long) r.value);
		snowflake_public_text_encode(key_id, (uint64) value, again);
		FUZZ_CHECK(memcmp(again, r.canonical, SNOWFLAKE_PUBLIC_TEXT_DIGITS) == 0,
				   "\"%.*s\" decodes to key %d, %lld, which encodes to \"%.14s\", not its canonical spelling \"%.14s\"",
				   (int) len, text, key_id, (long long) value, again, r.canonical);
	}
}

int
LLVMFuzzerTestOneInput(const uint8 *data, size_t size)
{
	uint8		head = (uint8) fuzz_take(&data, &size, 1);
	size_t		plen = (head & 0x80) ? Min((size_t) (head & 0x7F), size) : 0;
	char	   *prefix = malloc(plen + 1);
	char	   *text;
	size_t		where = (size_t) -1;
	size_t		owhere;
	bool		ok;
	bool		oracle_ok;
	int			key_id;
	uint64		value;

	memcpy(prefix, data, plen);
	prefix[plen] = '\0';
	data += plen;
	size -= plen;

	/* The prefix's own check first, as the SQL functions do (22023). */
	ok = snowflake_prefix_check(prefix, plen, &where);
	oracle_ok = oracle_prefix(prefix, plen, &owhere);
	FUZZ_CHECK(ok == oracle_ok && (ok || where == owhere),
			   "prefix \"%.*s\": allowed %d at %zu, the rules say %d at %zu",
			   (int) plen, prefix, ok, where, oracle_ok, owhere);
	if (!ok)
	{
		free(prefix);
		return 0;
	}

	key_id = (int) (fuzz_take(&data, &size, 1) & 31);
	value = fuzz_take(&data, &size, 8) & (uint64) PG_INT64_MAX;
	check_encode(key_id, value, prefix, plen);

	/* The text in memory of its own: a read past it is seen. */
	text = malloc(size ? size : 1);
	memcpy(text, data, size);
	check_decode(text, size, prefix, plen);
	free(text);
	free(prefix);
	return 0;
}
