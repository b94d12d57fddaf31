/*-------------------------------------------------------------------------
 *
 * keyfile.h
 *	  The key file of public IDs: its format, parsed without PostgreSQL
 *	  state (keyring.c reads the file and reports what is wrong).
 *
 * A text file, one key a line:
 *
 *		# comments and blank lines are ignored
 *		1 2b7e151628aed2a6abf7158809cf4f3c
 *		2 9e1f...64 hexadecimal digits... current
 *
 * Each line: the key id (0 to 31, decimal, without sign or leading
 * zeros), the AES key in hexadecimal (32, 48 or 64 digits, either case:
 * AES-128, -192 or -256), and, on at most one line, the word "current":
 * the key that new public IDs in text are made with.  Fields are separated
 * by spaces or tabs; a "#" starts a comment to the end of the line; a
 * carriage return before the newline is ignored.  A key id appears once.
 *
 * Nothing the parser reports quotes the file: a line number and what was
 * expected, so that no error or log line can show a key (or a part of
 * one, a key mistyped, or the text of another file the setting names).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_KEYFILE_H
#define SNOWFLAKE_KEYFILE_H

#include "ff1.h"

/* Key ids: 0 to 31, one Crockford base32 digit in the public text form. */
#define SNOWFLAKE_KEY_IDS			32

/* The largest key file read, in bytes. */
#define SNOWFLAKE_KEY_FILE_MAX		65536

typedef struct SnowflakeKeyFileKey
{
	bool		present;
	uint8		len;			/* 16, 24 or 32 */
	uint8		bytes[SNOWFLAKE_FF1_KEY_MAX];
} SnowflakeKeyFileKey;

/* What a key file holds; wipe it (explicit_bzero) when done. */
typedef struct SnowflakeKeyFile
{
	SnowflakeKeyFileKey keys[SNOWFLAKE_KEY_IDS];
	int			nkeys;
	int			current;		/* the current key's id, or -1 */
} SnowflakeKeyFile;

typedef enum SnowflakeKeyFileStatus
{
	SNOWFLAKE_KEY_FILE_OK,
	SNOWFLAKE_KEY_FILE_BAD_ID,	/* the first field is not a key id */
	SNOWFLAKE_KEY_FILE_NO_KEY,	/* a key id without a key */
	SNOWFLAKE_KEY_FILE_BAD_KEY, /* the key is not 32, 48 or 64 hex digits */
	SNOWFLAKE_KEY_FILE_EXTRA,	/* a field after the key other than
								 * "current", or after "current" */
	SNOWFLAKE_KEY_FILE_DUPLICATE,	/* the key id appeared on an earlier
									 * line */
	SNOWFLAKE_KEY_FILE_TWO_CURRENT, /* a second line says "current" */
	SNOWFLAKE_KEY_FILE_NUL		/* a NUL byte (not a text file) */
} SnowflakeKeyFileStatus;

/*
 * snowflake_key_file_parse
 *		Parse len bytes of a key file into *out.  On failure *line is the
 *		line (from 1) where the problem is, and *key_id the key id of a
 *		duplicate or of the second current key.
 */
extern SNOWFLAKE_INTERNAL SnowflakeKeyFileStatus snowflake_key_file_parse(const char *buf,
																		  size_t len,
																		  SnowflakeKeyFile *out,
																		  int *line,
																		  int *key_id);

#endif							/* SNOWFLAKE_KEYFILE_H */
