/*-------------------------------------------------------------------------
 *
 * config.c
 *	  Settings of the snowflake extension: their variables and their
 *	  definitions, the epoch's text as a time, and the layout and node id
 *	  read from the server configuration when the library is not preloaded
 *	  (by the decoders, and on PostgreSQL 17 and later by the process that
 *	  configures the shared state).
 *
 * Loaded through shared_preload_libraries, snowflake_config_init defines
 * every setting, and validates the layout as a whole: a bad combination
 * stops the server from starting, naming the settings.  The node id is
 * snowflake.node_id, or derived from the host name or an environment
 * variable (snowflake.node_id_from, nodesource.c), which may stop the
 * server too.  The validated layout and node id, and where the node id
 * came from, are handed to the shared state by snowflake_config_server.
 *
 * What the derivation says (the node id, or why there is none) reaches
 * the server's log where the operator looks for it: the postmaster says it
 * at its first message once its standard error goes where the server's
 * log goes (to the log collector, logging_collector = on), through
 * emit_log_hook (sf_emit_log), and a node id that cannot be derived then
 * stops the server (FATAL) before it opens a socket.  Said at preload, as
 * a setting's error is, it went to the standard error the server was
 * started with, which the collector never sees.  A server that only
 * replays WAL and runs no postmaster (single-user mode, in which pg_rewind
 * finishes a crash recovery) is not stopped by a node id it cannot derive:
 * it starts without one, with a WARNING, and refuses to generate, saying
 * why (snowflake_config_node_failure); so pg_rewind and the tools that run
 * it need no variable of the server's.  postgres -C stops before either.
 *
 * Loaded any other way (CREATE EXTENSION, the first call of a function in
 * a server without the preload), no setting that decides uniqueness is
 * defined: postmaster-context settings cannot be defined after startup.
 * The node id and layout are then read from the server configuration here
 * (snowflake_file_settings).  On 17 and later the operator knobs (sighup
 * and user settings) are defined, since the generator runs there; the
 * prefix is not reserved then, which would remove the placeholders read
 * here.  On 15 and 16 nothing is defined, and the generators raise 55000.
 *
 * It also words what messages quote of a user's input
 * (snowflake_input_excerpt), for the decoders' errors.
 *
 * This file sits just above layout.c: it reads PostgreSQL's configuration
 * and time input, but calls nothing else of ours, so that the module init,
 * the SQL functions, the generator and the shared state can all use it
 * without any file calling back up.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>
#include <limits.h>

#include "fmgr.h"
#include "mb/pg_wchar.h"
#include "miscadmin.h"
#include "pgtime.h"
#include "tcop/tcopprot.h"
#include "utils/datetime.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "config.h"
#include "nodesource.h"

/* Operator knobs (PGC_SIGHUP and PGC_USERSET). */
int			snowflake_max_drift_ms = 1000;
int			snowflake_max_wait_ms = 1000;
bool		snowflake_spread_sequence = false;
int			snowflake_writer_idle_timeout_ms = 60000;
bool		snowflake_background_writer = true;

/* Whether the library was loaded through shared_preload_libraries. */
bool		snowflake_preloaded = false;

/* A safeguard read at server start, defined when preloaded (shared.c). */
bool		snowflake_confirm_restore_enabled = false;

/* Postmaster-context settings, defined when preloaded: they decide uniqueness. */
static int	sf_node_id = -1;
static int	sf_node_id_span = 1;
static char *sf_epoch = NULL;
static int	sf_timestamp_bits = SNOWFLAKE_DEFAULT_TIMESTAMP_BITS;
static int	sf_node_bits = SNOWFLAKE_DEFAULT_NODE_BITS;
static int	sf_sequence_bits = SNOWFLAKE_DEFAULT_SEQUENCE_BITS;
static char *sf_node_id_from = NULL;
static int	sf_node_id_base = 0;
static int	sf_node_id_count = -1;

/*
 * The layout they make and the node id they give (snowflake.node_id or a
 * derived one), validated by snowflake_config_init.
 */
