/*-------------------------------------------------------------------------
 *
 * inline.c
 *	  snowflake_decode planned as the scalar decoders, without changing
 *	  any answer; the setting snowflake.inline_decode that turns it off.
 *
 * snowflake_decode(id) returns a row (ts, node_id, sequence).  Used for a
 * field, (snowflake_decode(id)).ts, a row is built and taken apart for each
 * ID; used in FROM, FROM orders o, snowflake_decode(o.id) d, each outer row
 * also costs a function scan that stores the one row in a tuplestore.  Both
 * cost several times what the scalar decoders (snowflake_timestamp,
 * snowflake_node_id, snowflake_sequence: the same C code, STRICT, IMMUTABLE,
 * PARALLEL SAFE and raising the same errors) cost for the same field.
 *
 * Which mechanism serves which form, and why:
 *
 *	form						15 to 18			19
 *	(snowflake_decode(x)).f		planner hook		planner hook
 *	FROM snowflake_decode(x) d	planner hook		support function,
 *													SupportRequestInlineInFrom
 *	f of an index expression	get_relation_info_hook (build_simple_rel_hook
 *	or predicate, a statistics	on 19), every major: a second description
 *	object						beside the catalogs'
 *	f in WHERE or JOIN ... ON	left as written, every major
 *
 * A field.  The planner hook (sf_planner) replaces the argument of the
 * FieldSelect by ROW(NULL, .., snowflake_timestamp(x), .., NULL), which the
 * planner's simplification of a field of a ROW() reduces to the scalar call;
 * the rest of the query is left as written.  A support function answering
 * SupportRequestSimplify cannot do this: it sees the call, not whether a
 * field is taken from it, and a whole-row use (SELECT snowflake_decode(id),
 * to_json(...), a record column, a CHECK, a generated column) would become
 * ROW(...), which is never NULL, where the STRICT function returns NULL for
 * a NULL ID.  So snowflake_decode_support declines SupportRequestSimplify.
 * The hook leaves a field alone (sf_inline_field) where the current user
 * may not EXECUTE snowflake_decode or the scalar decoder, or a module hooks
 * their calls (FmgrHookIsNeeded): the query then fails or is audited as
 * written.  Before 18 it also leaves alone every field computed after the
 * grouping of a query with grouping sets: where snowflake_decode(x) itself
 * is grouped by, the grouping sets null that expression, not x, and the
 * field must come from it (rewritten, SELECT (snowflake_decode(id)).node_id
 * ... GROUP BY ROLLUP (snowflake_decode(id)) would give the total row the
 * node of some ID), and whether it is grouped by cannot be told safely from
 * the query as written (a join's alias columns spell it differently).  From
 * 18 the parser replaces a grouped expression by a column of the grouping
 * step's range table entry (RTE_GROUP), so no such field is left to
 * rewrite.  A field of a volatile argument or a sub-select is evaluated
 * once either way.
 *
 * Quals (WHERE, JOIN ... ON) keep their fields as written (sf_field_kept):
 * PostgreSQL matches them against index expressions and predicates,
 * partition keys, CHECK and partition constraints and statistics objects
 * as the catalogs have them, some of which no hook can rewrite (constraint
 * exclusion), and so do the quals of SQL functions it inlines after this
 * hook.  Left as written, they match all of these exactly as without the
 * speed-up, and a qual served by an index is not evaluated per row.
 *
 * The same field in an index expression or predicate, or an extended
 * statistics object: for an ORDER BY, a GROUP BY or DISTINCT rewritten to
 * the scalar decoder, or a qual of the FROM form, to use an index or
 * statistics in the decode form, the relation hook (sf_relation_info) gives
 * each such index and statistics object a second description with the
 * scalar calls, for the plans the planner hook rewrote; the first, as the
 * catalogs have it, still matches the quals.  Partition keys are left as
 * the catalogs have them: pruning reads one expression per key column, and
 * the quals that must match it keep their fields.
 *
 * In FROM.  The call becomes the subquery (SELECT snowflake_timestamp(x) AS
 * ts, ...), lateral as the function was, which the planner pulls up into
 * the query around it.  Each column read gets its own copy of x, so x must
 * be duplicable, as PostgreSQL's inline_function() requires of a parameter
 * used more than once (sf_args_duplicable): no volatile function, no
 * sub-select, and at most 10 operators' cost; a Var, Const or Param always
 * is.  The call is also left alone when the query reads none of its columns
 * (SELECT count(*) FROM t, snowflake_decode(t.id) d would otherwise decode
 * nothing, and no longer raise the error of an invalid ID), with ORDINALITY
 * or a column definition list, and as for a field without EXECUTE or with a
 * function hook.  Otherwise, as for any function PostgreSQL inlines, only
 * the columns read are computed, each raising the errors of
 * snowflake_decode where it is: an invalid ID whose columns the plan never
 * evaluates (a qual the planner folds away, a CASE branch not taken)
 * raises no error, as with any SQL function PostgreSQL inlines; the rows
 * are the same.  snowflake_node_id and snowflake_sequence check the
 * timestamp field as snowflake_decode does, so each column raises what the
 * row would.  On 19 the planner asks the support function
 * for this subquery (SupportRequestInlineInFrom) after its own checks;
 * before 19 the planner hook rewrites the range table entry
 * (sf_inline_from).
 *
 * Every plan that no longer calls snowflake_decode records a dependency on
 * it (REVOKE EXECUTE replans) and on the role it was planned for.  A field
 * with no scalar decoder (node_fields of the layout variant) stays a field
 * of snowflake_decode.  SQL functions that PostgreSQL inlines are planned
 * after the hook: their fields keep snowflake_decode (and still match an
 * index through its first description).  With snowflake.inline_decode off
 * nothing here rewrites anything; a SET of it invalidates cached plans.
 *
 * The functions are recognised by what pg_proc says (C functions of this
 * library named snowflake_decode and so on, in one schema), looked up only
 * for calls that return a record, so other queries pay one walk over their
 * tree.  Without the preload the hooks are installed when the library is
 * first loaded in a session, which may be while the first query is planned;
 * a query planned before that is not rewritten, which changes its cost,
 * never its result or whether an index serves it.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/htup_details.h"
#include "catalog/pg_language.h"
#include "catalog/pg_proc.h"
#include "catalog/pg_type.h"
#include "fmgr.h"
#include "funcapi.h"
#include "miscadmin.h"
#include "nodes/makefuncs.h"
#include "nodes/nodeFuncs.h"
#include "nodes/supportnodes.h"
#include "optimizer/clauses.h"
#include "optimizer/cost.h"
#include "optimizer/optimizer.h"
#include "optimizer/planmain.h"
#include "optimizer/planner.h"
#include "optimizer/tlist.h"
#include "parser/parsetree.h"
#include "rewrite/rewriteManip.h"
#include "utils/acl.h"
#include "utils/builtins.h"
#include "utils/guc.h"
#include "utils/plancache.h"
#include "utils/memutils.h"
#include "utils/syscache.h"

#include "compat.h"
#include "inline.h"

PG_FUNCTION_INFO_V1(snowflake_decode_support);

/* The largest row snowflake_decode returns (the layout variant's). */
#define SF_DECODE_MAX_FIELDS 4

