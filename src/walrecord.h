/*-------------------------------------------------------------------------
 *
 * walrecord.h
 *	  The bytes of snowflake's WAL record (walrecord.c): its format, and
 *	  the rule for changing it.  reservation.c writes it, replay.c replays
 *	  it.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_WALRECORD_H
#define SNOWFLAKE_WALRECORD_H

#include "history.h"

/*
 * The custom resource manager's id.  Ids 128 to 255 are for extensions;
 * PostgreSQL's wiki page "CustomWALResourceManagers" lists those reserved,
 * and 183 is not reserved there (docs/wal-record.md).  A server that
 * replays a record of this id must have the library preloaded; another
 * extension registering the same id stops the server's start.
 */
#define SNOWFLAKE_RMGR_ID		183
#define SNOWFLAKE_RMGR_NAME		"snowflake"

/*
 * The rule for changing the record, which every release keeps (the replay
 * of a released version cannot be changed afterwards):
 *	- every record starts with SfWalHeader: the format it was written in,
 *	  and the earliest release of snowflake that can replay it, as
 *	  major * 100 + minor (SNOWFLAKE_RELEASE_NUM);
 *	- a reader replays a record whose release it is at least, and refuses
 *	  (stops replay, naming the release to install) one that needs a later
 *	  one;
 *	- a reader ignores bytes after the fields it knows of a kind, and a kind
 *	  it does not know whose release it is at least: a release may add
 *	  fields at the end, or a kind that older readers may skip, without
 *	  raising "needs"; anything an older reader must not skip raises it;
 *	- a kind's existing fields never change meaning, and the info code of
 *	  a kind (kind << 4) never changes.
 * Upgrades therefore go standbys first: a primary of a new release may
 * write what a standby of an older one cannot replay.
 */
#define SNOWFLAKE_WAL_FORMAT		1
#define SNOWFLAKE_RELEASE_NUM		103 /* 1.3 */

typedef struct SfWalHeader
{
	uint16		format;			/* SNOWFLAKE_WAL_FORMAT when written */
	uint16		needs;			/* the earliest release that replays it */
} SfWalHeader;

/* What a record's bytes are (snowflake_wal_decode). */
typedef enum SfWalDecode
{
	SF_WAL_OK,					/* *rec is the record */
	SF_WAL_SKIP,				/* a kind this release may skip */
	SF_WAL_NEEDS_LATER,			/* needs a later release of snowflake */
	SF_WAL_CORRUPT				/* too short for its header or kind */
} SfWalDecode;

/* The largest record's bytes (header and the largest kind). */
#define SNOWFLAKE_WAL_MAX_SIZE	(sizeof(SfWalHeader) + 16)

extern SNOWFLAKE_INTERNAL size_t snowflake_wal_encode(const SfRecord *rec,
												   char *buf, uint8 *info);
extern SNOWFLAKE_INTERNAL SfWalDecode snowflake_wal_decode(uint8 info,
														const char *data,
														size_t len,
														SfRecord *rec,
														SfWalHeader *hdr);
extern SNOWFLAKE_INTERNAL const char *snowflake_wal_kind_name(uint8 info);

#endif							/* SNOWFLAKE_WALRECORD_H */
