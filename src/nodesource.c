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
 * itself: digits only, no sign, no spaces.  The host name is the postmaster's (a server's processes
 * share its UTS namespace), and so is the environment: every server
 * process inherits the postmaster's.  Called at startup when the library
 * is preloaded (config.c), else by the process that fixes the values for
 * the server's life (shared.c, through snowflake_file_settings).
 *
 * Sits beside config.c, above layout.c: no PostgreSQL state but the LOG
 * line of snowflake_node_log.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <limits.h>
#include <stdlib.h>
#include <unistd.h>

#include "nodesource.h"

#define SF_FROM_HOSTNAME	"hostname"
#define SF_FROM_ENV			"env:"

/* The member number that ends a text: digits only, at most this many. */
#define SF_MAX_NUMBER_DIGITS	9

/*
 * snowflake_node_from_valid
 *		Whether from is a value snowflake.node_id_from accepts: empty,
 *		"hostname", or "env:" followed by the name of an environment
 *		variable (letters, digits and underscores, not starting with a
 *		digit).  For the setting's check hook, and the configuration file
 *		without the preload.
 */
bool
snowflake_node_from_valid(const char *from, char *detail)
{
	const char *name;

	if (from[0] == '\0' || strcmp(from, SF_FROM_HOSTNAME) == 0)
		return true;
	if (strncmp(from, SF_FROM_ENV, strlen(SF_FROM_ENV)) == 0)
	{
		name = from + strlen(SF_FROM_ENV);
		if (name[0] != '\0' && !isdigit((unsigned char) name[0]))
		{
			const char *p = name;

			while (*p != '\0' && (isalnum((unsigned char) *p) || *p == '_'))
				p++;
			if (*p == '\0')
				return true;
		}
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "After \"env:\" comes the name of an environment variable: letters, digits and underscores, not starting with a digit.");
		return false;
	}
	snprintf(detail, SNOWFLAKE_DETAIL_LEN,
			 "The value must be \"hostname\", \"env:\" followed by the name of an environment variable, or empty (the node id is \"snowflake.node_id\").");
	return false;
}

/*
 * The number that ends text[0 .. len): 1 and *number if there is one that
 * fits, 0 if the text does not end in a digit, -1 if the number is too
 * large for any count of node ids.
 */
static int
sf_trailing_number(const char *text, size_t len, int *number)
{
	size_t		start = len;
	int64		value = 0;

	while (start > 0 && isdigit((unsigned char) text[start - 1]))
		start--;
	if (start == len)
		return 0;
	/* Leading zeros do not count ("pg-007" is member 7). */
	while (start < len - 1 && text[start] == '0')
		start++;
	if (len - start > SF_MAX_NUMBER_DIGITS)
		return -1;
	for (size_t i = start; i < len; i++)
		value = value * 10 + (text[i] - '0');
	*number = (int) value;
	return 1;
}

/*
 * Say how the first label label[0 .. len) of a host name gave its member
 * number, and which other names give the same one (src->mapping,
 * src->alike): the digits that end it count, without their leading zeros,
 * and nothing before them does.
 */
static void
sf_describe_hostname(SnowflakeNodeSource *src, const char *label, size_t len)
{
	size_t		start = len;
	size_t		other;
	int			n = (int) len;

	while (start > 0 && isdigit((unsigned char) label[start - 1]))
		start--;
	snprintf(src->mapping, sizeof(src->mapping),
			 "The host name's first label \"%.*s\" ends in the digits \"%.*s\": member number %d.",
			 n, label, (int) (len - start), label + start, src->number);
	for (other = 0; other < start; other++)
		if (isdigit((unsigned char) label[other]))
			break;
	if (len - start > 1 && label[start] == '0')
		snprintf(src->alike, sizeof(src->alike),
				 "Leading zeros do not count: \"%.*s%d\" gives member number %d too.",
				 (int) start, label, src->number, src->number);
	else if (other < start)
		snprintf(src->alike, sizeof(src->alike),
				 "Only the digits that end the first label count: any name that ends in \"%.*s\" gives member number %d too, whatever digits come before (\"%.*s\" has other digits).",
				 (int) (len - start), label + start, src->number, n, label);
}

/*
 * The member number that an environment variable's value is: 1 and
 * *number if it is digits only and fits, 0 if it is not digits only, -1 if
 * it is too large for any count of node ids.
 */
static int
sf_env_number(const char *value, int *number)
{
	size_t		len = strlen(value);

	if (len == 0 || strspn(value, "0123456789") != len)
		return 0;
	return sf_trailing_number(value, len, number);
}

/*
 * Read the member's number from the host name or the environment variable
 * that from names (a valid value, not empty), into src->number, with the
 * texts of src; false with a detail if there is none.  A number too large
 * for any count is reported as out of range by the caller (INT_MAX).
 */
