/*-------------------------------------------------------------------------
 *
 * fileformat.h
 *	  The bytes of the settings file, "snowflake.settings" (its format is
 *	  in statefile.h): writing the values as bytes and reading them back,
 *	  with no I/O (fileformat.c).
 *
 * Pure: no lock, no PostgreSQL state, so that the server (statefile.c)
 * and the fuzz targets (test/fuzz/) call the same code.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_FILEFORMAT_H
#define SNOWFLAKE_FILEFORMAT_H

#include "statefile.h"

extern SNOWFLAKE_INTERNAL void snowflake_life_serialize(const SnowflakeLifeFile *f,
														char *buf);
extern SNOWFLAKE_INTERNAL const char *snowflake_life_parse(const char *buf, size_t n,
														   SnowflakeLifeFile *f,
														   char *detail, size_t len);

#endif							/* SNOWFLAKE_FILEFORMAT_H */
