/*-------------------------------------------------------------------------
 *
 * inline.c
 *	  snowflake_decode replaced by the scalar decoders before planning.
 *
 * snowflake_decode(id) returns a row (ts, node_id, sequence).  Used for a
 * field, (snowflake_decode(id)).ts, a row is built and taken apart for
 * each ID; used in FROM, FROM orders o, snowflake_decode(o.id) d, each
 * outer row also costs a function scan that stores the one row in a
 * tuplestore.  Both cost several times what the scalar decoders
 * (snowflake_timestamp, snowflake_node_id, snowflake_sequence) do for the
 * same fields.  1.0's definition cannot change (a record of OUT
 * parameters, not a set), and PostgreSQL inlines only SQL functions that
 * return a set, so a planner hook rewrites the query first:
 *
 *	(snowflake_decode(x)).f		the scalar decoder of field f, over x
 *	FROM snowflake_decode(x) d	FROM LATERAL (SELECT snowflake_timestamp(x)
 *								AS ts, ...) d, which the planner then pulls
 *								up into the query around it
 *
 * The results are the same: each scalar decoder is the same C code as
 * snowflake_decode over the same arguments (the layout too), STRICT,
 * IMMUTABLE and PARALLEL SAFE as it is, raising the same errors.  A NULL
 * argument gives NULL fields in both; in FROM the function scan expands a
 * NULL result into a row of NULLs, as the subquery returns one.  A field
 * with no scalar decoder (node_fields of the layout variant) stays a field
 * of snowflake_decode.  What differs, as for any function PostgreSQL
 * inlines: in FROM, a column the query never reads is not computed, so an
 * invalid ID or layout raises its error only where a column is read
 * (SELECT count(*) FROM t, snowflake_decode(t.id) d decodes nothing).  A
 * volatile argument keeps the function scan, which evaluates it once per
 * row.  EXPLAIN VERBOSE shows the scalar calls.
 *
 * The functions are recognised by what pg_proc says (C functions of this
 * library named snowflake_decode and so on, in one schema), looked up only
 * for calls that return a record, so other queries pay one walk over their
 * tree.  Without the preload (17 and later) the hook is installed when the
 * library is first loaded in a session; a query planned before that is
 * not rewritten, which changes its cost, never its result.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "funcapi.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "optimizer/optimizer.h"
#include "optimizer/planner.h"
#include "rewrite/rewriteManip.h"
#include "utils/builtins.h"
#include "utils/syscache.h"

#include "compat.h"
#include "inline.h"

/* The largest row snowflake_decode returns (the layout variant's). */
#define SF_DECODE_MAX_FIELDS 4

/*
 * A call of snowflake_decode: its row type, and for each field the scalar
 * decoder that computes it (InvalidOid for none).
 */
typedef struct SfDecodeCall
{
	TupleDesc	tupdesc;
	Oid			scalar[SF_DECODE_MAX_FIELDS];
} SfDecodeCall;

static planner_hook_type prev_planner_hook = NULL;

/*
 * Whether pg_proc's row tp is a C function of this library whose symbol is
 * symbol.  The library is "$libdir/snowflake", "snowflake" or a path to
 * snowflake.so (test/bench/run.sh), whichever the install used.
 */
static bool
sf_is_our_function(HeapTuple tp, const char *symbol)
{
	Form_pg_proc proc = (Form_pg_proc) GETSTRUCT(tp);
	Datum		datum;
	bool		isnull;
	char	   *probin;
	const char *base;

	if (proc->prolang != ClanguageId)
		return false;
	datum = SysCacheGetAttr(PROCOID, tp, Anum_pg_proc_prosrc, &isnull);
	if (isnull || strcmp(TextDatumGetCString(datum), symbol) != 0)
		return false;
	datum = SysCacheGetAttr(PROCOID, tp, Anum_pg_proc_probin, &isnull);
	if (isnull)
		return false;
	probin = TextDatumGetCString(datum);
	base = strrchr(probin, '/');
	base = base ? base + 1 : probin;
	return strcmp(base, "snowflake") == 0 ||
		strcmp(base, "snowflake" DLSUFFIX) == 0;
}

