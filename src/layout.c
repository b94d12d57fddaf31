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
 * snowflake_node_span_check
 *		Check that the node ids a server takes turns with, node_id ..
 *		node_id + span - 1, all fit the node field (node_id -1, not set:
 *		that the span does).
 */
bool
snowflake_node_span_check(const SnowflakeLayout *layout, int node_id, int span,
						  char *detail)
{
	int64		first = Max(node_id, 0);

	if (span < 1)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "snowflake.node_id_span is %d, but it must be at least 1.",
				 span);
		return false;
	}
	if (first + span - 1 > snowflake_max_node(layout))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "With snowflake.node_id = %d and snowflake.node_id_span = %d the server mints with node ids up to %lld, but with snowflake.node_bits = %d the largest is %lld.",
				 node_id, span, (long long) (first + span - 1),
				 layout->node_bits, (long long) snowflake_max_node(layout));
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

/*
 * Layouts of IDs minted elsewhere
 * ===============================
 *
 * A layout argument is a preset name, a spelled-out layout, or a preset
 * followed by what differs from it:
 *
 *		twitter
 *		epoch=2015-01-01; fields=timestamp:42,worker:5,process:5,sequence:12
 *		sonyflake; epoch=2020-01-01
 *		server; fields=timestamp:41,region:3,host:7,sequence:12
 *
 * "server" is the server's own layout, supplied by the caller; it takes only
 * fields= that keep its widths and split its node field into named parts,
 * for display.
 *
 * Items are separated by semicolons.  epoch= takes an ISO 8601 time (as
 * snowflake.epoch) or Unix milliseconds; unit= the milliseconds per
 * timestamp unit (default 1, "10ms" or "10"); fields= the fields from the
 * most significant, name:bits separated by commas: timestamp first, then the
 * node parts and the sequence, in the order the IDs hold them.
 *
 * The presets are fixed for good: changing one would change what immutable
 * functions return, under indexes built with them.
 */
#define SF_MAX_LAYOUT_LEN	400

/* Epochs in Unix milliseconds: the years snowflake.epoch can spell. */
#define SF_MIN_EPOCH_MS		INT64CONST(-62167219200000)	/* 0000-01-01 */
#define SF_MAX_EPOCH_MS		INT64CONST(253402300799999)	/* 9999-12-31 */

typedef struct SfPreset
{
	const char *name;
	const char *spec;
} SfPreset;

static const SfPreset sf_presets[] = {
	/* twitter-archive/snowflake, IdWorker.scala: twepoch and the widths */
	{"twitter", "epoch=1288834974657; fields=timestamp:41,datacenter:5,worker:5,sequence:12"},
	/* Discord developer documentation, "Snowflakes" */
	{"discord", "epoch=1420070400000; fields=timestamp:42,worker:5,process:5,sequence:12"},
	/* Instagram Engineering, "Sharding & IDs at Instagram": next_id() */
	{"instagram", "epoch=1314220021721; fields=timestamp:41,shard:13,sequence:10"},
	/* sony/sonyflake, sonyflake.go: BitLenTime, BitLenSequence, StartTime */
	{"sonyflake", "epoch=2014-09-01 00:00:00+00; unit=10ms; fields=timestamp:39,sequence:8,machine:16"},
	/* mastodon/mastodon, lib/mastodon/snowflake.rb: timestamp_id() */
	{"mastodon", "epoch=0; fields=timestamp:48,sequence:16"},
	/* pgEdge/snowflake, snowflake.c: the shifts, masks and epoch */
	{"pgedge", "epoch=2023-01-01 00:00:00+00; fields=timestamp:41,node:10,sequence:12"},
};

/*
 * snowflake_preset_names
 *		The preset names, for messages.
 */
const char *
snowflake_preset_names(void)
{
	return "twitter, discord, instagram, sonyflake, mastodon, pgedge";
}

/*
 * snowflake_format_from_layout
 *		The server's own layout as a format: millisecond units, the node field
 *		above the sequence, no named parts.
 */
void
snowflake_format_from_layout(const SnowflakeLayout *layout,
							 SnowflakeFormat *fmt)
{
	memset(fmt, 0, sizeof(SnowflakeFormat));
	fmt->epoch_ms = layout->epoch_ms;
	fmt->unit_ms = 1;
	fmt->timestamp_bits = layout->timestamp_bits;
	fmt->node_bits = layout->node_bits;
	fmt->sequence_bits = layout->sequence_bits;
}

