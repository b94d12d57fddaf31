/*-------------------------------------------------------------------------
 *
 * layout.c
 *	  Pure arithmetic on snowflake IDs: packing, unpacking, range checks and
 *	  parsing of the epoch setting.
 *
 * No PostgreSQL state is used here: no memory allocation, no ereport, no
 * GUC access.  Every function is deterministic and safe to call from the
 * postmaster, from GUC check hooks and from backends.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <ctype.h>

#include "layout.h"

/*
 * snowflake_unpack
 *		Split an ID into its fields as the bits say.
 *
 * The timestamp field is everything above the node and sequence fields; it is
 * not masked to timestamp_bits, so an ID minted with a wider layout decodes
 * to the time its bits spell rather than to a wrapped-around one.  The caller
 * rejects negative IDs.
 */
void
snowflake_unpack(const SnowflakeLayout *layout, int64 id,
				 SnowflakeParts *parts)
{
	int			shift = layout->node_bits + layout->sequence_bits;

	parts->ms = id >> shift;
	parts->node_id = (id >> layout->sequence_bits) & snowflake_max_node(layout);
	parts->sequence = id & snowflake_max_sequence(layout);
}

/*
 * snowflake_pack
 *		Build an ID from its fields, checking each against the layout.
 */
bool
snowflake_pack(const SnowflakeLayout *layout, const SnowflakeParts *parts,
			   int64 *id, char *detail)
{
	if (parts->ms < 0 || parts->ms > snowflake_max_ms(layout))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The timestamp must lie between the epoch and %lld milliseconds after it.",
				 (long long) snowflake_max_ms(layout));
		return false;
	}
	if (parts->node_id < 0 || parts->node_id > snowflake_max_node(layout))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The node id must be between 0 and %lld.",
				 (long long) snowflake_max_node(layout));
		return false;
	}
	if (parts->sequence < 0 || parts->sequence > snowflake_max_sequence(layout))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "The sequence must be between 0 and %lld.",
				 (long long) snowflake_max_sequence(layout));
		return false;
	}
	*id = (parts->ms << (layout->node_bits + layout->sequence_bits)) |
		(parts->node_id << layout->sequence_bits) | parts->sequence;
	return true;
}

/*
 * snowflake_layout_check
 *		Check the field widths together; each one alone was range-checked by
 *		its GUC definition.
 */
bool
snowflake_layout_check(const SnowflakeLayout *layout, char *detail)
{
	int			total = layout->timestamp_bits + layout->node_bits +
		layout->sequence_bits;

	if (layout->timestamp_bits < SNOWFLAKE_MIN_TIMESTAMP_BITS ||
		layout->timestamp_bits > SNOWFLAKE_MAX_TIMESTAMP_BITS ||
		layout->node_bits < 0 || layout->node_bits > SNOWFLAKE_MAX_NODE_BITS ||
		layout->sequence_bits < 0 ||
		layout->sequence_bits > SNOWFLAKE_MAX_SEQUENCE_BITS)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "snowflake.timestamp_bits must be between %d and %d, snowflake.node_bits between 0 and %d, and snowflake.sequence_bits between 0 and %d.",
				 SNOWFLAKE_MIN_TIMESTAMP_BITS, SNOWFLAKE_MAX_TIMESTAMP_BITS,
				 SNOWFLAKE_MAX_NODE_BITS, SNOWFLAKE_MAX_SEQUENCE_BITS);
		return false;
	}
	if (total > SNOWFLAKE_TOTAL_BITS)
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "snowflake.timestamp_bits (%d) + snowflake.node_bits (%d) + snowflake.sequence_bits (%d) = %d, but an ID has only %d bits.",
				 layout->timestamp_bits, layout->node_bits,
				 layout->sequence_bits, total, SNOWFLAKE_TOTAL_BITS);
		return false;
	}
	return true;
}

/*
 * snowflake_node_check
 *		Check a configured node id against the node field's width.
 */
