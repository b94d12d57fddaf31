/*-------------------------------------------------------------------------
 *
 * history.c
 *	  Fuzz target: the reader of PostgreSQL's timeline history files
 *	  (snowflake_history_parse) and the node field's offset within a span
 *	  taken from a timeline's history (sf_rule_node_offset, src/history.c),
 *	  which snowflake_timeline_offset calls on the bytes of the file it
 *	  read from pg_wal (declared in src/statefile.h).
 *
 * The input: 4 bytes of the timeline whose history the file is, 2 of the
 * most ancestors to take, 1 of the span of node ids (1 to 64), and the
 * file.  The target knows the format from PostgreSQL's (an entry a line,
 * "parent-timeline<tab>switch-point<tab>reason", comments after "#" and
 * blank lines aside) and the rules from the functions' documentation, not
 * from the code under test.  Properties:
 *	- any bytes are read as the timelines their entries name, oldest
 *	  first, or refused (-1) exactly when the documentation says: an entry
 *	  that does not start with a timeline number (up to ten digits, then a
 *	  space or a tab), whose timeline is not above the entry's before it or
 *	  not below the file's own timeline, or more entries than were asked
 *	  for; what is read is never past the bytes given;
 *	- the offset of each timeline of the chain (the ancestors read, then
 *	  the timeline itself) is within the span, differs from the offsets of
 *	  the span - 1 timelines before it, and is its number's, (timeline - 1)
 *	  % span, unless one of them took that, else the lowest none took.
 *
 * Test only: never part of the extension.
 *
 *-------------------------------------------------------------------------
 */
#include "postgres.h"

#include "history.h"
#include "statefile.h"

#include "fuzz.h"

/* The entries of a history file as PostgreSQL writes them, or -1. */
static int
oracle_history(const char *buf, size_t n, uint32 tli, uint32 *out, int max)
{
	int			count = 0;
	uint64		prev = 0;
	size_t		i = 0;

	while (i < n)
	{
		size_t		end = i;
		size_t		p = i;
		int			digits = 0;
		uint64		parent = 0;

		while (end < n && buf[end] != '\n')
			end++;
		while (p < end && strchr(" \t\r", buf[p]) != NULL && buf[p] != '\0')
			p++;
		if (p < end && buf[p] != '#')
		{
			while (p < end && isdigit((unsigned char) buf[p]))
			{
				if (++digits <= 10)
					parent = parent * 10 + (uint64) (buf[p] - '0');
				p++;
			}
			if (digits == 0 || digits > 10 || p == end || (buf[p] != ' ' && buf[p] != '\t'))
				return -1;
			if (parent <= prev || parent >= tli || count >= max)
				return -1;
			out[count++] = (uint32) parent;
			prev = parent;
		}
		i = end + 1;
	}
	return count;
}

/* The offsets of every timeline of the chain, by the rule. */
static void
oracle_offsets(const uint32 *chain, int n, int span, int *offsets)
{
	for (int i = 0; i < n; i++)
	{
		bool		taken[64] = {false};
		int			want = (int) ((chain[i] - 1) % (uint32) span);

		for (int j = Max(0, i - span + 1); j < i; j++)
			taken[offsets[j]] = true;
		if (!taken[want])
			offsets[i] = want;
		else
		{
			int			o = 0;

			while (taken[o])
				o++;
			offsets[i] = o;
		}
	}
}

int
LLVMFuzzerTestOneInput(const uint8 *data, size_t size)
{
	uint32		tli = (uint32) fuzz_take(&data, &size, 4);
	int			max = (int) (fuzz_take(&data, &size, 2) % (SNOWFLAKE_MAX_ANCESTORS + 1));
	int			span = (int) (fuzz_take(&data, &size, 1) % 64) + 1;
	char	   *buf = malloc(size ? size : 1);
	uint32	   *got = malloc(sizeof(uint32) * (SNOWFLAKE_MAX_ANCESTORS + 1));
	uint32	   *want = malloc(sizeof(uint32) * (SNOWFLAKE_MAX_ANCESTORS + 1));
	int		   *offsets = malloc(sizeof(int) * (SNOWFLAKE_MAX_ANCESTORS + 1));
	int			count;
	int			expected;

	memcpy(buf, data, size);
	count = snowflake_history_parse(buf, size, tli, got, max);
	expected = oracle_history(buf, size, tli, want, max);
	FUZZ_CHECK(count == expected, "timeline %u, at most %d: read %d entries, the format says %d",
			   tli, max, count, expected);
	for (int i = 0; i < count; i++)
		FUZZ_CHECK(got[i] == want[i], "entry %d read as timeline %u, the file says %u", i, got[i], want[i]);

	/* The chain's offsets, when the file was a history of tli. */
	if (count >= 0 && tli >= 1)
	{
		got[count] = tli;
		oracle_offsets(got, count + 1, span, offsets);
		for (int k = Max(0, count - 2); k <= count; k++)
		{
			int			o = sf_rule_node_offset(got, k + 1, span);

			FUZZ_CHECK(o >= 0 && o < span, "offset %d outside a span of %d", o, span);
			FUZZ_CHECK(o == offsets[k], "timeline %u (entry %d of %d, span %d): offset %d, the rule says %d",
					   got[k], k, count + 1, span, o, offsets[k]);
			for (int j = Max(0, k - span + 1); j < k; j++)
				FUZZ_CHECK(offsets[j] != o, "timeline %u takes the offset %d of timeline %u before it",
						   got[k], o, got[j]);
		}
	}
	free(buf);
	free(got);
	free(want);
	free(offsets);
	return 0;
}
