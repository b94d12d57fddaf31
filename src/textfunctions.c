/*-------------------------------------------------------------------------
 *
 * textfunctions.c
 *	  The SQL-callable text forms of IDs: snowflake_to_<form>(id [, prefix])
 *	  and snowflake_from_<form>(text [, prefix]) for base32, base62, base58,
 *	  base36 and hex.
 *
 * One pair of functions per form, rather than one pair taking the form as
 * an argument: a call does no argument parsing and no lookup, the name
 * says what the text looks like (in an index expression, a generated
 * column, a query), and each function's errors name its form.  The same C
 * function serves the calls with and without a prefix (PG_NARGS()).
 *
 * The arithmetic is textform.c's; here are the arguments, the result's
 * memory and the errors: 22P02 for text that is not an ID of the form
 * (naming the first offending character and its position, counted in
 * characters from 1 over the whole text, prefix included), 22003 for a
 * negative ID or text spelling a value above 2^63 - 1, 22023 for a prefix
 * that is not allowed.  A message quotes at most the first
 * SNOWFLAKE_QUOTE_CHARS characters of the text or prefix, followed by
 * "..." when there are more (snowflake_input_excerpt); the positions count
 * over the whole text.  No lock, no shared state: every function is
 * IMMUTABLE, STRICT and PARALLEL SAFE.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "utils/builtins.h"

#include "compat.h"
#include "config.h"
#include "textform.h"
#include "textfunctions.h"

PG_FUNCTION_INFO_V1(snowflake_to_base32);
PG_FUNCTION_INFO_V1(snowflake_from_base32);
PG_FUNCTION_INFO_V1(snowflake_to_base62);
PG_FUNCTION_INFO_V1(snowflake_from_base62);
PG_FUNCTION_INFO_V1(snowflake_to_base58);
PG_FUNCTION_INFO_V1(snowflake_from_base58);
PG_FUNCTION_INFO_V1(snowflake_to_base36);
PG_FUNCTION_INFO_V1(snowflake_from_base36);
PG_FUNCTION_INFO_V1(snowflake_to_hex);
PG_FUNCTION_INFO_V1(snowflake_from_hex);

/* How the error details name each form's digits. */
static const char *const sf_digit_names[] = {
	[SNOWFLAKE_BASE32] = "Crockford base32",
	[SNOWFLAKE_BASE62] = "base62",
	[SNOWFLAKE_BASE58] = "base58",
	[SNOWFLAKE_BASE36] = "base36",
	[SNOWFLAKE_HEX] = "hexadecimal",
};

/* Position (from 1, in characters) and the character at byte offset off. */
static int
sf_position(const char *s, size_t off)
{
	return pg_mbstrlen_with_len(s, (int) off) + 1;
}

static char *
sf_char_at(const char *s, size_t off)
{
	return pnstrdup(s + off, pg_mblen(s + off));
}

/*
 * snowflake_text_prefix_arg
 *		The prefix argument, checked: 22023 when it is not allowed (also for
 *		the public text form, publicid.c).
 */
void
snowflake_text_prefix_arg(FunctionCallInfo fcinfo, int argno,
						  const char **prefix, size_t *len)
{
	text	   *t;
	size_t		where;

	*prefix = NULL;
	*len = 0;
	if (PG_NARGS() <= argno)
		return;
	t = PG_GETARG_TEXT_PP(argno);
	*prefix = VARDATA_ANY(t);
	*len = VARSIZE_ANY_EXHDR(t);
	if (likely(snowflake_prefix_check(*prefix, *len, &where)))
		return;

	if (where < *len)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowflake ID prefix \"%s\"",
						snowflake_input_excerpt(*prefix, *len)),
				 errdetail("Character \"%s\" at position %d is not allowed in a prefix, which takes ASCII letters and digits, \"_\", \"-\", \".\" and \"~\".",
						   sf_char_at(*prefix, where),
						   sf_position(*prefix, where))));
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("invalid snowflake ID prefix \"%s\"",
					snowflake_input_excerpt(*prefix, *len)),
			 errdetail("A prefix has at most %d characters; this one has %d.",
					   SNOWFLAKE_PREFIX_MAX, (int) *len)));
}

/*
 * sf_to_text
 *		The text form of the ID in argument 0, after the prefix in argument
 *		1 if there is one.
 */
static pg_attribute_always_inline Datum
sf_to_text(FunctionCallInfo fcinfo, SnowflakeTextForm form)
{
	int64		id = PG_GETARG_INT64(0);
	const char *prefix;
	size_t		prefix_len;
	text	   *result;
	int			n;

	if (unlikely(id < 0))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("value %lld is out of range for a snowflake ID",
						(long long) id),
				 errdetail("Snowflake IDs are between 0 and %lld.",
						   (long long) PG_INT64_MAX)));
	snowflake_text_prefix_arg(fcinfo, 1, &prefix, &prefix_len);

	result = (text *) palloc(VARHDRSZ + prefix_len + SNOWFLAKE_TEXT_MAX_DIGITS);
	if (prefix_len > 0)
		memcpy(VARDATA(result), prefix, prefix_len);
	n = snowflake_text_encode(form, (uint64) id, VARDATA(result) + prefix_len);
	SET_VARSIZE(result, VARHDRSZ + prefix_len + n);
	PG_RETURN_TEXT_P(result);
}

/*
 * snowflake_text_syntax_detail
 *		errdetail for text that is not an ID of a form (22P02): the form's
 *		name, its width (0: not fixed) and what its digits are called
 *		("Crockford base32"); also for the public text form (publicid.c).
 */
