/*-------------------------------------------------------------------------
 *
 * snowflake.c
 *	  Module initialisation of the snowflake extension.
 *
 * Loaded through shared_preload_libraries, _PG_init defines the settings
 * and validates the layout (config.c: a bad combination stops the server
 * from starting), installs the shared memory hooks that create the shared
 * state (state.c), and registers the background writer (worker.c).  Loaded
 * any other way, it defines only what a library loaded after startup may
 * (see config.c), and stays quiet otherwise.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"

#include "compat.h"
#include "snowflake.h"

SNOWFLAKE_MODULE_MAGIC();

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

void		_PG_init(void);

static void
sf_shmem_request(void)
{
	if (prev_shmem_request_hook)
		prev_shmem_request_hook();
	snowflake_shmem_request();
}

static void
sf_shmem_startup(void)
{
	if (prev_shmem_startup_hook)
		prev_shmem_startup_hook();
	snowflake_shmem_startup();
}

void
_PG_init(void)
{
	snowflake_config_init();
	if (!process_shared_preload_libraries_in_progress)
		return;

	snowflake_worker_register();

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = sf_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = sf_shmem_startup;
}
