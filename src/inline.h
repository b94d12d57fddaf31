/*-------------------------------------------------------------------------
 *
 * inline.h
 *	  The planner support function of snowflake_decode (inline.c).
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_INLINE_H
#define SNOWFLAKE_INLINE_H

#include "layout.h"

#endif							/* SNOWFLAKE_INLINE_H */