/*
 * sf_clip
 *		How many bytes of s a message quotes, at most max, never part of a
 *		character.  This file knows no encoding, but in every server
 *		encoding a byte below 0x80 is a character of its own and the bytes
 *		of a multibyte character are all 0x80 or above: a cut that would
 *		split a run of such bytes is moved to the run's start.  Cut inside
 *		a character, a message is not text of the encoding, and a client
 *		of another encoding gets a conversion error instead of it.
 */
static int
sf_clip(const char *s, int max)
{
	int			n = (int) strnlen(s, max);

	if (IS_HIGHBIT_SET(s[n]))
		while (n > 0 && IS_HIGHBIT_SET(s[n - 1]))
			n--;
	return n;
}

/* Strip leading and trailing white space in place. */
static char *
sf_trim(char *s)
{
	char	   *end;

	while (isspace((unsigned char) *s))
		s++;
	end = s + strlen(s);
	while (end > s && isspace((unsigned char) end[-1]))
		end--;
	*end = '\0';
	return s;
}

/* epoch=: Unix milliseconds, or a time as snowflake.epoch takes it. */
static bool
sf_parse_epoch_value(const char *value, SnowflakeEpochParser parse_epoch,
					 int64 *epoch_ms, char *detail)
{
	const char *p = value;
	int64		v = 0;
	bool		negative = false;

	if (*p == '-')
	{
		negative = true;
		p++;
	}
	if (*p != '\0' && strspn(p, "0123456789") == strlen(p))
	{
		for (; *p; p++)
		{
			v = v * 10 + (*p - '0');
			if (v > SF_MAX_EPOCH_MS || (negative && -v < SF_MIN_EPOCH_MS))
			{
				snprintf(detail, SNOWFLAKE_DETAIL_LEN,
						 "The epoch in Unix milliseconds must lie between %lld and %lld.",
						 (long long) SF_MIN_EPOCH_MS, (long long) SF_MAX_EPOCH_MS);
				return false;
			}
		}
		*epoch_ms = negative ? -v : v;
		return true;
	}
	return parse_epoch(value, epoch_ms, detail);
}

/* unit=: whole milliseconds, optionally followed by "ms". */
static bool
sf_parse_unit(const char *value, int64 *unit_ms, char *detail)
{
	const char *p = value;
	int64		v = 0;

	if (!isdigit((unsigned char) *p))
		goto bad;
	for (; isdigit((unsigned char) *p); p++)
	{
		v = v * 10 + (*p - '0');
		if (v > SNOWFLAKE_MAX_UNIT_MS)
			goto bad;
	}
	while (isspace((unsigned char) *p))
		p++;
	if (strcmp(p, "ms") != 0 && *p != '\0')
		goto bad;
	if (v < 1)
		goto bad;
	*unit_ms = v;
	return true;

bad:
	snprintf(detail, SNOWFLAKE_DETAIL_LEN,
			 "The unit must be a whole number of milliseconds between 1 and %d, such as 10ms.",
			 SNOWFLAKE_MAX_UNIT_MS);
	return false;
}

/* A field name: a lower-case letter or underscore, then also digits. */
static bool
sf_valid_field_name(const char *name)
{
	const char *p = name;

	if (!(islower((unsigned char) *p) || *p == '_'))
		return false;
	for (; *p; p++)
	{
		if (!(islower((unsigned char) *p) || isdigit((unsigned char) *p) ||
			  *p == '_'))
			return false;
	}
	return p - name < SNOWFLAKE_FIELD_NAME_LEN;
}

/* What sf_parse_fields has seen so far. */
typedef struct SfFieldsParse
{
	int			nfields;
	int			timestamp_bits;
	int			node_bits;
	int			sequence_bits;
	bool		have_sequence;
	bool		parts_before_sequence;
	bool		parts_after_sequence;
} SfFieldsParse;

/*
 * One item of fields=, "name:bits": split in place into *name and *bits,
 * both checked (the first field may have up to 64 bits, the others up to a
 * node id's).
 */
static bool
sf_parse_field_item(char *item, int nfields, char **name, int *bits,
					char *detail)
{
	char	   *colon;
	int			max_bits = nfields == 0 ? 64 : SNOWFLAKE_MAX_NODE_BITS;

	item = sf_trim(item);
	colon = strchr(item, ':');
	if (colon == NULL)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The field \"%.*s\" is not of the form name:bits.",
				 sf_clip(item, 40), item);
		return false;
	}
	*colon = '\0';
	*name = sf_trim(item);
	if (!sf_valid_field_name(*name))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The field name \"%.*s\" is not valid: names are lower-case letters, digits and underscores, at most %d characters.",
				 sf_clip(*name, 40), *name, SNOWFLAKE_FIELD_NAME_LEN - 1);
		return false;
	}
	if (!snowflake_parse_int(colon + 1, bits) || *bits < 1 || *bits > max_bits)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The field \"%s\" must have between 1 and %d bits.",
				 *name, max_bits);
		return false;
	}
	return true;
}

