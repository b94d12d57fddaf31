/*-------------------------------------------------------------------------
 *
 * snowflake.c
 *	  Module initialisation and configuration of the snowflake extension.
 *
 * Loaded through shared_preload_libraries, _PG_init defines the GUCs,
 * validates the layout as a whole (a bad combination stops the server from
 * starting, naming the settings), installs the shared memory hooks that
 * hand the validated layout and node id to state.c, and registers the
 * background writer (worker.c).
 *
 * Loaded any other way (CREATE EXTENSION, the first call of a function in
 * a server without the preload), _PG_init defines no setting that decides
 * uniqueness: postmaster-context settings cannot be defined after startup.
 * The node id and layout are then read from the server configuration by
 * config.c (the decoders, and on PostgreSQL 17 and later the process that
 * configures the shared state in the DSM registry: state.c).  On 17 and
 * later the operator knobs (sighup and user settings) are defined, since
 * the generator runs there; the prefix is not reserved then, which would
 * remove the placeholders config.c reads.  On 15 and 16 _PG_init does
 * nothing, and the generators raise 55000.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "fmgr.h"
#include "miscadmin.h"
#include "storage/ipc.h"
#include "utils/guc.h"

#include "compat.h"
#include "snowflake.h"

SNOWFLAKE_MODULE_MAGIC();

/* Postmaster-context settings: they decide uniqueness. */
static int	sf_node_id = -1;
static char *sf_epoch = NULL;
static int	sf_timestamp_bits = SNOWFLAKE_DEFAULT_TIMESTAMP_BITS;
static int	sf_node_bits = SNOWFLAKE_DEFAULT_NODE_BITS;
static int	sf_sequence_bits = SNOWFLAKE_DEFAULT_SEQUENCE_BITS;

/* The layout they make, validated in _PG_init. */
static SnowflakeLayout sf_layout;

static shmem_request_hook_type prev_shmem_request_hook = NULL;
static shmem_startup_hook_type prev_shmem_startup_hook = NULL;

void		_PG_init(void);

static bool
sf_check_epoch(char **newval, void **extra, GucSource source)
{
	int64		epoch_ms;
	char		detail[SNOWFLAKE_DETAIL_LEN];

	if (!snowflake_parse_epoch(*newval, &epoch_ms, detail))
	{
		GUC_check_errdetail("%s", detail);
		return false;
	}
	return true;
}

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
	snowflake_shmem_startup(&sf_layout, sf_node_id);
}

/*
 * The text postgresql.conf (or the command line) gave a setting, read before
 * the setting is defined.  Defining a custom setting turns a bad value into
 * a WARNING and the default, which for these settings would silently change
 * every ID: sf_require_applied() turns that into a startup failure instead.
 */
static char *
sf_raw_setting(const char *name)
{
	const char *raw = GetConfigOption(name, true, false);

	return raw ? pstrdup(raw) : NULL;
}

static void
sf_require_applied(const char *name, const char *raw, bool applied)
{
	if (raw != NULL && !applied)
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"%s\": \"%s\"", name, raw),
				 errdetail("The settings that shape snowflake IDs must be valid, and the node id and bit widths plain decimal integers: the server does not start with one of them ignored or read differently."),
				 errhint("Correct \"%s\" and start the server again.", name)));
}

/*
 * Whether an integer setting took the value its text spells.  Only plain
 * decimal counts: PostgreSQL would also read "010" as octal 8 and round
 * "11.6" to 12, which the decoders of a server without the library preloaded
 * (snowflake_file_layout) would read differently or refuse.
 */
static bool
sf_int_applied(const char *raw, int value)
{
	int			parsed;

	return raw == NULL || (snowflake_parse_int(raw, &parsed) && parsed == value);
}

/*
 * The operator knobs: settings that do not decide uniqueness, defined
 * whether or not the library is preloaded (on majors where the generator
 * runs without it).
 */
