/*-------------------------------------------------------------------------
 *
 * textform_target.h
 *	  The body of the text forms' fuzz targets (textform_<form>.c define
 *	  FUZZ_FORM and include it): src/textform.c's decoder and encoder of
 *	  one form, with and without a prefix, against the rules of
 *	  docs/text-forms.md written again here.
 *
 * The input: a byte that says whether a prefix follows and how long it is
 * (high bit set: the low 7 bits are its length, up to 127, beyond the 63
 * allowed), the prefix, 16 bytes of two IDs for the encoder, and the text.
 * Properties:
 *	- the prefix is refused (22023) exactly when the rules refuse it, at
 *	  the offset they name;
 *	- the text decodes, or is refused with the status, offset and number
 *	  of digits the rules give, in their order (documented SQLSTATE: 22P02,
 *	  or 22003 for a value above 2^63 - 1), to the ID its digits spell;
 *	- a decoded text re-encodes to itself in its canonical spelling
 *	  (base32 in upper case with its aliases resolved and no hyphens,
 *	  base36 and hex in lower case);
 *	- an ID encodes to digits of the form (the width, or no leading zero)
 *	  that decode, after the prefix, to it again, and two IDs' fixed-width
 *	  texts compare byte by byte as the IDs do.
 *
 * Test only: never part of the extension.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "textform.h"

#include "fuzz.h"

/* The rules' alphabets and widths, from docs/text-forms.md. */
static const char *const oracle_alphabet[] = {
	[SNOWFLAKE_BASE32] = "0123456789ABCDEFGHJKMNPQRSTVWXYZ",
	[SNOWFLAKE_BASE62] = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz",
	[SNOWFLAKE_BASE58] = "123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz",
	[SNOWFLAKE_BASE36] = "0123456789abcdefghijklmnopqrstuvwxyz",
	[SNOWFLAKE_HEX] = "0123456789abcdef",
};
static const int oracle_width[] = {
	[SNOWFLAKE_BASE32] = 13, [SNOWFLAKE_BASE62] = 11, [SNOWFLAKE_BASE58] = 0,
	[SNOWFLAKE_BASE36] = 0, [SNOWFLAKE_HEX] = 16,
};

/* The SQLSTATE the SQL functions give for each status (textfunctions.c). */
static const char *
oracle_sqlstate(SnowflakeTextStatus s)
{
	if (s == SNOWFLAKE_TEXT_OK)
		return "none";
	return s == SNOWFLAKE_TEXT_OUT_OF_RANGE ? "22003" : "22P02";
}

/* The character as the rules spell it (canonical), or 0: not a digit. */
static char
oracle_canonical(SnowflakeTextForm form, unsigned char c)
{
	if (form == SNOWFLAKE_BASE32)
	{
		c = (unsigned char) toupper(c < 0x80 ? c : 0);
		if (c == 'I' || c == 'L')
			c = '1';
		else if (c == 'O')
			c = '0';
	}
	else if (form == SNOWFLAKE_BASE36 || form == SNOWFLAKE_HEX)
		c = (unsigned char) tolower(c < 0x80 ? c : 0);
	if (c == 0 || strchr(oracle_alphabet[form], c) == NULL)
		return 0;
	return (char) c;
}

typedef struct OracleResult
{
	SnowflakeTextStatus status;
	size_t		where;
	int			ndigits;
	int64		id;
	char		canonical[SNOWFLAKE_TEXT_MAX_DIGITS + 1];
} OracleResult;

/* The rules of decoding, in their order (docs/text-forms.md). */
static void
oracle_decode(SnowflakeTextForm form, const char *text, size_t len,
			  const char *prefix, size_t plen, OracleResult *r)
{
	int			width = oracle_width[form];
	int			base = (int) strlen(oracle_alphabet[form]);
	size_t		first = 0;
	unsigned __int128 v = 0;

	memset(r, 0, sizeof(*r));
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
		char		c;

		if (form == SNOWFLAKE_BASE32 && text[i] == '-')
			continue;
		c = oracle_canonical(form, (unsigned char) text[i]);
		if (c == 0 || (width > 0 && r->ndigits == width))
		{
			r->status = c == 0 ? SNOWFLAKE_TEXT_BAD_DIGIT : SNOWFLAKE_TEXT_TOO_LONG;
			r->where = i;
			return;
		}
		if (r->ndigits == 0)
			first = i;
		if (r->ndigits < SNOWFLAKE_TEXT_MAX_DIGITS)
			r->canonical[r->ndigits] = c;
		r->ndigits++;
		v = v * base + (strchr(oracle_alphabet[form], c) - oracle_alphabet[form]);
		if (v > ((unsigned __int128) 1 << 64))
			v = (unsigned __int128) 1 << 64;	/* saturate: too large anyway */
	}
	if (r->ndigits == 0 || r->ndigits < width)
		r->status = SNOWFLAKE_TEXT_TOO_SHORT;
	else if (width == 0 && r->ndigits > 1 && r->canonical[0] == oracle_alphabet[form][0])
	{
		r->status = SNOWFLAKE_TEXT_LEADING_ZERO;
		r->where = first;
	}
	else if (v > (unsigned __int128) PG_INT64_MAX)
		r->status = SNOWFLAKE_TEXT_OUT_OF_RANGE;
	else
		r->id = (int64) v;
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

