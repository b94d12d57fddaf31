# Copyright: see LICENSE
#
# 024_spread_sequence.pl
#	snowflake.spread_sequence: at low rates the low bits of IDs spread
#	evenly, and every guarantee still holds.
#
# At about one ID per millisecond every ID starts a new millisecond, so
# without the option its sequence is 0 and "id % 16" is always 0: one shard
# of sixteen gets every row.  With it, each new millisecond starts at a
# random offset in the lower half of the sequence field; a chi-square
# statistic of id % 16 over 1600 such IDs stays below 60 unless the spread is
# broken (15 degrees of freedom: an even spread exceeds 60 with probability
# 2.5e-7; all IDs in one bucket give 24000, every other bucket alone 1600).
# Bursts, batches and concurrent clients stay strictly increasing per session,
# unique and within the lead bound.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $n_ids = 1600;
my $buckets = 16;
my $chi2_bound = 60;

my $node = start_snowflake_node(
	'spread',
	node_id => 5,
	settings => { timezone => 'UTC', max_connections => 20 });
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

# The setting: off by default, changed by a reload, not by a session.
is($node->safe_psql('postgres', show_setting('snowflake.spread_sequence')),
	'off', 'snowflake.spread_sequence is off by default');
if (!no_preload())
{
	like(
		(sql_error($node, 'SET snowflake.spread_sequence = on'))[1],
		qr/ERROR:  55P02: parameter "snowflake\.spread_sequence" cannot be changed now/,
		'a session cannot turn snowflake.spread_sequence on (55P02)');
}
else
{
	# Before a session has loaded the library, the setting is a placeholder
	# anyone may set; loading the library discards the session's value.
	my (undef, $stderr, $stdout) = sql_error($node,
		"SET snowflake.spread_sequence = on;\n"
		  . show_setting('snowflake.spread_sequence'));
	like($stderr,
		qr/WARNING:  55P02: parameter "snowflake\.spread_sequence" cannot be changed now/,
		'a session cannot turn snowflake.spread_sequence on (55P02, a warning when the library loads)');
	is($stdout, 'off', 'the session\'s value is discarded');
}

# Mint $n IDs into table $table, each in a millisecond of its own: before
# each call, wait for the clock to pass the millisecond of the previous ID
# (at most a millisecond of spinning), so that every call enters a new
# millisecond.  Row i is the i-th ID.
sub low_rate_ids
{
	my ($table, $n) = @_;
	$node->safe_psql(
		'postgres', qq{
		CREATE TABLE $table (i int PRIMARY KEY, id bigint NOT NULL);
		DO \$\$
		DECLARE
			last_ms numeric := 0;
			v bigint;
		BEGIN
			FOR i IN 1..$n LOOP
				WHILE floor(extract(epoch FROM clock_timestamp()) * 1000) <= last_ms LOOP
				END LOOP;
				v := snowflake_nextval();
				INSERT INTO $table VALUES (i, v);
				last_ms := floor(extract(epoch FROM snowflake_timestamp(v)) * 1000);
			END LOOP;
		END
		\$\$;});
	return;
}

# Chi-square statistic of id % $buckets over a table, empty buckets
# included, and of the sequence's position in the spread range (16 slices of
# the lower half of the 12-bit sequence field).
sub chi2
{
	my ($table, $expr) = @_;
	return $node->safe_psql(
		'postgres', qq{
		SELECT round(sum((coalesce(c.n, 0) - e.expected) ^ 2 / e.expected)::numeric, 2)
		FROM generate_series(0, $buckets - 1) b
		CROSS JOIN (SELECT count(*)::float8 / $buckets AS expected FROM $table) e
		LEFT JOIN (SELECT $expr AS bucket, count(*) AS n FROM $table GROUP BY 1) c
		       ON c.bucket = b});
}

# ---------------------------------------------------------------------------
# Off: every ID of a new millisecond has sequence 0, id % 16 = 0.
# ---------------------------------------------------------------------------
low_rate_ids('plain', 200);
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*), count(DISTINCT snowflake_timestamp(id)),
		       count(*) FILTER (WHERE snowflake_sequence(id) = 0),
		       count(*) FILTER (WHERE id % 16 = 0)
		FROM plain}),
	'200|200|200|200',
	'off: 200 IDs in 200 milliseconds all have sequence 0, all in one of 16 buckets');

