/*
 * textform_hex.c
 *	  Fuzz target: the hex text form's decoder and encoder, with and
 *	  without a prefix (textform_target.h).  Test only.
 */
#define FUZZ_FORM SNOWFLAKE_HEX
#include "textform_target.h"
