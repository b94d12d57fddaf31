/*-------------------------------------------------------------------------
 *
 * walrecord.h
 *	  The history's largest lead in WAL (walrecord.c): snowflake's custom
 *	  WAL resource manager, registered when the library is preloaded.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_WALRECORD_H
#define SNOWFLAKE_WALRECORD_H

/*
 * The resource manager's id.  Ids 128 to 255 are for extensions; the wiki
 * page "CustomWALResourceManagers" lists those taken.  A server that
 * replays a record of this id must have the library preloaded.
 */
#define SNOWFLAKE_RMGR_ID		183
#define SNOWFLAKE_RMGR_NAME		"snowflake"

extern SNOWFLAKE_INTERNAL void snowflake_wal_init(void);
extern SNOWFLAKE_INTERNAL void snowflake_wal_log_lead(int64 max_lead_ms,
												   int64 lead_lowered_ms);

#endif							/* SNOWFLAKE_WALRECORD_H */
