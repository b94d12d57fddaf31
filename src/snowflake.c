/*-------------------------------------------------------------------------
 *
 * snowflake.c
 *	  Module initialisation of the snowflake extension.
 *
 * The source files depend on each other in one direction only, each
 * calling only the ones below it:
 *
 *	snowflake.c     module init: one init call per module
 *	functions.c     the SQL-callable functions of the generator, decoding,
 *	                the stats and the adoptions
 *	textfunctions.c the SQL-callable text forms of IDs (snowflake_to_<form>,
 *	                snowflake_from_<form>)
 *	publicid.c      the SQL-callable public IDs (snowflake_encrypt_id,
 *	                snowflake_to_public, ...): FF1 over the 63-bit IDs
 *	worker.c        the background writer that keeps the reservation ahead
 *	generator.c     the hot path: minting IDs under the spinlock
 *	reservation.c   the durable reservation, the floor, a layout's adoption
 *	walrecord.c     the history's largest lead in WAL (a custom resource
 *	                manager)
 *	shared.c        the shared state's life: shared memory or the DSM
 *	                registry, loading from the state file, shutdown
 *	startcheck.c    what a start tells and asks: a request to confirm the
 *	                node id, whether the file may be another server's
 *	statefile.c     the state file's format and its durable write
 *	config.c        the settings: their variables and definitions, the
 *	                epoch, the layout read from the server configuration
 *	nodesource.c    the node id derived from the host name or the
 *	                environment (snowflake.node_id_from)
 *	fileformat.c    pure serializing and checking of the settings file's
 *	                bytes (statefile.c does its I/O)
 *	layout.c        pure arithmetic on the ID layout
 *	keyring.c       the configured keys of public IDs: the key file's
 *	                setting, reading and checking it, the keys prepared
 *	keyfile.c       pure parsing of the key file
 *	ff1.c           pure FF1 (NIST SP 800-38G) on libcrypto's AES
 *	textform.c      pure encoding and decoding of the text forms
 *
 * Each .c file but this one and publicid.c (whose functions only
 * PostgreSQL calls, by their SQL names) has a header of the same name
 * declaring what it defines (textfunctions.h: what the text forms share
 * with the public IDs' text form); compat.h holds every PostgreSQL-version-specific
 * construct.
 *
 * Whenever loaded, _PG_init first defines snowflake.public_keys_file
 * (keyring.c), which serves public IDs with or without the preload and must
 * exist before config.c reserves the prefix.  Loaded through
 * shared_preload_libraries, _PG_init then defines the settings
 * and validates the layout (a bad combination stops the server from
 * starting), installs the shared memory hooks and registers the background
 * writer.  Whenever loaded, it installs the hook through which DISCARD
 * forgets snowflake_lastval().  Loaded any other way, each init call does only what a library
 * loaded after startup may do (see config.c): _PG_init stays quiet, so
 * that CREATE EXTENSION, dump/restore and upgrades work.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"

#include "compat.h"
#include "config.h"
#include "functions.h"
#include "keyring.h"
#include "replay.h"
#include "shared.h"
#include "worker.h"

SNOWFLAKE_MODULE_MAGIC();

void		_PG_init(void);

void
_PG_init(void)
{
	snowflake_keyring_init();	/* the key file setting of public IDs, before
								 * config.c reserves the prefix */
	snowflake_config_init();	/* the settings */
	snowflake_shared_init();	/* shared memory hooks, when preloaded */
	snowflake_replay_init();	/* the replay of the WAL record, when preloaded */
	snowflake_worker_init();	/* the background writer, when preloaded */
	snowflake_functions_init(); /* DISCARD forgets snowflake_lastval() */
}