/*
 * A named part of the node field: once, next to the other parts, at most
 * SNOWFLAKE_MAX_NODE_PARTS of them, and a node id's bits in all.
 */
static bool
sf_add_node_part(SnowflakeFormat *fmt, SfFieldsParse *st, const char *name,
				 int bits, char *detail)
{
	for (int i = 0; i < fmt->nparts; i++)
	{
		if (strcmp(fmt->part_names[i], name) == 0)
		{
			snprintf(detail, SNOWFLAKE_DETAIL_LEN,
					 "The field \"%s\" appears twice.", name);
			return false;
		}
	}
	if (st->have_sequence)
		st->parts_after_sequence = true;
	else
		st->parts_before_sequence = true;
	if (st->parts_before_sequence && st->parts_after_sequence)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The node fields must be next to each other, not on both sides of \"sequence\".");
		return false;
	}
	if (fmt->nparts == SNOWFLAKE_MAX_NODE_PARTS)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "A layout may split the node field into at most %d parts.",
				 SNOWFLAKE_MAX_NODE_PARTS);
		return false;
	}
	strlcpy(fmt->part_names[fmt->nparts], name, SNOWFLAKE_FIELD_NAME_LEN);
	fmt->part_bits[fmt->nparts] = bits;
	fmt->nparts++;
	st->node_bits += bits;
	if (st->node_bits > SNOWFLAKE_MAX_NODE_BITS)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The node fields add up to more than %d bits, the most a node id holds.",
				 SNOWFLAKE_MAX_NODE_BITS);
		return false;
	}
	return true;
}

/*
 * One field of fields=, in its place: the timestamp first, then the
 * sequence once, and node parts.
 */
static bool
sf_add_field(SnowflakeFormat *fmt, SfFieldsParse *st, const char *name,
			 int bits, char *detail)
{
	if (st->nfields == 0)
	{
		if (strcmp(name, "timestamp") != 0)
		{
			snprintf(detail, SNOWFLAKE_DETAIL_LEN,
					 "The first (most significant) field must be \"timestamp\", not \"%s\".",
					 name);
			return false;
		}
		st->timestamp_bits = bits;
	}
	else if (strcmp(name, "timestamp") == 0 ||
			 (strcmp(name, "sequence") == 0 && st->have_sequence))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The field \"%s\" appears twice.", name);
		return false;
	}
	else if (strcmp(name, "sequence") == 0)
	{
		st->have_sequence = true;
		st->sequence_bits = bits;
	}
	else if (!sf_add_node_part(fmt, st, name, bits, detail))
		return false;
	st->nfields++;
	return true;
}

/*
 * fields=: name:bits, most significant first.  Sets the widths, the order
 * and the node parts of fmt.
 */
static bool
sf_parse_fields(char *value, SnowflakeFormat *fmt, char *detail)
{
	SfFieldsParse st;
	char	   *item;
	char	   *next;
	int			total;

	memset(&st, 0, sizeof(st));
	fmt->nparts = 0;
	for (item = value; item != NULL; item = next)
	{
		char	   *comma = strchr(item, ',');
		char	   *name;
		int			bits;

		if (comma)
		{
			*comma = '\0';
			next = comma + 1;
		}
		else
			next = NULL;
		if (!sf_parse_field_item(item, st.nfields, &name, &bits, detail) ||
			!sf_add_field(fmt, &st, name, bits, detail))
			return false;
	}

	total = st.timestamp_bits + st.node_bits + st.sequence_bits;
	if (total > 64)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The fields add up to %d bits, but an ID has 64.", total);
		return false;
	}
	/* At most 31 + 31 bits: the timestamp keeps at least one. */
	Assert(st.node_bits + st.sequence_bits <= 62);
	fmt->timestamp_bits = Min(st.timestamp_bits,
							  63 - st.node_bits - st.sequence_bits);
	fmt->node_bits = st.node_bits;
	fmt->sequence_bits = st.sequence_bits;
	fmt->sequence_above_node = st.parts_after_sequence;
	return true;
}