bool
snowflake_node_check(const SnowflakeLayout *layout, int node_id,
					 char *detail)
{
	if (node_id < 0 || node_id > snowflake_max_node(layout))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "snowflake.node_id is %d, but with snowflake.node_bits = %d it must be between 0 and %lld.",
				 node_id, layout->node_bits,
				 (long long) snowflake_max_node(layout));
		return false;
	}
	return true;
}

/*
 * snowflake_parse_int
 *		Parse a plain decimal integer, optionally signed and surrounded by
 *		spaces.  The layout settings accept nothing else (no units, no
 *		fractions, no hexadecimal, and no leading zero, which PostgreSQL
 *		reads as octal), so that a server with the library preloaded and the
 *		decoders of one without read them identically or not at all.
 */
bool
snowflake_parse_int(const char *text, int *value)
{
	const char *p = text;
	bool		negative = false;
	int64		v = 0;

	while (isspace((unsigned char) *p))
		p++;
	if (*p == '+' || *p == '-')
		negative = (*p++ == '-');
	if (!isdigit((unsigned char) *p) ||
		(*p == '0' && isdigit((unsigned char) p[1])))
		return false;
	for (; isdigit((unsigned char) *p); p++)
	{
		v = v * 10 + (*p - '0');
		if (v > (int64) PG_INT32_MAX + 1)
			return false;
	}
	while (isspace((unsigned char) *p))
		p++;
	if (*p != '\0')
		return false;
	if (negative)
		v = -v;
	if (v < PG_INT32_MIN || v > PG_INT32_MAX)
		return false;
	*value = (int) v;
	return true;
}

/* Days from 1970-01-01 to the given proleptic Gregorian date. */
static int64
sf_days_from_civil(int64 y, int m, int d)
{
	int64		era;
	int64		yoe;
	int64		doy;
	int64		doe;

	y -= m <= 2;
	era = (y >= 0 ? y : y - 399) / 400;
	yoe = y - era * 400;
	doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
	doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
	return era * 146097 + doe - 719468;
}

/* The inverse of sf_days_from_civil. */
static void
sf_civil_from_days(int64 z, int64 *y, int *m, int *d)
{
	int64		era;
	int64		doe;
	int64		yoe;
	int64		doy;
	int64		mp;

	z += 719468;
	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	*d = (int) (doy - (153 * mp + 2) / 5 + 1);
	*m = (int) (mp < 10 ? mp + 3 : mp - 9);
	*y = yoe + era * 400 + (*m <= 2);
}

static int
sf_days_in_month(int64 y, int m)
{
	static const int days[] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
	bool		leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;

	return (m == 2 && leap) ? 29 : days[m - 1];
}

/* Read exactly n digits; false if they are not all digits. */
static bool
sf_digits(const char **p, int n, int *value)
{
	int			v = 0;

	for (int i = 0; i < n; i++)
	{
		if (!isdigit((unsigned char) (*p)[i]))
			return false;
		v = v * 10 + ((*p)[i] - '0');
	}
	*p += n;
	*value = v;
	return true;
}

/*
 * snowflake_parse_epoch
 *		Parse the snowflake.epoch setting into Unix milliseconds.
 *
 * Accepted: an ISO 8601 date, "YYYY-MM-DD", optionally followed by a space or
 * "T" and "HH:MM[:SS[.fff]]", optionally followed by a time zone: "Z", "UTC",
 * or a numeric offset "+HH", "+HHMM", "+HH:MM" (or "-").  Without a zone the
 * time is UTC, so the value never depends on a session's TimeZone or
 * DateStyle: the epoch decides every ID and must read the same everywhere.
 */
