/*-------------------------------------------------------------------------
 *
 * textform.h
 *	  Text forms of snowflake IDs: pure encoding and decoding arithmetic.
 *
 * Five forms, each a fixed alphabet and a rule for the width:
 *
 *	form	alphabet (digit values 0 up)			width	case on input
 *	base32	Crockford: 0-9 A-Z less I L O U			13		any; I L -> 1, O -> 0,
 *																hyphens ignored
 *	base62	0-9 A-Z a-z								11		exact
 *	base58	Bitcoin: 1-9 A-Z a-z less 0 I O l		1-11	exact
 *	base36	0-9 a-z									1-13	any
 *	hex		0-9 a-f									16		any
 *
 * The fixed-width forms are left-padded with the zero digit, so that for
 * IDs (0 to 2^63 - 1) comparing two texts byte by byte compares the
 * numbers; the others are written without leading zeros (0 is one zero
 * digit) and are accepted only so.  Encoders write upper case for base32
 * (Crockford's rule) and lower case for base36 and hex.
 *
 * Nothing here touches PostgreSQL state (no palloc, no ereport): decoding
 * reports what is wrong and where, as a byte offset into the text, and the
 * caller words the error.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_TEXTFORM_H
#define SNOWFLAKE_TEXTFORM_H

#include "layout.h"

typedef enum SnowflakeTextForm
{
	SNOWFLAKE_BASE32,
	SNOWFLAKE_BASE62,
	SNOWFLAKE_BASE58,
	SNOWFLAKE_BASE36,
	SNOWFLAKE_HEX
} SnowflakeTextForm;

/* Most digits any form writes for an ID (hex: 16). */
#define SNOWFLAKE_TEXT_MAX_DIGITS	16

/* Longest prefix, in bytes (TypeID's limit). */
#define SNOWFLAKE_PREFIX_MAX		63

/*
 * What decoding found, in the order it is checked: the first applicable
 * one is reported.
 */
typedef enum SnowflakeTextStatus
{
	SNOWFLAKE_TEXT_OK,
	SNOWFLAKE_TEXT_BAD_PREFIX,	/* byte *where differs from the prefix */
	SNOWFLAKE_TEXT_SHORT_PREFIX,	/* the text ends inside the prefix */
	SNOWFLAKE_TEXT_BAD_DIGIT,	/* byte *where is not a digit of the form */
	SNOWFLAKE_TEXT_TOO_LONG,	/* byte *where is a digit past the width */
	SNOWFLAKE_TEXT_TOO_SHORT,	/* fewer digits than the width, or none */
	SNOWFLAKE_TEXT_LEADING_ZERO,	/* byte *where is a leading zero digit */
	SNOWFLAKE_TEXT_OUT_OF_RANGE /* the digits spell more than 2^63 - 1 */
} SnowflakeTextStatus;

/* A form's name ("base32"), its width (0: not fixed) and largest text. */
extern SNOWFLAKE_INTERNAL const char *snowflake_text_form_name(SnowflakeTextForm form);
extern SNOWFLAKE_INTERNAL int snowflake_text_form_width(SnowflakeTextForm form);

extern SNOWFLAKE_INTERNAL int snowflake_text_encode(SnowflakeTextForm form, uint64 id,
													char *out);
extern SNOWFLAKE_INTERNAL SnowflakeTextStatus snowflake_text_decode(SnowflakeTextForm form,
																	const char *text,
																	size_t len,
																	const char *prefix,
																	size_t prefix_len,
																	int64 *id,
																	size_t *where,
																	int *ndigits);
/*
 * The public text form of public IDs (publicid.c, docs/public-ids.md): after
 * the prefix, 14 Crockford base32 digits, the key id's (0 to 31) then the
 * 13 of the public ID, decoded as the base32 form decodes.
 */
#define SNOWFLAKE_PUBLIC_TEXT_DIGITS	14

extern SNOWFLAKE_INTERNAL int snowflake_public_text_encode(int key_id, uint64 value,
														   char *out);
extern SNOWFLAKE_INTERNAL SnowflakeTextStatus snowflake_public_text_decode(const char *text,
																		   size_t len,
																		   const char *prefix,
																		   size_t prefix_len,
																		   int *key_id,
																		   int64 *value,
																		   size_t *where,
																		   int *ndigits);
extern SNOWFLAKE_INTERNAL bool snowflake_prefix_check(const char *prefix, size_t len,
													  size_t *where);

#endif							/* SNOWFLAKE_TEXTFORM_H */
