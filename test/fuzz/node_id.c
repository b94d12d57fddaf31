/*-------------------------------------------------------------------------
 *
 * node_id.c
 *	  Fuzz target: the parsers of a derived node id (src/nodeparse.c, which
 *	  snowflake_node_choose in src/nodesource.c calls on the host name and
 *	  the environment variable it read): snowflake.node_id_from's values,
 *	  the member number of a host name and of an environment variable's
 *	  value, the checks of the base, count and span, and the formula.
 *
 * The input, as a text (up to its first zero byte), is the value of
 * snowflake.node_id_from, the host name (its first 255 bytes, as
 * gethostname gives them) and the variable's value; its first bytes are
 * also the settings (snowflake.node_id, span, base, count, node bits) and
 * a member number.  The target knows the rules from their documentation
 * (nodesource.h, nodesource.c's header, docs/fleets.md), not from the code
 * under test.  Properties:
 *	- snowflake.node_id_from accepts exactly "", "hostname" and "env:"
 *	  followed by a letter or underscore and then letters, digits and
 *	  underscores (ASCII);
 *	- an environment variable's value is a member number exactly when it is
 *	  ASCII digits only (no sign, no space, not empty), refused with the
 *	  sentence that says so otherwise; a host name gives one exactly when
 *	  its first label ends in an ASCII digit, refused with the sentence
 *	  that says so otherwise;
 *	- the number is that of the digits, leading zeros aside, or, past nine
 *	  digits, "too large" (INT_MAX, refused by the formula whatever the
 *	  count); written canonically (no leading zeros), it gives the same
 *	  number again, without the warning about leading zeros;
 *	- the settings are refused exactly as the rules say, naming the
 *	  setting at fault; when accepted, member number n takes node ids
 *	  base + n * span to that + span - 1, within base .. base + count - 1
 *	  and the node field, and a number the count has no room for is
 *	  refused;
 *	- every text written (details, descriptions) ends within its buffer.
 *
 * Test only: never part of the extension.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include <limits.h>

#include "nodeparse.h"

#include "fuzz.h"

#define ENV_FROM "env:SF_NODE"

static bool
is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* Whether a buffer of len bytes holds a string (it was filled with 0x7F). */
static bool
ends_within(const char *buf, size_t len)
{
	return strnlen(buf, len) < len;
}

/*
 * The member number of the digits s[0 .. len), as documented: leading
 * zeros aside, INT_MAX past nine digits.
 */
static int
expect_number(const char *s, size_t len)
{
	int			value = 0;

	while (len > 1 && s[0] == '0')
		s++, len--;
	if (len > 9)
		return INT_MAX;
	for (size_t i = 0; i < len; i++)
		value = value * 10 + (s[i] - '0');
	return value;
}

static void
fresh_source(SnowflakeNodeSource *src, char *detail)
{
	memset(src, 0x7F, sizeof(*src));
	src->mapping[0] = src->alike[0] = '\0';
	src->number = -2;
	memset(detail, 0x7F, SNOWFLAKE_DETAIL_LEN);
}

