/*-------------------------------------------------------------------------
 *
 * functions.c
 *	  The SQL-callable functions of the snowflake extension.
 *
 * Generators call down into generator.c, and without the preload start the
 * background writer (worker.c); decoders only need the layout, which comes
 * from the shared state when the library is preloaded or, on PostgreSQL 17
 * and later, attached without it, and from the server configuration on 15
 * and 16 without the preload (config.c), so they work on every server.  Given
 * a layout argument (a preset such as 'twitter', or a spelled-out layout:
 * layout.c), the decoders read IDs minted by other systems instead.
 *
 * snowflake_lastval() returns the last ID the generators handed to this
 * backend: a backend-local variable, stored after the generator has
 * released its spinlock, read without any lock; DISCARD ALL and DISCARD
 * SEQUENCES forget it, as they forget lastval() (a ProcessUtility hook,
 * installed whenever the library is loaded).
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "access/xlog.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "lib/stringinfo.h"
#include "miscadmin.h"
#include "nodes/parsenodes.h"
#include "tcop/utility.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/timestamp.h"

#include "config.h"
#include "functions.h"
#include "generator.h"
#include "layout.h"
#include "reservation.h"
#include "shared.h"
#include "worker.h"

/* Largest count accepted by snowflake_nextval_batch(). */
#define SNOWFLAKE_MAX_BATCH		1000000

PG_FUNCTION_INFO_V1(snowflake_nextval);
PG_FUNCTION_INFO_V1(snowflake_nextval_batch);
PG_FUNCTION_INFO_V1(snowflake_lastval);
PG_FUNCTION_INFO_V1(snowflake_decode);
PG_FUNCTION_INFO_V1(snowflake_timestamp);
PG_FUNCTION_INFO_V1(snowflake_node_id);
PG_FUNCTION_INFO_V1(snowflake_sequence);
PG_FUNCTION_INFO_V1(snowflake_min_id);
PG_FUNCTION_INFO_V1(snowflake_max_id);
PG_FUNCTION_INFO_V1(snowflake_compose);
PG_FUNCTION_INFO_V1(snowflake_stats);
PG_FUNCTION_INFO_V1(snowflake_stats_reset);
PG_FUNCTION_INFO_V1(snowflake_adopt_layout);
PG_FUNCTION_INFO_V1(snowflake_adopt_node_id);
PG_FUNCTION_INFO_V1(snowflake_confirm_restore);

/*
 * The last ID snowflake_nextval() or snowflake_nextval_batch() handed to
 * this backend (of a batch, its largest), -1 before the first: IDs are never
 * negative.  Backend-local, so one plain store per call, outside the
 * spinlock; other backends never see it, and a rollback leaves it as it is
 * (the ID was handed out all the same), as for lastval().
 */
static int64 sf_lastval = -1;

static ProcessUtility_hook_type prev_ProcessUtility = NULL;

/*
 * sf_process_utility
 *		DISCARD ALL and DISCARD SEQUENCES also forget snowflake_lastval(),
 *		as they forget lastval(): a connection pooler that resets server
 *		sessions with DISCARD ALL hands the next client a session without
 *		one.  Forgotten once the statement has succeeded.
 */
static void
sf_process_utility(PlannedStmt *pstmt, const char *queryString,
				   bool readOnlyTree, ProcessUtilityContext context,
				   ParamListInfo params, QueryEnvironment *queryEnv,
				   DestReceiver *dest, QueryCompletion *qc)
{
	Node	   *stmt = pstmt->utilityStmt;

	if (prev_ProcessUtility)
		prev_ProcessUtility(pstmt, queryString, readOnlyTree, context,
							params, queryEnv, dest, qc);
	else
		standard_ProcessUtility(pstmt, queryString, readOnlyTree, context,
								params, queryEnv, dest, qc);

	if (IsA(stmt, DiscardStmt) &&
		(((DiscardStmt *) stmt)->target == DISCARD_ALL ||
		 ((DiscardStmt *) stmt)->target == DISCARD_SEQUENCES))
		sf_lastval = -1;
}

/*
 * snowflake_functions_init
 *		Install the DISCARD hook.  Allowed whenever the library is loaded,
 *		preloaded or not; snowflake_lastval() can only have a value once the
 *		library is loaded in the backend, so the hook is always there when
 *		it matters.
 */
void
snowflake_functions_init(void)
{
	prev_ProcessUtility = ProcessUtility_hook;
	ProcessUtility_hook = sf_process_utility;
}