static SnowflakeLayout sf_layout;
static SnowflakeNodeSource sf_node_source;

/*
 * Why the settings gave this server no node id at preload
 * (snowflake_node_choose failed): the setting at fault (NULL if they gave
 * one) and the detail.  Inherited by every process the postmaster starts.
 */
static const char *sf_node_bad_name = NULL;
static char sf_node_failure[SNOWFLAKE_DETAIL_LEN];

/* Whether the postmaster has said what the derivation gave (sf_emit_log). */
static bool sf_start_reported = false;
static emit_log_hook_type prev_emit_log_hook = NULL;

#define SF_NODE_FAILURE_HINT \
	"Correct the settings, or the host name or environment the server starts with, and start the server again."

/*
 * The texts postgresql.conf (or the command line) gave the settings that
 * shape IDs, read before the settings are defined.
 */
typedef struct SfRawSettings
{
	char	   *node_id;
	char	   *node_id_span;
	char	   *epoch;
	char	   *timestamp_bits;
	char	   *node_bits;
	char	   *sequence_bits;
	char	   *node_id_from;
	char	   *node_id_base;
	char	   *node_id_count;
} SfRawSettings;

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

static bool
sf_check_node_from(char **newval, void **extra, GucSource source)
{
	char		detail[SNOWFLAKE_DETAIL_LEN];

	if (!snowflake_node_from_valid(*newval, detail))
	{
		GUC_check_errdetail("%s", detail);
		return false;
	}
	return true;
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
							"Bursts beyond the sequence field's capacity borrow future milliseconds up to this lead; beyond it calls wait. Without shared_preload_libraries, at most 1000 ms is used.",
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

/*
 * A setting about the server's start, which only the preloaded library
 * sees (shared.c): defined only then.
 */
static void
sf_define_start_settings(void)
{
	DefineCustomBoolVariable("snowflake.confirm_restore",
							 "Refuses to generate IDs after a restore until its node id is confirmed.",
							 "At a start from a base backup or in archive recovery (backup_label or recovery.signal, not a standby's start), a server whose node id is the one its state file records refuses to generate IDs until a superuser runs snowflake_confirm_restore(), or until it is restarted with another node id: a restored copy that runs beside its original must not mint the same keys.",
							 &snowflake_confirm_restore_enabled,
							 false,
							 PGC_POSTMASTER, 0,
							 NULL, NULL, NULL);
}

/*
 * The settings that choose the node id, defined only while the library is
 * preloaded; *raw gets the texts the configuration gave them, read first.
 */
static void
sf_define_node_settings(SfRawSettings *raw)
{
	raw->node_id = sf_raw_setting("snowflake.node_id");
	raw->node_id_span = sf_raw_setting("snowflake.node_id_span");
	raw->node_id_from = sf_raw_setting("snowflake.node_id_from");
	raw->node_id_base = sf_raw_setting("snowflake.node_id_base");
	raw->node_id_count = sf_raw_setting("snowflake.node_id_count");

	DefineCustomIntVariable("snowflake.node_id",
							"Sets this server's node id, embedded in every ID it mints.",
							"Each server minting IDs needs its own value, between 0 and 2^snowflake.node_bits - 1. -1 means not set: generation is refused, unless snowflake.node_id_from derives the node id.",
							&sf_node_id,
							-1, -1, INT_MAX,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("snowflake.node_id_span",
							"Sets how many node ids, from snowflake.node_id on, this server and its standbys take turns with, one per timeline.",
							"IDs carry node field snowflake.node_id + (timeline - 1) % snowflake.node_id_span: at 2 or more, a promoted standby never mints with the node field of the primary it replaced, even while that one still runs.",
							&sf_node_id_span,
							1, 1, INT_MAX,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	DefineCustomStringVariable("snowflake.node_id_from",
							   "Derives the node id from the number that ends the host name's first label or an environment variable.",
							   "Empty: snowflake.node_id sets the node id. \"hostname\": the number that ends the host name's first label; \"env:NAME\": the number that ends the server's environment variable NAME. Member number n takes node ids snowflake.node_id_base + n * snowflake.node_id_span on, one per timeline, within snowflake.node_id_count node ids.",
							   &sf_node_id_from,
							   "",
							   PGC_POSTMASTER, 0,
							   sf_check_node_from, NULL, NULL);
	DefineCustomIntVariable("snowflake.node_id_base",
							"Sets the first of the node ids the cluster's members derive theirs from.",
							NULL,
							&sf_node_id_base,
							0, 0, INT_MAX,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
	DefineCustomIntVariable("snowflake.node_id_count",
							"Sets how many node ids, from snowflake.node_id_base on, the cluster's members derive theirs from.",
							"Required with snowflake.node_id_from; -1 means not set. A member whose number has no room in it does not start.",
							&sf_node_id_count,
							-1, -1, INT_MAX,
							PGC_POSTMASTER, 0,
							NULL, NULL, NULL);
}

/*
 * The settings that shape IDs, defined only while the library is preloaded;
 * *raw gets the texts the configuration gave them, read first.
 */
static void
sf_define_layout_settings(SfRawSettings *raw)
{
	raw->epoch = sf_raw_setting("snowflake.epoch");
	raw->timestamp_bits = sf_raw_setting("snowflake.timestamp_bits");
	raw->node_bits = sf_raw_setting("snowflake.node_bits");
	raw->sequence_bits = sf_raw_setting("snowflake.sequence_bits");

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
}

/*
 * The settings give this server no node id: the setting bad_name and the
 * detail say why.  Remembered, and the server goes on without a node id
 * for now (node id -1, not derived: generation is refused): the postmaster
 * is stopped by sf_emit_log once its log collector listens; a server in
 * single-user mode runs on, saying so with a WARNING here.
 */
static void
sf_node_unchosen(const char *bad_name, const char *detail)
{
	sf_node_bad_name = bad_name;
	strlcpy(sf_node_failure, detail, sizeof(sf_node_failure));
	snowflake_node_source_fixed(&sf_node_source, -1, "");
	if (!IsPostmasterEnvironment)
		ereport(WARNING,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"%s\": \"%s\"",
						bad_name, GetConfigOption(bad_name, false, false)),
				 errdetail("%s", detail),
				 errhint("A server in single-user mode starts without the node id, and generates no IDs.")));
}

/*
 * sf_emit_log
 *		emit_log_hook, installed by the postmaster at preload: at the
 *		postmaster's first message after its standard error went where the
 *		server's log goes (whereToSendOutput is DestNone from then on; that
 *		message is "starting PostgreSQL ..."), say where the node id came
 *		from, or stop the server (FATAL) if the settings gave it none:
 *		before the postmaster opens a socket or starts a process, after
 *		the log collector started, so that its log files have the line.
 *		Every other message, and every other process's, passes unchanged.
 *		Where log_min_messages hides the postmaster's messages, nothing is
 *		said, and a server without its node id refuses to generate, saying
 *		why.
 */
static void
sf_emit_log(ErrorData *edata)
{
	if (!sf_start_reported && !IsUnderPostmaster &&
		whereToSendOutput == DestNone)
	{
		sf_start_reported = true;
		if (sf_node_bad_name != NULL)
			ereport(FATAL,
					(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
					 errmsg("invalid value for parameter \"%s\": \"%s\"",
							sf_node_bad_name,
							GetConfigOption(sf_node_bad_name, false, false)),
					 errdetail("%s", sf_node_failure),
					 errhint(SF_NODE_FAILURE_HINT)));
		snowflake_node_log(&sf_node_source);
	}
	if (prev_emit_log_hook)
		prev_emit_log_hook(edata);
}

/*
 * snowflake_config_node_failure
 *		Whether the settings gave this server no node id at preload (a host
 *		name or environment variable without a usable number, in
 *		single-user mode, or a postmaster whose messages were hidden): then
 *		*bad_name, *detail and *hint say why, for the error of every call
 *		that generates.
 */
bool
snowflake_config_node_failure(const char **bad_name, const char **detail,
							  const char **hint)
{
	if (sf_node_bad_name == NULL)
		return false;
	*bad_name = sf_node_bad_name;
	*detail = sf_node_failure;
	*hint = IsPostmasterEnvironment ? SF_NODE_FAILURE_HINT :
		"The server runs in single-user mode, which starts without a node id it cannot derive and generates no IDs: correct the host name or environment it starts with, or generate IDs in a server started normally.";
	return true;
}

/*
 * Check that the settings that choose the node id make a valid one for the
 * layout in sf_layout, into sf_node_source: snowflake.node_id, or the one
 * derived from the host name or an environment variable (nodesource.c),
 * which is logged.  An ERROR here, during preload, stops the server from
 * starting.
 */
static void
sf_validate_node_settings(void)
{
	char		detail[SNOWFLAKE_DETAIL_LEN];
	const char *bad_name;
	SnowflakeNodeSettings set = {
		.node_id = sf_node_id,
		.span = sf_node_id_span,
		.from = sf_node_id_from,
		.base = sf_node_id_base,
		.count = sf_node_id_count
	};

	if (sf_node_id != -1 && !snowflake_node_check(&sf_layout, sf_node_id, detail))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"%s\": %d",
						"snowflake.node_id", sf_node_id),
				 errdetail("%s", detail),
				 errhint("Choose a node id that fits the node field, or widen \"%s\".",
						 "snowflake.node_bits")));
	if (!snowflake_node_choose(&sf_layout, &set, &sf_node_source, &bad_name,
							   detail))
		sf_node_unchosen(bad_name, detail);
	if (!snowflake_node_span_check(&sf_layout, sf_node_source.node_id,
								   sf_node_id_span, detail))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"%s\": %d",
						"snowflake.node_id_span", sf_node_id_span),
				 errdetail("%s", detail),
				 errhint("Lower \"%s\" or \"%s\", or widen \"%s\".",
						 "snowflake.node_id_span", "snowflake.node_id",
						 "snowflake.node_bits")));

	/* The postmaster says it once its log collector listens (sf_emit_log). */
	if (IsPostmasterEnvironment)
	{
		prev_emit_log_hook = emit_log_hook;
		emit_log_hook = sf_emit_log;
	}
	else
		snowflake_node_log(&sf_node_source);
}