/* What snowflake_parse_format has seen so far. */
typedef struct SfFormatParse
{
	bool		have_epoch;
	bool		have_unit;
	bool		have_fields;
	bool		from_preset;
	bool		from_server;
	bool		first;			/* no item seen yet */
} SfFormatParse;

/*
 * An item that is not key=value: allowed first only, as the name of a
 * preset (or "server", when the caller supplies the server's layout) that
 * the items after it amend.
 */
static bool
sf_parse_preset(const char *item, const SnowflakeFormat *server,
				SnowflakeEpochParser parse_epoch, SnowflakeFormat *fmt,
				SfFormatParse *st, char *detail)
{
	if (!st->first)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "\"%.*s\" is not of the form key=value.", sf_clip(item, 40),
				 item);
		return false;
	}
	if (server != NULL && pg_strcasecmp(item, "server") == 0)
	{
		*fmt = *server;
		st->from_preset = st->from_server = true;
	}
	for (int i = 0; !st->from_preset && i < (int) lengthof(sf_presets); i++)
	{
		if (pg_strcasecmp(item, sf_presets[i].name) == 0)
		{
			if (!snowflake_parse_format(sf_presets[i].spec, NULL,
										parse_epoch, fmt, detail))
				return false;	/* cannot happen */
			st->from_preset = true;
		}
	}
	if (!st->from_preset)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "\"%.*s\" is not a preset (%s) and not of the form key=value.",
				 sf_clip(item, 40), item, snowflake_preset_names());
		return false;
	}
	st->first = false;
	return true;
}

/* A key=value item, each key at most once. */
static bool
sf_parse_key(const char *key, char *value, SnowflakeEpochParser parse_epoch,
			 SnowflakeFormat *fmt, SfFormatParse *st, char *detail)
{
	bool	   *have;

	if (pg_strcasecmp(key, "epoch") == 0)
		have = &st->have_epoch;
	else if (pg_strcasecmp(key, "unit") == 0)
		have = &st->have_unit;
	else if (pg_strcasecmp(key, "fields") == 0)
		have = &st->have_fields;
	else
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "\"%.*s\" is not a layout key: the keys are epoch, unit and fields.",
				 sf_clip(key, 40), key);
		return false;
	}
	if (*have)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The key \"%s\" appears twice.", key);
		return false;
	}
	*have = true;

	if (have == &st->have_epoch)
		return sf_parse_epoch_value(value, parse_epoch, &fmt->epoch_ms, detail);
	if (have == &st->have_unit)
		return sf_parse_unit(value, &fmt->unit_ms, detail);
	return sf_parse_fields(value, fmt, detail);
}

/*
 * The checks on a layout as a whole, once every item is read: something
 * given, a layout of its own complete, the server's only split.
 */
static bool
sf_check_format(const SfFormatParse *st, const SnowflakeFormat *server,
				const SnowflakeFormat *fmt, char *detail)
{
	if (st->first)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The layout is empty: name a preset (%s) or spell one out.",
				 snowflake_preset_names());
		return false;
	}
	if (!st->from_preset && (!st->have_epoch || !st->have_fields))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "A layout that names no preset needs both epoch= and fields=.");
		return false;
	}
	if (st->from_server &&
		(st->have_epoch || st->have_unit ||
		 fmt->timestamp_bits != server->timestamp_bits ||
		 fmt->node_bits != server->node_bits ||
		 fmt->sequence_bits != server->sequence_bits ||
		 (fmt->sequence_above_node && fmt->nparts > 0)))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The server's layout only takes fields= that split its node field: timestamp:%d, node fields adding up to %d bits, then sequence:%d.",
				 server->timestamp_bits, server->node_bits,
				 server->sequence_bits);
		return false;
	}
	return true;
}

/*
 * snowflake_parse_format
 *		Parse a layout argument (see above); false with a detail sentence
 *		that names what is wrong.
 */
