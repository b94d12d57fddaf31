/*-------------------------------------------------------------------------
 *
 * snowflake.c
 *	  Module initialisation of the snowflake extension.
 *
 * Loaded through shared_preload_libraries, _PG_init defines the settings
 * and validates the layout (config.c: a bad combination stops the server
 * from starting), installs the shared memory hooks that create the shared
 * state (shared.c), and registers the background writer (worker.c).  Loaded
 * any other way, it defines only what a library loaded after startup may
 * (see config.c), and stays quiet otherwise.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"

#include "compat.h"
#include "snowflake.h"

SNOWFLAKE_MODULE_MAGIC();

void		_PG_init(void);

void
_PG_init(void)
{
	snowflake_config_init();
	snowflake_shared_init();
	if (process_shared_preload_libraries_in_progress)
		snowflake_worker_register();
}
