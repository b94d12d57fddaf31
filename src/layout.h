/*-------------------------------------------------------------------------
 *
 * layout.h
 *	  Pure arithmetic on snowflake IDs: packing, unpacking, range checks and
 *	  parsing of the layout settings.
 *
 * Nothing here touches PostgreSQL state (no palloc, no ereport, no GUCs), so
 * the functions can be called from a postmaster hook, a GUC check hook or a
 * backend alike.  Functions that can fail return false and write a sentence
 * suitable for errdetail into a caller-supplied buffer.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_LAYOUT_H
#define SNOWFLAKE_LAYOUT_H

/*
 * Functions and variables shared between the extension's files but not with
 * PostgreSQL.  Hidden, calls between the files are direct rather than through
 * the PLT, and the hot path reads shared variables without the GOT.  (From
 * PostgreSQL 16, PGXS builds with -fvisibility=hidden anyway and exports
 * what PG_FUNCTION_INFO_V1 and _PG_init mark.)
 */
#if defined(__GNUC__)
#define SNOWFLAKE_INTERNAL __attribute__((visibility("hidden")))
#else
#define SNOWFLAKE_INTERNAL
#endif

/* Bounds of each field width, in bits. */
#define SNOWFLAKE_MIN_TIMESTAMP_BITS	32
#define SNOWFLAKE_MAX_TIMESTAMP_BITS	53	/* 2^53 ms: 285,000 years, past the
												 * end of timestamptz */
#define SNOWFLAKE_MAX_NODE_BITS			31
#define SNOWFLAKE_MAX_SEQUENCE_BITS		31
#define SNOWFLAKE_TOTAL_BITS			63

/* Default layout: 41/10/12, epoch 2024-01-01 00:00:00 UTC. */
#define SNOWFLAKE_DEFAULT_TIMESTAMP_BITS	41
#define SNOWFLAKE_DEFAULT_NODE_BITS			10
#define SNOWFLAKE_DEFAULT_SEQUENCE_BITS		12
#define SNOWFLAKE_DEFAULT_EPOCH				"2024-01-01 00:00:00+00"

/* Room for any detail message produced here. */
#define SNOWFLAKE_DETAIL_LEN	256

/*
 * The shape of an ID.  epoch_ms is the epoch in milliseconds since
 * 1970-01-01 00:00:00 UTC (the Unix epoch).
 */
typedef struct SnowflakeLayout
{
	int64		epoch_ms;
	int			timestamp_bits;
	int			node_bits;
	int			sequence_bits;
} SnowflakeLayout;

/* Largest value of each field. */
static inline int64
snowflake_max_ms(const SnowflakeLayout *layout)
{
	return (int64) ((UINT64CONST(1) << layout->timestamp_bits) - 1);
}

static inline int64
snowflake_max_node(const SnowflakeLayout *layout)
{
	return (int64) ((UINT64CONST(1) << layout->node_bits) - 1);
}

static inline int64
snowflake_max_sequence(const SnowflakeLayout *layout)
{
	return (int64) ((UINT64CONST(1) << layout->sequence_bits) - 1);
}

/*
 * The generator's state is a "packed" value, (ms << sequence_bits) | seq:
 * adding one moves to the next sequence number and carries into the next
 * millisecond.  This turns it into the ID of the node whose field is
 * node_part (node_id << sequence_bits).
 */
static inline int64
snowflake_packed_to_id(const SnowflakeLayout *layout, int64 node_part,
					   int64 packed)
{
	int			sb = layout->sequence_bits;

	return ((packed >> sb) << (layout->node_bits + sb)) | node_part |
		(packed & snowflake_max_sequence(layout));
}

/* Parts of an ID, as the bits say (the timestamp field is not masked). */
typedef struct SnowflakeParts
{
	int64		ms;				/* milliseconds since the layout's epoch */
	int64		node_id;
	int64		sequence;
} SnowflakeParts;

/*
 * Layouts of IDs minted elsewhere (Twitter, Discord, Sonyflake...), for the
 * decoders' optional layout argument.  Fields from the most significant:
 * the timestamp, then the node field and the sequence in either order.  The
 * node field may be split into named parts (Twitter's datacenter and
 * worker), most significant first.  Time counts units of unit_ms
 * milliseconds (Sonyflake counts 10 ms).  The sign bit is never part of an
 * ID: a layout that spells 64 bits (Discord's 42-bit timestamp) keeps only
 * the 63 - node_bits - sequence_bits low bits of its timestamp, the IDs a
 * bigint holds.
 */
