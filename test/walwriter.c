/*-------------------------------------------------------------------------
 *
 * walwriter.c
 *	  Test only: a function that writes a WAL record of snowflake's
 *	  resource manager with any info code and bytes, so that a test can
 *	  show what a standby's replay does with a record that a later release
 *	  could write (test/t/084_wal_record.pl).  Compiled by that test and
 *	  loaded by its absolute path; never installed, never part of the
 *	  extension.
 *
 *	  CREATE FUNCTION sf_test_wal(info integer, data bytea) RETURNS pg_lsn
 *	    AS '/path/walwriter.so', 'sf_test_wal' LANGUAGE C STRICT;
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "access/xlog.h"
#include "access/xloginsert.h"
#include "fmgr.h"
#include "utils/pg_lsn.h"
#if PG_VERSION_NUM >= 160000
#include "varatt.h"
#endif

PG_MODULE_MAGIC;

PG_FUNCTION_INFO_V1(sf_test_wal);

Datum
sf_test_wal(PG_FUNCTION_ARGS)
{
	int32		info = PG_GETARG_INT32(0);
	bytea	   *data = PG_GETARG_BYTEA_PP(1);
	XLogRecPtr	lsn;

	XLogBeginInsert();
	XLogRegisterData(VARDATA_ANY(data), VARSIZE_ANY_EXHDR(data));
	lsn = XLogInsert(183, (uint8) info);
	XLogFlush(lsn);
	PG_RETURN_LSN(lsn);
}