# ---------------------------------------------------------------------------
# On, by a reload.
# ---------------------------------------------------------------------------
$node->safe_psql('postgres',
	'ALTER SYSTEM SET snowflake.spread_sequence = on; SELECT pg_reload_conf()');
ok($node->poll_query_until('postgres', show_setting('snowflake.spread_sequence'), 'on'),
	'a reload turns snowflake.spread_sequence on');

low_rate_ids('spread', $n_ids);
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*) = count(DISTINCT snowflake_timestamp(id)),
		       bool_and(id > prev),
		       max(snowflake_sequence(id)) < 2048,
		       count(DISTINCT snowflake_sequence(id)) > 100
		FROM (SELECT id, lag(id, 1, -1::bigint) OVER (ORDER BY i) AS prev FROM spread) s}),
	't|t|t|t',
	"on: $n_ids IDs in as many milliseconds, strictly increasing, sequences varied and below 2048"
);

my $chi2_mod = chi2('spread', "(id % $buckets)::int");
cmp_ok($chi2_mod, '<', $chi2_bound,
	"on: chi-square of id % $buckets over $n_ids low-rate IDs is below $chi2_bound"
);
my $chi2_range = chi2('spread', '(snowflake_sequence(id) / 128)');
cmp_ok($chi2_range, '<', $chi2_bound,
	"on: the sequences cover the lower half of the field evenly (chi-square below $chi2_bound)"
);
note("chi-square: id % $buckets $chi2_mod, sequence / 128 $chi2_range");

# ---------------------------------------------------------------------------
# Bursts with the option on: strictly increasing, unique, within the lead.
# ---------------------------------------------------------------------------
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*), count(DISTINCT id), bool_and(id > prev)
		FROM (SELECT id, lag(id, 1, -1::bigint) OVER (ORDER BY k) AS prev
		      FROM snowflake_nextval_batch(100000) WITH ORDINALITY AS b(id, k)) s}),
	'100000|100000|t',
	'on: a batch of 100000 IDs is strictly increasing');
is( $node->safe_psql(
		'postgres', q{
		WITH ids AS MATERIALIZED (
			SELECT g, snowflake_nextval() AS id FROM generate_series(1, 50000) g)
		SELECT count(*), count(DISTINCT id), bool_and(id > prev)
		FROM (SELECT id, lag(id, 1, -1::bigint) OVER (ORDER BY g) AS prev FROM ids) s}),
	'50000|50000|t',
	'on: 50000 calls in one statement are strictly increasing');

$node->safe_psql(
	'postgres', q{
	CREATE TABLE burst (
		n bigserial,
		pid int NOT NULL DEFAULT pg_backend_pid(),
		id bigint PRIMARY KEY DEFAULT snowflake_nextval());
});
$node->pgbench(
	'-n -c 4 -j 2 -t 2000',
	0,
	[
		qr{number of transactions actually processed: 8000/8000},
		qr{number of failed transactions: 0 }
	],
	[qr{^$}],
	'on: 4 concurrent clients insert 8000 rows keyed by snowflake IDs without error',
	{
		'018_burst' => q{
			INSERT INTO burst DEFAULT VALUES;
			INSERT INTO burst (id) SELECT * FROM snowflake_nextval_batch(5);
		}
	});
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*), count(DISTINCT id), bool_and(id > prev)
		FROM (SELECT id, lag(id, 1, -1::bigint) OVER (PARTITION BY pid ORDER BY n) AS prev
		      FROM burst) s}),
	'48000|48000|t',
	'on: 48000 IDs from 4 clients are unique and strictly increasing within each session'
);

my $stats = stats($node);
cmp_ok($stats->{lead_ms}, '<=', 1000,
	'on: the lead over the clock stays within snowflake.max_drift_ms');

# Off again, by a reload: sequences start at 0 again.
$node->safe_psql('postgres',
	'ALTER SYSTEM RESET snowflake.spread_sequence; SELECT pg_reload_conf()');
ok($node->poll_query_until('postgres', show_setting('snowflake.spread_sequence'), 'off'),
	'a reload turns snowflake.spread_sequence off again');
low_rate_ids('plain_again', 50);
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*) FILTER (WHERE snowflake_sequence(id) = 0) FROM plain_again}),
	'50', 'off again: every new millisecond starts at sequence 0');

$node->stop;
done_testing();
