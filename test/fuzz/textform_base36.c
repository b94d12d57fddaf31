/*
 * textform_base36.c
 *	  Fuzz target: the base36 text form's decoder and encoder, with and
 *	  without a prefix (textform_target.h).  Test only.
 */
#define FUZZ_FORM SNOWFLAKE_BASE36
#include "textform_target.h"