/*
 * The scalar decoder of the field named field, in snowflake_decode's
 * schema, with its arguments and returning type, or InvalidOid.
 */
static Oid
sf_scalar_decoder(Form_pg_proc decode, const char *field, Oid type)
{
	const char *name;
	Oid			oid;
	HeapTuple	tp;
	bool		ok;

	if (strcmp(field, "ts") == 0)
		name = "snowflake_timestamp";
	else if (strcmp(field, "node_id") == 0)
		name = "snowflake_node_id";
	else if (strcmp(field, "sequence") == 0)
		name = "snowflake_sequence";
	else
		return InvalidOid;

	oid = GetSysCacheOid3(PROCNAMEARGSNSP, Anum_pg_proc_oid,
						  CStringGetDatum(name),
						  PointerGetDatum(&decode->proargtypes),
						  ObjectIdGetDatum(decode->pronamespace));
	if (!OidIsValid(oid))
		return InvalidOid;
	tp = SearchSysCache1(PROCOID, ObjectIdGetDatum(oid));
	if (!HeapTupleIsValid(tp))
		return InvalidOid;
	ok = sf_is_our_function(tp, name) &&
		((Form_pg_proc) GETSTRUCT(tp))->prorettype == type &&
		!((Form_pg_proc) GETSTRUCT(tp))->proretset;
	ReleaseSysCache(tp);
	return ok ? oid : InvalidOid;
}

/*
 * Whether expr is a call of snowflake_decode; if so, fills *call.
 */
static bool
sf_decode_call(Node *expr, SfDecodeCall *call)
{
	FuncExpr   *f;
	HeapTuple	tp;
	Form_pg_proc proc;

	if (expr == NULL || !IsA(expr, FuncExpr))
		return false;
	f = (FuncExpr *) expr;
	/* Cheap test first: most calls do not return a record. */
	if (f->funcresulttype != RECORDOID || f->funcretset)
		return false;

	tp = SearchSysCache1(PROCOID, ObjectIdGetDatum(f->funcid));
	if (!HeapTupleIsValid(tp))
		return false;
	if (!sf_is_our_function(tp, "snowflake_decode") ||
		get_expr_result_type(expr, NULL, &call->tupdesc) != TYPEFUNC_COMPOSITE ||
		call->tupdesc->natts > SF_DECODE_MAX_FIELDS)
	{
		ReleaseSysCache(tp);
		return false;
	}
	proc = (Form_pg_proc) GETSTRUCT(tp);
	for (int i = 0; i < call->tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(call->tupdesc, i);

		call->scalar[i] = sf_scalar_decoder(proc, NameStr(att->attname),
											att->atttypid);
	}
	ReleaseSysCache(tp);
	return true;
}

/*
 * The expression for field i (0-based) of call f: its scalar decoder over
 * args, or the field of snowflake_decode over args where it has none.
 */
static Expr *
sf_field_expr(FuncExpr *f, const SfDecodeCall *call, int i, List *args)
{
	Form_pg_attribute att = TupleDescAttr(call->tupdesc, i);
	FuncExpr   *decode;
	FieldSelect *fs;

	if (OidIsValid(call->scalar[i]))
		return (Expr *) makeFuncExpr(call->scalar[i], att->atttypid, args,
									 att->attcollation, f->inputcollid,
									 COERCE_EXPLICIT_CALL);
	decode = copyObject(f);
	decode->args = args;
	fs = makeNode(FieldSelect);
	fs->arg = (Expr *) decode;
	fs->fieldnum = i + 1;
	fs->resulttype = att->atttypid;
	fs->resulttypmod = att->atttypmod;
	fs->resultcollid = att->attcollation;
	return (Expr *) fs;
}

/*
 * (snowflake_decode(x)).f: the FieldSelect's argument becomes a ROW() whose
 * field f is the scalar decoder over x (the others NULL), which the
 * planner's simplification of a field of a ROW() reduces to that call.
 */
