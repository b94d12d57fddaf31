# Copyright: see LICENSE
#
# 067_sql_edition_load.pl
#	The SQL edition under load, on a server without the C library: eight
#	pgbench clients for a minute (SNOWFLAKE_EDITION_LOAD_SECONDS), each
#	transaction one call of snowflake_nextval() (nine in ten) or a batch of
#	three, every call's key stored with the times just before and just after
#	the call, read in the same backend.
#
#  - Unique: no key twice (and pgbench saw no failed transaction).
#  - Within each session, strictly increasing in the order of its calls.
#  - Across sessions, the order that holds: a call that returned before
#    another call began, in any session of the database, has the smaller
#    key (the keys are taken in one sequence, in the order of the calls;
#    calls that overlap in time may come out in either order).  Every pair
#    of calls whose times do not overlap is checked.
#  - Every key carries the node id; none lies behind the clock when its
#    call began, or more than the allowed second ahead of it.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use EditionTest;
use Test::More;

my $seconds = $ENV{SNOWFLAKE_EDITION_LOAD_SECONDS} // 60;
my $clients = 8;
my $node_id = 77;

my $install = edition_installation(edition_build());
my $node = start_edition_node('edition_load', $install,
	settings => { max_connections => 30, synchronous_commit => 'off' });
$node->safe_psql(
	'postgres', qq{
CREATE EXTENSION snowflake;
SELECT snowflake_set_node_id($node_id);
CREATE TABLE calls (
	id bigint PRIMARY KEY,
	client int NOT NULL,
	n int NOT NULL,
	k int NOT NULL DEFAULT 0,
	started timestamptz NOT NULL,
	ended timestamptz NOT NULL);
});

# The time before the call, the call, the time after it: each computed
# from the row of the one before, so in that order.
$node->pgbench(
	"-n -c $clients -j 2 -T $seconds -D n=0",
	0,
	[ qr{number of failed transactions: 0 }, qr{number of transactions actually processed: [1-9]} ],
	[qr{^$}],
	"pgbench: $clients clients take keys for $seconds s",
	{
		'062_single@9' => q{
			\set n :n + 1
			INSERT INTO calls (client, n, started, id, ended)
			WITH s AS MATERIALIZED (SELECT clock_timestamp() AS started),
			     c AS MATERIALIZED (SELECT started, snowflake_nextval() AS id FROM s)
			SELECT :client_id, :n, started, id, clock_timestamp() FROM c;
		},
		'062_batch@1' => q{
			\set n :n + 1
			INSERT INTO calls (client, n, k, started, id, ended)
			WITH s AS MATERIALIZED (SELECT clock_timestamp() AS started),
			     c AS MATERIALIZED (SELECT started, b.id, b.k
			                          FROM s, LATERAL snowflake_nextval_batch(3) WITH ORDINALITY AS b(id, k))
			SELECT :client_id, :n, k, started, id, clock_timestamp() FROM c;
		}
	});

my ($rows, $distinct, $sessions) = split /\|/,
  $node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id), count(DISTINCT client) FROM calls');
note "$rows keys from $sessions sessions in $seconds s";
cmp_ok($rows, '>', 10000, "the load took many keys ($rows)");
is($sessions, $clients, 'from every session');
is($distinct, $rows, 'no key twice');

is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FILTER (WHERE id <= prev), count(*) FILTER (WHERE started > ended)
  FROM (SELECT id, started, ended, lag(id) OVER (PARTITION BY client ORDER BY n, k) AS prev
          FROM calls) s}),
	'0|0',
	'within each session, every key is above the one before');

# Across sessions: for each call, the largest key of the calls that ended
# before it began (a running maximum over the calls ordered by their end).
$node->safe_psql(
	'postgres', q{
CREATE TABLE ends AS
SELECT ended, client, max(id) OVER (ORDER BY ended, id ROWS UNBOUNDED PRECEDING) AS max_before
  FROM calls;
CREATE INDEX ON ends (ended);
ANALYZE ends;
});
my ($checked, $violations, $other_sessions) = split /\|/, $node->safe_psql(
	'postgres', q{
SELECT count(*), count(*) FILTER (WHERE b.id <= e.max_before),
       count(*) FILTER (WHERE e.client <> b.client)
  FROM calls b
  CROSS JOIN LATERAL (SELECT max_before, client FROM ends WHERE ends.ended < b.started
                       ORDER BY ends.ended DESC LIMIT 1) e});
note "$checked calls began after another ended, $other_sessions of them after one of another session";
cmp_ok($other_sessions, '>', 1000, 'many calls began after a call of another session had ended last');
is($violations, 0,
	"every key is above the keys of all calls that returned before its call began, in any session ($checked calls)");

is( $node->safe_psql(
		'postgres', qq{
SELECT count(*) FILTER (WHERE snowflake_node_id(id) <> $node_id),
       count(*) FILTER (WHERE snowflake_timestamp(id) < date_trunc('milliseconds', started)),
       count(*) FILTER (WHERE snowflake_timestamp(id) > ended + interval '1 second')
  FROM calls}),
	'0|0|0',
	'every key carries the node id, and a time between its call\'s start and a second after its end');

$node->stop;
done_testing();
