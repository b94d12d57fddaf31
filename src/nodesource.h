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
 * into a caller-supplied buffer when they fail.  What they read is parsed
 * by the pure functions of nodeparse.h, which also declares the types.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_NODESOURCE_H
#define SNOWFLAKE_NODESOURCE_H

#include "nodeparse.h"

extern SNOWFLAKE_INTERNAL bool snowflake_node_choose(const SnowflakeLayout *layout,
												  const SnowflakeNodeSettings *set,
												  SnowflakeNodeSource *src,
												  const char **bad_name,
												  char *detail);
extern SNOWFLAKE_INTERNAL void snowflake_node_log(const SnowflakeNodeSource *src);

#endif							/* SNOWFLAKE_NODESOURCE_H */
