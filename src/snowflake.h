/*-------------------------------------------------------------------------
 *
 * snowflake.h
 *	  Declarations of generator.c and worker.c, and the headers of the
 *	  modules below them.
 *
 * The files depend on each other in one direction only:
 *
 *	snowflake.c     module init
 *	functions.c     SQL-callable functions
 *	worker.c        the background writer that keeps the reservation ahead
 *	generator.c     the hot path: minting IDs under the spinlock
 *	reservation.c   the durable reservation, the floor, a layout's adoption
 *	shared.c        the shared state's life (shared.h has its locking rules)
 *	statefile.c     the state file's format and its durable write
 *	config.c        the settings, the epoch as a time, the node id and
 *	                layout read from the server configuration when not
 *	                preloaded; the clock (config.h)
 *	layout.c        pure arithmetic on the ID layout
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_H
#define SNOWFLAKE_H

#include "config.h"
#include "layout.h"
#include "reservation.h"
#include "shared.h"
#include "statefile.h"

/* Largest count accepted by snowflake_nextval_batch(). */
#define SNOWFLAKE_MAX_BATCH		1000000

/* generator.c */
extern SNOWFLAKE_INTERNAL int64 snowflake_generate(int64 count);

/* worker.c */
extern SNOWFLAKE_INTERNAL void snowflake_worker_register(void);
extern SNOWFLAKE_INTERNAL void snowflake_worker_ensure(SnowflakeShared *s);
extern PGDLLEXPORT void snowflake_worker_main(Datum main_arg);

#endif							/* SNOWFLAKE_H */