static bool
sf_read_member(const char *from, SnowflakeNodeSource *src, char *detail)
{
	char		host[256];
	const char *value;
	size_t		len;
	int			got;

	if (strcmp(from, SF_FROM_HOSTNAME) == 0)
	{
		if (gethostname(host, sizeof(host)) != 0)
		{
			snprintf(detail, SNOWFLAKE_DETAIL_LEN,
					 "The host name could not be read: %s.", strerror(errno));
			return false;
		}
		host[sizeof(host) - 1] = '\0';
		value = host;
		len = strcspn(host, ".");
		snprintf(src->text, SNOWFLAKE_SOURCE_LEN, "hostname %s", host);
		snprintf(src->origin, SNOWFLAKE_SOURCE_LEN, "host name \"%s\"", host);
	}
	else
	{
		const char *name = from + strlen(SF_FROM_ENV);

		value = getenv(name);
		if (value == NULL || value[0] == '\0')
		{
			snprintf(detail, SNOWFLAKE_DETAIL_LEN,
					 value == NULL ?
					 "The environment variable \"%s\" is not set for the server." :
					 "The environment variable \"%s\" is empty for the server.",
					 name);
			return false;
		}
		snprintf(src->text, SNOWFLAKE_SOURCE_LEN, "%s %s", from, value);
		snprintf(src->origin, SNOWFLAKE_SOURCE_LEN,
				 "environment variable \"%s\" (\"%s\")", name, value);
		got = sf_env_number(value, &src->number);
		if (got == 0)
		{
			snprintf(detail, SNOWFLAKE_DETAIL_LEN,
					 "The %s is not a member number: its value must be digits only, with no sign and no spaces.",
					 src->origin);
			return false;
		}
		if (got < 0)
			src->number = INT_MAX;
		return true;
	}

	got = sf_trailing_number(value, len, &src->number);
	if (got > 0)
		sf_describe_hostname(src, value, len);
	if (got == 0)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 value == host && host[len] == '.' ?
				 "The %s does not end in a number before its first dot." :
				 "The %s does not end in a number.",
				 src->origin);
		return false;
	}
	if (got < 0)
		src->number = INT_MAX;
	return true;
}

/*
 * The count and base of a derived node id, checked against each other, the
 * span and the node field; false with *bad_name and a detail.
 */
static bool
sf_check_range(const SnowflakeLayout *layout, const SnowflakeNodeSettings *set,
			   const char **bad_name, char *detail)
{
	*bad_name = "snowflake.node_id_from";
	if (set->node_id != -1)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "\"%s\" is set too (%d): set one of them only.",
				 "snowflake.node_id", set->node_id);
		return false;
	}
	if (set->count == -1)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "\"%s\" must be set too: how many node ids, from \"%s\" on, the cluster's members derive theirs from.",
				 "snowflake.node_id_count", "snowflake.node_id_base");
		return false;
	}
	*bad_name = "snowflake.node_id_base";
	if (set->base < 0)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The value must not be negative.");
		return false;
	}
	*bad_name = "snowflake.node_id_count";
	if (set->count < 1)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The value must be at least 1, or -1 (not set).");
		return false;
	}
	if ((int64) set->base + set->count - 1 > snowflake_max_node(layout))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The cluster's node ids, %d to %lld, do not all fit the node field: with \"%s\" = %d the largest is %lld.",
				 set->base, (long long) set->base + set->count - 1,
				 "snowflake.node_bits", layout->node_bits,
				 (long long) snowflake_max_node(layout));
		return false;
	}
	if (set->count < set->span)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The cluster's %d node ids do not hold the %d of one member (\"%s\").",
				 set->count, set->span, "snowflake.node_id_span");
		return false;
	}
	return true;
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
	int			span = Max(set->span, 1);
	int			members;

	snowflake_node_source_fixed(src, set->node_id, "snowflake.node_id");
	if (set->from == NULL || set->from[0] == '\0')
		return true;

	*bad_name = "snowflake.node_id_from";
	if (!snowflake_node_from_valid(set->from, detail) ||
		!sf_check_range(layout, set, bad_name, detail))
		return false;

	*bad_name = "snowflake.node_id_from";
	if (!sf_read_member(set->from, src, detail))
		return false;
	members = set->count / span;
	if (src->number >= members)
	{
		if (src->number == INT_MAX)
			snprintf(detail, SNOWFLAKE_DETAIL_LEN,
					 "The %s ends in a number too large for a member number: %d node ids from \"%s\" = %d, %d per member, hold member numbers 0 to %d.",
					 src->origin, set->count, "snowflake.node_id_base",
					 set->base, span, members - 1);
		else
			snprintf(detail, SNOWFLAKE_DETAIL_LEN,
					 "The %s gives member number %d, but %d node ids from \"%s\" = %d, %d per member, hold member numbers 0 to %d.",
					 src->origin, src->number, set->count,
					 "snowflake.node_id_base", set->base, span, members - 1);
		return false;
	}
	src->node_id = set->base + src->number * span;
	src->derived = true;
	src->base = set->base;
	src->count = set->count;
	src->span = span;
	*bad_name = NULL;
	return true;
}

/*
 * snowflake_node_source_fixed
 *		A source that is no derivation: node_id as text describes it (no
 *		text when the node id is not set).
 */
void
snowflake_node_source_fixed(SnowflakeNodeSource *src, int node_id,
							const char *text)
{
	memset(src, 0, sizeof(*src));
	src->node_id = node_id;
	src->number = -1;
	if (node_id >= 0)
		strlcpy(src->text, text, sizeof(src->text));
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
