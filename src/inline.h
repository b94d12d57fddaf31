/*-------------------------------------------------------------------------
 *
 * inline.h
 *	  The planner hook that replaces snowflake_decode by the scalar
 *	  decoders (inline.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_INLINE_H
#define SNOWFLAKE_INLINE_H

#include "layout.h"

extern SNOWFLAKE_INTERNAL void snowflake_inline_init(void);

#endif							/* SNOWFLAKE_INLINE_H */