/*
 * sf_layout
 *		The server's layout, or an error naming the bad setting; *fixed
 *		tells whether it is fixed for the life of this process.
 *
 * Preloaded, or without the preload on PostgreSQL 17 and later, it is the
 * one in force in the shared state (attached here if need be, and fixed
 * once per server life); on 15 and 16 without the preload, the one the
 * server configuration gives now (a reload may change it).
 */
static void
sf_layout(SnowflakeLayout *layout, bool *fixed)
{
	SnowflakeShared *s = snowflake_attach();
	const char *bad_name;
	char		detail[SNOWFLAKE_DETAIL_LEN];

	*fixed = s != NULL;
	if (s != NULL)
	{
		*layout = s->layout;
		return;
	}
	if (!snowflake_file_layout(layout, &bad_name, detail))
		snowflake_report_settings(ERROR, bad_name, detail);
}

/* Reject a negative ID. */
static pg_noinline void
sf_negative_id(int64 id)
{
	ereport(ERROR,
			(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
			 errmsg("snowflake ID must not be negative"),
			 errdetail("The value %lld has the sign bit set, which no snowflake ID has.",
					   (long long) id)));
}

static inline void
sf_check_id(int64 id)
{
	if (unlikely(id < 0))
		sf_negative_id(id);
}

/*
 * What a call site of a function here (one FmgrInfo: an expression of a
 * query, an index expression, a partition bound) keeps between calls, in
 * fn_extra: the layout it works with, parsed once for a constant layout
 * argument, with what its decoding needs worked out (the fields' shifts and
 * masks, the timestamp's offset and bound), and snowflake_decode's result
 * type, looked up and blessed once.  Decoding a table's rows then costs
 * each row none of that: no catalog look-up, no parsing, no division.
 */
typedef struct SfCallCache
{
	SnowflakeFormat fmt;		/* the layout of the last call */
	bool		fmt_fixed;		/* fmt is the server's own, fixed for good */
	SnowflakeUnpacker unpacker; /* fmt's fields */
	int64		ts_offset_ms;	/* fmt's epoch, in ms after 2000-01-01 */
	int64		ts_max_units;	/* the largest timestamp field a timestamptz
								 * holds */
	int			len;			/* length of the layout argument's text in
								 * fmt, -1 before the first */
	char	   *text;			/* that text */
	TupleDesc	tupdesc;		/* snowflake_decode's result type, or NULL */
	bool		row3;			/* it is (timestamptz, int4, int4) */
} SfCallCache;

static SfCallCache *
sf_call_cache(FunctionCallInfo fcinfo)
{
	SfCallCache *cache = (SfCallCache *) fcinfo->flinfo->fn_extra;

	if (likely(cache != NULL))
		return cache;
	cache = MemoryContextAllocZero(fcinfo->flinfo->fn_mcxt, sizeof(SfCallCache));
	cache->len = -1;
	fcinfo->flinfo->fn_extra = cache;
	return cache;
}

/*
 * Makes fmt the cache's layout, with what decoding needs: the unpacker,
 * and the timestamp's offset and bound.  0 <= units < 2^63 and |offset| <
 * 2^48, so the bound is positive, and a field within it converts without
 * overflow (sf_id_timestamp).
 */
static void
sf_set_format(SfCallCache *cache, const SnowflakeFormat *fmt)
{
	int64		offset = fmt->epoch_ms - SF_POSTGRES_EPOCH_UNIX_MS;
	int64		limit = END_TIMESTAMP / 1000 - offset;

	cache->fmt = *fmt;
	snowflake_format_unpacker(fmt, &cache->unpacker);
	cache->ts_offset_ms = offset;
	cache->ts_max_units = fmt->unit_ms == 1 ? limit - 1 : (limit - 1) / fmt->unit_ms;
}

/*
 * Parse a layout argument (22023 when invalid).  "server; fields=..."
 * splits the server's node field.
 */
static void
sf_parse_layout_arg(const char *str, SnowflakeFormat *fmt)
{
	SnowflakeFormat server;
	const SnowflakeFormat *serverp = NULL;
	char		detail[SNOWFLAKE_DETAIL_LEN];

	if (snowflake_format_names_server(str))
	{
		SnowflakeLayout layout;
		bool		fixed;

		sf_layout(&layout, &fixed);
		snowflake_format_from_layout(&layout, &server);
		serverp = &server;
	}
	if (!snowflake_parse_format(str, serverp, snowflake_parse_epoch, fmt, detail))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowflake layout \"%s\"",
						snowflake_input_excerpt(str, strlen(str))),
				 errdetail("%s", detail),
				 errhint("Name a preset (%s), or spell a layout out, such as 'epoch=2015-01-01; fields=timestamp:42,worker:5,process:5,sequence:12'.",
						 snowflake_preset_names())));
}