/*
 * Check that the settings that shape IDs took the values their texts spell,
 * and that they make a valid layout and node id, into sf_layout and
 * sf_node_source.  An ERROR here, during preload, stops the server from
 * starting.
 */
static void
sf_validate_layout_settings(const SfRawSettings *raw)
{
	char		detail[SNOWFLAKE_DETAIL_LEN];

	sf_require_applied("snowflake.node_id", raw->node_id,
					   sf_int_applied(raw->node_id, sf_node_id));
	sf_require_applied("snowflake.node_id_span", raw->node_id_span,
					   sf_int_applied(raw->node_id_span, sf_node_id_span));
	sf_require_applied("snowflake.node_id_from", raw->node_id_from,
					   raw->node_id_from == NULL ||
					   strcmp(raw->node_id_from, sf_node_id_from) == 0);
	sf_require_applied("snowflake.node_id_base", raw->node_id_base,
					   sf_int_applied(raw->node_id_base, sf_node_id_base));
	sf_require_applied("snowflake.node_id_count", raw->node_id_count,
					   sf_int_applied(raw->node_id_count, sf_node_id_count));
	sf_require_applied("snowflake.epoch", raw->epoch,
					   raw->epoch == NULL || strcmp(raw->epoch, sf_epoch) == 0);
	sf_require_applied("snowflake.timestamp_bits", raw->timestamp_bits,
					   sf_int_applied(raw->timestamp_bits, sf_timestamp_bits));
	sf_require_applied("snowflake.node_bits", raw->node_bits,
					   sf_int_applied(raw->node_bits, sf_node_bits));
	sf_require_applied("snowflake.sequence_bits", raw->sequence_bits,
					   sf_int_applied(raw->sequence_bits, sf_sequence_bits));

	sf_layout.timestamp_bits = sf_timestamp_bits;
	sf_layout.node_bits = sf_node_bits;
	sf_layout.sequence_bits = sf_sequence_bits;
	if (!snowflake_parse_epoch(sf_epoch, &sf_layout.epoch_ms, detail))
		elog(ERROR, "snowflake.epoch passed its check hook but does not parse");

	if (!snowflake_layout_check(&sf_layout, detail))
		ereport(ERROR,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowflake layout"),
				 errdetail("%s", detail),
				 errhint("Correct the settings and start the server again.")));
	sf_validate_node_settings();

	/*
	 * An epoch ahead of the clock does not stop the server: a host may boot
	 * with its clock behind until time synchronisation catches up.  Calls
	 * fail with 22003 until the clock passes the epoch.
	 */
}

