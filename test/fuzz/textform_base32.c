/*
 * textform_base32.c
 *	  Fuzz target: the base32 text form's decoder and encoder, with and
 *	  without a prefix (textform_target.h).  Test only.
 */
#define FUZZ_FORM SNOWFLAKE_BASE32
#include "textform_target.h"