/*
 * The most a duplicated argument may cost, in cpu_operator_cost units: the
 * limit of PostgreSQL's inline_function() for a parameter used more than
 * once.
 */
#define SF_MAX_DUPLICATED_COST 10

/* snowflake.inline_decode: plan snowflake_decode as the scalar decoders. */
static bool sf_inline_decode = true;

static planner_hook_type prev_planner_hook = NULL;
static sf_rel_hook_type prev_rel_hook = NULL;

/*
 * How many plans the planner hook is making with the rewrite on: the
 * relation hook rewrites only for those.  Without the preload, the first
 * call of a function of the library in a session may load it, and install
 * the hooks, in the middle of planning a query the planner hook never saw.
 */
static int	sf_plans_rewritten = 0;

/*
 * A call of snowflake_decode: the function, its row type, and for each
 * field the scalar decoder that computes it (InvalidOid for none).
 */
typedef struct SfDecodeCall
{
	Oid			decode;
	TupleDesc	tupdesc;
	int			ts;				/* the field ts (0-based) */
	Oid			scalar[SF_DECODE_MAX_FIELDS];
} SfDecodeCall;

/*
 * One query level of the walk over a query: before 18, the expressions it
 * groups by when it has grouping sets (as written, before any rewrite);
 * whether the walk is in an expression computed after its grouping (the
 * target list, HAVING); and how many of its aggregates' arguments, computed
 * before the grouping, enclose the walk.
 */
typedef struct SfLevel
{
	bool		grouping_sets;
	bool		above;
	bool		in_qual;
	int			in_agg;
} SfLevel;

/* The walk over a query and every query in it. */
typedef struct SfWalk
{
	SfLevel    *levels;			/* levels[0] is the query planned */
	int			depth;			/* levels entered */
	int			size;			/* levels allocated */
	List	   *decoders;		/* OIDs of the snowflake_decode inlined */
} SfWalk;