/*
 * snowflake_config_init
 *		Define the settings (see the top of this file); called from
 *		_PG_init.  Raises an ERROR, which stops the server from starting,
 *		when the preloaded settings that shape IDs are invalid.
 */
void
snowflake_config_init(void)
{
	SfRawSettings raw;

	if (!process_shared_preload_libraries_in_progress)
	{
#ifdef SNOWFLAKE_HAVE_DSM_REGISTRY
		sf_define_operator_settings();
#endif
		return;
	}
	snowflake_preloaded = true;
	sf_define_node_settings(&raw);
	sf_define_layout_settings(&raw);
	sf_define_operator_settings();
	sf_define_start_settings();
	MarkGUCPrefixReserved("snowflake");
	sf_validate_layout_settings(&raw);
}

/*
 * snowflake_config_server
 *		The layout, node id (-1 when not set) and node id span validated at
 *		preload, and where the node id came from.
 */
void
snowflake_config_server(SnowflakeLayout *layout, int *node_id, int *span,
						SnowflakeNodeSource *source)
{
	*layout = sf_layout;
	*node_id = sf_node_source.node_id;
	*span = sf_node_id_span;
	*source = sf_node_source;
}

/*
 * Words PostgreSQL's time input accepts that name a moment relative to when
 * they are read: an epoch must not depend on when the server starts.
 */