int
snowflake_text_syntax_detail(const char *name, int width,
							 const char *digit_name,
							 SnowflakeTextStatus status, const char *s,
							 size_t where, int ndigits, const char *prefix)
{
	switch (status)
	{
		case SNOWFLAKE_TEXT_BAD_PREFIX:
			return errdetail("Character \"%s\" at position %d does not match the prefix \"%s\".",
							 sf_char_at(s, where), sf_position(s, where), prefix);
		case SNOWFLAKE_TEXT_SHORT_PREFIX:
			return errdetail("The text ends after %d characters, inside the prefix \"%s\".",
							 sf_position(s, where) - 1, prefix);
		case SNOWFLAKE_TEXT_BAD_DIGIT:
			return errdetail("Character \"%s\" at position %d is not a %s digit.",
							 sf_char_at(s, where), sf_position(s, where),
							 digit_name);
		case SNOWFLAKE_TEXT_TOO_LONG:
			return errdetail("Character \"%s\" at position %d is one digit too many: a %s snowflake ID has %d digits.",
							 sf_char_at(s, where), sf_position(s, where),
							 name, width);
		case SNOWFLAKE_TEXT_TOO_SHORT:
			if (width == 0)
				return errdetail("The text has no digits; a %s snowflake ID has at least one.",
								 name);
			return errdetail("The text has %d digits; a %s snowflake ID has %d.",
							 ndigits, name, width);
		case SNOWFLAKE_TEXT_LEADING_ZERO:
			return errdetail("Character \"%s\" at position %d is a leading zero, which %s snowflake IDs are written without.",
							 sf_char_at(s, where), sf_position(s, where), name);
		case SNOWFLAKE_TEXT_OK:
		case SNOWFLAKE_TEXT_OUT_OF_RANGE:
			break;
	}
	elog(ERROR, "unexpected text form status %d", (int) status);
	return 0;
}

/*
 * sf_text_error
 *		Raise the error for text that did not decode.
 */
static void
sf_text_error(SnowflakeTextForm form, SnowflakeTextStatus status,
			  text *t, size_t where, int ndigits, const char *prefix,
			  size_t prefix_len)
{
	const char *name = snowflake_text_form_name(form);
	const char *s = VARDATA_ANY(t);
	char	   *quoted = snowflake_input_excerpt(s, VARSIZE_ANY_EXHDR(t));
	char	   *p = pnstrdup(prefix ? prefix : "", prefix_len);

	if (status == SNOWFLAKE_TEXT_OUT_OF_RANGE)
	{
		char		largest[SNOWFLAKE_TEXT_MAX_DIGITS + 1];
		int			n = snowflake_text_encode(form, (uint64) PG_INT64_MAX, largest);

		largest[n] = '\0';
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("%s value \"%s\" is out of range for a snowflake ID",
						name, quoted),
				 errdetail("The largest snowflake ID is %lld, in %s \"%s\".",
						   (long long) PG_INT64_MAX, name, largest)));
	}
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_TEXT_REPRESENTATION),
			 errmsg("invalid input syntax for a %s snowflake ID: \"%s\"",
					name, quoted),
			 snowflake_text_syntax_detail(name, snowflake_text_form_width(form),
										  sf_digit_names[form], status, s,
										  where, ndigits, p)));
}

/*
 * sf_from_text
 *		The ID that the text in argument 0 spells, after the prefix in
 *		argument 1 if there is one.
 */
static pg_attribute_always_inline Datum
sf_from_text(FunctionCallInfo fcinfo, SnowflakeTextForm form)
{
	text	   *t = PG_GETARG_TEXT_PP(0);
	const char *prefix;
	size_t		prefix_len;
	int64		id = 0;
	size_t		where = 0;
	int			ndigits = 0;
	SnowflakeTextStatus status;

	snowflake_text_prefix_arg(fcinfo, 1, &prefix, &prefix_len);
	status = snowflake_text_decode(form, VARDATA_ANY(t), VARSIZE_ANY_EXHDR(t),
								   prefix, prefix_len, &id, &where, &ndigits);
	if (unlikely(status != SNOWFLAKE_TEXT_OK))
		sf_text_error(form, status, t, where, ndigits, prefix, prefix_len);
	PG_RETURN_INT64(id);
}

Datum
snowflake_to_base32(PG_FUNCTION_ARGS)
{
	return sf_to_text(fcinfo, SNOWFLAKE_BASE32);
}

Datum
snowflake_from_base32(PG_FUNCTION_ARGS)
{
	return sf_from_text(fcinfo, SNOWFLAKE_BASE32);
}

Datum
snowflake_to_base62(PG_FUNCTION_ARGS)
{
	return sf_to_text(fcinfo, SNOWFLAKE_BASE62);
}

Datum
snowflake_from_base62(PG_FUNCTION_ARGS)
{
	return sf_from_text(fcinfo, SNOWFLAKE_BASE62);
}

Datum
snowflake_to_base58(PG_FUNCTION_ARGS)
{
	return sf_to_text(fcinfo, SNOWFLAKE_BASE58);
}

Datum
snowflake_from_base58(PG_FUNCTION_ARGS)
{
	return sf_from_text(fcinfo, SNOWFLAKE_BASE58);
}

Datum
snowflake_to_base36(PG_FUNCTION_ARGS)
{
	return sf_to_text(fcinfo, SNOWFLAKE_BASE36);
}

Datum
snowflake_from_base36(PG_FUNCTION_ARGS)
{
	return sf_from_text(fcinfo, SNOWFLAKE_BASE36);
}

Datum
snowflake_to_hex(PG_FUNCTION_ARGS)
{
	return sf_to_text(fcinfo, SNOWFLAKE_HEX);
}

Datum
snowflake_from_hex(PG_FUNCTION_ARGS)
{
	return sf_from_text(fcinfo, SNOWFLAKE_HEX);
}