/* The relation expressions' rewrite: the snowflake_decode inlined. */
typedef struct SfRelRewrite
{
	List	   *decoders;
} SfRelRewrite;

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
 * The scalar decoder of the field named field: the C function of this
 * library of that name in snowflake_decode's schema, with its arguments and
 * returning type, or InvalidOid.  A function of the same name in another
 * schema, or not ours, is never used.
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
	call->decode = f->funcid;
	call->ts = -1;
	for (int i = 0; i < call->tupdesc->natts; i++)
	{
		Form_pg_attribute att = TupleDescAttr(call->tupdesc, i);

		call->scalar[i] = sf_scalar_decoder(proc, NameStr(att->attname),
											att->atttypid);
		if (strcmp(NameStr(att->attname), "ts") == 0)
			call->ts = i;
	}
	ReleaseSysCache(tp);
	/* Every other field is guarded by the timestamp's (sf_scalar_expr). */
	if (call->ts < 0 || !OidIsValid(call->scalar[call->ts]))
		memset(call->scalar, 0, sizeof(call->scalar));
	return true;
}

/*
 * Whether the current user may call funcid, with no module hooking its
 * calls: what PostgreSQL's inline_function() checks before it inlines.
 */
static bool
sf_callable(Oid funcid)
{
	return sf_proc_aclcheck(funcid, GetUserId(), ACL_EXECUTE) == ACLCHECK_OK &&
		!FmgrHookIsNeeded(funcid);
}

/*
 * Whether field (0-based) of call can be computed by its scalar decoder,
 * called by the current user instead of snowflake_decode, for a FieldSelect
 * of result type, typmod and collation fs.
 */
static bool
sf_field_inlinable(const SfDecodeCall *call, int field, const FieldSelect *fs)
{
	Form_pg_attribute att;

	if (field < 0 || field >= call->tupdesc->natts ||
		!OidIsValid(call->scalar[field]))
		return false;
	att = TupleDescAttr(call->tupdesc, field);
	if (att->atttypid != fs->resulttype ||
		att->atttypmod != fs->resulttypmod ||
		att->attcollation != fs->resultcollid)
		return false;
	/* Every field but ts calls the timestamp's decoder too. */
	return sf_callable(call->decode) && sf_callable(call->scalar[field]) &&
		sf_callable(call->scalar[call->ts]);
}

/*
 * The scalar decoder of field i (0-based) of call f over args.  Every field
 * but ts is guarded by the timestamp's decoder:
 *
 *		CASE WHEN snowflake_timestamp(x) IS NOT NULL
 *			 THEN snowflake_node_id(x) END
 *
 * snowflake_decode computes the timestamp of every row it returns and
 * raises 22008 for a timestamp field past the largest timestamp (a layout
 * with a wide field can hold one), where snowflake_node_id and
 * snowflake_sequence, by design, still decode their fields; so the field of
 * the row fails where the row would.  The timestamp is NULL only for a NULL
 * argument, where the field is NULL too.
 */
