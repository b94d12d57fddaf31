/*-------------------------------------------------------------------------
 *
 * nodeparse.c
 *	  The parsing behind a derived node id (nodesource.c): the values
 *	  snowflake.node_id_from accepts, the member number that ends a host
 *	  name's first label or that an environment variable's value is, the
 *	  checks of the base, count and span, and the formula that places a
 *	  member's node ids (nodesource.h).  Every error is a sentence for
 *	  errdetail, written into the caller's buffer.
 *
 * Pure: no I/O and no PostgreSQL state (nodesource.c reads the host name
 * and the environment and logs), so that the fuzz target
 * test/fuzz/node_id.c calls the code the server runs.  No lock.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <limits.h>

#include "nodeparse.h"

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

	if (from[0] == '\0' || strcmp(from, SNOWFLAKE_NODE_FROM_HOSTNAME) == 0)
		return true;
	if (strncmp(from, SNOWFLAKE_NODE_FROM_ENV, strlen(SNOWFLAKE_NODE_FROM_ENV)) == 0)
	{
		name = from + strlen(SNOWFLAKE_NODE_FROM_ENV);
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
 * snowflake_node_member_host
 *		The member number of the host name host (at most 255 bytes): the
 *		number that ends its first label, into src->number, with the texts
 *		of src that say where it came from and how (src->mapping,
 *		src->alike); false with a detail if that label does not end in a
 *		number.  A number too large for any count is INT_MAX, which
 *		snowflake_node_place reports as out of range.
 */
bool
snowflake_node_member_host(const char *host, SnowflakeNodeSource *src,
						   char *detail)
{
	size_t		len = strcspn(host, ".");
	int			got;

	snprintf(src->text, SNOWFLAKE_SOURCE_LEN, "hostname %s", host);
	snprintf(src->origin, SNOWFLAKE_SOURCE_LEN, "host name \"%s\"", host);
	got = sf_trailing_number(host, len, &src->number);
	if (got > 0)
		sf_describe_hostname(src, host, len);
	if (got == 0)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 host[len] == '.' ?
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
 * snowflake_node_member_env
 *		The member number that value, the value of the environment variable
 *		that from ("env:NAME", a valid value) names, is, into src->number,
 *		with the texts of src; false with a detail if the variable is not
 *		set (value NULL), empty, or not digits only.  A number too large
 *		for any count is INT_MAX, as above.
 */
bool
snowflake_node_member_env(const char *from, const char *value,
						  SnowflakeNodeSource *src, char *detail)
{
	const char *name = from + strlen(SNOWFLAKE_NODE_FROM_ENV);
	int			got;

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
 * snowflake_node_settings_check
 *		Whether the settings of a derived node id (set->from a value that is
 *		not empty) are valid and consistent: snowflake.node_id_from's value,
 *		snowflake.node_id not set too, the count set, within the node field
 *		of layout from the base on, and holding a span; false with
 *		*bad_name naming the setting at fault and a detail.
 */
bool
snowflake_node_settings_check(const SnowflakeLayout *layout,
							  const SnowflakeNodeSettings *set,
							  const char **bad_name, char *detail)
{
	*bad_name = "snowflake.node_id_from";
	return snowflake_node_from_valid(set->from, detail) &&
		sf_check_range(layout, set, bad_name, detail);
}

/*
 * snowflake_node_place
 *		The node ids of member number src->number (snowflake_node_member_*)
 *		under settings that snowflake_node_settings_check accepted: the
 *		first of its span, base + number * span, into src->node_id; false
 *		with *bad_name and a detail if the count has no room for that
 *		member.  A span below 1 counts as 1 (left to the caller's check of
 *		the span).
 */
bool
snowflake_node_place(const SnowflakeNodeSettings *set,
					 SnowflakeNodeSource *src, const char **bad_name,
					 char *detail)
{
	int			span = Max(set->span, 1);
	int			members = set->count / span;

	*bad_name = "snowflake.node_id_from";
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