bool
snowflake_parse_epoch(const char *text, int64 *epoch_ms, char *detail)
{
	const char *p = text;
	int			year,
				month,
				day,
				hour = 0,
				minute = 0,
				second = 0,
				millis = 0;
	int			offset_min = 0;

	while (isspace((unsigned char) *p))
		p++;
	if (!sf_digits(&p, 4, &year) || *p++ != '-' ||
		!sf_digits(&p, 2, &month) || *p++ != '-' ||
		!sf_digits(&p, 2, &day))
		goto syntax;
	if (month < 1 || month > 12 || day < 1 ||
		day > sf_days_in_month(year, month))
	{
		snprintf(detail, SNOWFLAKE_DETAIL_LEN,
				 "\"%.40s\" is not a valid date.", text);
		return false;
	}

	if ((*p == ' ' || *p == 'T') && isdigit((unsigned char) p[1]))
	{
		p++;
		if (!sf_digits(&p, 2, &hour) || *p++ != ':' ||
			!sf_digits(&p, 2, &minute))
			goto syntax;
		if (*p == ':')
		{
			p++;
			if (!sf_digits(&p, 2, &second))
				goto syntax;
			if (*p == '.')
			{
				int			ndigits = 0;

				p++;
				if (!isdigit((unsigned char) *p))
					goto syntax;
				for (; isdigit((unsigned char) *p); p++, ndigits++)
				{
					if (ndigits < 3)
						millis = millis * 10 + (*p - '0');
					else if (*p != '0')
					{
						snprintf(detail, SNOWFLAKE_DETAIL_LEN,
								 "The epoch must be a whole number of milliseconds.");
						return false;
					}
				}
				for (; ndigits < 3; ndigits++)
					millis *= 10;
			}
		}
		if (hour > 23 || minute > 59 || second > 59)
		{
			snprintf(detail, SNOWFLAKE_DETAIL_LEN,
					 "\"%.40s\" is not a valid time of day.", text);
			return false;
		}
	}

	while (*p == ' ')
		p++;
	if (*p == 'Z' || *p == 'z')
		p++;
	else if (strncmp(p, "UTC", 3) == 0 || strncmp(p, "utc", 3) == 0)
		p += 3;
	else if (*p == '+' || *p == '-')
	{
		int			sign = (*p == '-') ? -1 : 1;
		int			oh,
					om = 0;

		p++;
		if (!sf_digits(&p, 2, &oh))
			goto syntax;
		if (*p == ':')
			p++;
		if (isdigit((unsigned char) *p) && !sf_digits(&p, 2, &om))
			goto syntax;
		if (oh > 15 || om > 59)
		{
			snprintf(detail, SNOWFLAKE_DETAIL_LEN,
					 "The time zone offset must be between -15:59 and +15:59.");
			return false;
		}
		offset_min = sign * (oh * 60 + om);
	}
	while (isspace((unsigned char) *p))
		p++;
	if (*p != '\0')
		goto syntax;

	*epoch_ms = ((sf_days_from_civil(year, month, day) * 86400 +
				  hour * 3600 + minute * 60 + second - offset_min * 60) * 1000) +
		millis;
	return true;

syntax:
	snprintf(detail, SNOWFLAKE_DETAIL_LEN,
			 "The epoch must be written as YYYY-MM-DD [HH:MM[:SS[.fff]]] with an optional time zone such as +00, +05:30 or Z.");
	return false;
}

/*
 * snowflake_format_ms
 *		Write Unix milliseconds as "YYYY-MM-DD HH:MM:SS.fff+00", for messages.
 */
void
snowflake_format_ms(int64 unix_ms, char *buf, size_t len)
{
	int64		days = unix_ms / 86400000;
	int64		rem = unix_ms % 86400000;
	int64		year;
	int			month,
				day;

	if (rem < 0)
	{
		rem += 86400000;
		days--;
	}
	sf_civil_from_days(days, &year, &month, &day);
	snprintf(buf, len, "%04lld-%02d-%02d %02d:%02d:%02d.%03d+00",
			 (long long) year, month, day,
			 (int) (rem / 3600000), (int) (rem / 60000 % 60),
			 (int) (rem / 1000 % 60), (int) (rem % 1000));
}
