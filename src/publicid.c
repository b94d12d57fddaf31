/*-------------------------------------------------------------------------
 *
 * publicid.c
 *	  The SQL-callable public IDs: a keyed permutation of the 63-bit IDs,
 *	  FF1 (NIST SP 800-38G) on AES, so that a key can be shown without
 *	  telling when it was made or how many came before it
 *	  (docs/public-ids.md).
 *
 *	  snowflake_encrypt_id(id, key bytea)			 IMMUTABLE: the key given
 *	  snowflake_decrypt_id(public_id, key bytea)	 IMMUTABLE
 *	  snowflake_to_public(id, key_id)				 STABLE: a configured key
 *	  snowflake_from_public(public_id, key_id)		 STABLE
 *	  snowflake_to_public_base32(id [, prefix])	 STABLE: the current key,
 *													 its id in the text
 *	  snowflake_from_public_base32(text [, prefix]) STABLE: the key the
 *													 text names
 *
 * and snowflake_ff1_digits, the general FF1 over numeral strings, which
 * the extension's scripts do not declare: the regression tests declare it
 * themselves to run NIST's samples through the code the public IDs use.
 *
 * The arithmetic is ff1.c's, the configured keys keyring.c's and the text
 * textform.c's; here are the arguments, the errors, and the key given as
 * an argument, prepared once per call site (fn_extra) and again only when
 * another key comes: its libcrypto context is freed and the key's copy
 * wiped when the call site's memory goes (a reset callback).  No lock, no
 * shared state.  The checks come in one order, which the SQL edition
 * follows: the ID or public ID (22003), then the key or key id (22023),
 * then the configured keys (55000, the key file's errors, 22023).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "catalog/pg_type.h"
#include "fmgr.h"
#include "utils/array.h"
#include "utils/builtins.h"

#include "compat.h"
#include "config.h"
#include "ff1.h"
#include "keyring.h"
#include "textform.h"
#include "textfunctions.h"

PG_FUNCTION_INFO_V1(snowflake_encrypt_id);
PG_FUNCTION_INFO_V1(snowflake_decrypt_id);
PG_FUNCTION_INFO_V1(snowflake_to_public);
PG_FUNCTION_INFO_V1(snowflake_from_public);
PG_FUNCTION_INFO_V1(snowflake_to_public_base32);
PG_FUNCTION_INFO_V1(snowflake_from_public_base32);
PG_FUNCTION_INFO_V1(snowflake_ff1_digits);

/* A key given as an argument, prepared for its call site. */
typedef struct SfArgKey
{
	bool		ready;
	uint8		len;
	uint8		bytes[SNOWFLAKE_FF1_KEY_MAX];
	SnowflakeFF1Key key;
	MemoryContextCallback release;
} SfArgKey;

/* The call site's memory goes: free the context, wipe the key. */
static void
sf_arg_key_release(void *arg)
{
	SfArgKey   *k = (SfArgKey *) arg;

	if (k->ready)
		snowflake_ff1_key_free(&k->key);
	explicit_bzero(k->bytes, sizeof(k->bytes));
	k->ready = false;
}

/* Whether two keys are equal, in time that does not depend on where they differ. */
static bool
sf_same_key(const uint8 *a, const uint8 *b, size_t len)
{
	uint8		diff = 0;

	for (size_t k = 0; k < len; k++)
		diff |= a[k] ^ b[k];
	return diff == 0;
}

/*
 * sf_arg_key
 *		The key in argument argno, ready for FF1: 22023 unless it is 16, 24
 *		or 32 bytes.  The error never shows the key.
 */
static SnowflakeFF1Key *
sf_arg_key(FunctionCallInfo fcinfo, int argno)
{
	bytea	   *arg = PG_GETARG_BYTEA_PP(argno);
	const uint8 *bytes = (const uint8 *) VARDATA_ANY(arg);
	size_t		len = VARSIZE_ANY_EXHDR(arg);
	SfArgKey   *k = (SfArgKey *) fcinfo->flinfo->fn_extra;

	if (unlikely(len != 16 && len != 24 && len != 32))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid AES key length"),
				 errdetail("An AES key has 16, 24 or 32 bytes; this one has %d.",
						   (int) len)));
	if (likely(k != NULL && k->ready && k->len == len &&
			   sf_same_key(k->bytes, bytes, len)))
		return &k->key;

	if (k == NULL)
	{
		k = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(SfArgKey));
		k->release.func = sf_arg_key_release;
		k->release.arg = k;
		MemoryContextRegisterResetCallback(fcinfo->flinfo->fn_mcxt, &k->release);
		fcinfo->flinfo->fn_extra = k;
	}
	sf_arg_key_release(k);
	if (snowflake_ff1_key_init(&k->key, bytes, len) != SNOWFLAKE_FF1_OK)
		elog(ERROR, "could not prepare an AES key: libcrypto failed");
	memcpy(k->bytes, bytes, len);
	k->len = (uint8) len;
	k->ready = true;
	return &k->key;
}

