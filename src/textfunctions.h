/*-------------------------------------------------------------------------
 *
 * textfunctions.h
 *	  What the SQL-callable text forms (textfunctions.c) share with the
 *	  public IDs' text form (publicid.c): the prefix argument's check and
 *	  the wording of a text that does not decode, so that both forms raise
 *	  the same errors for the same faults.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_TEXTFUNCTIONS_H
#define SNOWFLAKE_TEXTFUNCTIONS_H

#include "fmgr.h"

#include "textform.h"

extern SNOWFLAKE_INTERNAL void snowflake_text_prefix_arg(FunctionCallInfo fcinfo, int argno,
														 const char **prefix,
														 size_t *len);
extern SNOWFLAKE_INTERNAL int snowflake_text_syntax_detail(const char *name, int width,
														   const char *digit_name,
														   SnowflakeTextStatus status,
														   const char *s, size_t where,
														   int ndigits,
														   const char *prefix);

#endif							/* SNOWFLAKE_TEXTFUNCTIONS_H */