static Expr *
sf_scalar_expr(FuncExpr *f, const SfDecodeCall *call, int i, List *args)
{
	Form_pg_attribute att = TupleDescAttr(call->tupdesc, i);
	Expr	   *scalar;
	int			ts = call->ts;
	CaseExpr   *c;
	CaseWhen   *w;
	NullTest   *test;

	scalar = (Expr *) makeFuncExpr(call->scalar[i], att->atttypid, args,
								   att->attcollation, f->inputcollid,
								   COERCE_EXPLICIT_CALL);
	Assert(ts >= 0 && OidIsValid(call->scalar[ts]));
	if (i == ts)
		return scalar;

	test = makeNode(NullTest);
	test->arg = (Expr *) makeFuncExpr(call->scalar[ts],
									  TupleDescAttr(call->tupdesc, ts)->atttypid,
									  copyObject(args), InvalidOid,
									  f->inputcollid, COERCE_EXPLICIT_CALL);
	test->nulltesttype = IS_NOT_NULL;
	test->argisrow = false;
	test->location = -1;
	w = makeNode(CaseWhen);
	w->expr = (Expr *) test;
	w->result = scalar;
	w->location = -1;
	c = makeNode(CaseExpr);
	c->casetype = att->atttypid;
	c->casecollid = att->attcollation;
	c->args = list_make1(w);
	c->defresult = (Expr *) makeNullConst(att->atttypid, att->atttypmod,
										  att->attcollation);
	c->location = -1;
	return (Expr *) c;
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
		return sf_scalar_expr(f, call, i, args);
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
 * Whether args may be evaluated once per column read instead of once per
 * row: the test of PostgreSQL's inline_function() for a parameter used more
 * than once.  No sub-select (checked first: costing one would fail), at
 * most SF_MAX_DUPLICATED_COST operators, no volatile function.
 */
static bool
sf_args_duplicable(List *args)
{
	QualCost	cost;

	if (contain_subplans((Node *) args))
		return false;
	cost_qual_eval(&cost, args, NULL);
	if (cost.startup + cost.per_tuple > SF_MAX_DUPLICATED_COST * cpu_operator_cost)
		return false;
	return !contain_volatile_functions((Node *) args);
}

/*
 * Whether the whole call can be replaced by its scalar decoders: the
 * current user may call snowflake_decode and each of them.
 */
static bool
sf_call_inlinable(const SfDecodeCall *call)
{
	if (!sf_callable(call->decode))
		return false;
	for (int i = 0; i < call->tupdesc->natts; i++)
	{
		if (OidIsValid(call->scalar[i]) && !sf_callable(call->scalar[i]))
			return false;
	}
	return true;
}

/*----------
 * Which columns of range table entry rtindex of a query are read: Vars of
 * it at sublevels levels above where they appear, directly or through a
 * join's alias columns.
 *----------
 */
typedef struct SfColumnRefs
{
	Query	   *query;
	int			rtindex;
	int			sublevels;
	bool		found;
} SfColumnRefs;

static bool sf_column_refs_walker(Node *node, SfColumnRefs *refs);

/*
 * A Var of refs->query: of the entry, or of a join over it (whose alias
 * columns are Vars of refs->query itself).
 */
static bool
sf_column_ref(Var *var, SfColumnRefs *refs)
{
	RangeTblEntry *rte;
	Node	   *aliases = NULL;
	int			sublevels = refs->sublevels;
	bool		found;

	if (var->varno == refs->rtindex)
		return true;
	rte = rt_fetch(var->varno, refs->query->rtable);
	if (rte->rtekind != RTE_JOIN)
		return false;
	if (var->varattno == InvalidAttrNumber)
		aliases = (Node *) rte->joinaliasvars;
	else if (var->varattno > 0 && var->varattno <= list_length(rte->joinaliasvars))
		aliases = list_nth(rte->joinaliasvars, var->varattno - 1);
	refs->sublevels = 0;
	found = sf_column_refs_walker(aliases, refs);
	refs->sublevels = sublevels;
	return found;
}

static bool
sf_column_refs_walker(Node *node, SfColumnRefs *refs)
{
	if (node == NULL)
		return false;
	if (IsA(node, Var))
	{
		Var		   *var = (Var *) node;

		if ((int) var->varlevelsup == refs->sublevels &&
			!IS_SPECIAL_VARNO(var->varno) && sf_column_ref(var, refs))
			refs->found = true;
		return refs->found;
	}
	if (IsA(node, Query))
	{
		bool		found;

		refs->sublevels++;
		found = query_tree_walker((Query *) node, sf_column_refs_walker, refs,
								  QTW_IGNORE_JOINALIASES);
		refs->sublevels--;
		return found;
	}
	return expression_tree_walker(node, sf_column_refs_walker, refs);
}

/*
 * Whether query reads any column of its range table entry rtindex (the
 * join alias lists, which name every column of a join, only where a join
 * column is read).
 */
static bool
sf_columns_read(Query *query, int rtindex)
{
	SfColumnRefs refs;

	refs.query = query;
	refs.rtindex = rtindex;
	refs.sublevels = 0;
	refs.found = false;
	(void) query_tree_walker(query, sf_column_refs_walker, &refs,
							 QTW_IGNORE_JOINALIASES);
	return refs.found;
}

/*
 * The call of snowflake_decode in FROM range table entry rtindex of query,
 * if it is one that can be replaced by a subquery of scalar decoders.
 */
static bool
sf_from_inlinable(Query *query, int rtindex, RangeTblEntry *rte,
				  SfDecodeCall *call)
{
	RangeTblFunction *rtfunc;
	FuncExpr   *f;

	if (rte->rtekind != RTE_FUNCTION || rte->funcordinality ||
		list_length(rte->functions) != 1)
		return false;
	rtfunc = linitial_node(RangeTblFunction, rte->functions);
	f = (FuncExpr *) rtfunc->funcexpr;
	return rtfunc->funccolnames == NIL &&
		sf_decode_call((Node *) f, call) &&
		rtfunc->funccolcount == call->tupdesc->natts &&
		list_length(rte->eref->colnames) == call->tupdesc->natts &&
		sf_args_duplicable(f->args) &&
		sf_call_inlinable(call) &&
		sf_columns_read(query, rtindex);
}

/*
 * The subquery that replaces call f in FROM: SELECT scalar(args) AS col,
 * ... with the column names colnames.  args are copied for each column.
 */
static Query *
sf_from_query(FuncExpr *f, const SfDecodeCall *call, List *colnames,
			  List *args)
{
	Query	   *sub = makeNode(Query);

	sub->commandType = CMD_SELECT;
	sub->querySource = QSRC_ORIGINAL;
	sub->canSetTag = true;
	sub->jointree = makeFromExpr(NIL, NULL);
	for (int i = 0; i < call->tupdesc->natts; i++)
		sub->targetList =
			lappend(sub->targetList,
					makeTargetEntry(sf_field_expr(f, call, i, copyObject(args)),
									i + 1,
									pstrdup(strVal(list_nth(colnames, i))),
									false));
	return sub;
}

#ifndef SNOWFLAKE_HAVE_INLINE_IN_FROM
/*
 * FROM snowflake_decode(x) d, before 19: range table entry rtindex of query
 * becomes the subquery (SELECT snowflake_timestamp(x) AS ts, ...), lateral
 * as the function was.
 */
static void
sf_inline_from(Query *query, int rtindex, RangeTblEntry *rte, SfWalk *w)
{
	SfDecodeCall call;
	FuncExpr   *f;
	List	   *args;

	if (!sf_from_inlinable(query, rtindex, rte, &call))
		return;
	f = (FuncExpr *) linitial_node(RangeTblFunction, rte->functions)->funcexpr;
	/* x's variables are now one query level further out. */
	args = copyObject(f->args);
	IncrementVarSublevelsUp((Node *) args, 1, 0);

	rte->rtekind = RTE_SUBQUERY;
	rte->subquery = sf_from_query(f, &call, rte->eref->colnames, args);
	rte->security_barrier = false;
	rte->functions = NIL;
	w->decoders = list_append_unique_oid(w->decoders, call.decode);
}
#endif

/*
 * Whether a field at the current level of the walk must be left as written:
 * in a qual (WHERE, JOIN ... ON), or, before 18, computed after the
 * grouping (not in an aggregate's arguments) of a query with grouping sets.
 *
 * Quals: an index, a partition key, a CHECK or partition constraint and a
 * statistics object written in the decode form are matched against the
 * query's quals as the catalogs have them, also where no hook of ours can
 * rewrite either side (constraint exclusion, the quals of SQL functions
 * PostgreSQL inlines after this hook): left as written, the quals match
 * them exactly as without the speed-up.  A qual over an index is not
 * evaluated per row anyway.
 *
 * Grouping sets, before 18: the field of a grouped snowflake_decode(x)
 * must come from the grouped value, which the total rows have NULL; the
 * rewritten field reads x instead, which is not grouped.  Whether the call
 * is one of the grouped expressions is not a safe test (a join's alias
 * columns spell the same expression differently), so every such field of
 * that query level is left as written.  A sub-select may refer to its
 * outer query's grouped columns only, whose values come already nulled.
 */
static bool
sf_field_kept(SfWalk *w)
{
	SfLevel    *level = &w->levels[w->depth - 1];

	return level->in_qual ||
		(level->grouping_sets && level->above && level->in_agg == 0);
}

/*
 * (snowflake_decode(x)).f: the FieldSelect's argument becomes a ROW() whose
 * field f is the scalar decoder over x (the others NULL), which the
 * planner's simplification of a field of a ROW() reduces to that call.
 */
static void
sf_inline_field(FieldSelect *fs, SfWalk *w)
{
	SfDecodeCall call;
	FuncExpr   *f = (FuncExpr *) fs->arg;
	RowExpr    *row;
	int			field = fs->fieldnum - 1;

	if (!sf_decode_call((Node *) f, &call) ||
		!sf_field_inlinable(&call, field, fs) ||
		sf_field_kept(w))
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
	w->decoders = list_append_unique_oid(w->decoders, call.decode);
}

static bool sf_walker(Node *node, SfWalk *w);

/* The arguments of an aggregate, computed before its level's grouping. */
static bool
sf_walk_aggref(Aggref *agg, SfWalk *w)
{
	int			level = w->depth - 1 - (int) agg->agglevelsup;
	bool		found;

	if (level >= 0)
		w->levels[level].in_agg++;
	found = sf_walker((Node *) agg->args, w) ||
		sf_walker((Node *) agg->aggfilter, w);
	if (level >= 0)
		w->levels[level].in_agg--;
	return found || sf_walker((Node *) agg->aggdirectargs, w);
}

/* Enters a query level. */
static void
sf_push_level(SfWalk *w, Query *query)
{
	SfLevel    *level;

	if (w->depth == w->size)
	{
		w->size *= 2;
		w->levels = repalloc(w->levels, w->size * sizeof(SfLevel));
	}
	level = &w->levels[w->depth++];
#ifdef SNOWFLAKE_GROUPING_RTE
	level->grouping_sets = false;
#else
	level->grouping_sets = query->groupingSets != NIL;
#endif
	level->above = false;
	level->in_qual = false;
	level->in_agg = 0;
}

/*
 * A query: its FROM items first (before 19), then the expressions computed
 * after its grouping, then the rest.  ON CONFLICT's inference clause is
 * left as written: it must match the unique index as the catalogs have it.
 */
static bool
sf_walk_query(Query *query, SfWalk *w)
{
	int			depth = w->depth;
	Query		rest = *query;
	bool		found;

	sf_push_level(w, query);
#ifndef SNOWFLAKE_HAVE_INLINE_IN_FROM
	for (int i = 0; i < list_length(query->rtable); i++)
		sf_inline_from(query, i + 1, list_nth(query->rtable, i), w);
#endif
	/* By index: entering a sublink may move the array. */
	w->levels[depth].above = true;
	found = sf_walker((Node *) query->targetList, w) ||
		sf_walker(query->havingQual, w);
	w->levels[depth].above = false;
	if (!found && query->onConflict)
		found = sf_walker((Node *) query->onConflict->onConflictSet, w) ||
			sf_walker(query->onConflict->onConflictWhere, w);

	/* The quals: their fields are left as written (sf_field_kept). */
	w->levels[depth].in_qual = true;
	if (!found)
		found = sf_walker((Node *) query->jointree, w);
	w->levels[depth].in_qual = false;

	rest.targetList = NIL;
	rest.havingQual = NULL;
	rest.onConflict = NULL;
	rest.jointree = NULL;
	if (!found)
		found = query_tree_walker(&rest, sf_walker, w, 0);
	w->depth--;
	return found;
}

/*
 * Walks a query and every query in it (subqueries, CTEs, sublinks),
 * rewriting the calls in place.  Never stops early: returns false.
 */
static bool
sf_walker(Node *node, SfWalk *w)
{
	if (node == NULL)
		return false;
	if (IsA(node, Query))
		return sf_walk_query((Query *) node, w);
	if (IsA(node, Aggref))
		return sf_walk_aggref((Aggref *) node, w);
	if (IsA(node, GroupingFunc))
		return false;			/* its arguments are never computed */
	if (IsA(node, FieldSelect))
		sf_inline_field((FieldSelect *) node, w);
	return expression_tree_walker(node, sf_walker, w);
}

/*
 * Records that plan, which may no longer call the functions decoders,
 * depends on them (a REVOKE replans it) and on the role it was planned for,
 * as PostgreSQL does for a SQL function it inlines.
 */
static void
sf_record_dependencies(PlannedStmt *plan, List *decoders)
{
	ListCell   *lc;

	foreach(lc, decoders)
	{
		PlanInvalItem *item = makeNode(PlanInvalItem);

		item->cacheId = PROCOID;
		item->hashValue = GetSysCacheHashValue1(PROCOID,
												ObjectIdGetDatum(lfirst_oid(lc)));
		plan->invalItems = lappend(plan->invalItems, item);
	}
	if (decoders != NIL)
		plan->dependsOnRole = true;
}

static PlannedStmt *
sf_planner(SF_PLANNER_HOOK_PARAMS)
{
	bool		rewrite = sf_inline_decode;
	SfWalk		w;
	PlannedStmt *volatile plan;

	w.decoders = NIL;
	if (rewrite)
	{
		w.size = 8;
		w.levels = palloc(w.size * sizeof(SfLevel));
		w.depth = 0;
		/* The planner changes the query it is given anyway. */
		(void) sf_walk_query(parse, &w);
		sf_plans_rewritten++;
	}
	PG_TRY();
	{
		if (prev_planner_hook)
			plan = prev_planner_hook(SF_PLANNER_HOOK_ARGS);
		else
			plan = standard_planner(SF_PLANNER_HOOK_ARGS);
	}
	PG_FINALLY();
	{
		if (rewrite)
			sf_plans_rewritten--;
	}
	PG_END_TRY();
	sf_record_dependencies(plan, w.decoders);
	return plan;
}

/*
 * A relation's expression with each field of snowflake_decode the current
 * user may replace by its scalar decoder replaced: the expression the
 * planner makes of the same field in a query.
 */
static Node *
sf_fields_mutator(Node *node, SfRelRewrite *rw)
{
	if (node == NULL)
		return NULL;
	if (IsA(node, FieldSelect))
	{
		FieldSelect *fs = (FieldSelect *) node;
		SfDecodeCall call;
		FuncExpr   *f = (FuncExpr *) fs->arg;

		if (sf_decode_call((Node *) f, &call) &&
			sf_field_inlinable(&call, fs->fieldnum - 1, fs))
		{
			List	   *args;

			args = (List *) sf_fields_mutator((Node *) f->args, rw);
			rw->decoders = list_append_unique_oid(rw->decoders, call.decode);
			return (Node *) sf_field_expr(f, &call, fs->fieldnum - 1, args);
		}
	}
	return expression_tree_mutator(node, sf_fields_mutator, rw);
}

/*
 * Whether expr has a field of a call that returns a record: a cheap test
 * before copying a relation's expressions, most of which have none.
 */
static bool
sf_has_record_field(Node *node, void *context)
{
	if (node == NULL)
		return false;
	if (IsA(node, FieldSelect) &&
		exprType((Node *) ((FieldSelect *) node)->arg) == RECORDOID)
		return true;
	return expression_tree_walker(node, sf_has_record_field, context);
}

/*
 * A copy of expr with its fields rewritten, or NULL when it has none to
 * rewrite; rw->decoders gains the snowflake_decode inlined.
 */
static Node *
sf_rewrite_fields(Node *expr, SfRelRewrite *rw)
{
	List	   *before = rw->decoders;
	Node	   *result;

	if (!sf_has_record_field(expr, NULL))
		return NULL;
	rw->decoders = NIL;
	result = sf_fields_mutator(expr, rw);
	if (rw->decoders == NIL)
		result = NULL;
	rw->decoders = list_concat_unique_oid(before, rw->decoders);
	return result;
}

/*
 * Each index of rel with a field of snowflake_decode in its expressions or
 * predicate gets a second description with the scalar calls, as hypothetical
 * indexes are added: the first matches the field where a query keeps it.
 */
static void
sf_rewrite_indexes(RelOptInfo *rel, SfRelRewrite *rw)
{
	List	   *copies = NIL;
	ListCell   *lc;

	foreach(lc, rel->indexlist)
	{
		IndexOptInfo *index = (IndexOptInfo *) lfirst(lc);
		Node	   *exprs = sf_rewrite_fields((Node *) index->indexprs, rw);
		Node	   *pred = sf_rewrite_fields((Node *) index->indpred, rw);
		IndexOptInfo *copy;

		if (exprs == NULL && pred == NULL)
			continue;
		copy = makeNode(IndexOptInfo);
		memcpy(copy, index, sizeof(IndexOptInfo));
		if (exprs)
		{
			Node	   *tlist = sf_rewrite_fields((Node *) index->indextlist, rw);

			copy->indexprs = (List *) exprs;
			if (tlist)
				copy->indextlist = (List *) tlist;
		}
		if (pred)
			copy->indpred = (List *) pred;
		copies = lappend(copies, copy);
	}
	rel->indexlist = list_concat(rel->indexlist, copies);
}

/*
 * Each statistics object of rel with a field of snowflake_decode in its
 * expressions gets a second description with the scalar calls, as indexes
 * do: the first still applies to the quals, which keep their fields, the
 * second to the rewritten fields of a GROUP BY or DISTINCT.
 */
static void
sf_rewrite_statistics(RelOptInfo *rel, SfRelRewrite *rw)
{
	List	   *copies = NIL;
	ListCell   *lc;

	foreach(lc, rel->statlist)
	{
		StatisticExtInfo *stat = (StatisticExtInfo *) lfirst(lc);
		Node	   *exprs = sf_rewrite_fields((Node *) stat->exprs, rw);
		StatisticExtInfo *copy;

		if (exprs == NULL)
			continue;
		copy = makeNode(StatisticExtInfo);
		memcpy(copy, stat, sizeof(StatisticExtInfo));
		copy->exprs = (List *) exprs;
		copies = lappend(copies, copy);
	}
	rel->statlist = list_concat(rel->statlist, copies);
}

/*
 * The relation hook (get_relation_info_hook, on 19 build_simple_rel_hook):
 * a second description of rel's indexes and statistics objects whose
 * expressions have fields of snowflake_decode, with the fields as the
 * planner hook makes them in a query.
 */
static void
sf_relation_info(SF_REL_HOOK_PARAMS)
{
	SfRelRewrite rw;
	ListCell   *lc;

	if (prev_rel_hook)
		prev_rel_hook(SF_REL_HOOK_ARGS);
	if (!sf_inline_decode || sf_plans_rewritten == 0)
		return;

	rw.decoders = NIL;
	sf_rewrite_indexes(rel, &rw);
	sf_rewrite_statistics(rel, &rw);

	foreach(lc, rw.decoders)
		record_plan_function_dependency(root, lfirst_oid(lc));
	if (rw.decoders != NIL)
		root->glob->dependsOnRole = true;
}

#ifdef SNOWFLAKE_HAVE_INLINE_IN_FROM
/*
 * SupportRequestInlineInFrom (19): the subquery of scalar decoders for
 * FROM snowflake_decode(x) d, over the parameters $1 (and $2) that the
 * planner replaces by the arguments, as in a SQL function's body.  NULL
 * without the planner's state, or where sf_from_inlinable says no.
 */
static Query *
sf_inline_in_from(SupportRequestInlineInFrom *req)
{
	Query	   *query = req->root ? req->root->parse : NULL;
	FuncExpr   *f = (FuncExpr *) req->rtfunc->funcexpr;
	SfDecodeCall call;
	List	   *params = NIL;
	int			rtindex = 0;
	ListCell   *lc;
	MemoryContext oldcxt;

	if (req->root == NULL)
		return NULL;
	foreach(lc, query->rtable)
	{
		RangeTblEntry *rte = (RangeTblEntry *) lfirst(lc);

		if (rte->rtekind == RTE_FUNCTION &&
			list_length(rte->functions) == 1 &&
			linitial(rte->functions) == req->rtfunc)
			rtindex = foreach_current_index(lc) + 1;
	}
	if (!sf_inline_decode || rtindex == 0 ||
		!sf_from_inlinable(query, rtindex, rt_fetch(rtindex, query->rtable),
						   &call))
		return NULL;

	foreach(lc, f->args)
	{
		Param	   *param = makeNode(Param);

		param->paramkind = PARAM_EXTERN;
		param->paramid = foreach_current_index(lc) + 1;
		param->paramtype = exprType(lfirst(lc));
		param->paramtypmod = -1;
		param->paramcollid = exprCollation(lfirst(lc));
		param->location = -1;
		params = lappend(params, param);
	}
	/*
	 * The planner calls this in a memory context of its own, deleted once
	 * it has copied the query returned: the plan's list of dependencies is
	 * extended in the planner's context.
	 */
	oldcxt = MemoryContextSwitchTo(GetMemoryChunkContext(req->root));
	record_plan_function_dependency(req->root, call.decode);
	MemoryContextSwitchTo(oldcxt);
	req->root->glob->dependsOnRole = true;
	return sf_from_query(f, &call,
						 rt_fetch(rtindex, query->rtable)->eref->colnames,
						 params);
}
#endif

/*
 * snowflake_decode_support(internal) RETURNS internal
 *		The planner support function of both snowflake_decode.  On 19 it
 *		answers SupportRequestInlineInFrom; it declines everything else,
 *		SupportRequestSimplify included (see the head of this file).
 */
Datum
snowflake_decode_support(PG_FUNCTION_ARGS)
{
	Node	   *req = (Node *) PG_GETARG_POINTER(0);

#ifdef SNOWFLAKE_HAVE_INLINE_IN_FROM
	if (IsA(req, SupportRequestInlineInFrom))
		PG_RETURN_POINTER(sf_inline_in_from((SupportRequestInlineInFrom *) req));
#endif
	(void) req;
	PG_RETURN_POINTER(NULL);
}

/*
 * snowflake.inline_decode changes how queries are planned: cached plans made
 * the other way are invalidated, so that a SET takes effect on prepared
 * statements and PL/pgSQL's plans too (the safety valve must be one).
 */
static void
sf_assign_inline_decode(bool newval, void *extra)
{
	if (newval != sf_inline_decode)
		ResetPlanCache();
}

/*
 * snowflake_inline_init
 *		Defines snowflake.inline_decode and installs the planner hooks.
 *		Called whether or not the library is preloaded, before the setting
 *		prefix is reserved.
 */
void
snowflake_inline_init(void)
{
	DefineCustomBoolVariable("snowflake.inline_decode",
							 "Plans snowflake_decode as the scalar decoders where that cannot change an answer.",
							 "Off, fields of snowflake_decode and snowflake_decode in FROM are planned as written: a function call and a row for each ID.",
							 &sf_inline_decode,
							 true,
							 PGC_USERSET, 0,
							 NULL, sf_assign_inline_decode, NULL);

	prev_planner_hook = planner_hook;
	planner_hook = sf_planner;
	prev_rel_hook = SF_REL_HOOK;
	SF_REL_HOOK = sf_relation_info;
}