/* 22003 for a value that is not an ID (what) or a public ID. */
static inline void
sf_check_value(int64 value, bool public_id)
{
	if (likely(value >= 0))
		return;
	if (public_id)
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("value %lld is out of range for a public snowflake ID",
						(long long) value),
				 errdetail("Public snowflake IDs are between 0 and %lld.",
						   (long long) PG_INT64_MAX)));
	ereport(ERROR,
			(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
			 errmsg("value %lld is out of range for a snowflake ID",
					(long long) value),
			 errdetail("Snowflake IDs are between 0 and %lld.",
					   (long long) PG_INT64_MAX)));
}

/* FF1 over the 63 bits of x, which is not negative; so is the result. */
static inline int64
sf_ff1(SnowflakeFF1Key *key, bool encrypt, int64 x)
{
	uint64		out;

	if (unlikely(!snowflake_ff1_id(key, encrypt, (uint64) x, &out)))
		elog(ERROR, "AES encryption failed in libcrypto");
	return (int64) out;
}

Datum
snowflake_encrypt_id(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);

	sf_check_value(id, false);
	PG_RETURN_INT64(sf_ff1(sf_arg_key(fcinfo, 1), true, id));
}

Datum
snowflake_decrypt_id(PG_FUNCTION_ARGS)
{
	int64		public_id = PG_GETARG_INT64(0);

	sf_check_value(public_id, true);
	PG_RETURN_INT64(sf_ff1(sf_arg_key(fcinfo, 1), false, public_id));
}

Datum
snowflake_to_public(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);

	sf_check_value(id, false);
	PG_RETURN_INT64(sf_ff1(snowflake_keyring_key(PG_GETARG_INT32(1)), true, id));
}

Datum
snowflake_from_public(PG_FUNCTION_ARGS)
{
	int64		public_id = PG_GETARG_INT64(0);

	sf_check_value(public_id, true);
	PG_RETURN_INT64(sf_ff1(snowflake_keyring_key(PG_GETARG_INT32(1)), false,
						   public_id));
}

/*
 * snowflake_to_public_base32
 *		The prefix (argument 1, if any), the current key's id as one
 *		Crockford base32 digit, and the 13 digits of the ID's public ID
 *		under that key.
 */
Datum
snowflake_to_public_base32(PG_FUNCTION_ARGS)
{
	int64		id = PG_GETARG_INT64(0);
	const char *prefix;
	size_t		prefix_len;
	int			key_id;
	int64		public_id;
	text	   *result;
	int			n;

	sf_check_value(id, false);
	snowflake_text_prefix_arg(fcinfo, 1, &prefix, &prefix_len);
	key_id = snowflake_keyring_current();
	public_id = sf_ff1(snowflake_keyring_key(key_id), true, id);

	result = (text *) palloc(VARHDRSZ + prefix_len + SNOWFLAKE_PUBLIC_TEXT_DIGITS);
	if (prefix_len > 0)
		memcpy(VARDATA(result), prefix, prefix_len);
	n = snowflake_public_text_encode(key_id, (uint64) public_id,
									 VARDATA(result) + prefix_len);
	SET_VARSIZE(result, VARHDRSZ + prefix_len + n);
	PG_RETURN_TEXT_P(result);
}

/*
 * sf_public_text_error
 *		Raise the error of a public text that did not decode: 22003 for
 *		digits above 2^63 - 1, else 22P02 worded as the text forms word it.
 */
static void
sf_public_text_error(SnowflakeTextStatus status, text *t, size_t where,
					 int ndigits, const char *prefix, size_t prefix_len)
{
	char	   *s = text_to_cstring(t);
	char	   *quoted = snowflake_input_excerpt(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t));

	if (status == SNOWFLAKE_TEXT_OUT_OF_RANGE)
	{
		char		largest[SNOWFLAKE_TEXT_MAX_DIGITS + 1];
		int			n = snowflake_text_encode(SNOWFLAKE_BASE32, (uint64) PG_INT64_MAX,
											  largest);

		largest[n] = '\0';
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("value \"%s\" is out of range for a public snowflake ID", quoted),
				 errdetail("After the key id, the 13 digits of a public snowflake ID spell at most \"%s\".",
						   largest)));
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid input syntax for a public snowflake ID: \"%s\"", quoted),
			 snowflake_text_syntax_detail("public", SNOWFLAKE_PUBLIC_TEXT_DIGITS,
										  "Crockford base32", status, s, where,
										  ndigits,
										  pnstrdup(prefix ? prefix : "", prefix_len))));
}

