/*-------------------------------------------------------------------------
 *
 * standbys.h
 *	  The standbys a primary can see, and how far they have flushed its WAL
 *	  (standbys.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_STANDBYS_H
#define SNOWFLAKE_STANDBYS_H

#include "layout.h"


/* One standby: how far it flushed, its slot ("" if none), its walsender. */
typedef struct SfStandby
{
	uint64		flushed;
	int			pid;			/* 0: no walsender streams to it now */
	char		slot[NAMEDATALEN];
} SfStandby;

/* A list of standbys, filled by snowflake_standbys. */
typedef struct SfStandbys
{
	int			n;
	int			max;
	SfStandby  *standbys;
} SfStandbys;

extern SNOWFLAKE_INTERNAL void snowflake_standbys(SfStandbys *out);
extern SNOWFLAKE_INTERNAL void snowflake_standby_name(const SfStandby *sb,
												   char *buf, size_t len);

#endif							/* SNOWFLAKE_STANDBYS_H */
