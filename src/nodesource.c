/*-------------------------------------------------------------------------
 *
 * nodesource.c
 *	  The node id a server takes: snowflake.node_id, or one derived from the
 *	  number that ends its host name (snowflake.node_id_from = 'hostname')
 *	  or the value of an environment variable of the postmaster
 *	  ('env:NAME'), added to a base, within a count of node ids the cluster
 *	  owns (see nodesource.h for the formula).
 *
 * Kubernetes StatefulSets (pod-0, pod-1, ...), CloudNativePG
 * (<cluster>-1, <cluster>-2, ...), Patroni fleets and most VM fleets name
 * their servers with a number: one configuration shared by every member
 * then gives each its own node ids, and two standbys promoted separately
 * never mint with the same one.  A host name without a number, or with one
 * the cluster's count has no room for, is an error: never a silent wrong
 * node id.
 *
 * Only the host name's first label is read ("db-2.example.com" is member
 * 2), and only the digits that end it, leading zeros aside ("pg-007" is
 * member 7): names that differ elsewhere map alike ("db-1" and "db-01",
 * "ip-10-0-1-12" and "ip-10-0-2-12"), which the LOG line of the start
 * warns about.  An environment variable's value is the member number
 * itself: digits only, no sign, no spaces.  The host name is the
 * postmaster's (a server's processes share its UTS namespace), and so is the environment: every server
 * process inherits the postmaster's.  Called at startup when the library
 * is preloaded (config.c), else by the process that fixes the values for
 * the server's life (shared.c, through snowflake_file_settings).
 *
 * Sits beside config.c, above nodeparse.c (the parsing of what is read, the
 * checks and the formula: pure, so that it can be fuzzed) and layout.c: no
 * PostgreSQL state but the LOG line of snowflake_node_log.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <stdlib.h>
#include <unistd.h>

#include "nodesource.h"

/*
 * Read the member's number from the host name or the environment variable
 * that from names (a valid value, not empty), into src->number, with the
 * texts of src; false with a detail if there is none (nodeparse.c parses
 * what was read).  A number too large for any count is reported as out of
 * range by snowflake_node_place (INT_MAX).
 */
static bool
sf_read_member(const char *from, SnowflakeNodeSource *src, char *detail)
{
	char		host[256];

	if (strcmp(from, SNOWFLAKE_NODE_FROM_HOSTNAME) == 0)
	{
		if (gethostname(host, sizeof(host)) != 0)
		{
			snprintf(detail, SNOWFLAKE_DETAIL_LEN,
					 "The host name could not be read: %s.", strerror(errno));
			return false;
		}
		host[sizeof(host) - 1] = '\0';
		return snowflake_node_member_host(host, src, detail);
	}
	return snowflake_node_member_env(from,
									 getenv(from + strlen(SNOWFLAKE_NODE_FROM_ENV)),
									 src, detail);
}

/*
 * snowflake_node_choose
 *		The node id the settings give this server, into src: snowflake.node_id
 *		(-1 when not set) unless snowflake.node_id_from is set, else the one
 *		derived from the host name or the environment.
 *
 * Returns false with *bad_name naming the setting at fault and a detail if
 * the settings are inconsistent (both node id settings, no count, a count
 * outside the node field) or the member's number is missing or outside the
 * count.  A span below 1 is left to the caller's check of the span.
 */
bool
snowflake_node_choose(const SnowflakeLayout *layout,
					  const SnowflakeNodeSettings *set,
					  SnowflakeNodeSource *src, const char **bad_name,
					  char *detail)
{
	snowflake_node_source_fixed(src, set->node_id, "snowflake.node_id");
	if (set->from == NULL || set->from[0] == '\0')
		return true;

	if (!snowflake_node_settings_check(layout, set, bad_name, detail))
		return false;

	*bad_name = "snowflake.node_id_from";
	if (!sf_read_member(set->from, src, detail))
		return false;
	return snowflake_node_place(set, src, bad_name, detail);
}

/*
 * snowflake_node_log
 *		Say at LOG where a derived node id came from, how a host name gave
 *		its number, and which node ids the server takes; and at WARNING
 *		which other host names give the same number.  Nothing for any other
 *		source.
 */
void
snowflake_node_log(const SnowflakeNodeSource *src)
{
	int64		last = (int64) src->base + src->count - 1;

	if (!src->derived)
		return;
	if (src->span == 1)
		ereport(LOG,
				(errmsg("snowflake node id %d derived from the %s",
						src->node_id, src->origin),
				 errdetail("%s%sMember number %d plus \"%s\" = %d: this server takes node id %d of the cluster's %d to %lld (\"%s\" = %d).",
						   src->mapping, src->mapping[0] ? " " : "",
						   src->number, "snowflake.node_id_base", src->base,
						   src->node_id, src->base, (long long) last,
						   "snowflake.node_id_count", src->count)));
	else
		ereport(LOG,
				(errmsg("snowflake node id %d derived from the %s",
						src->node_id, src->origin),
				 errdetail("%s%sMember number %d times \"%s\" = %d, plus \"%s\" = %d: this server takes node ids %d to %d, one per timeline, of the cluster's %d to %lld (\"%s\" = %d).",
						   src->mapping, src->mapping[0] ? " " : "",
						   src->number, "snowflake.node_id_span", src->span,
						   "snowflake.node_id_base", src->base, src->node_id,
						   src->node_id + src->span - 1, src->base,
						   (long long) last, "snowflake.node_id_count",
						   src->count)));
	if (src->alike[0] != '\0')
		ereport(WARNING,
				(errmsg("other host names give the same snowflake member number as the %s",
						src->origin),
				 errdetail("%s", src->alike),
				 errhint("Give every member of the cluster a host name that ends in its own number, written the same way (no leading zeros), or derive the node id from an environment variable (\"env:NAME\").")));
}