/*
 * sf_call_format
 *		The call site's cache with the layout the call works with: its
 *		argument number argno when given (a preset or a spelled-out layout,
 *		22023 when invalid), else the server's own.  The layout is valid
 *		until the next call.
 */
static SfCallCache *
sf_call_format(FunctionCallInfo fcinfo, int argno)
{
	SfCallCache *cache = sf_call_cache(fcinfo);
	text	   *arg;
	const char *data;
	int			len;
	char	   *str;
	SnowflakeFormat fmt;

	if (PG_NARGS() <= argno)
	{
		if (likely(cache->fmt_fixed))
			return cache;

		{
			SnowflakeLayout layout;

			sf_layout(&layout, &cache->fmt_fixed);
			snowflake_format_from_layout(&layout, &fmt);
			sf_set_format(cache, &fmt);
			return cache;
		}
	}

	arg = PG_GETARG_TEXT_PP(argno);
	data = VARDATA_ANY(arg);
	len = VARSIZE_ANY_EXHDR(arg);
	if (cache->len == len && memcmp(cache->text, data, len) == 0)
		return cache;

	/* Parsed aside: an invalid layout leaves the cache as it was. */
	str = text_to_cstring(arg);
	sf_parse_layout_arg(str, &fmt);
	pfree(str);

	/* The new text is copied before the old one is freed. */
	str = MemoryContextAlloc(fcinfo->flinfo->fn_mcxt, Max(len, 1));
	memcpy(str, data, len);
	if (cache->text != NULL)
		pfree(cache->text);
	cache->text = str;
	cache->len = len;
	sf_set_format(cache, &fmt);
	return cache;
}

/* units * unit_ms, saturated at PG_INT64_MAX (only for messages). */
static int64
sf_units_ms(const SnowflakeFormat *fmt, int64 units)
{
	if (units > PG_INT64_MAX / fmt->unit_ms)
		return PG_INT64_MAX;
	return units * fmt->unit_ms;
}

/* A timestamp field past the largest timestamp: 22008. */
static pg_noinline void
sf_timestamp_out_of_range(const SnowflakeFormat *fmt, int64 units)
{
	ereport(ERROR,
			(errcode(ERRCODE_DATETIME_VALUE_OUT_OF_RANGE),
			 errmsg("timestamp out of range"),
			 errdetail("The ID's timestamp field, %lld ms after the epoch, is past the largest timestamp.",
					   (long long) sf_units_ms(fmt, units))));
}

/*
 * An ID's time: its timestamp field's units after the layout's epoch, the
 * layout being the cache's (22008 past the largest timestamp).
 */
static inline TimestampTz
sf_id_timestamp(const SfCallCache *cache, int64 units)
{
	if (unlikely(units > cache->ts_max_units))
		sf_timestamp_out_of_range(&cache->fmt, units);
	return (TimestampTz) (units * cache->fmt.unit_ms + cache->ts_offset_ms) * 1000;
}

/*
 * sf_ts_to_units
 *		The unit of ts (rounded down) relative to the layout's epoch,
 *		checked against the timestamp field.
 */
static int64
sf_ts_to_units(const SnowflakeFormat *fmt, TimestampTz ts)
{
	int64		ms;

	if (!TIMESTAMP_NOT_FINITE(ts))
	{
		/* Floor division: times before 2000 are negative. */
		ms = ts / 1000 - (ts % 1000 < 0 ? 1 : 0);
		ms += SF_POSTGRES_EPOCH_UNIX_MS - fmt->epoch_ms;
		if (ms >= 0 && ms / fmt->unit_ms <= snowflake_format_max_units(fmt))
			return ms / fmt->unit_ms;
	}

	{
		char		first[64];
		char		lastts[64];
		int64		span = sf_units_ms(fmt, snowflake_format_max_units(fmt));
		int64		last_ms;

		/* The last millisecond of the last unit, within what can print. */
		if (span > PG_INT64_MAX / 2 - fmt->epoch_ms - fmt->unit_ms)
			last_ms = PG_INT64_MAX / 2;
		else
			last_ms = fmt->epoch_ms + span + fmt->unit_ms - 1;
		snowflake_format_ms(fmt->epoch_ms, first, sizeof(first));
		snowflake_format_ms(last_ms, lastts, sizeof(lastts));
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("timestamp out of range for snowflake IDs"),
				 errdetail("Snowflake IDs carry times from %s to %s.",
						   first, lastts)));
	}
	pg_unreachable();
}

