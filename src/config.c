/*-------------------------------------------------------------------------
 *
 * config.c
 *	  Settings of the snowflake extension, read by every other file: the
 *	  operator knobs' variables, the epoch's text as a time, and the layout
 *	  and node id read from the server configuration when the library is
 *	  not preloaded (by the decoders, and on PostgreSQL 17 and later by the
 *	  process that configures the shared state).
 *
 * This file sits just above layout.c: it reads PostgreSQL's configuration
 * and time input, but calls nothing else of ours, so that the module init,
 * the SQL functions, the generator and the state file can all use it
 * without any file calling back up.  The GUCs themselves are defined by
 * snowflake.c's _PG_init, pointing at the variables here.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "fmgr.h"
#include "pgtime.h"
#include "utils/datetime.h"
#include "utils/fmgrprotos.h"
#include "utils/guc.h"
#include "utils/memutils.h"
#include "utils/timestamp.h"

#include "compat.h"
#include "snowflake.h"

/* Milliseconds from the Unix epoch to PostgreSQL's (2000-01-01). */
#define SF_POSTGRES_EPOCH_UNIX_MS \
	((int64) (POSTGRES_EPOCH_JDATE - UNIX_EPOCH_JDATE) * SECS_PER_DAY * 1000)

/* Operator knobs (PGC_SIGHUP and PGC_USERSET), defined by _PG_init. */
int			snowflake_max_drift_ms = 1000;
int			snowflake_max_wait_ms = 1000;
bool		snowflake_spread_sequence = false;
int			snowflake_writer_idle_timeout_ms = 60000;
bool		snowflake_background_writer = true;

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

		session_timezone = save_tz;
		MemoryContextSwitchTo(oldcxt);
		edata = CopyErrorData();
		FlushErrorState();
		snprintf(detail, SNOWFLAKE_DETAIL_LEN, "%s.", edata->message);
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
 * snowflake_file_settings
 *		The layout and node id (-1 when not set) of the server configuration
 *		(postgresql.conf, its includes, ALTER SYSTEM, the command line), for a
 *		server where the library is not preloaded.
 *
 * Returns false, with *bad_name and a detail as snowflake_file_layout()
 * gives them, if a value is invalid or one of these settings was set for a
 * database, a role, the client or the session; *not_server tells the latter
 * case.  Such a value is never used: the node id and layout are one per
 * server.  Checked in that order, so that a value from a session is refused
 * whatever the rest.
 */
bool
snowflake_file_settings(SnowflakeLayout *layout, int *node_id,
						const char **bad_name, char *detail, bool *not_server)
{
	const char *names[SF_NUM_LAYOUT_SETTINGS + 1];
	const char *text;

	names[0] = "snowflake.node_id";
	for (int i = 0; i < SF_NUM_LAYOUT_SETTINGS; i++)
		names[i + 1] = sf_layout_settings[i];

	*not_server = false;
	for (int i = 0; i < (int) lengthof(names); i++)
	{
		text = GetConfigOption(names[i], true, false);
		if (text != NULL && text[0] != '\0' &&
			sf_guc_source(names[i]) > PGC_S_ARGV)
		{
			*bad_name = names[i];
			*not_server = true;
			snprintf(detail, SNOWFLAKE_DETAIL_LEN, "%s",
					 i == 0 ? SF_NOT_SERVER_DETAIL("node id") :
					 SF_NOT_SERVER_DETAIL("layout"));
			return false;
		}
	}

	if (!snowflake_file_layout(layout, bad_name, detail))
		return false;

	*bad_name = names[0];
	text = GetConfigOption(names[0], true, false);
	if (text == NULL || text[0] == '\0')
		*node_id = -1;
	else if (!snowflake_parse_int(text, node_id))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The value must be a plain decimal integer.");
		return false;
	}
	else if (*node_id != -1 && !snowflake_node_check(layout, *node_id, detail))
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