bool
snowflake_parse_format(const char *text, const SnowflakeFormat *server,
					   SnowflakeEpochParser parse_epoch, SnowflakeFormat *fmt,
					   char *detail)
{
	char		buf[SF_MAX_LAYOUT_LEN + 1];
	char	   *item;
	char	   *next;
	SfFormatParse st;
	size_t		len = strlen(text);

	if (len > SF_MAX_LAYOUT_LEN)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "A layout is at most %d characters long.", SF_MAX_LAYOUT_LEN);
		return false;
	}
	memcpy(buf, text, len + 1);
	memset(fmt, 0, sizeof(SnowflakeFormat));
	fmt->unit_ms = 1;
	memset(&st, 0, sizeof(st));
	st.first = true;

	for (item = buf; item != NULL; item = next)
	{
		char	   *semi = strchr(item, ';');
		char	   *eq;

		if (semi)
		{
			*semi = '\0';
			next = semi + 1;
		}
		else
			next = NULL;
		item = sf_trim(item);
		if (*item == '\0')
			continue;

		eq = strchr(item, '=');
		if (eq == NULL)
		{
			if (!sf_parse_preset(item, server, parse_epoch, fmt, &st, detail))
				return false;
			continue;
		}
		st.first = false;
		*eq = '\0';
		if (!sf_parse_key(sf_trim(item), sf_trim(eq + 1), parse_epoch, fmt,
						  &st, detail))
			return false;
	}
	return sf_check_format(&st, server, fmt, detail);
}

/*
 * snowflake_format_names_server
 *		Whether a layout argument starts from the server's own layout
 *		("server; fields=..."), which the caller must then supply.  Empty
 *		items before it are skipped, as snowflake_parse_format skips them.
 */
bool
snowflake_format_names_server(const char *text)
{
	const char *p = text;
	size_t		n;

	while (isspace((unsigned char) *p) || *p == ';')
		p++;
	if (pg_strncasecmp(p, "server", 6) != 0)
		return false;
	p += 6;
	n = strspn(p, " \t\n\r\f\v");
	return p[n] == '\0' || p[n] == ';';
}

/*
 * snowflake_format_unpacker
 *		The shifts and masks that split an ID of fmt (snowflake_unpack_with).
 */
void
snowflake_format_unpacker(const SnowflakeFormat *fmt,
						  SnowflakeUnpacker *unpacker)
{
	unpacker->ms_shift = fmt->node_bits + fmt->sequence_bits;
	unpacker->node_shift = fmt->sequence_above_node ? 0 : fmt->sequence_bits;
	unpacker->seq_shift = fmt->sequence_above_node ? fmt->node_bits : 0;
	unpacker->node_mask = (int64) ((UINT64CONST(1) << fmt->node_bits) - 1);
	unpacker->seq_mask = (int64) ((UINT64CONST(1) << fmt->sequence_bits) - 1);
}

/*
 * snowflake_format_unpack
 *		Split an ID into its fields as the bits say; parts->ms counts the
 *		format's units.  As snowflake_unpack, the timestamp is not masked.
 */
void
snowflake_format_unpack(const SnowflakeFormat *fmt, int64 id,
						SnowflakeParts *parts)
{
	SnowflakeUnpacker unpacker;

	snowflake_format_unpacker(fmt, &unpacker);
	snowflake_unpack_with(&unpacker, id, parts);
}

/*
 * snowflake_format_pack
 *		Build an ID from its fields (parts->ms in units), each range-checked.
 */
bool
snowflake_format_pack(const SnowflakeFormat *fmt, const SnowflakeParts *parts,
					  int64 *id, char *detail)
{
	int64		max_node = (int64) ((UINT64CONST(1) << fmt->node_bits) - 1);
	int64		max_seq = (int64) ((UINT64CONST(1) << fmt->sequence_bits) - 1);
	int			node_shift = fmt->sequence_above_node ? 0 : fmt->sequence_bits;
	int			seq_shift = fmt->sequence_above_node ? fmt->node_bits : 0;

	if (parts->ms < 0 || parts->ms > snowflake_format_max_units(fmt))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The timestamp must lie between the epoch and %lld milliseconds after it.",
				 (long long) snowflake_format_max_units(fmt));
		return false;
	}
	if (parts->node_id < 0 || parts->node_id > max_node)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The node id must be between 0 and %lld.", (long long) max_node);
		return false;
	}
	if (parts->sequence < 0 || parts->sequence > max_seq)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The sequence must be between 0 and %lld.", (long long) max_seq);
		return false;
	}
	*id = (parts->ms << (fmt->node_bits + fmt->sequence_bits)) |
		(parts->node_id << node_shift) | (parts->sequence << seq_shift);
	return true;
}

/*
 * snowflake_format_node_part
 *		The value of named node part number "part" within a node id.
 */
int64
snowflake_format_node_part(const SnowflakeFormat *fmt, int64 node_id, int part)
{
	int			shift = 0;

	for (int i = part + 1; i < fmt->nparts; i++)
		shift += fmt->part_bits[i];
	return (node_id >> shift) &
		(int64) ((UINT64CONST(1) << fmt->part_bits[part]) - 1);
}