static const char *const sf_relative_words[] = {
	"now", "today", "tomorrow", "yesterday"
};

/*
 * snowflake_parse_epoch
 *		Read the snowflake.epoch setting into Unix milliseconds, with
 *		PostgreSQL's own timestamptz input: ISO 8601 and every other form it
 *		accepts, numeric offsets and named time zones.  Without a zone the
 *		time is UTC (not the server's TimeZone), so the value never depends
 *		on other settings: the epoch decides every ID.
 *
 * Safe in a GUC check hook, in the postmaster during preload and in any
 * backend: the input function's error is caught and turned into a detail
 * message (PostgreSQL 15 has no soft input errors), and returns false.
 */
bool
snowflake_parse_epoch(const char *text, int64 *epoch_ms, char *detail)
{
	pg_tz	   *save_tz = session_timezone;
	MemoryContext oldcxt = CurrentMemoryContext;
	volatile bool ok = false;
	volatile TimestampTz ts = 0;
	char		lower[64];
	int			n;

	/* Reject the relative words, as whole words, before parsing. */
	for (n = 0; text[n] != '\0' && n < (int) sizeof(lower) - 1; n++)
		lower[n] = pg_tolower((unsigned char) text[n]);
	lower[n] = '\0';
	for (int i = 0; i < (int) lengthof(sf_relative_words); i++)
	{
		const char *w = strstr(lower, sf_relative_words[i]);
		size_t		len = strlen(sf_relative_words[i]);

		if (w != NULL && (w == lower || !isalpha((unsigned char) w[-1])) &&
			!isalpha((unsigned char) w[len]))
		{
			snprintf(detail, SNOWFLAKE_DETAIL_LEN,
					 "The epoch must be a fixed time, not \"%s\".",
					 sf_relative_words[i]);
			return false;
		}
	}

	session_timezone = pg_tzset("UTC");
	PG_TRY();
	{
		ts = DatumGetTimestampTz(DirectFunctionCall3(timestamptz_in,
													 CStringGetDatum(text),
													 ObjectIdGetDatum(InvalidOid),
													 Int32GetDatum(-1)));
		ok = true;
	}
	PG_CATCH();
	{
		ErrorData  *edata;
		int			clip;

		session_timezone = save_tz;
		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		/* The message quotes the text: cut whole characters, keep the period. */
		clip = pg_mbcliplen(edata->message, strlen(edata->message),
							SNOWFLAKE_DETAIL_LEN - 2);
		snprintf(detail, SNOWFLAKE_DETAIL_LEN, "%.*s.", clip, edata->message);
		FreeErrorData(edata);
	}
	PG_END_TRY();
	session_timezone = save_tz;
	if (!ok)
		return false;

	if (TIMESTAMP_NOT_FINITE(ts))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The epoch must be a finite time.");
		return false;
	}
	if (ts % 1000 != 0)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The epoch must be a whole number of milliseconds.");
		return false;
	}
	*epoch_ms = ts / 1000 + SF_POSTGRES_EPOCH_UNIX_MS;
	return true;
}