/*
 * snowflake_nextval()
 *		The next ID of this server's generator.
 */
Datum
snowflake_nextval(PG_FUNCTION_ARGS)
{
	int64		packed = snowflake_generate(1);
	SnowflakeShared *s = snowflake_shared;
	int64		id;

	/* Without the preload, the first IDs start the background writer. */
	if (unlikely(!s->preloaded && s->worker_latch == NULL))
		snowflake_worker_ensure(s);
	id = snowflake_packed_to_id(&s->layout, s->node_part, packed);
	sf_lastval = id;
	PG_RETURN_INT64(id);
}

/* Per-call state of snowflake_nextval_batch(), the layout copied in. */
typedef struct SfBatch
{
	int64		next;			/* packed value of the next ID to return */
	int64		remaining;
	SnowflakeLayout layout;
	int64		node_part;
} SfBatch;

/*
 * snowflake_nextval_batch(count)
 *		count consecutive IDs, all reserved by the first call: a batch is
 *		issued whole or not at all.
 */
Datum
snowflake_nextval_batch(PG_FUNCTION_ARGS)
{
	FuncCallContext *funcctx;
	SfBatch    *batch;

	if (SRF_IS_FIRSTCALL())
	{
		int32		count = PG_GETARG_INT32(0);
		MemoryContext oldcontext;

		if (count < 1 || count > SNOWFLAKE_MAX_BATCH)
			ereport(ERROR,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("batch size must be between 1 and %d",
							SNOWFLAKE_MAX_BATCH),
					 errdetail("The requested batch size was %d.", count)));

		funcctx = SRF_FIRSTCALL_INIT();
		oldcontext = MemoryContextSwitchTo(funcctx->multi_call_memory_ctx);
		batch = palloc(sizeof(SfBatch));
		MemoryContextSwitchTo(oldcontext);
		batch->next = snowflake_generate(count);
		batch->remaining = count;
		batch->layout = snowflake_shared->layout;
		batch->node_part = snowflake_shared->node_part;
		if (unlikely(!snowflake_shared->preloaded &&
					 snowflake_shared->worker_latch == NULL))
			snowflake_worker_ensure(snowflake_shared);
		funcctx->user_fctx = batch;

		/*
		 * The batch is handed out whole now, even if its caller reads only
		 * some of its rows: the last value is its largest ID.
		 */
		sf_lastval = snowflake_packed_to_id(&batch->layout, batch->node_part,
											batch->next + count - 1);
	}

	funcctx = SRF_PERCALL_SETUP();
	batch = (SfBatch *) funcctx->user_fctx;
	if (batch->remaining > 0)
	{
		int64		id = snowflake_packed_to_id(&batch->layout, batch->node_part,
											batch->next);

		batch->next++;
		batch->remaining--;
		SRF_RETURN_NEXT(funcctx, Int64GetDatum(id));
	}
	SRF_RETURN_DONE(funcctx);
}

/*
 * snowflake_lastval()
 *		The last ID snowflake_nextval() or snowflake_nextval_batch() handed
 *		to this session (of a batch, its largest), like lastval() for
 *		sequences; 55000 before the first.  Needs no shared state.
 */
Datum
snowflake_lastval(PG_FUNCTION_ARGS)
{
	if (sf_lastval < 0)
		ereport(ERROR,
				(errcode(ERRCODE_OBJECT_NOT_IN_PREREQUISITE_STATE),
				 errmsg("snowflake_lastval is not yet defined in this session"),
				 errhint("Call it in the session that called snowflake_nextval() or snowflake_nextval_batch(), and behind a transaction pooler in the same transaction.")));
	PG_RETURN_INT64(sf_lastval);
}

/*
 * The split node fields of a node id as a jsonb object, {"worker": 1, ...};
 * {} for a layout without named parts.
 */
static Datum
sf_node_fields(const SnowflakeFormat *fmt, int64 node_id)
{
	StringInfoData buf;

	initStringInfo(&buf);
	appendStringInfoChar(&buf, '{');
	for (int i = 0; i < fmt->nparts; i++)
		appendStringInfo(&buf, "%s\"%s\": %lld", i > 0 ? ", " : "",
						 fmt->part_names[i],
						 (long long) snowflake_format_node_part(fmt, node_id, i));
	appendStringInfoChar(&buf, '}');
	return DirectFunctionCall1(jsonb_in, CStringGetDatum(buf.data));
}

