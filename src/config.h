/*-------------------------------------------------------------------------
 *
 * config.h
 *	  The settings of the snowflake extension (config.c): their variables
 *	  and definitions, the epoch's text as a time, the node id (and where
 *	  it comes from, nodesource.h) and layout read from the server
 *	  configuration without the preload; and the wall clock.
 *
 * The variables are PostgreSQL's GUC variables of this process: read
 * without a lock, changed only by the GUC machinery (a reload, SET).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_CONFIG_H
#define SNOWFLAKE_CONFIG_H

#include <time.h>

#include "datatype/timestamp.h"

#include "layout.h"
#include "nodesource.h"

/* Milliseconds from the Unix epoch to PostgreSQL's (2000-01-01). */
#define SF_POSTGRES_EPOCH_UNIX_MS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000)

/*
 * snowflake_clock_ms
 *		The wall clock in milliseconds since the Unix epoch.
 */
static inline int64
snowflake_clock_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64) ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Operator knobs (PGC_SIGHUP and PGC_USERSET). */
extern SNOWFLAKE_INTERNAL int snowflake_max_drift_ms;
extern SNOWFLAKE_INTERNAL int snowflake_max_wait_ms;
extern SNOWFLAKE_INTERNAL bool snowflake_spread_sequence;
extern SNOWFLAKE_INTERNAL int snowflake_writer_idle_timeout_ms;
extern SNOWFLAKE_INTERNAL bool snowflake_background_writer;

/* Whether the library was loaded through shared_preload_libraries. */
extern SNOWFLAKE_INTERNAL bool snowflake_preloaded;

/*
 * The largest lead over the clock that IDs may have without the preload.
 * Every copy of a data directory must know the largest lead any member of
 * its history allowed, for the floor of its starts: with the preload a
 * raise is carried to standbys and restores in WAL (walrecord.c), without
 * it nothing can carry it, so the lead cannot be raised past a value that
 * every copy knows: this one, compiled into the library.  It is also the
 * smallest floor of a start without the preload (shared.c).
 */
#define SNOWFLAKE_NO_PRELOAD_MAX_DRIFT_MS	1000

/*
 * snowflake_drift_ms
 *		The lead over the clock that this process lets IDs have:
 *		snowflake.max_drift_ms, capped without the preload.
 */
static inline int64
snowflake_drift_ms(void)
{
	if (likely(snowflake_preloaded) ||
		snowflake_max_drift_ms <= SNOWFLAKE_NO_PRELOAD_MAX_DRIFT_MS)
		return snowflake_max_drift_ms;
	return SNOWFLAKE_NO_PRELOAD_MAX_DRIFT_MS;
}

/* Read at server start when preloaded (PGC_POSTMASTER). */
extern SNOWFLAKE_INTERNAL bool snowflake_confirm_restore_enabled;

extern SNOWFLAKE_INTERNAL void snowflake_config_init(void);
extern SNOWFLAKE_INTERNAL void snowflake_config_server(SnowflakeLayout *layout,
													int *node_id, int *span,
													SnowflakeNodeSource *source);
extern SNOWFLAKE_INTERNAL bool snowflake_config_node_failure(const char **bad_name,
														  const char **detail,
														  const char **hint);
extern SNOWFLAKE_INTERNAL bool snowflake_parse_epoch(const char *text, int64 *epoch_ms,
												  char *detail);
extern SNOWFLAKE_INTERNAL void snowflake_format_ms(int64 unix_ms, char *buf, size_t len);

/*
 * How many characters of a user's input an error message quotes: any text
 * that could be an ID of a text form (a prefix of up to 63 characters and
 * up to 16 digits) is quoted whole.
 */
#define SNOWFLAKE_QUOTE_CHARS	100

extern SNOWFLAKE_INTERNAL char *snowflake_input_excerpt(const char *s, size_t len);
extern SNOWFLAKE_INTERNAL bool snowflake_file_layout(SnowflakeLayout *layout,
												  const char **bad_name,
												  char *detail);
extern SNOWFLAKE_INTERNAL bool snowflake_file_settings(SnowflakeLayout *layout,
													int *node_id, int *span,
													SnowflakeNodeSource *source,
													const char **bad_name,
													char *detail,
													bool *not_server);
extern SNOWFLAKE_INTERNAL void snowflake_report_settings(int elevel,
													  const char *bad_name,
													  const char *detail);

#endif							/* SNOWFLAKE_CONFIG_H */
