/*-------------------------------------------------------------------------
 *
 * fileformat.h
 *	  The bytes of the state file, "snowflake.state", and of the settings
 *	  file, "snowflake.settings" (their formats are in statefile.h):
 *	  writing the values as bytes and reading them back, with no I/O
 *	  (fileformat.c).
 *
 * Pure: no lock, no PostgreSQL state, so that the server (statefile.c)
 * and the fuzz targets (test/fuzz/) call the same code.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_FILEFORMAT_H
#define SNOWFLAKE_FILEFORMAT_H

#include "statefile.h"

extern SNOWFLAKE_INTERNAL pg_crc32c snowflake_crc32c(const void *data, size_t len);
extern SNOWFLAKE_INTERNAL void snowflake_life_serialize(const SnowflakeLifeFile *f,
														char *buf);
extern SNOWFLAKE_INTERNAL const char *snowflake_life_parse(const char *buf, size_t n,
														   SnowflakeLifeFile *f,
														   char *detail, size_t len);

/*
 * The largest state file any version wrote (version 4, 136 bytes): a
 * reader reads one byte more, to see a longer file.
 */
#define SNOWFLAKE_STATE_MAX_SIZE	136

extern SNOWFLAKE_INTERNAL void snowflake_state_seal(SnowflakeStateFile *f);
extern SNOWFLAKE_INTERNAL int snowflake_state_parse(const char *buf, size_t n,
												 SnowflakeStateFile *f,
												 char *detail, size_t len);

#endif							/* SNOWFLAKE_FILEFORMAT_H */