static void
sf_inline_field(FieldSelect *fs)
{
	SfDecodeCall call;
	FuncExpr   *f = (FuncExpr *) fs->arg;
	RowExpr    *row;
	int			field = fs->fieldnum - 1;

	if (!sf_decode_call((Node *) f, &call) ||
		field < 0 || field >= call.tupdesc->natts ||
		!OidIsValid(call.scalar[field]) ||
		TupleDescAttr(call.tupdesc, field)->atttypid != fs->resulttype)
		return;

	row = makeNode(RowExpr);
	for (int i = 0; i < call.tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(call.tupdesc, i);

		row->args = lappend(row->args, i == field ?
							sf_field_expr(f, &call, i, f->args) :
							(Expr *) makeNullConst(att->atttypid,
												   att->atttypmod,
												   att->attcollation));
		row->colnames = lappend(row->colnames,
								makeString(pstrdup(NameStr(att->attname))));
	}
	row->row_typeid = RECORDOID;
	row->row_format = COERCE_IMPLICIT_CAST;
	row->location = f->location;
	fs->arg = (Expr *) row;
}

/*
 * FROM snowflake_decode(x) d: the range table entry becomes the subquery
 * (SELECT snowflake_timestamp(x) AS ts, ...), lateral as the function was.
 */
static void
sf_inline_from(RangeTblEntry *rte)
{
	RangeTblFunction *rtfunc;
	FuncExpr   *f;
	SfDecodeCall call;
	Query	   *sub;

	if (rte->rtekind != RTE_FUNCTION || rte->funcordinality ||
		list_length(rte->functions) != 1)
		return;
	rtfunc = linitial_node(RangeTblFunction, rte->functions);
	f = (FuncExpr *) rtfunc->funcexpr;
	/*
	 * Each column gets its own copy of the arguments: a volatile one (say
	 * snowflake_nextval()) would run once per column instead of once.
	 */
	if (rtfunc->funccolnames != NIL || !sf_decode_call((Node *) f, &call) ||
		contain_volatile_functions((Node *) f->args) ||
		rtfunc->funccolcount != call.tupdesc->natts ||
		list_length(rte->eref->colnames) != call.tupdesc->natts)
		return;

	sub = makeNode(Query);
	sub->commandType = CMD_SELECT;
	sub->querySource = QSRC_ORIGINAL;
	sub->canSetTag = true;
	sub->jointree = makeFromExpr(NIL, NULL);
	for (int i = 0; i < call.tupdesc->natts; i++)
	{
		List	   *args = copyObject(f->args);

		/* x's variables are now one query level further out. */
		IncrementVarSublevelsUp((Node *) args, 1, 0);
		sub->targetList =
			lappend(sub->targetList,
					makeTargetEntry(sf_field_expr(f, &call, i, args), i + 1,
									pstrdup(strVal(list_nth(rte->eref->colnames, i))),
									false));
	}
	sub->hasSubLinks = checkExprHasSubLink((Node *) sub->targetList);

	rte->rtekind = RTE_SUBQUERY;
	rte->subquery = sub;
	rte->security_barrier = false;
	rte->functions = NIL;
}

/*
 * Walks a query and every query in it (subqueries, CTEs, sublinks),
 * rewriting the calls in place.
 */
static bool
sf_inline_walker(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
		return query_tree_walker((Query *) node, sf_inline_walker, context,
								 QTW_EXAMINE_RTES_BEFORE);
	if (IsA(node, RangeTblEntry))
	{
		/* Before its contents are walked, which are then the subquery's. */
		sf_inline_from((RangeTblEntry *) node);
		return false;
	}
	if (IsA(node, FieldSelect))
		sf_inline_field((FieldSelect *) node);
	return expression_tree_walker(node, sf_inline_walker, context);
}

static PlannedStmt *
sf_planner(SF_PLANNER_HOOK_PARAMS)
{
	/* The planner changes the query it is given anyway. */
	(void) sf_inline_walker((Node *) parse, NULL);
	if (prev_planner_hook)
		return prev_planner_hook(SF_PLANNER_HOOK_ARGS);
	return standard_planner(SF_PLANNER_HOOK_ARGS);
}

/*
 * snowflake_inline_init
 *		Installs the planner hook.
 */
void
snowflake_inline_init(void)
{
	prev_planner_hook = planner_hook;
	planner_hook = sf_planner;
}
