/*-------------------------------------------------------------------------
 *
 * layout_parse.c
 *	  Fuzz target: the parser of layout arguments (snowflake_parse_format,
 *	  src/layout.c) and of the layout settings' integers
 *	  (snowflake_parse_int).
 *
 * The input is the text (up to its first zero byte).  As the decoders do
 * (src/functions.c), the server's layout is supplied when the text names
 * it (snowflake_format_names_server).  Properties:
 *	- a refused layout has a detail sentence (layout_common.h);
 *	- a parsed one is within the bounds the decoders rely on: the fields
 *	  at most 63 bits, the timestamp at least one, the node field at most
 *	  31 in at most four named parts whose widths add up to it, distinct
 *	  valid names, a unit of 1 ms to a day, an epoch within years 0 to
 *	  9999 (in milliseconds: the stand-in for dates keeps to them too);
 *	  the server's widths when it names the server;
 *	- written back as text (epoch in milliseconds, unit, fields), it
 *	  parses to the same layout;
 *	- whether the server is supplied or not changes nothing unless the
 *	  text names it;
 *	- snowflake_parse_int accepts exactly the plain decimal integers of
 *	  int32 (optional sign and white space, no leading zero).
 *
 * Test only: never part of the extension.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "layout_common.h"

/* The layout as text that spells everything out. */
static void
format_text(const SnowflakeFormat *fmt, char *buf, size_t len)
{
	char		fields[400];
	char	   *p = fields;
	char	   *end = fields + sizeof(fields);

	p += snprintf(p, end - p, "timestamp:%d", fmt->timestamp_bits);
	if (fmt->sequence_above_node && fmt->sequence_bits > 0)
		p += snprintf(p, end - p, ",sequence:%d", fmt->sequence_bits);
	if (fmt->nparts == 0 && fmt->node_bits > 0)
		p += snprintf(p, end - p, ",node:%d", fmt->node_bits);
	for (int i = 0; i < fmt->nparts; i++)
		p += snprintf(p, end - p, ",%s:%d", fmt->part_names[i], fmt->part_bits[i]);
	if (!fmt->sequence_above_node && fmt->sequence_bits > 0)
		snprintf(p, end - p, ",sequence:%d", fmt->sequence_bits);
	snprintf(buf, len, "epoch=%lld; unit=%lldms; fields=%s",
			 (long long) fmt->epoch_ms, (long long) fmt->unit_ms, fields);
}

static bool
same_format(const SnowflakeFormat *a, const SnowflakeFormat *b)
{
	if (a->epoch_ms != b->epoch_ms || a->unit_ms != b->unit_ms ||
		a->timestamp_bits != b->timestamp_bits || a->node_bits != b->node_bits ||
		a->sequence_bits != b->sequence_bits ||
		a->sequence_above_node != b->sequence_above_node)
		return false;
	/* A node field without named parts comes back as one named "node". */
	if (a->nparts == 0)
		return a->node_bits == 0 ? b->nparts == 0 :
			b->nparts == 1 && strcmp(b->part_names[0], "node") == 0;
	if (a->nparts != b->nparts)
		return false;
	for (int i = 0; i < a->nparts; i++)
		if (a->part_bits[i] != b->part_bits[i] ||
			strcmp(a->part_names[i], b->part_names[i]) != 0)
			return false;
	return true;
}