/*
 * snowflake_format_ms
 *		Write Unix milliseconds as "YYYY-MM-DD HH:MM:SS.fff+00", for messages
 *		(UTC, whatever the session's TimeZone and DateStyle).
 */
void
snowflake_format_ms(int64 unix_ms, char *buf, size_t len)
{
	struct pg_tm tm;
	fsec_t		fsec;
	Timestamp	ts = (Timestamp) (unix_ms - SF_POSTGRES_EPOCH_UNIX_MS) * 1000;

	if (timestamp2tm(ts, NULL, &tm, &fsec, NULL, NULL) != 0)
	{
		snprintf(buf, len, "%lld ms after 1970-01-01 00:00:00+00",
				 (long long) unix_ms);
		return;
	}
	snprintf(buf, len, "%04d-%02d-%02d %02d:%02d:%02d.%03d+00",
			 tm.tm_year, tm.tm_mon, tm.tm_mday, tm.tm_hour, tm.tm_min,
			 tm.tm_sec, (int) (fsec / 1000));
}

/*
 * snowflake_input_excerpt
 *		What an error message quotes of a user's input s (len bytes, in the
 *		database encoding, not necessarily NUL-terminated): the whole of it
 *		up to SNOWFLAKE_QUOTE_CHARS characters, else its first
 *		SNOWFLAKE_QUOTE_CHARS characters followed by "...", as PostgreSQL
 *		clips the parameters it logs (never inside a character).  A message
 *		about a megabyte of text then stays a few hundred bytes long; the
 *		positions the details give still count over the whole input.
 *		Returns a palloc'd string.
 */
char *
snowflake_input_excerpt(const char *s, size_t len)
{
	int			clip;
	char	   *out;

	if (len > (size_t) PG_INT32_MAX)
		len = PG_INT32_MAX;
	clip = pg_mbcharcliplen(s, (int) len, SNOWFLAKE_QUOTE_CHARS);
	if ((size_t) clip == len)
		return pnstrdup(s, len);
	out = palloc(clip + 4);
	memcpy(out, s, clip);
	memcpy(out + clip, "...", 4);
	return out;
}

/*
 * Why a setting read from a placeholder is refused when it comes from
 * anywhere but the server configuration.
 */
#define SF_NOT_SERVER_DETAIL(what) \
	"The snowflake " what " is read from the server configuration only, but this value was set for a database, a role or the session."

/* The settings that shape IDs, as decoders without the preload read them. */
static const char *const sf_layout_settings[] = {
	"snowflake.epoch",
	"snowflake.timestamp_bits",
	"snowflake.node_bits",
	"snowflake.sequence_bits",
};

#define SF_NUM_LAYOUT_SETTINGS ((int) lengthof(sf_layout_settings))

