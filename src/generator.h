/*-------------------------------------------------------------------------
 *
 * generator.h
 *	  Minting IDs from the shared generator, and reading or resetting what
 *	  its spinlock guards (generator.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_GENERATOR_H
#define SNOWFLAKE_GENERATOR_H

#include "shared.h"

/* The generator's values and counters at one moment, for snowflake_stats(). */
typedef struct SnowflakeStatsSnapshot
{
	int64		last;			/* packed last issued ID, or -1 */
	int64		durable_ms;		/* the reservation in the file, or -1 */
	int64		last_write_unix_ms; /* Unix ms of the last reservation write
									 * of this life, or -1 */
	SnowflakeCounters counters;
} SnowflakeStatsSnapshot;

/* Where the generator stands, for the background writer. */
typedef struct SnowflakePosition
{
	int64		last;			/* packed last issued ID, or -1 */
	int64		reserved_ms;	/* the reservation in force */
	int64		issued;			/* IDs issued since the counters' reset */
} SnowflakePosition;

extern SNOWFLAKE_INTERNAL int64 snowflake_generate(int64 count);
extern SNOWFLAKE_INTERNAL void snowflake_refusal_error(const SnowflakeShared *s,
													uint32 refusals);
extern SNOWFLAKE_INTERNAL void snowflake_stats_snapshot(SnowflakeShared *s,
													 SnowflakeStatsSnapshot *snap);
extern SNOWFLAKE_INTERNAL void snowflake_counters_reset(SnowflakeShared *s,
													 TimestampTz now);
extern SNOWFLAKE_INTERNAL void snowflake_position(SnowflakeShared *s,
											   SnowflakePosition *pos);

#endif							/* SNOWFLAKE_GENERATOR_H */
