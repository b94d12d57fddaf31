/*-------------------------------------------------------------------------
 *
 * fuzzstub.c
 *	  What the fuzz targets need of a server and nothing else provides: the
 *	  report of a failed assertion (the files under test are built with the
 *	  extension's assertions, as test/check.sh builds them).  It aborts, so
 *	  that libFuzzer keeps the input as a crash.
 *
 * Test only: never part of the extension.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fuzz.h"

#if PG_VERSION_NUM >= 160000
void
ExceptionalCondition(const char *conditionName, const char *fileName,
					 int lineNumber)
#else
void
ExceptionalCondition(const char *conditionName, const char *errorType,
					 const char *fileName, int lineNumber)
#endif
{
	fprintf(stderr, "TRAP: failed Assert(\"%s\"), File: \"%s\", Line: %d\n",
			conditionName, fileName, lineNumber);
	abort();
}