/*
 * sf_decode_id
 *		The parts of the decoders' first argument, an ID, in the layout of
 *		their optional second (22023 for a negative ID or an invalid
 *		layout); returns the call site's cache, which has that layout (see
 *		sf_call_format).  Inlined in each decoder: with the server's layout
 *		fixed, a call costs a test of the cache and a few shifts.
 */
static inline const SfCallCache *
sf_decode_id(FunctionCallInfo fcinfo, SnowflakeParts *parts)
{
	int64		id = PG_GETARG_INT64(0);
	const SfCallCache *cache = (const SfCallCache *) fcinfo->flinfo->fn_extra;

	sf_check_id(id);
	if (unlikely(cache == NULL || !cache->fmt_fixed || PG_NARGS() > 1))
		cache = sf_call_format(fcinfo, 1);
	snowflake_unpack_with(&cache->unpacker, id, parts);
	return cache;
}

/*
 * The call site's cache with snowflake_decode's result type in it, blessed
 * (tupdesc, and row3 for the 3-column row).  The first call looks it up:
 * 1.0's definition has OUT parameters, so it is a record whose shape only
 * pg_proc tells.
 */
static pg_noinline SfCallCache *
sf_decode_cache(FunctionCallInfo fcinfo)
{
	SfCallCache *cache = sf_call_cache(fcinfo);
	TupleDesc	tupdesc;
	MemoryContext oldcontext;

	if (likely(cache->tupdesc != NULL))
		return cache;
	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	oldcontext = MemoryContextSwitchTo(fcinfo->flinfo->fn_mcxt);
	cache->tupdesc = BlessTupleDesc(CreateTupleDescCopy(tupdesc));
	MemoryContextSwitchTo(oldcontext);
	cache->row3 = tupdesc->natts == 3 &&
		TupleDescAttr(tupdesc, 0)->atttypid == TIMESTAMPTZOID &&
		TupleDescAttr(tupdesc, 1)->atttypid == INT4OID &&
		TupleDescAttr(tupdesc, 2)->atttypid == INT4OID;
	return cache;
}

/*
 * sf_decode_row3
 *		The row (ts, node_id, sequence) of the server's layout, built in
 *		place: three fixed-width columns, no nulls, so the layout of the
 *		tuple is known, and heap_form_tuple's walk over the descriptor
 *		(which costs more than the decoding) is not needed.  The bytes are
 *		those heap_form_tuple would write.
 */
static Datum
sf_decode_row3(TupleDesc tupdesc, TimestampTz ts, int32 node_id,
			   int32 sequence)
{
	const Size	hoff = MAXALIGN(SizeofHeapTupleHeader);
	const Size	len = hoff + sizeof(TimestampTz) + 2 * sizeof(int32);
	HeapTupleHeader td = (HeapTupleHeader) palloc(len);
	char	   *data = (char *) td + hoff;

	/* The header and its padding zeroed, the data written whole below. */
	memset(td, 0, hoff);
	HeapTupleHeaderSetDatumLength(td, len);
	HeapTupleHeaderSetTypeId(td, tupdesc->tdtypeid);
	HeapTupleHeaderSetTypMod(td, tupdesc->tdtypmod);
	ItemPointerSetInvalid(&td->t_ctid);
	HeapTupleHeaderSetNatts(td, 3);
	td->t_hoff = hoff;

	/* timestamptz is double-aligned at the start, the int4s follow it. */
	*(TimestampTz *) data = ts;
	*(int32 *) (data + sizeof(TimestampTz)) = node_id;
	*(int32 *) (data + sizeof(TimestampTz) + sizeof(int32)) = sequence;
	return PointerGetDatum(td);
}

/*
 * snowflake_decode(id [, layout]) -> (ts, node_id, sequence [, node_fields])
 *
 * Every decoder takes an optional layout as its last argument; without it
 * the server's own layout applies.
 */
