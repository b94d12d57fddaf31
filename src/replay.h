/*-------------------------------------------------------------------------
 *
 * replay.h
 *	  The replay of snowflake's WAL record (replay.c): its custom resource
 *	  manager, registered when the library is preloaded.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_REPLAY_H
#define SNOWFLAKE_REPLAY_H

#include "layout.h"


extern SNOWFLAKE_INTERNAL void snowflake_replay_init(void);

#endif							/* SNOWFLAKE_REPLAY_H */
