/*-------------------------------------------------------------------------
 *
 * inline.c
 *	  The planner support function of snowflake_decode: on PostgreSQL 19,
 *	  FROM snowflake_decode(x) d planned as a subquery of the scalar
 *	  decoders (SupportRequestInlineInFrom).
 *
 * What is left of the planner hook of 1.2's development, under evaluation
 * (issue 35): the hook and the relation hook are gone on every major.
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

#ifdef SNOWFLAKE_HAVE_INLINE_IN_FROM

/* The largest row snowflake_decode returns (the layout variant's). */
#define SF_DECODE_MAX_FIELDS 4

/*
 * The most a duplicated argument may cost, in cpu_operator_cost units: the
 * limit of PostgreSQL's inline_function() for a parameter used more than
 * once.
 */
#define SF_MAX_DUPLICATED_COST 10

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
	if (rtindex == 0 ||
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
