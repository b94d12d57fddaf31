/*
 * textform_base58.c
 *	  Fuzz target: the base58 text form's decoder and encoder, with and
 *	  without a prefix (textform_target.h).  Test only.
 */
#define FUZZ_FORM SNOWFLAKE_BASE58
#include "textform_target.h"
