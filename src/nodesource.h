/*-------------------------------------------------------------------------
 *
 * nodesource.h
 *	  Where a server's node id comes from (nodesource.c): snowflake.node_id
 *	  itself, or the number that ends the host name or an environment
 *	  variable, so that one configuration shared by every member of a
 *	  cluster gives each member node ids of its own.
 *
 * Member number n (the host name "pg-2" is member 2) takes the node ids
 * snowflake.node_id_base + n * snowflake.node_id_span .. that + span - 1,
 * one per timeline as snowflake.node_id_span says, within the
 * snowflake.node_id_count node ids from snowflake.node_id_base on that the
 * cluster owns: no two members, and no two timelines of one member within
 * the span, share a node field.
 *
 * Nothing here holds state: the functions read the host name or the
 * process's environment (which every server process inherits from the
 * postmaster) when called, and write a sentence suitable for errdetail
 * into a caller-supplied buffer when they fail.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_NODESOURCE_H
#define SNOWFLAKE_NODESOURCE_H

#include "layout.h"

/* Room for a source's description: "hostname " and a host name, or more. */
#define SNOWFLAKE_SOURCE_LEN	160

/* The settings that choose a server's node id, as configured. */
typedef struct SnowflakeNodeSettings
{
	int			node_id;		/* snowflake.node_id, -1 when not set */
	int			span;			/* snowflake.node_id_span */
	const char *from;			/* snowflake.node_id_from, "" when not set */
	int			base;			/* snowflake.node_id_base */
	int			count;			/* snowflake.node_id_count, -1 when not set */
} SnowflakeNodeSettings;

/* The node id those settings give this server, and where it came from. */
typedef struct SnowflakeNodeSource
{
	int			node_id;		/* the first of the server's span, or -1 */
	bool		derived;		/* from the host name or the environment */
	int			number;			/* the member's number, when derived */
	int			base;			/* the settings it was derived with */
	int			count;
	int			span;
	/* For snowflake_stats: "snowflake.node_id", "hostname pg-2", ... */
	char		text[SNOWFLAKE_SOURCE_LEN];
	/* For messages: the host name "pg-2", ... */
	char		origin[SNOWFLAKE_SOURCE_LEN];
	/* How a host name gave the number, as a sentence ("" otherwise) */
	char		mapping[2 * SNOWFLAKE_SOURCE_LEN];
	/* Which other names give the same number, as a sentence, or "" */
	char		alike[2 * SNOWFLAKE_SOURCE_LEN];
} SnowflakeNodeSource;

extern SNOWFLAKE_INTERNAL bool snowflake_node_from_valid(const char *from,
													  char *detail);
extern SNOWFLAKE_INTERNAL bool snowflake_node_choose(const SnowflakeLayout *layout,
												  const SnowflakeNodeSettings *set,
												  SnowflakeNodeSource *src,
												  const char **bad_name,
												  char *detail);
extern SNOWFLAKE_INTERNAL void snowflake_node_source_fixed(SnowflakeNodeSource *src,
														int node_id,
														const char *text);
extern SNOWFLAKE_INTERNAL void snowflake_node_log(const SnowflakeNodeSource *src);

#endif							/* SNOWFLAKE_NODESOURCE_H */
