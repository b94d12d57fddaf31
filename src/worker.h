/*-------------------------------------------------------------------------
 *
 * worker.h
 *	  The background writer that keeps the reservation ahead of the IDs
 *	  issued (worker.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_WORKER_H
#define SNOWFLAKE_WORKER_H

#include "shared.h"

extern SNOWFLAKE_INTERNAL void snowflake_worker_init(void);
extern SNOWFLAKE_INTERNAL void snowflake_worker_ensure(SnowflakeShared *s);
extern PGDLLEXPORT void snowflake_worker_main(Datum main_arg);

#endif							/* SNOWFLAKE_WORKER_H */