static void
sf_define_operator_settings(void)
{
	DefineCustomIntVariable("snowflake.max_drift_ms",
							"Sets how far the time in IDs may run ahead of the wall clock.",
							"Bursts beyond the sequence field's capacity borrow future milliseconds up to this lead; beyond it calls wait.",
							&snowflake_max_drift_ms,
							1000, 0, 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomIntVariable("snowflake.max_wait_ms",
							"Sets how long one call may wait for the clock to catch up before failing.",
							NULL,
							&snowflake_max_wait_ms,
							1000, 0, 3600 * 1000,
							PGC_USERSET, GUC_UNIT_MS,
							NULL, NULL, NULL);
	DefineCustomBoolVariable("snowflake.spread_sequence",
							 "Starts each new millisecond's sequence at a random offset.",
							 "The offset lies in the lower half of the sequence field: the low bits of IDs minted at low rates spread evenly (id % N sharding), at the cost of up to half a millisecond's IDs before the next one is borrowed.",
							 &snowflake_spread_sequence,
							 false,
							 PGC_SIGHUP, 0,
							 NULL, NULL, NULL);
	DefineCustomBoolVariable("snowflake.background_writer",
							 "Lets a background process write the reservation ahead of the callers.",
							 "Off, each call that brings IDs near the end of the reservation writes the next one itself, waiting for the disk.",
							 &snowflake_background_writer,
							 true,
							 PGC_SIGHUP, 0,
							 NULL, NULL, NULL);
	DefineCustomIntVariable("snowflake.writer_idle_timeout",
							"Sets how long the background writer keeps the reservation ahead after the last ID.",
							"While IDs are being issued, the writer extends the reservation before callers need it; once none has been issued for this long it writes nothing, and the next call writes the reservation itself.",
							&snowflake_writer_idle_timeout_ms,
							60000, 100, 24 * 3600 * 1000,
							PGC_SIGHUP, GUC_UNIT_MS,
							NULL, NULL, NULL);
}

void
_PG_init(void)
{
	char	   *raw_node_id;
	char	   *raw_epoch;
	char	   *raw_timestamp_bits;
	char	   *raw_node_bits;
	char	   *raw_sequence_bits;
	char		detail[SNOWFLAKE_DETAIL_LEN];

	if (!process_shared_preload_libraries_in_progress)
	{
#ifdef SNOWFLAKE_HAVE_DSM_REGISTRY
		sf_define_operator_settings();
#endif
		return;
	}

	raw_node_id = sf_raw_setting("snowflake.node_id");
	raw_epoch = sf_raw_setting("snowflake.epoch");
	raw_timestamp_bits = sf_raw_setting("snowflake.timestamp_bits");
	raw_node_bits = sf_raw_setting("snowflake.node_bits");
	raw_sequence_bits = sf_raw_setting("snowflake.sequence_bits");

	DefineCustomIntVariable("snowflake.node_id",
							"Sets this server's node id, embedded in every ID it mints.",
							"Each server minting IDs needs its own value, between 0 and 2^snowflake.node_bits - 1. -1 means not set: generation is refused.",
							&sf_node_id,
							-1, -1, INT_MAX,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	DefineCustomStringVariable("snowflake.epoch",
							   "Sets the time zero of the IDs' timestamp field.",
							   "An ISO 8601 date and time; UTC unless a zone is given.",
							   &sf_epoch,
							   SNOWFLAKE_DEFAULT_EPOCH,
							   PGC_POSTMASTER, 0,
							   sf_check_epoch, NULL, NULL);
	DefineCustomIntVariable("snowflake.timestamp_bits",
							"Sets the width of the IDs' timestamp field, in bits.",
							NULL,
							&sf_timestamp_bits,
							SNOWFLAKE_DEFAULT_TIMESTAMP_BITS,
							SNOWFLAKE_MIN_TIMESTAMP_BITS,
							SNOWFLAKE_MAX_TIMESTAMP_BITS,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("snowflake.node_bits",
							"Sets the width of the IDs' node field, in bits.",
							NULL,
							&sf_node_bits,
							SNOWFLAKE_DEFAULT_NODE_BITS, 0,
							SNOWFLAKE_MAX_NODE_BITS,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("snowflake.sequence_bits",
							"Sets the width of the IDs' per-millisecond sequence field, in bits.",
							NULL,
							&sf_sequence_bits,
							SNOWFLAKE_DEFAULT_SEQUENCE_BITS, 0,
							SNOWFLAKE_MAX_SEQUENCE_BITS,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	sf_define_operator_settings();
	MarkGUCPrefixReserved("snowflake");

	sf_require_applied("snowflake.node_id", raw_node_id,
					   sf_int_applied(raw_node_id, sf_node_id));
	sf_require_applied("snowflake.epoch", raw_epoch,
					   raw_epoch == NULL || strcmp(raw_epoch, sf_epoch) == 0);
	sf_require_applied("snowflake.timestamp_bits", raw_timestamp_bits,
					   sf_int_applied(raw_timestamp_bits, sf_timestamp_bits));
	sf_require_applied("snowflake.node_bits", raw_node_bits,
					   sf_int_applied(raw_node_bits, sf_node_bits));
	sf_require_applied("snowflake.sequence_bits", raw_sequence_bits,
					   sf_int_applied(raw_sequence_bits, sf_sequence_bits));

	sf_layout.timestamp_bits = sf_timestamp_bits;
	sf_layout.node_bits = sf_node_bits;
	sf_layout.sequence_bits = sf_sequence_bits;
	if (!snowflake_parse_epoch(sf_epoch, &sf_layout.epoch_ms, detail))
		elog(ERROR, "snowflake.epoch passed its check hook but does not parse");

	/* An ERROR here, during preload, stops the server from starting. */
	if (!snowflake_layout_check(&sf_layout, detail))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowflake layout"),
				 errdetail("%s", detail),
				 errhint("Correct the settings and start the server again.")));
	if (sf_node_id != -1 && !snowflake_node_check(&sf_layout, sf_node_id, detail))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"%s\": %d",
						"snowflake.node_id", sf_node_id),
				 errdetail("%s", detail),
				 errhint("Choose a node id that fits the node field, or widen \"%s\".",
						 "snowflake.node_bits")));
	/*
	 * An epoch ahead of the clock does not stop the server: a host may boot
	 * with its clock behind until time synchronisation catches up.  Calls
	 * fail with 22003 until the clock passes the epoch.
	 */

	snowflake_worker_register();

	prev_shmem_request_hook = shmem_request_hook;
	shmem_request_hook = sf_shmem_request;
	prev_shmem_startup_hook = shmem_startup_hook;
	shmem_startup_hook = sf_shmem_startup;
}
