/*-------------------------------------------------------------------------
 *
 * layout.c
 *	  Pure arithmetic on snowflake IDs: packing, unpacking, range checks and
 *	  parsing of the integer settings.
 *
 * No PostgreSQL state is used here: no memory allocation, no ereport, no
 * GUC access.  Every function is deterministic and safe to call from the
 * postmaster, from GUC check hooks and from backends.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "layout.h"

/*
 * snowflake_unpack
 *		Split an ID into its fields as the bits say.
 *
 * The timestamp field is everything above the node and sequence fields; it is
 * not masked to timestamp_bits, so an ID minted with a wider layout decodes
 * to the time its bits spell rather than to a wrapped-around one.  The caller
 * rejects negative IDs.
 */
void
snowflake_unpack(const SnowflakeLayout *layout, int64 id,
				 SnowflakeParts *parts)
{
	int			shift = layout->node_bits + layout->sequence_bits;

	parts->ms = id >> shift;
	parts->node_id = (id >> layout->sequence_bits) & snowflake_max_node(layout);
	parts->sequence = id & snowflake_max_sequence(layout);
}

/*
 * snowflake_pack
 *		Build an ID from its fields, checking each against the layout.
 */
bool
snowflake_pack(const SnowflakeLayout *layout, const SnowflakeParts *parts,
			   int64 *id, char *detail)
{
	if (parts->ms < 0 || parts->ms > snowflake_max_ms(layout))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The timestamp must lie between the epoch and %lld milliseconds after it.",
				 (long long) snowflake_max_ms(layout));
		return false;
	}
	if (parts->node_id < 0 || parts->node_id > snowflake_max_node(layout))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The node id must be between 0 and %lld.",
				 (long long) snowflake_max_node(layout));
		return false;
	}
	if (parts->sequence < 0 || parts->sequence > snowflake_max_sequence(layout))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The sequence must be between 0 and %lld.",
				 (long long) snowflake_max_sequence(layout));
		return false;
	}
	*id = (parts->ms << (layout->node_bits + layout->sequence_bits)) |
		(parts->node_id << layout->sequence_bits) | parts->sequence;
	return true;
}

/*
 * snowflake_layout_check
 *		Check the field widths together; each one alone was range-checked by
 *		its GUC definition.
 */
bool
snowflake_layout_check(const SnowflakeLayout *layout, char *detail)
{
	int			total = layout->timestamp_bits + layout->node_bits +
		layout->sequence_bits;

	if (layout->timestamp_bits < SNOWFLAKE_MIN_TIMESTAMP_BITS ||
		layout->timestamp_bits > SNOWFLAKE_MAX_TIMESTAMP_BITS ||
		layout->node_bits < 0 || layout->node_bits > SNOWFLAKE_MAX_NODE_BITS ||
		layout->sequence_bits < 0 ||
		layout->sequence_bits > SNOWFLAKE_MAX_SEQUENCE_BITS)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "snowflake.timestamp_bits must be between %d and %d, snowflake.node_bits between 0 and %d, and snowflake.sequence_bits between 0 and %d.",
				 SNOWFLAKE_MIN_TIMESTAMP_BITS, SNOWFLAKE_MAX_TIMESTAMP_BITS,
				 SNOWFLAKE_MAX_NODE_BITS, SNOWFLAKE_MAX_SEQUENCE_BITS);
		return false;
	}
	if (total > SNOWFLAKE_TOTAL_BITS)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "snowflake.timestamp_bits (%d) + snowflake.node_bits (%d) + snowflake.sequence_bits (%d) = %d, but an ID has only %d bits.",
				 layout->timestamp_bits, layout->node_bits,
				 layout->sequence_bits, total, SNOWFLAKE_TOTAL_BITS);
		return false;
	}
	return true;
}

/*
 * snowflake_node_check
 *		Check a configured node id against the node field's width.
 */
bool
snowflake_node_check(const SnowflakeLayout *layout, int node_id,
					 char *detail)
{
	if (node_id < 0 || node_id > snowflake_max_node(layout))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "snowflake.node_id is %d, but with snowflake.node_bits = %d it must be between 0 and %lld.",
				 node_id, layout->node_bits,
				 (long long) snowflake_max_node(layout));
		return false;
	}
	return true;
}

/*
 * snowflake_parse_int
 *		Parse a plain decimal integer, optionally signed and surrounded by
 *		spaces.  The layout settings accept nothing else (no units, no
 *		fractions, no hexadecimal, and no leading zero, which PostgreSQL
 *		reads as octal), so that a server with the library preloaded and the
 *		decoders of one without read them identically or not at all.
 */
bool
snowflake_parse_int(const char *text, int *value)
{
	const char *p = text;
	bool		negative = false;
	int64		v = 0;

	while (isspace((unsigned char) *p))
		p++;
	if (*p == '+' || *p == '-')
		negative = (*p++ == '-');
	if (!isdigit((unsigned char) *p) ||
		(*p == '0' && isdigit((unsigned char) p[1])))
		return false;
	for (; isdigit((unsigned char) *p); p++)
	{
		v = v * 10 + (*p - '0');
		if (v > (int64) PG_INT32_MAX + 1)
			return false;
	}
	while (isspace((unsigned char) *p))
		p++;
	if (*p != '\0')
		return false;
	if (negative)
		v = -v;
	if (v < PG_INT32_MIN || v > PG_INT32_MAX)
		return false;
	*value = (int) v;
	return true;
}
