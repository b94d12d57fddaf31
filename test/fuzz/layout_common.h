/*-------------------------------------------------------------------------
 *
 * layout_common.h
 *	  What the layout targets share: a stand-in for the epoch parser, and
 *	  checks of what src/layout.c returns.
 *
 * The server reads epoch= with PostgreSQL's timestamptz input
 * (snowflake_parse_epoch in src/config.c), which needs a running server:
 * its time zones, its error handling (PG_TRY).  It cannot be fuzzed here.
 * The stand-in reads "YYYY-MM-DD", optionally followed by " HH:MM:SS" and
 * "+00" (what the presets spell), and refuses anything else with the
 * detail the server gives, its input function's message quoting the text,
 * cut to fit (in UTF-8, as pg_mbcliplen cuts it in a UTF-8 database).
 *
 * Test only: never part of the extension.
 *
 *-------------------------------------------------------------------------
 */
#ifndef SNOWFLAKE_FUZZ_LAYOUT_COMMON_H
#define SNOWFLAKE_FUZZ_LAYOUT_COMMON_H

#include "layout.h"

#include "fuzz.h"

/* Days from 1970-01-01 to a date of the proleptic Gregorian calendar. */
static int64
stub_days(int64 y, int64 m, int64 d)
{
	int64		era;
	int64		yoe;
	int64		doy;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	return era * 146097 + yoe * 365 + yoe / 4 - yoe / 100 + doy - 719468;
}

static bool
stub_parse_epoch(const char *text, int64 *epoch_ms, char *detail)
{
	int			y, mo, d, h = 0, mi = 0, s = 0, n = 0, n2 = 0;

	if (sscanf(text, "%4d-%2d-%2d%n %2d:%2d:%2d%n", &y, &mo, &d, &n, &h, &mi, &s, &n2) >= 3 &&
		(n2 > 0 ? (strcmp(text + n2, "") == 0 || strcmp(text + n2, "+00") == 0) :
		 text[n] == '\0') &&
		strspn(text, "0123456789") == 4 &&
		mo >= 1 && mo <= 12 && d >= 1 && d <= 28 && h <= 23 && mi <= 59 && s <= 59 &&
		h >= 0 && mi >= 0 && s >= 0)
	{
		*epoch_ms = ((stub_days(y, mo, d) * 24 + h) * 60 + mi) * 60000 + s * 1000;
		return true;
	}
	{
		/* As src/config.c words it: whole characters cut, then a period. */
		char		message[1024];
		int			n;

		n = snprintf(message, sizeof(message),
					 "invalid input syntax for type timestamp with time zone: \"%s\"", text);
		n = Min(n, SNOWFLAKE_DETAIL_LEN - 2);
		while (n > 0 && (message[n] & 0xC0) == 0x80)
			n--;
		snprintf(detail, SNOWFLAKE_DETAIL_LEN, "%.*s.", n, message);
	}
	return false;
}

/* The default layout of a server (41/10/12, epoch 2024-01-01). */
static void
default_server_format(SnowflakeFormat *fmt)
{
	SnowflakeLayout layout = {INT64CONST(1704067200000), 41, 10, 12};

	snowflake_format_from_layout(&layout, fmt);
}

/*
 * A detail of a refusal: a sentence (a letter or a quote first, a final
 * period: a setting's name or the input function's message may start it
 * in lower case) within SNOWFLAKE_DETAIL_LEN, whole UTF-8 characters if
 * the input was UTF-8.
 */
static void
check_detail(const char *detail, const char *input)
{
	size_t		len = strnlen(detail, SNOWFLAKE_DETAIL_LEN);

	FUZZ_CHECK(len > 0 && len < SNOWFLAKE_DETAIL_LEN, "detail of %zu bytes", len);
	FUZZ_CHECK((isalpha((unsigned char) detail[0]) || detail[0] == '"') &&
			   detail[len - 1] == '.',
			   "detail is not a sentence (%zu bytes): %s", len, detail);
	FUZZ_CHECK(!fuzz_valid_utf8(input, strlen(input)) || fuzz_valid_utf8(detail, len),
			   "UTF-8 input, a detail that is not UTF-8: %s", detail);
}

#endif							/* SNOWFLAKE_FUZZ_LAYOUT_COMMON_H */
