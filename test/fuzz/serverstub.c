/*-------------------------------------------------------------------------
 *
 * serverstub.c
 *	  What a file of src/ under test refers to of a server besides the
 *	  pure functions a target calls: src/statefile.c holds the timeline
 *	  history parser (target history) beside the I/O of the state file,
 *	  which needs the server's file, error and wait-event functions.  The
 *	  target never calls that I/O: each of these aborts if it is called, so
 *	  that a call would be seen.  (When the parser has a file of its own,
 *	  the target names that file and needs none of this.)
 *
 * Test only: never part of the extension.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "miscadmin.h"
#include "storage/fd.h"
#include "utils/wait_event.h"

#include "fuzz.h"

bool		IsUnderPostmaster = false;
bool		enableFsync = true;
uint32	   *my_wait_event_info = NULL;

static void
stub_called(const char *what)
{
	fprintf(stderr, "a fuzz target called %s, which it must not (serverstub.c)\n", what);
	abort();
}

#if PG_VERSION_NUM >= 170000
/* The state file's custom wait event (src/compat.h, sf_wait_event). */
uint32
WaitEventExtensionNew(const char *wait_event_name)
{
	stub_called("WaitEventExtensionNew");
	return 0;
}
#endif

int
BasicOpenFile(const char *fileName, int fileFlags)
{
	stub_called("BasicOpenFile");
	return -1;
}

int
OpenTransientFile(const char *fileName, int fileFlags)
{
	stub_called("OpenTransientFile");
	return -1;
}

int
CloseTransientFile(int fd)
{
	stub_called("CloseTransientFile");
	return -1;
}

int
pg_fsync(int fd)
{
	stub_called("pg_fsync");
	return -1;
}

bool
errstart(int elevel, const char *domain)
{
	stub_called("errstart");
	return false;
}

bool
errstart_cold(int elevel, const char *domain)
{
	stub_called("errstart_cold");
	return false;
}

void
errfinish(const char *filename, int lineno, const char *funcname)
{
	stub_called("errfinish");
}

int
errcode_for_file_access(void)
{
	stub_called("errcode_for_file_access");
	return 0;
}

int
errmsg(const char *fmt,...)
{
	stub_called("errmsg");
	return 0;
}

int
errhint(const char *fmt,...)
{
	stub_called("errhint");
	return 0;
}

int
errdetail_internal(const char *fmt,...)
{
	stub_called("errdetail_internal");
	return 0;
}