/* The bounds a parsed layout keeps. */
static void
check_bounds(const SnowflakeFormat *fmt)
{
	int			sum = 0;

	FUZZ_CHECK(fmt->timestamp_bits >= 1 && fmt->node_bits >= 0 && fmt->sequence_bits >= 0 &&
			   fmt->node_bits <= SNOWFLAKE_MAX_NODE_BITS &&
			   fmt->sequence_bits <= SNOWFLAKE_MAX_SEQUENCE_BITS &&
			   fmt->timestamp_bits + fmt->node_bits + fmt->sequence_bits <= 63,
			   "widths %d/%d/%d", fmt->timestamp_bits, fmt->node_bits, fmt->sequence_bits);
	FUZZ_CHECK(fmt->unit_ms >= 1 && fmt->unit_ms <= SNOWFLAKE_MAX_UNIT_MS,
			   "unit %lld", (long long) fmt->unit_ms);
	/* The stand-in's dates are within these years too. */
	FUZZ_CHECK(fmt->epoch_ms >= INT64CONST(-62167219200000) &&
			   fmt->epoch_ms <= INT64CONST(253402300799999),
			   "epoch %lld", (long long) fmt->epoch_ms);
	FUZZ_CHECK(fmt->nparts >= 0 && fmt->nparts <= SNOWFLAKE_MAX_NODE_PARTS,
			   "%d node parts", fmt->nparts);
	FUZZ_CHECK(!fmt->sequence_above_node || (fmt->nparts > 0 && fmt->sequence_bits > 0),
			   "sequence above a node field of no parts");
	for (int i = 0; i < fmt->nparts; i++)
	{
		const char *name = fmt->part_names[i];
		size_t		n = strnlen(name, SNOWFLAKE_FIELD_NAME_LEN);

		FUZZ_CHECK(n > 0 && n < SNOWFLAKE_FIELD_NAME_LEN &&
				   strspn(name, "abcdefghijklmnopqrstuvwxyz0123456789_") == n &&
				   !isdigit((unsigned char) name[0]) &&
				   strcmp(name, "timestamp") != 0 && strcmp(name, "sequence") != 0,
				   "node part name \"%.*s\"", (int) n, name);
		for (int j = 0; j < i; j++)
			FUZZ_CHECK(strcmp(name, fmt->part_names[j]) != 0, "part \"%s\" twice", name);
		FUZZ_CHECK(fmt->part_bits[i] >= 1, "part of %d bits", fmt->part_bits[i]);
		sum += fmt->part_bits[i];
	}
	FUZZ_CHECK(fmt->nparts == 0 || sum == fmt->node_bits,
			   "parts of %d bits in a node field of %d", sum, fmt->node_bits);
}

/* snowflake_parse_int against a plain reading of its rule. */
static void
check_parse_int(const char *text)
{
	const char *p = text;
	const char *digits;
	int			value = 12345;
	bool		ok = snowflake_parse_int(text, &value);
	bool		expect;
	long long	v = 0;
	bool		neg = false;
	size_t		nd;

	while (*p && strchr(" \t\n\v\f\r", *p))
		p++;
	if (*p == '+' || *p == '-')
		neg = *p++ == '-';
	digits = p;
	nd = strspn(p, "0123456789");
	p += nd;
	while (*p && strchr(" \t\n\v\f\r", *p))
		p++;
	expect = nd > 0 && *p == '\0' && !(digits[0] == '0' && nd > 1) && nd <= 10;
	if (expect)
	{
		for (size_t i = 0; i < nd; i++)
			v = v * 10 + (digits[i] - '0');
		v = neg ? -v : v;
		expect = v >= PG_INT32_MIN && v <= PG_INT32_MAX;
	}
	FUZZ_CHECK(ok == expect && (!ok || value == v),
			   "snowflake_parse_int(\"%s\") = %d (%d), the rule says %d (%lld)",
			   text, ok, value, expect, v);
}

int
LLVMFuzzerTestOneInput(const uint8 *data, size_t size)
{
	char	   *text = fuzz_cstring(data, size);
	SnowflakeFormat server;
	SnowflakeFormat fmt;
	SnowflakeFormat other;
	char		detail[SNOWFLAKE_DETAIL_LEN];
	char		detail2[SNOWFLAKE_DETAIL_LEN];
	bool		names_server = snowflake_format_names_server(text);
	bool		ok;
	bool		ok2;

	check_parse_int(text);
	default_server_format(&server);
	memset(detail, 0x7F, sizeof(detail));
	ok = snowflake_parse_format(text, names_server ? &server : NULL,
								stub_parse_epoch, &fmt, detail);

	/* The server's layout matters only to a text that names it. */
	ok2 = snowflake_parse_format(text, names_server ? NULL : &server,
								 stub_parse_epoch, &other, detail2);
	FUZZ_CHECK(names_server || (ok == ok2 && (!ok || same_format(&fmt, &other))),
			   "\"%s\" does not name the server, but its layout changes the result", text);

	if (!ok)
	{
		check_detail(detail, text);
		free(text);
		return 0;
	}
	check_bounds(&fmt);
	if (names_server)
		FUZZ_CHECK(fmt.timestamp_bits == server.timestamp_bits &&
				   fmt.node_bits == server.node_bits &&
				   fmt.sequence_bits == server.sequence_bits &&
				   fmt.epoch_ms == server.epoch_ms && fmt.unit_ms == 1,
				   "\"%s\" names the server but changes its layout", text);
	{
		char		again[512];

		format_text(&fmt, again, sizeof(again));
		ok2 = snowflake_parse_format(again, NULL, stub_parse_epoch, &other, detail2);
		FUZZ_CHECK(ok2 && same_format(&fmt, &other),
				   "\"%s\" parsed, written back as \"%s\", %s", text, again,
				   ok2 ? "parses to another layout" : detail2);
	}
	free(text);
	return 0;
}