Datum
snowflake_decode(PG_FUNCTION_ARGS)
{
	SnowflakeParts parts;
	const SfCallCache *cache = sf_decode_id(fcinfo, &parts);
	TimestampTz ts;
	TupleDesc	tupdesc;
	Datum		values[4];
	bool		nulls[4] = {false, false, false, false};

	if (unlikely(cache->tupdesc == NULL))
		cache = sf_decode_cache(fcinfo);
	ts = sf_id_timestamp(cache, parts.ms);
	tupdesc = cache->tupdesc;
	if (likely(cache->row3))
		return sf_decode_row3(tupdesc, ts, (int32) parts.node_id,
							  (int32) parts.sequence);

	values[0] = TimestampTzGetDatum(ts);
	values[1] = Int32GetDatum((int32) parts.node_id);
	values[2] = Int32GetDatum((int32) parts.sequence);
	if (tupdesc->natts == 4)
		values[3] = sf_node_fields(&cache->fmt, parts.node_id);
	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

Datum
snowflake_timestamp(PG_FUNCTION_ARGS)
{
	SnowflakeParts parts;
	const SfCallCache *cache = sf_decode_id(fcinfo, &parts);

	PG_RETURN_TIMESTAMPTZ(sf_id_timestamp(cache, parts.ms));
}

Datum
snowflake_node_id(PG_FUNCTION_ARGS)
{
	SnowflakeParts parts;

	(void) sf_decode_id(fcinfo, &parts);
	PG_RETURN_INT32((int32) parts.node_id);
}

Datum
snowflake_sequence(PG_FUNCTION_ARGS)
{
	SnowflakeParts parts;

	(void) sf_decode_id(fcinfo, &parts);
	PG_RETURN_INT32((int32) parts.sequence);
}

/*
 * snowflake_min_id(ts [, layout]) / snowflake_max_id(ts [, layout])
 *		The smallest and largest IDs that can carry ts's millisecond (its
 *		time unit, in a layout with coarser units).
 */
Datum
snowflake_min_id(PG_FUNCTION_ARGS)
{
	const SnowflakeFormat *fmt = &sf_call_format(fcinfo, 1)->fmt;
	int64		units = sf_ts_to_units(fmt, PG_GETARG_TIMESTAMPTZ(0));

	PG_RETURN_INT64(units << (fmt->node_bits + fmt->sequence_bits));
}

Datum
snowflake_max_id(PG_FUNCTION_ARGS)
{
	const SnowflakeFormat *fmt = &sf_call_format(fcinfo, 1)->fmt;
	int			shift = fmt->node_bits + fmt->sequence_bits;
	int64		units = sf_ts_to_units(fmt, PG_GETARG_TIMESTAMPTZ(0));

	PG_RETURN_INT64((units << shift) | (int64) ((UINT64CONST(1) << shift) - 1));
}

/*
 * snowflake_compose(ts, node_id, sequence [, layout])
 *		The inverse of snowflake_decode, every field range-checked.  With a
 *		split node field, node_id is the parts together (Twitter's
 *		datacenter << 5 | worker).
 */
Datum
snowflake_compose(PG_FUNCTION_ARGS)
{
	const SnowflakeFormat *fmt = &sf_call_format(fcinfo, 3)->fmt;
	SnowflakeParts parts;
	char		detail[SNOWFLAKE_DETAIL_LEN];
	int64		id;

	parts.ms = sf_ts_to_units(fmt, PG_GETARG_TIMESTAMPTZ(0));
	parts.node_id = PG_GETARG_INT32(1);
	parts.sequence = PG_GETARG_INT32(2);
	if (!snowflake_format_pack(fmt, &parts, &id, detail))
		ereport(ERROR,
				(errcode(ERRCODE_NUMERIC_VALUE_OUT_OF_RANGE),
				 errmsg("snowflake ID field out of range"),
				 errdetail("%s", detail)));
	PG_RETURN_INT64(id);
}

static TimestampTz
sf_unix_ms_timestamp(int64 unix_ms)
{
	return (TimestampTz) (unix_ms - SF_POSTGRES_EPOCH_UNIX_MS) * 1000;
}

/*
 * The generator's status, as snowflake_stats() shows it: the first refusal
 * in force, as calls report it.
 */
static const char *
sf_status(const SnowflakeShared *s)
{
	uint32		refusals = s->refusals;
	SnowflakeRefusal first = refusals != 0 ?
		snowflake_first_refusal(refusals) : SNOWFLAKE_REFUSALS;

	switch (first)
	{
		case SNOWFLAKE_NODE_UNSET:
			return "node_id not set";
		case SNOWFLAKE_LAYOUT_CHANGED:
			return "layout changed";
		case SNOWFLAKE_STATE_UNUSABLE:
			return "state file unusable";
		case SNOWFLAKE_NODE_CHANGED:
			return "node id changed";
		case SNOWFLAKE_NODE_UNCONFIRMED:
			return "node id not confirmed";
		case SNOWFLAKE_REFUSALS:
			break;
	}
	if (s->life_pending)
		return "settings file not written";
	return RecoveryInProgress() ? "recovery" : "ready";
}

/*
 * The node id this life's IDs carry (see reservation.c, sf_check_lineage):
 * fixed at its first reservation write; before that, outside recovery, the
 * one the current timeline gives; -1 when not known (in recovery: a
 * promotion starts another timeline) or the node id is not set.  Read
 * without the LWLock, which a state file write may hold for long (a stuck
 * disk): recorded_node is set once per life, before any ID, and published
 * by lineage_checked with a barrier; a reading that races with it shows
 * the value of the current timeline either way.
 */
static int
sf_node_in_use(SnowflakeShared *s)
{
	int			node = -1;

	if (s->node_id < 0)
		return -1;
	if (s->lineage_checked)
	{
		pg_read_barrier();
		node = s->recorded_node;
	}
	if (node < 0 && !RecoveryInProgress())
		node = snowflake_node_field(s, GetWALInsertionTimeLine());
	return node;
}

/*
 * The columns 1.2 appends to the stats row, from column i on: the node id
 * in use, the span, the time of the last reservation write, where the node
 * id came from.  Returns the next column.
 */
static int
sf_stats_columns_12(SnowflakeShared *s, const SnowflakeStatsSnapshot *snap,
					Datum *values, bool *nulls, int i)
{
	int			node = sf_node_in_use(s);

	if (node >= 0)
		values[i++] = Int32GetDatum(node);
	else
		nulls[i++] = true;
	values[i++] = Int32GetDatum(s->node_id_span);
	if (snap->last_write_unix_ms >= 0)
		values[i++] = TimestampTzGetDatum(sf_unix_ms_timestamp(snap->last_write_unix_ms));
	else
		nulls[i++] = true;
	if (s->node_id_source[0] != '\0')
		values[i++] = CStringGetTextDatum(s->node_id_source);
	else
		nulls[i++] = true;
	return i;
}

/*
 * snowflake_stats()
 *		One row describing the generator and its counters.
 */
Datum
snowflake_stats(PG_FUNCTION_ARGS)
{
	SnowflakeShared *s = snowflake_require_shared();
	TupleDesc	tupdesc;
	Datum		values[25];
	bool		nulls[25];
	int			i = 0;
	SnowflakeStatsSnapshot snap;
	const SnowflakeCounters *c = &snap.counters;
	int64		now_ms;

	if (get_call_result_type(fcinfo, NULL, &tupdesc) != TYPEFUNC_COMPOSITE)
		elog(ERROR, "return type must be a row type");
	/*
	 * 1.0's definition has 18 columns, 1.1's the writers' three more, 1.2's
	 * the node id in use, the span, the time of the last reservation write
	 * and the node id's source four more.
	 */
	if (tupdesc->natts != 18 && tupdesc->natts != 21 && tupdesc->natts != 25)
		elog(ERROR, "snowflake_stats() has %d columns, expected 18, 21 or 25",
			 tupdesc->natts);
	tupdesc = BlessTupleDesc(tupdesc);
	memset(nulls, 0, sizeof(nulls));

	now_ms = snowflake_clock_ms() - s->layout.epoch_ms;
	snowflake_stats_snapshot(s, &snap);

	values[i++] = CStringGetTextDatum(sf_status(s));
	if (s->node_id >= 0)
		values[i++] = Int32GetDatum(s->node_id);
	else
		nulls[i++] = true;
	values[i++] = TimestampTzGetDatum(sf_unix_ms_timestamp(s->layout.epoch_ms));
	values[i++] = Int32GetDatum(s->layout.timestamp_bits);
	values[i++] = Int32GetDatum(s->layout.node_bits);
	values[i++] = Int32GetDatum(s->layout.sequence_bits);
	if (snap.last >= 0)
	{
		int64		last_ms = snap.last >> s->layout.sequence_bits;

		values[i++] = TimestampTzGetDatum(sf_unix_ms_timestamp(s->layout.epoch_ms + last_ms));
		values[i++] = Int64GetDatum(Max(last_ms - now_ms, 0));
	}
	else
	{
		nulls[i++] = true;
		nulls[i++] = true;
	}
	values[i++] = Int64GetDatum(c->issued);
	values[i++] = Int64GetDatum(c->borrowed_ms);
	values[i++] = Int64GetDatum(c->regressions);
	values[i++] = Int64GetDatum(c->max_regression_ms);
	values[i++] = Int64GetDatum(c->waits);
	values[i++] = Int64GetDatum(c->wait_ms);
	values[i++] = Int64GetDatum(c->refused);
	if (snap.durable_ms >= 0)
		values[i++] = TimestampTzGetDatum(sf_unix_ms_timestamp(s->layout.epoch_ms + snap.durable_ms));
	else
		nulls[i++] = true;
	values[i++] = Int64GetDatum(c->reservation_writes);
	if (tupdesc->natts >= 21)
	{
		values[i++] = Int64GetDatum(c->background_writes);
		values[i++] = Int64GetDatum(c->caller_writes);
		values[i++] = Float8GetDatum((double) c->caller_wait_us / 1000.0);
	}
	values[i++] = TimestampTzGetDatum(c->reset_time);
	if (tupdesc->natts >= 25)
		i = sf_stats_columns_12(s, &snap, values, nulls, i);
	Assert(i == tupdesc->natts);

	PG_RETURN_DATUM(HeapTupleGetDatum(heap_form_tuple(tupdesc, values, nulls)));
}

/*
 * snowflake_stats_reset()
 *		Zero the counters; the generator state is untouched.
 */
Datum
snowflake_stats_reset(PG_FUNCTION_ARGS)
{
	SnowflakeShared *s = snowflake_require_shared();
	TimestampTz now = GetCurrentTimestamp();

	snowflake_counters_reset(s, now);
	PG_RETURN_VOID();
}

/*
 * sf_refused_before
 *		Before the remedy for the refusal why: if why is in force and so is
 *		a refusal before it, raise that one's error, as a call that
 *		generates would.  Remedies come in the order of the refusals
 *		(shared.h): one that rewrites the state file never writes over what
 *		an earlier refusal protects (another layout's IDs).  Refusals are
 *		only ever lifted, so what this sees holds when the remedy takes the
 *		lock.  If why is not in force, the remedy itself says so.
 */
static void
sf_refused_before(const SnowflakeShared *s, SnowflakeRefusal why)
{
	uint32		refusals = s->refusals;

	if ((refusals & SNOWFLAKE_REFUSED(why)) &&
		(refusals & SNOWFLAKE_REFUSED_BEFORE(why)))
		snowflake_refusal_error(s, refusals & SNOWFLAKE_REFUSED_BEFORE(why));
}

/*
 * snowflake_adopt_layout()
 *		Deliberately accept a changed epoch or layout.
 */
Datum
snowflake_adopt_layout(PG_FUNCTION_ARGS)
{
	snowflake_require_shared();
	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to adopt a snowflake layout"),
				 errdetail("Only superusers may adopt a new epoch or layout.")));
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot adopt a snowflake layout during recovery")));
	snowflake_adopt_layout_state(snowflake_clock_ms(), PG_GETARG_BOOL(0));
	PG_RETURN_VOID();
}

