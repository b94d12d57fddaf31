/*
 * textform_base62.c
 *	  Fuzz target: the base62 text form's decoder and encoder, with and
 *	  without a prefix (textform_target.h).  Test only.
 */
#define FUZZ_FORM SNOWFLAKE_BASE62
#include "textform_target.h"