#define SNOWFLAKE_MAX_NODE_PARTS		4
#define SNOWFLAKE_FIELD_NAME_LEN		32
#define SNOWFLAKE_MAX_UNIT_MS			86400000

typedef struct SnowflakeFormat
{
	int64		epoch_ms;		/* Unix milliseconds */
	int64		unit_ms;		/* milliseconds per timestamp unit */
	int			timestamp_bits; /* as stored: at most 63 - the others */
	int			node_bits;		/* all node parts together */
	int			sequence_bits;
	bool		sequence_above_node;	/* Sonyflake's order */
	int			nparts;			/* named node parts, 0 if none */
	int			part_bits[SNOWFLAKE_MAX_NODE_PARTS];
	char		part_names[SNOWFLAKE_MAX_NODE_PARTS][SNOWFLAKE_FIELD_NAME_LEN];
} SnowflakeFormat;

/* Largest timestamp (in units) a format holds. */
static inline int64
snowflake_format_max_units(const SnowflakeFormat *fmt)
{
	return (int64) ((UINT64CONST(1) << fmt->timestamp_bits) - 1);
}

extern SNOWFLAKE_INTERNAL void snowflake_format_from_layout(const SnowflakeLayout *layout,
															SnowflakeFormat *fmt);
/*
 * Reads a time written as text into Unix milliseconds (PostgreSQL's own
 * time input, supplied by the caller: this file uses no PostgreSQL state).
 */
typedef bool (*SnowflakeEpochParser) (const char *text, int64 *epoch_ms,
									  char *detail);

extern SNOWFLAKE_INTERNAL bool snowflake_parse_format(const char *text,
													  const SnowflakeFormat *server,
													  SnowflakeEpochParser parse_epoch,
													  SnowflakeFormat *fmt,
													  char *detail);
extern SNOWFLAKE_INTERNAL bool snowflake_format_names_server(const char *text);
extern SNOWFLAKE_INTERNAL void snowflake_format_unpack(const SnowflakeFormat *fmt,
													   int64 id,
													   SnowflakeParts *parts);

/*
 * A format's unpacking worked out once (snowflake_format_unpacker): the
 * shift of each field and the masks of the node and sequence fields, so
 * that snowflake_unpack_with splits an ID, as snowflake_format_unpack does,
 * in a few instructions.  The decoders keep one per call site.
 */
typedef struct SnowflakeUnpacker
{
	int			ms_shift;		/* node_bits + sequence_bits */
	int			node_shift;
	int			seq_shift;
	int64		node_mask;
	int64		seq_mask;
} SnowflakeUnpacker;

extern SNOWFLAKE_INTERNAL void snowflake_format_unpacker(const SnowflakeFormat *fmt,
														 SnowflakeUnpacker *unpacker);

/* Split an ID as the bits say: parts->ms counts the format's units. */
static inline void
snowflake_unpack_with(const SnowflakeUnpacker *unpacker, int64 id,
					  SnowflakeParts *parts)
{
	parts->ms = id >> unpacker->ms_shift;
	parts->node_id = (id >> unpacker->node_shift) & unpacker->node_mask;
	parts->sequence = (id >> unpacker->seq_shift) & unpacker->seq_mask;
}
extern SNOWFLAKE_INTERNAL bool snowflake_format_pack(const SnowflakeFormat *fmt,
													 const SnowflakeParts *parts,
													 int64 *id, char *detail);
extern SNOWFLAKE_INTERNAL int64 snowflake_format_node_part(const SnowflakeFormat *fmt,
														   int64 node_id, int part);
extern SNOWFLAKE_INTERNAL const char *snowflake_preset_names(void);

extern SNOWFLAKE_INTERNAL void snowflake_unpack(const SnowflakeLayout *layout, int64 id,
							 SnowflakeParts *parts);
extern SNOWFLAKE_INTERNAL bool snowflake_pack(const SnowflakeLayout *layout,
						   const SnowflakeParts *parts, int64 *id,
						   char *detail);
extern SNOWFLAKE_INTERNAL bool snowflake_layout_check(const SnowflakeLayout *layout,
								   char *detail);
extern SNOWFLAKE_INTERNAL bool snowflake_node_span_check(const SnowflakeLayout *layout,
														int node_id, int span,
														char *detail);
extern SNOWFLAKE_INTERNAL bool snowflake_node_check(const SnowflakeLayout *layout, int node_id,
								 char *detail);
extern SNOWFLAKE_INTERNAL bool snowflake_parse_int(const char *text, int *value);

#endif							/* SNOWFLAKE_LAYOUT_H */
