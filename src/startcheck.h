/*-------------------------------------------------------------------------
 *
 * startcheck.h
 *	  What a start tells, and asks of the operator (startcheck.c): a
 *	  request to confirm the node id, whether the state file may record
 *	  another server's IDs, where the data directory is.
 *
 * Nothing here keeps state or takes a lock.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_STARTCHECK_H
#define SNOWFLAKE_STARTCHECK_H

#include "history.h"
#include "statefile.h"

extern SNOWFLAKE_INTERNAL void snowflake_start_facts(const SnowflakeStateFile *f,
												  bool have_file,
												  bool first_look,
												  uint64 place,
												  SfStartFacts *facts);
extern SNOWFLAKE_INTERNAL const char *snowflake_ask_sentence(SfAsk ask);
extern SNOWFLAKE_INTERNAL void snowflake_record_request(SnowflakeStateFile *f,
													 uint64 place,
													 const SfHistory *h,
													 const char *why);
extern SNOWFLAKE_INTERNAL void snowflake_request_unrecorded(const char *restore,
														 const SfWriteFailure *failure,
														 int err, const char *what);
extern SNOWFLAKE_INTERNAL void snowflake_record_standby_place(SnowflakeStateFile *f,
														   uint64 place,
														   bool first_look);
extern SNOWFLAKE_INTERNAL const char *snowflake_restore_start(void);
extern SNOWFLAKE_INTERNAL bool snowflake_file_of_another_life(const SnowflakeStateFile *f,
														   bool have_file,
														   bool preloaded);
extern SNOWFLAKE_INTERNAL uint64 snowflake_data_directory_place(void);
extern SNOWFLAKE_INTERNAL void snowflake_warn_confirm_unloaded(void);

#endif							/* SNOWFLAKE_STARTCHECK_H */