/*
 * snowflake_from_public_base32
 *		The ID that a public text names: its syntax checked as the base32
 *		form checks it, then decrypted under the key its first digit names.
 */
Datum
snowflake_from_public_base32(PG_FUNCTION_ARGS)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	const char *prefix;
	size_t		prefix_len;
	int			key_id = 0;
	int64		public_id = 0;
	size_t		where = 0;
	int			ndigits = 0;
	SnowflakeTextStatus status;

	snowflake_text_prefix_arg(fcinfo, 1, &prefix, &prefix_len);
	status = snowflake_public_text_decode(VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t),
										  prefix, prefix_len, &key_id,
										  &public_id, &where, &ndigits);
	if (unlikely(status != SNOWFLAKE_TEXT_OK))
		sf_public_text_error(status, t, where, ndigits, prefix, prefix_len);
	PG_RETURN_INT64(sf_ff1(snowflake_keyring_key(key_id), false, public_id));
}

/* The words of the general FF1's refusals (snowflake_ff1_digits). */
static const char *
sf_ff1_refusal(SnowflakeFF1Status status)
{
	switch (status)
	{
		case SNOWFLAKE_FF1_BAD_RADIX:
			return "The radix must be between 2 and 65536.";
		case SNOWFLAKE_FF1_BAD_LENGTH:
			return "A numeral string has 2 to 112 digits.";
		case SNOWFLAKE_FF1_BAD_DIGIT:
			return "Every digit must be at least 0 and below the radix.";
		case SNOWFLAKE_FF1_DOMAIN_SMALL:
			return "FF1 needs at least a million values: radix^n >= 1000000.";
		case SNOWFLAKE_FF1_DOMAIN_LARGE:
			return "This FF1 takes halves of at most 2^56 values: radix^ceil(n/2) <= 2^56.";
		default:
			return "The tweak is too long.";
	}
}

/*
 * snowflake_ff1_digits(key bytea, tweak bytea, radix int4, digits int4[],
 *						encrypt bool) RETURNS int4[]
 *		The general FF1, for the regression tests' NIST samples and their
 *		comparison with the 63-bit path; not part of the SQL interface.
 */
Datum
snowflake_ff1_digits(PG_FUNCTION_ARGS)
{
	bytea	   *tweak = PG_GETARG_BYTEA_PP(1);
	int32		radix = PG_GETARG_INT32(2);
	ArrayType  *arr = PG_GETARG_ARRAYTYPE_P(3);
	bool		encrypt = PG_GETARG_BOOL(4);
	Datum	   *elems;
	bool	   *nulls;
	int			n;
	uint16		digits[SNOWFLAKE_FF1_MAX_DIGITS];
	SnowflakeFF1Status status = SNOWFLAKE_FF1_OK;
	SnowflakeFF1Key *key = sf_arg_key(fcinfo, 0);

	deconstruct_array(arr, INT4OID, 4, true, TYPALIGN_INT, &elems, &nulls, &n);
	if (radix < 2 || radix > 65536)
		status = SNOWFLAKE_FF1_BAD_RADIX;
	else if (n < 2 || n > SNOWFLAKE_FF1_MAX_DIGITS)
		status = SNOWFLAKE_FF1_BAD_LENGTH;
	for (int k = 0; status == SNOWFLAKE_FF1_OK && k < n; k++)
	{
		if (nulls[k] || DatumGetInt32(elems[k]) < 0 ||
			DatumGetInt32(elems[k]) >= radix)
			status = SNOWFLAKE_FF1_BAD_DIGIT;
		else
			digits[k] = (uint16) DatumGetInt32(elems[k]);
	}
	if (status == SNOWFLAKE_FF1_OK)
		status = snowflake_ff1(key, encrypt, (uint32) radix,
							   (const uint8 *) VARDATA_ANY(tweak),
							   VARSIZE_ANY_EXHDR(tweak), digits, n, digits);
	if (status == SNOWFLAKE_FF1_CRYPTO_FAILED)
		elog(ERROR, "AES encryption failed in libcrypto");
	if (status != SNOWFLAKE_FF1_OK)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("FF1 does not take this input"),
				 errdetail("%s", sf_ff1_refusal(status))));
	for (int k = 0; k < n; k++)
		elems[k] = Int32GetDatum(digits[k]);
	PG_RETURN_ARRAYTYPE_P(construct_array(elems, n, INT4OID, 4, true, TYPALIGN_INT));
}