/*
 * snowflake_file_layout
 *		The layout configured in postgresql.conf, for a server where the
 *		library is not preloaded.
 *
 * The postmaster-context settings cannot be defined after startup, but
 * postgresql.conf's values are still visible as placeholders: they are read
 * and validated here, so that decoding never silently uses a layout other
 * than the configured one.  A placeholder set for a database, a role or a
 * session is refused: the layout belongs to the server, and an IMMUTABLE
 * decoder must not answer differently per session.  Returns false, with
 * *bad_name naming the offending setting (or NULL for a bad combination)
 * and a detail, if the configuration is invalid.
 *
 * The result is cached per backend and reused while the settings' texts
 * stay the same (a reload may change them).
 */
bool
snowflake_file_layout(SnowflakeLayout *layout, const char **bad_name,
					  char *detail)
{
	static char *cached_text[SF_NUM_LAYOUT_SETTINGS];
	static SnowflakeLayout cached_layout;
	static bool cached = false;
	const char *text[SF_NUM_LAYOUT_SETTINGS];
	int		   *width[] = {NULL, &layout->timestamp_bits,
		&layout->node_bits, &layout->sequence_bits};
	const int	dflt[] = {0, SNOWFLAKE_DEFAULT_TIMESTAMP_BITS,
		SNOWFLAKE_DEFAULT_NODE_BITS, SNOWFLAKE_DEFAULT_SEQUENCE_BITS};
	bool		same = cached;

	for (int i = 0; i < SF_NUM_LAYOUT_SETTINGS; i++)
	{
		text[i] = GetConfigOption(sf_layout_settings[i], true, false);
		/* From 17 a placeholder removed by a reload reads as "". */
		if (text[i] != NULL && text[i][0] == '\0')
			text[i] = NULL;
		if (same && (text[i] == NULL) != (cached_text[i] == NULL))
			same = false;
		if (same && text[i] != NULL && strcmp(text[i], cached_text[i]) != 0)
			same = false;
	}
	if (same)
	{
		*layout = cached_layout;
		return true;
	}

	for (int i = 0; i < SF_NUM_LAYOUT_SETTINGS; i++)
	{
		*bad_name = sf_layout_settings[i];
		if (text[i] != NULL &&
			sf_guc_source(sf_layout_settings[i]) > PGC_S_ARGV)
		{
			snprintf(detail, SNOWFLAKE_DETAIL_LEN, "%s",
					 SF_NOT_SERVER_DETAIL("layout"));
			return false;
		}
		if (i == 0)
		{
			if (!snowflake_parse_epoch(text[i] ? text[i] : SNOWFLAKE_DEFAULT_EPOCH,
									   &layout->epoch_ms, detail))
				return false;
		}
		else if (text[i] == NULL)
			*width[i] = dflt[i];
		else if (!snowflake_parse_int(text[i], width[i]))
		{
			snprintf(detail, SNOWFLAKE_DETAIL_LEN,
					 "The value must be a plain decimal integer.");
			return false;
		}
	}
	*bad_name = NULL;
	if (!snowflake_layout_check(layout, detail))
		return false;

	for (int i = 0; i < SF_NUM_LAYOUT_SETTINGS; i++)
	{
		if (cached_text[i] != NULL)
			pfree(cached_text[i]);
		cached_text[i] = text[i] ?
			MemoryContextStrdup(TopMemoryContext, text[i]) : NULL;
	}
	cached_layout = *layout;
	cached = true;
	return true;
}

/*
 * The settings that choose the node id, as the server configuration gives
 * them without the preload: where one is set for a database, a role, the
 * client or the session, false with *bad_name.  snowflake.node_id is
 * checked first, the others after the layout (snowflake_file_settings).
 */
static const char *const sf_node_settings[] = {
	"snowflake.node_id",
	"snowflake.node_id_span",
	"snowflake.node_id_from",
	"snowflake.node_id_base",
	"snowflake.node_id_count",
};

