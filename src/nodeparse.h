/*-------------------------------------------------------------------------
 *
 * nodeparse.h
 *	  The parsing behind a derived node id (nodeparse.c): the settings that
 *	  choose a server's node id, the member number read from a host name or
 *	  an environment variable's value, and the node ids the formula of
 *	  nodesource.h gives it.
 *
 * Pure: no lock, no PostgreSQL state, so that the server (nodesource.c,
 * config.c) and the fuzz target test/fuzz/node_id.c call the same code.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_NODEPARSE_H
#define SNOWFLAKE_NODEPARSE_H

#include "layout.h"

/* The values of snowflake.node_id_from that derive a node id. */
#define SNOWFLAKE_NODE_FROM_HOSTNAME	"hostname"
#define SNOWFLAKE_NODE_FROM_ENV			"env:"

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
extern SNOWFLAKE_INTERNAL bool snowflake_node_settings_check(const SnowflakeLayout *layout,
														  const SnowflakeNodeSettings *set,
														  const char **bad_name,
														  char *detail);
extern SNOWFLAKE_INTERNAL bool snowflake_node_member_host(const char *host,
													   SnowflakeNodeSource *src,
													   char *detail);
extern SNOWFLAKE_INTERNAL bool snowflake_node_member_env(const char *from,
													  const char *value,
													  SnowflakeNodeSource *src,
													  char *detail);
extern SNOWFLAKE_INTERNAL bool snowflake_node_place(const SnowflakeNodeSettings *set,
												 SnowflakeNodeSource *src,
												 const char **bad_name,
												 char *detail);
extern SNOWFLAKE_INTERNAL void snowflake_node_source_fixed(SnowflakeNodeSource *src,
														int node_id,
														const char *text);

#endif							/* SNOWFLAKE_NODEPARSE_H */
