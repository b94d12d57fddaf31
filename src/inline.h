/*-------------------------------------------------------------------------
 *
 * inline.h
 *	  snowflake_decode planned as the scalar decoders (inline.c): the
 *	  planner hooks, the support function and snowflake.inline_decode.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_INLINE_H
#define SNOWFLAKE_INLINE_H

#include "layout.h"

extern SNOWFLAKE_INTERNAL void snowflake_inline_init(void);

#endif							/* SNOWFLAKE_INLINE_H */
