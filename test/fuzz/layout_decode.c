/*-------------------------------------------------------------------------
 *
 * layout_decode.c
 *	  Fuzz target: splitting IDs into their fields and building them again
 *	  (src/layout.c), with the server's layout and with layouts of IDs
 *	  minted elsewhere, as the decoders and snowflake_compose do.
 *
 * The input: 8 bytes of an ID (its sign bit cleared: the decoders refuse
 * negative IDs first), 3 bytes of a server layout's widths, 8 bytes of a
 * node id and a span, then a layout argument (to its first zero byte).
 * Properties:
 *	- snowflake_layout_check accepts exactly the widths of the settings'
 *	  bounds that add up to at most 63 bits; node ids and spans are
 *	  accepted exactly when they fit the node field;
 *	- with the server's layout, an ID splits into fields within their
 *	  widths that build it again, the generator's packed value too;
 *	- with a parsed layout, both ways of splitting agree, each field is
 *	  within its width (the timestamp within the bits above the others),
 *	  the fields build the ID again whenever the timestamp is within the
 *	  layout's width (and are refused, with a detail, when not), and the
 *	  named node parts make up the node id.
 *
 * Test only: never part of the extension.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "layout_common.h"

/* The server's widths, checked against the rules of the settings. */
static bool
check_server_layout(SnowflakeLayout *layout, const uint8 **data, size_t *size)
{
	char		detail[SNOWFLAKE_DETAIL_LEN];
	bool		ok;
	bool		expect;

	layout->epoch_ms = INT64CONST(1704067200000);
	layout->timestamp_bits = (int) (int8) fuzz_take(data, size, 1);
	layout->node_bits = (int) (int8) fuzz_take(data, size, 1);
	layout->sequence_bits = (int) (int8) fuzz_take(data, size, 1);
	ok = snowflake_layout_check(layout, detail);
	expect = layout->timestamp_bits >= 32 && layout->timestamp_bits <= 53 &&
		layout->node_bits >= 0 && layout->node_bits <= 31 &&
		layout->sequence_bits >= 0 && layout->sequence_bits <= 31 &&
		layout->timestamp_bits + layout->node_bits + layout->sequence_bits <= 63;
	FUZZ_CHECK(ok == expect, "widths %d/%d/%d: accepted %d", layout->timestamp_bits,
			   layout->node_bits, layout->sequence_bits, ok);
	if (!ok)
		check_detail(detail, "");
	return ok;
}

/* Node ids and spans: accepted exactly when they fit the node field. */
static void
check_node(const SnowflakeLayout *layout, int node_id, int span)
{
	char		detail[SNOWFLAKE_DETAIL_LEN];
	int64		max_node = ((int64) 1 << layout->node_bits) - 1;
	bool		ok;

	ok = snowflake_node_check(layout, node_id, detail);
	FUZZ_CHECK(ok == (node_id >= 0 && node_id <= max_node),
			   "node id %d with %d node bits: accepted %d", node_id, layout->node_bits, ok);
	if (!ok)
		check_detail(detail, "");
	ok = snowflake_node_span_check(layout, node_id, span, detail);
	FUZZ_CHECK(ok == (span >= 1 && (int64) Max(node_id, 0) + span - 1 <= max_node),
			   "node id %d, span %d with %d node bits: accepted %d", node_id, span,
			   layout->node_bits, ok);
	if (!ok)
		check_detail(detail, "");
}

/* An ID with the server's layout: split, built again, and as packed. */
static void
check_server_id(const SnowflakeLayout *layout, int64 id)
{
	SnowflakeParts parts;
	char		detail[SNOWFLAKE_DETAIL_LEN];
	int64		again = -1;
	int			shift = layout->node_bits + layout->sequence_bits;

	snowflake_unpack(layout, id, &parts);
	FUZZ_CHECK(parts.ms >= 0 && parts.ms <= (PG_INT64_MAX >> shift) &&
			   parts.node_id >= 0 && parts.node_id <= snowflake_max_node(layout) &&
			   parts.sequence >= 0 && parts.sequence <= snowflake_max_sequence(layout),
			   "%lld split into %lld/%lld/%lld", (long long) id, (long long) parts.ms,
			   (long long) parts.node_id, (long long) parts.sequence);
	if (parts.ms > snowflake_max_ms(layout))
	{
		FUZZ_CHECK(!snowflake_pack(layout, &parts, &again, detail),
				   "a timestamp past the layout's width was packed");
		check_detail(detail, "");
		return;
	}
	FUZZ_CHECK(snowflake_pack(layout, &parts, &again, detail) && again == id,
			   "%lld built again as %lld", (long long) id, (long long) again);
	again = snowflake_packed_to_id(layout, parts.node_id << layout->sequence_bits,
								   (parts.ms << layout->sequence_bits) | parts.sequence);
	FUZZ_CHECK(again == id, "%lld from its packed value: %lld", (long long) id,
			   (long long) again);
}

