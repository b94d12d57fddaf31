# Copyright: see LICENSE
#
# 005_concurrent_pgbench.pl
#	Many concurrent clients minting IDs through pgbench.
#
# Eight clients insert rows whose primary key defaults to
# snowflake_nextval(), or take IDs with snowflake_nextval_batch(), as fast
# as they can.  One generator serves every backend, so:
#	- no two rows get the same ID (the PRIMARY KEY would fail the
#	  transaction, and pgbench would report it; count(DISTINCT) checks too);
#	- each client's IDs strictly increase in the order the client made
#	  them: a client's next statement starts after its previous one
#	  returned, and every ID is greater than every ID issued before it.
# Each client numbers its transactions with a pgbench variable that
# persists across its transactions (:n, starting from -D n=0).
# Finally, backends in different databases share the same generator.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $clients = 8;
my $per_client = 1500;

my $node = start_snowflake_node(
	'concurrent',
	node_id => 300,
	settings => { max_connections => 30 });

$node->safe_psql(
	'postgres', q{
	CREATE EXTENSION snowflake;
	-- k numbers the IDs of one batch; 0 for a single snowflake_nextval().
	CREATE TABLE t (
		id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
		client int NOT NULL,
		n int NOT NULL,
		k int NOT NULL DEFAULT 0
	);
});

# Three single inserts for every batch of 20 (weights), each transaction
# numbered per client.
$node->pgbench(
	"-n -c $clients -j 2 -t $per_client -D n=0",
	0,
	[
		qr{number of transactions actually processed: @{[$clients * $per_client]}/@{[$clients * $per_client]}},
		qr{number of failed transactions: 0 }
	],
	[qr{^$}],
	'pgbench: 8 clients insert rows keyed by snowflake IDs without error',
	{
		'005_single@3' => q{
			\set n :n + 1
			INSERT INTO t (client, n) VALUES (:client_id, :n);
		},
		'005_batch@1' => q{
			\set n :n + 1
			INSERT INTO t (id, client, n, k)
			SELECT b.id, :client_id, :n, b.k
			FROM snowflake_nextval_batch(20) WITH ORDINALITY AS b(id, k);
		}
	});

# Every client ran its transactions, numbered 1..$per_client.
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*), min(txns), max(txns), bool_and(maxn = txns)
		FROM (SELECT client, count(DISTINCT n) AS txns, max(n) AS maxn
		      FROM t GROUP BY client) c}),
	"$clients|$per_client|$per_client|t",
	"each of the $clients clients recorded $per_client numbered transactions");

# No duplicates (the primary key already guarantees it; check anyway).
my ($rows, $distinct) = split /\|/,
  $node->safe_psql('postgres', 'SELECT count(*), count(DISTINCT id) FROM t');
cmp_ok($rows, '>=', $clients * $per_client, "at least one row per transaction ($rows rows)");
is($distinct, $rows, 'no two rows share an ID');

# Per client, IDs strictly increase with (n, k): the order the client made them.
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*) FROM (
			SELECT id, lag(id) OVER (PARTITION BY client ORDER BY n, k) AS prev
			FROM t) s
		WHERE id <= prev}),
	'0',
	'per client, every ID is greater than the one made before it');

# Batches are runs of consecutive sequence numbers (the packed generator
# value is (ms << 12) | sequence), and every ID carries the node id.
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*) > 0, count(*) FILTER (WHERE ids <> 20 OR span <> 19),
		       (SELECT bool_and(snowflake_node_id(id) = 300) FROM t)
		FROM (SELECT count(*) AS ids,
		             max((id >> 22) * 4096 + (id & 4095))
		           - min((id >> 22) * 4096 + (id & 4095)) AS span
		      FROM t WHERE k > 0 GROUP BY client, n) b}),
	't|0|t',
	'every batch of 20 is consecutive, and every ID carries node id 300');

is( $node->safe_psql(
		'postgres',
		"SELECT ids_issued >= $rows, refused FROM snowflake_stats"),
	't|0',
	'snowflake_stats counted every ID and no refusal');

# ---------------------------------------------------------------------------
# One generator for all databases: interleaved calls from two databases
# form one strictly increasing sequence.
# ---------------------------------------------------------------------------
$node->safe_psql('postgres', 'CREATE DATABASE other');
$node->safe_psql('other', 'CREATE EXTENSION snowflake');
my $max_before = $node->safe_psql('postgres', 'SELECT max(id) FROM t');
my @ids;
foreach my $i (1 .. 10)
{
	push @ids,
	  $node->safe_psql($i % 2 ? 'other' : 'postgres',
		'SELECT snowflake_nextval()');
}
my @bad = grep { !($ids[$_] > $ids[ $_ - 1 ]) } 1 .. $#ids;
is(scalar @bad, 0,
	'IDs taken alternately in two databases strictly increase');
cmp_ok($ids[0], '>', $max_before,
	'and are above every ID issued before');

$node->stop;
done_testing();