/* Encode id after the prefix and check the text, then decode it back. */
static void
check_encode(SnowflakeTextForm form, uint64 id, const char *prefix, size_t plen,
			 char *out)
{
	int			width = oracle_width[form];
	int			n = snowflake_text_encode(form, id, out + plen);
	int64		back = -1;
	size_t		where = 0;
	int			ndigits = 0;
	SnowflakeTextStatus s;

	FUZZ_CHECK(n >= 1 && n <= SNOWFLAKE_TEXT_MAX_DIGITS && (width == 0 || n == width),
			   "%s encoded %llu in %d digits", snowflake_text_form_name(form),
			   (unsigned long long) id, n);
	for (int i = 0; i < n; i++)
		FUZZ_CHECK(strchr(oracle_alphabet[form], out[plen + i]) != NULL && out[plen + i] != 0,
				   "%s wrote a character outside its alphabet", snowflake_text_form_name(form));
	FUZZ_CHECK(width > 0 || n == 1 || out[plen] != oracle_alphabet[form][0],
			   "%s wrote a leading zero for %llu", snowflake_text_form_name(form),
			   (unsigned long long) id);
	memcpy(out, prefix, plen);
	s = snowflake_text_decode(form, out, plen + n, prefix, plen, &back, &where, &ndigits);
	FUZZ_CHECK(s == SNOWFLAKE_TEXT_OK && back == (int64) id,
			   "%s: %llu encoded to \"%.*s\", which decodes to status %d, %lld",
			   snowflake_text_form_name(form), (unsigned long long) id,
			   (int) (plen + n), out, (int) s, (long long) back);
}

/* Fixed-width texts compare as their IDs, byte by byte. */
static void
check_order(SnowflakeTextForm form, uint64 a, uint64 b)
{
	char		ta[SNOWFLAKE_TEXT_MAX_DIGITS];
	char		tb[SNOWFLAKE_TEXT_MAX_DIGITS];
	int			cmp;

	if (oracle_width[form] == 0)
		return;
	snowflake_text_encode(form, a, ta);
	snowflake_text_encode(form, b, tb);
	cmp = memcmp(ta, tb, oracle_width[form]);
	FUZZ_CHECK((cmp < 0) == (a < b) && (cmp == 0) == (a == b),
			   "%s texts of %llu and %llu compare as %d", snowflake_text_form_name(form),
			   (unsigned long long) a, (unsigned long long) b, cmp);
}

/* Decode the text and compare everything with the rules. */
static void
check_decode(SnowflakeTextForm form, const char *text, size_t len,
			 const char *prefix, size_t plen)
{
	OracleResult r;
	int64		id = -1;
	size_t		where = (size_t) -1;
	int			ndigits = -1;
	SnowflakeTextStatus s;

	s = snowflake_text_decode(form, text, len, prefix, plen, &id, &where, &ndigits);
	oracle_decode(form, text, len, prefix, plen, &r);
	FUZZ_CHECK(s == r.status,
			   "%s: \"%.*s\" (prefix \"%.*s\") gave status %d (SQLSTATE %s), the rules %d (SQLSTATE %s)",
			   snowflake_text_form_name(form), (int) len, text, (int) plen, prefix,
			   (int) s, oracle_sqlstate(s), (int) r.status, oracle_sqlstate(r.status));
	if (s == SNOWFLAKE_TEXT_BAD_PREFIX || s == SNOWFLAKE_TEXT_SHORT_PREFIX ||
		s == SNOWFLAKE_TEXT_BAD_DIGIT || s == SNOWFLAKE_TEXT_TOO_LONG ||
		s == SNOWFLAKE_TEXT_LEADING_ZERO)
		FUZZ_CHECK(where == r.where, "status %d at offset %zu, the rules say %zu",
				   (int) s, where, r.where);
	if (s == SNOWFLAKE_TEXT_TOO_SHORT)
		FUZZ_CHECK(ndigits == r.ndigits, "%d digits counted, the rules say %d",
				   ndigits, r.ndigits);
	if (s == SNOWFLAKE_TEXT_OK)
	{
		char		again[SNOWFLAKE_TEXT_MAX_DIGITS];
		int			n;

		FUZZ_CHECK(id == r.id && id >= 0, "decoded %lld, the digits spell %lld",
				   (long long) id, (long long) r.id);
		n = snowflake_text_encode(form, (uint64) id, again);
		FUZZ_CHECK(n == r.ndigits && memcmp(again, r.canonical, n) == 0,
				   "%s: \"%.*s\" decodes to %lld, which encodes to \"%.*s\", not its canonical spelling \"%.*s\"",
				   snowflake_text_form_name(form), (int) len, text, (long long) id,
				   n, again, r.ndigits, r.canonical);
	}
}

int
LLVMFuzzerTestOneInput(const uint8 *data, size_t size)
{
	SnowflakeTextForm form = FUZZ_FORM;
	uint8		head = (uint8) fuzz_take(&data, &size, 1);
	size_t		plen = (head & 0x80) ? Min((size_t) (head & 0x7F), size) : 0;
	char	   *prefix = malloc(plen + 1);
	char	   *text;
	char	   *out;
	size_t		where = (size_t) -1;
	size_t		owhere;
	bool		ok;
	bool		oracle_ok;
	uint64		a;
	uint64		b;

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

	a = fuzz_take(&data, &size, 8) & (uint64) PG_INT64_MAX;
	b = fuzz_take(&data, &size, 8) & (uint64) PG_INT64_MAX;
	out = malloc(plen + SNOWFLAKE_TEXT_MAX_DIGITS);
	check_encode(form, a, prefix, plen, out);
	check_encode(form, b, prefix, plen, out);
	check_order(form, a, b);
	free(out);

	/* The text in memory of its own: a read past it is seen. */
	text = malloc(size);
	memcpy(text, data, size);
	check_decode(form, text, size, prefix, plen);
	free(text);
	free(prefix);
	return 0;
}