/* An ID with a parsed layout. */
static void
check_format_id(const SnowflakeFormat *fmt, int64 id)
{
	SnowflakeUnpacker unpacker;
	SnowflakeParts parts;
	SnowflakeParts parts2;
	char		detail[SNOWFLAKE_DETAIL_LEN];
	int			low = fmt->node_bits + fmt->sequence_bits;
	int			node_shift = fmt->sequence_above_node ? 0 : fmt->sequence_bits;
	int			seq_shift = fmt->sequence_above_node ? fmt->node_bits : 0;
	uint64		rebuilt;
	int64		again = -1;
	int64		node = 0;

	snowflake_format_unpack(fmt, id, &parts);
	snowflake_format_unpacker(fmt, &unpacker);
	snowflake_unpack_with(&unpacker, id, &parts2);
	FUZZ_CHECK(memcmp(&parts, &parts2, sizeof(parts)) == 0, "two splits differ");
	FUZZ_CHECK(parts.ms >= 0 && parts.ms <= (PG_INT64_MAX >> low) &&
			   parts.node_id >= 0 && parts.node_id < ((int64) 1 << fmt->node_bits) &&
			   parts.sequence >= 0 && parts.sequence < ((int64) 1 << fmt->sequence_bits),
			   "%lld split into %lld/%lld/%lld", (long long) id, (long long) parts.ms,
			   (long long) parts.node_id, (long long) parts.sequence);
	rebuilt = ((uint64) parts.ms << low) | ((uint64) parts.node_id << node_shift) |
		((uint64) parts.sequence << seq_shift);
	FUZZ_CHECK(rebuilt == (uint64) id, "%lld's fields hold other bits", (long long) id);

	if (parts.ms > snowflake_format_max_units(fmt))
	{
		FUZZ_CHECK(!snowflake_format_pack(fmt, &parts, &again, detail),
				   "a timestamp past the layout's width was packed");
		check_detail(detail, "");
	}
	else
		FUZZ_CHECK(snowflake_format_pack(fmt, &parts, &again, detail) && again == id,
				   "%lld built again as %lld", (long long) id, (long long) again);

	for (int i = 0; i < fmt->nparts; i++)
	{
		int64		part = snowflake_format_node_part(fmt, parts.node_id, i);

		FUZZ_CHECK(part >= 0 && part < ((int64) 1 << fmt->part_bits[i]),
				   "node part %d is %lld", i, (long long) part);
		node = (node << fmt->part_bits[i]) | part;
	}
	FUZZ_CHECK(fmt->nparts == 0 || node == parts.node_id,
			   "node parts make %lld, not %lld", (long long) node, (long long) parts.node_id);
}

int
LLVMFuzzerTestOneInput(const uint8 *data, size_t size)
{
	int64		id = (int64) (fuzz_take(&data, &size, 8) & (uint64) PG_INT64_MAX);
	SnowflakeLayout layout;
	SnowflakeFormat server;
	SnowflakeFormat fmt;
	bool		have_server;
	int			node_id;
	int			span;
	char	   *text;
	char		detail[SNOWFLAKE_DETAIL_LEN];

	have_server = check_server_layout(&layout, &data, &size);
	node_id = (int) (int32) fuzz_take(&data, &size, 4);
	span = (int) (int32) fuzz_take(&data, &size, 4);
	if (have_server)
	{
		check_node(&layout, node_id, span);
		check_server_id(&layout, id);
		snowflake_format_from_layout(&layout, &server);
	}
	else
		default_server_format(&server);

	text = fuzz_cstring(data, size);
	if (snowflake_parse_format(text, snowflake_format_names_server(text) ? &server : NULL,
							   stub_parse_epoch, &fmt, detail))
		check_format_id(&fmt, id);
	free(text);
	return 0;
}
