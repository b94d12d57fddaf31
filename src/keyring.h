/*-------------------------------------------------------------------------
 *
 * keyring.h
 *	  The configured keys of public IDs (keyring.c): the setting
 *	  snowflake.public_keys_file, the key file read and checked, and each
 *	  key prepared for FF1, once per backend and again when the file or the
 *	  setting changes.
 *
 * Backend-local: no shared memory, no lock.  The keys live in this
 * backend's memory (libcrypto's contexts), checked against the file at
 * most once per statement.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_KEYRING_H
#define SNOWFLAKE_KEYRING_H

#include "ff1.h"

/* Define the setting; called from _PG_init, preloaded or not. */
extern SNOWFLAKE_INTERNAL void snowflake_keyring_init(void);

/*
 * snowflake_keyring_key
 *		The configured key key_id, ready for FF1.  Raises 22023 for a key id
 *		out of range or not configured, and the key file's errors (55000
 *		when no file is set, its open or read errors, F0000 for its
 *		ownership, permissions, size or content).
 */
extern SNOWFLAKE_INTERNAL SnowflakeFF1Key *snowflake_keyring_key(int key_id);

/*
 * snowflake_keyring_current
 *		The id of the key marked current; 55000 when none is, and the key
 *		file's errors.
 */
extern SNOWFLAKE_INTERNAL int snowflake_keyring_current(void);

#endif							/* SNOWFLAKE_KEYRING_H */