static bool
sf_file_from_server(const char *const *names, int n, const char *what,
					const char **bad_name, char *detail)
{
	for (int i = 0; i < n; i++)
	{
		const char *text = GetConfigOption(names[i], true, false);

		if (text != NULL && text[0] != '\0' &&
			sf_guc_source(names[i]) > PGC_S_ARGV)
		{
			*bad_name = names[i];
			snprintf(detail, SNOWFLAKE_DETAIL_LEN, SF_NOT_SERVER_DETAIL("%s"),
					 what);
			return false;
		}
	}
	return true;
}

/*
 * An integer setting of the server configuration, or dflt where it is not
 * set; false with *bad_name and a detail if it is not a plain integer.
 */
static bool
sf_file_int(const char *name, int dflt, int *value, const char **bad_name,
			char *detail)
{
	const char *text = GetConfigOption(name, true, false);

	*bad_name = name;
	if (text == NULL || text[0] == '\0')
		*value = dflt;
	else if (!snowflake_parse_int(text, value))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The value must be a plain decimal integer.");
		return false;
	}
	return true;
}

/*
 * snowflake_file_settings
 *		The layout, node id (-1 when not set) and node id span of the server
 *		configuration
 *		(postgresql.conf, its includes, ALTER SYSTEM, the command line), for a
 *		server where the library is not preloaded, and where the node id
 *		comes from: snowflake.node_id, or derived from this host's name or
 *		the postmaster's environment (nodesource.c).
 *
 * Returns false, with *bad_name and a detail as snowflake_file_layout()
 * gives them, if a value is invalid or one of these settings was set for a
 * database, a role, the client or the session; *not_server tells the latter
 * case.  Such a value is never used: the node id and layout are one per
 * server.  Checked in that order, so that a value from a session is refused
 * whatever the rest.
 */
bool
snowflake_file_settings(SnowflakeLayout *layout, int *node_id, int *span,
						SnowflakeNodeSource *source, const char **bad_name,
						char *detail, bool *not_server)
{
	SnowflakeNodeSettings set;
	const char *from;

	*not_server = !sf_file_from_server(sf_node_settings, 1, "node id",
									   bad_name, detail) ||
		!sf_file_from_server(sf_layout_settings, SF_NUM_LAYOUT_SETTINGS,
							 "layout", bad_name, detail) ||
		!sf_file_from_server(sf_node_settings + 1,
							 (int) lengthof(sf_node_settings) - 1, "node id",
							 bad_name, detail);
	if (*not_server)
		return false;

	if (!snowflake_file_layout(layout, bad_name, detail))
		return false;

	if (!sf_file_int("snowflake.node_id", -1, &set.node_id, bad_name, detail))
		return false;
	if (set.node_id != -1 && !snowflake_node_check(layout, set.node_id, detail))
		return false;
	if (!sf_file_int("snowflake.node_id_span", 1, &set.span, bad_name, detail) ||
		!sf_file_int("snowflake.node_id_base", 0, &set.base, bad_name, detail) ||
		!sf_file_int("snowflake.node_id_count", -1, &set.count, bad_name,
					 detail))
		return false;
	from = GetConfigOption("snowflake.node_id_from", true, false);
	set.from = from != NULL ? from : "";
	if (!snowflake_node_choose(layout, &set, source, bad_name, detail))
		return false;

	*node_id = source->node_id;
	*span = set.span;
	*bad_name = "snowflake.node_id_span";
	if (!snowflake_node_span_check(layout, *node_id, *span, detail))
		return false;
	*bad_name = NULL;
	return true;
}

/*
 * snowflake_report_settings
 *		Report, at elevel, what snowflake_file_settings() or
 *		snowflake_file_layout() found wrong (22023, naming the setting and
 *		the value it has in this session).
 */
void
snowflake_report_settings(int elevel, const char *bad_name, const char *detail)
{
	if (bad_name == NULL)
		ereport(elevel,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid snowflake layout"),
				 errdetail("%s", detail)));
	else
		ereport(elevel,
				(errcode(ERRCODE_INVALID_PARAMETER_VALUE),
				 errmsg("invalid value for parameter \"%s\": \"%s\"",
						bad_name, GetConfigOption(bad_name, true, false)),
				 errdetail("%s", detail)));
}