/*
 * snowflake_adopt_node_id()
 *		Deliberately accept a derived node id that differs from the one of
 *		the IDs this data directory minted; returns the node id in use.
 */
Datum
snowflake_adopt_node_id(PG_FUNCTION_ARGS)
{
	SnowflakeShared *s = snowflake_require_shared();

	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to adopt a snowflake node id"),
				 errdetail("Only superusers may adopt a derived node id.")));
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot adopt a snowflake node id during recovery")));
	sf_refused_before(s, SNOWFLAKE_NODE_CHANGED);
	PG_RETURN_INT32(snowflake_adopt_node_state(snowflake_clock_ms()));
}

/*
 * snowflake_confirm_restore(node_id)
 *		Confirm after a restore that this server mints with node_id
 *		(snowflake.confirm_restore); returns it.
 */
Datum
snowflake_confirm_restore(PG_FUNCTION_ARGS)
{
	int32		node = PG_GETARG_INT32(0);
	SnowflakeShared *s = snowflake_require_shared();

	if (!superuser())
		ereport(ERROR,
				(errcode(ERRCODE_INSUFFICIENT_PRIVILEGE),
				 errmsg("permission denied to confirm a snowflake node id"),
				 errdetail("Only superusers may confirm the node id of a restored server.")));
	if (RecoveryInProgress())
		ereport(ERROR,
				(errcode(ERRCODE_READ_ONLY_SQL_TRANSACTION),
				 errmsg("cannot confirm a snowflake node id during recovery")));
	sf_refused_before(s, SNOWFLAKE_NODE_UNCONFIRMED);
	snowflake_confirm_restore_state(node);
	PG_RETURN_INT32(node);
}