/* snowflake.node_id_from's values. */
static void
check_from(const char *text)
{
	char		detail[SNOWFLAKE_DETAIL_LEN];
	bool		want = text[0] == '\0' || strcmp(text, "hostname") == 0;

	if (strncmp(text, "env:", 4) == 0)
	{
		const char *p = text + 4;

		want = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') || *p == '_';
		for (; want && *p != '\0'; p++)
			want = (*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
				is_digit(*p) || *p == '_';
	}
	memset(detail, 0x7F, sizeof(detail));
	FUZZ_CHECK(snowflake_node_from_valid(text, detail) == want,
			   "snowflake.node_id_from \"%s\" %s", text, want ? "refused" : "accepted");
	if (!want)
		FUZZ_CHECK(ends_within(detail, sizeof(detail)), "a detail past its buffer");
}

/* An environment variable that is not set. */
static void
check_env_unset(void)
{
	SnowflakeNodeSource src;
	char		detail[SNOWFLAKE_DETAIL_LEN];

	fresh_source(&src, detail);
	FUZZ_CHECK(!snowflake_node_member_env(ENV_FROM, NULL, &src, detail) &&
			   ends_within(detail, sizeof(detail)) &&
			   strcmp(detail, "The environment variable \"SF_NODE\" is not set for the server.") == 0,
			   "a variable not set read as \"%.*s\"", (int) sizeof(detail), detail);
}

/* An environment variable's value; returns its number, or -1 if refused. */
static int
check_env(const char *value)
{
	SnowflakeNodeSource src;
	SnowflakeNodeSource again;
	char		detail[SNOWFLAKE_DETAIL_LEN];
	char		want_detail[SNOWFLAKE_DETAIL_LEN];
	char		origin[SNOWFLAKE_SOURCE_LEN];
	char		canonical[16];
	size_t		len = strlen(value);
	bool		digits = len > 0 && strspn(value, "0123456789") == len;
	bool		got;

	fresh_source(&src, detail);
	got = snowflake_node_member_env(ENV_FROM, value, &src, detail);
	FUZZ_CHECK(got == digits, "the value \"%s\" %s", value,
			   digits ? "refused" : "accepted as a member number");
	if (!got)
	{
		snprintf(origin, sizeof(origin), "environment variable \"SF_NODE\" (\"%s\")", value);
		if (len == 0)
		{
			snprintf(want_detail, sizeof(want_detail),
					 "The environment variable \"SF_NODE\" is empty for the server.");
			check_env_unset();
		}
		else
			snprintf(want_detail, sizeof(want_detail),
					 "The %s is not a member number: its value must be digits only, with no sign and no spaces.",
					 origin);
		FUZZ_CHECK(ends_within(detail, sizeof(detail)) && strcmp(detail, want_detail) == 0,
				   "refused saying \"%.*s\"", (int) sizeof(detail), detail);
		return -1;
	}
	FUZZ_CHECK(src.number == expect_number(value, len),
			   "the value \"%s\" read as member number %d", value, src.number);
	FUZZ_CHECK(ends_within(src.text, sizeof(src.text)) &&
			   ends_within(src.origin, sizeof(src.origin)), "a text past its buffer");
	if (src.number != INT_MAX)
	{
		snprintf(canonical, sizeof(canonical), "%d", src.number);
		fresh_source(&again, detail);
		FUZZ_CHECK(snowflake_node_member_env(ENV_FROM, canonical, &again, detail) &&
				   again.number == src.number,
				   "member number %d written as \"%s\" reads otherwise", src.number, canonical);
	}
	return src.number;
}

/* The number and texts of a host name that gave one. */
static void
check_host_number(const char *host, size_t label, const SnowflakeNodeSource *src)
{
	SnowflakeNodeSource again;
	char		detail[SNOWFLAKE_DETAIL_LEN];
	char		canonical[300];
	size_t		start = label;
	bool		zeros;

	while (start > 0 && is_digit(host[start - 1]))
		start--;
	zeros = label - start > 1 && host[start] == '0';
	FUZZ_CHECK(src->number == expect_number(host + start, label - start),
			   "the host name \"%s\" read as member number %d", host, src->number);
	FUZZ_CHECK(ends_within(src->mapping, sizeof(src->mapping)) &&
			   ends_within(src->alike, sizeof(src->alike)) &&
			   ends_within(src->text, sizeof(src->text)) &&
			   ends_within(src->origin, sizeof(src->origin)), "a text past its buffer");
	if (src->number == INT_MAX)
		return;					/* refused by the formula, described there */
	FUZZ_CHECK(strncmp(src->mapping, "The host name's first label \"", 29) == 0,
			   "no sentence saying how \"%s\" gave its number", host);
	FUZZ_CHECK(!zeros || strncmp(src->alike, "Leading zeros do not count", 26) == 0,
			   "no warning of the leading zeros of \"%s\"", host);
	/* Written canonically: the first label's digits without their zeros. */
	snprintf(canonical, sizeof(canonical), "%.*s%d", (int) start, host, src->number);
	fresh_source(&again, detail);
	FUZZ_CHECK(snowflake_node_member_host(canonical, &again, detail) &&
			   again.number == src->number &&
			   strncmp(again.alike, "Leading zeros", 13) != 0,
			   "member number %d of \"%s\" written as \"%s\" reads otherwise",
			   src->number, host, canonical);
}

/* A host name; returns its number, or -1 if refused. */
static int
check_host(const char *text)
{
	SnowflakeNodeSource src;
	char		host[256];
	char		detail[SNOWFLAKE_DETAIL_LEN];
	char		want_detail[SNOWFLAKE_DETAIL_LEN];
	char		origin[SNOWFLAKE_SOURCE_LEN];
	size_t		label;
	bool		want;

	strlcpy(host, text, sizeof(host));
	label = strcspn(host, ".");
	want = label > 0 && is_digit(host[label - 1]);
	fresh_source(&src, detail);
	FUZZ_CHECK(snowflake_node_member_host(host, &src, detail) == want,
			   "the host name \"%s\" %s", host, want ? "refused" : "accepted");
	if (want)
	{
		check_host_number(host, label, &src);
		return src.number;
	}
	snprintf(origin, sizeof(origin), "host name \"%s\"", host);
	snprintf(want_detail, sizeof(want_detail),
			 host[label] == '.' ?
			 "The %s does not end in a number before its first dot." :
			 "The %s does not end in a number.", origin);
	FUZZ_CHECK(ends_within(detail, sizeof(detail)) && strcmp(detail, want_detail) == 0,
			   "refused saying \"%.*s\"", (int) sizeof(detail), detail);
	return -1;
}

/* The setting the rules find at fault, or NULL if the settings are valid. */
static const char *
expect_settings(const SnowflakeLayout *layout, const SnowflakeNodeSettings *set)
{
	if (set->node_id != -1 || set->count == -1)
		return "snowflake.node_id_from";
	if (set->base < 0)
		return "snowflake.node_id_base";
	if (set->count < 1 || (int64) set->base + set->count - 1 > snowflake_max_node(layout) ||
		set->count < set->span)
		return "snowflake.node_id_count";
	return NULL;
}

/* The formula, for member number number under valid settings. */
static void
check_place(const SnowflakeLayout *layout, const SnowflakeNodeSettings *set,
			int number)
{
	SnowflakeNodeSource src;
	char		detail[SNOWFLAKE_DETAIL_LEN];
	const char *bad_name = "unset";
	int64		span = Max(set->span, 1);
	bool		room = (int64) number * span + span <= set->count;
	bool		got;

	fresh_source(&src, detail);
	snprintf(src.origin, sizeof(src.origin), "test");
	src.number = number;
	got = snowflake_node_place(set, &src, &bad_name, detail);
	FUZZ_CHECK(got == room, "member number %d, span %d, count %d: %s", number,
			   set->span, set->count, got ? "placed" : "refused");
	if (!got)
	{
		FUZZ_CHECK(bad_name != NULL && strcmp(bad_name, "snowflake.node_id_from") == 0 &&
				   ends_within(detail, sizeof(detail)), "a refusal naming %s",
				   bad_name ? bad_name : "nothing");
		return;
	}
	FUZZ_CHECK(bad_name == NULL && src.derived && src.span == span &&
			   src.node_id == set->base + number * span &&
			   src.node_id >= set->base &&
			   (int64) src.node_id + span - 1 <= (int64) set->base + set->count - 1 &&
			   (int64) set->base + set->count - 1 <= snowflake_max_node(layout),
			   "member number %d placed at node id %d (base %d, count %d, span %d)",
			   number, src.node_id, set->base, set->count, set->span);
}

int
LLVMFuzzerTestOneInput(const uint8 *data, size_t size)
{
	char	   *text = fuzz_cstring(data, size);
	const uint8 *p = data;
	size_t		n = size;
	SnowflakeLayout layout = {0, 41, 10, 12};
	SnowflakeNodeSettings set;
	char		detail[SNOWFLAKE_DETAIL_LEN];
	const char *bad_name = "unset";
	const char *want;
	int			numbers[3];
	bool		got;

	check_from(text);
	numbers[0] = check_env(text);
	numbers[1] = check_host(text);

	/* Settings, small numbers more often than not. */
	set.from = "hostname";
	set.node_id = (fuzz_take(&p, &n, 1) & 1) ? -1 : (int32) fuzz_take(&p, &n, 4);
	set.span = (int32) fuzz_take(&p, &n, 1) - 8;
	set.base = (int32) fuzz_take(&p, &n, 2) - 16;
	set.count = (fuzz_take(&p, &n, 1) & 1) ? (int32) fuzz_take(&p, &n, 4) :
		(int32) fuzz_take(&p, &n, 2) - 2;
	layout.node_bits = (int) (fuzz_take(&p, &n, 1) % 32);
	numbers[2] = (int32) fuzz_take(&p, &n, 4);

	/* A node id that is no derivation. */
	{
		SnowflakeNodeSource fixed;

		memset(&fixed, 0x7F, sizeof(fixed));
		snowflake_node_source_fixed(&fixed, set.node_id, "snowflake.node_id");
		FUZZ_CHECK(fixed.node_id == set.node_id && !fixed.derived && fixed.number == -1 &&
				   strcmp(fixed.text, set.node_id >= 0 ? "snowflake.node_id" : "") == 0 &&
				   fixed.origin[0] == '\0' && fixed.mapping[0] == '\0' && fixed.alike[0] == '\0',
				   "the source of node id %d", set.node_id);
	}

	want = expect_settings(&layout, &set);
	memset(detail, 0x7F, sizeof(detail));
	got = snowflake_node_settings_check(&layout, &set, &bad_name, detail);
	FUZZ_CHECK(got == (want == NULL),
			   "node id %d, span %d, base %d, count %d, node bits %d: %s", set.node_id,
			   set.span, set.base, set.count, layout.node_bits,
			   got ? "accepted" : "refused");
	if (!got)
		FUZZ_CHECK(strcmp(bad_name, want) == 0 && ends_within(detail, sizeof(detail)),
				   "refused naming %s, not %s", bad_name, want);
	else
		for (int i = 0; i < 3; i++)
			if (numbers[i] >= 0)
				check_place(&layout, &set, numbers[i]);
	free(text);
	return 0;
}
