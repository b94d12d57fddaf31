/*-------------------------------------------------------------------------
 *
 * functions.h
 *	  The SQL-callable functions (functions.c): the one thing they need at
 *	  load time, the hook that lets DISCARD forget snowflake_lastval().
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_FUNCTIONS_H
#define SNOWFLAKE_FUNCTIONS_H

#include "layout.h"

extern SNOWFLAKE_INTERNAL void snowflake_functions_init(void);

#endif							/* SNOWFLAKE_FUNCTIONS_H */
