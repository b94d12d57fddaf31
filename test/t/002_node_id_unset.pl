# Copyright: see LICENSE
#
# 002_node_id_unset.pl
#	Preloaded, but snowflake.node_id not set.
#
# The server must start (a fleet is often configured in steps) and decoding
# must work, but generation is refused with 55000 and a hint naming the
# setting and its range, without issuing anything.  snowflake_stats says
# why.  Once node_id is set and the server restarted, generation works.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = start_snowflake_node(
	'node_id_unset',
	preload => 1,
	settings => { timezone => 'UTC' },
	start => 0);
ok($node->start(fail_ok => 1), 'the server starts without snowflake.node_id');

$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

is($node->safe_psql('postgres', 'SHOW snowflake.node_id'),
	'-1', 'snowflake.node_id shows -1 (not set)');

# ---------------------------------------------------------------------------
# Generation is refused: 55000, the setting and its range in the hint.
# The checks match sql_error()'s stderr, which carries the SQLSTATE and the
# DETAIL and HINT lines.
# ---------------------------------------------------------------------------
my $not_set = qq{55000: parameter "snowflake.node_id" is not set\n}
  . 'HINT:  Set "snowflake.node_id" in postgresql.conf to a value between 0 and 1023 that no other server minting IDs uses, and restart the server.';
foreach my $sql ('SELECT snowflake_nextval()',
	'SELECT * FROM snowflake_nextval_batch(3)')
{
	is(error_report($node, $sql), $not_set,
		"$sql: 55000 while snowflake.node_id is not set; the hint names the setting and its range (0 to 1023)");
}

# A DEFAULT fails the same way and inserts nothing.
$node->safe_psql('postgres',
	'CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v int)');
is(error_report($node, 'INSERT INTO t (v) VALUES (1)'),
	$not_set, 'INSERT with DEFAULT snowflake_nextval() is refused');
is($node->safe_psql('postgres', 'SELECT count(*) FROM t'),
	'0', 'nothing was inserted');

# ---------------------------------------------------------------------------
# snowflake_stats explains it; nothing was issued; refusals are counted.
# ---------------------------------------------------------------------------
is( $node->safe_psql(
		'postgres',
		'SELECT status, node_id IS NULL, timestamp_bits, node_bits, sequence_bits, '
		  . 'ids_issued, refused, last_timestamp IS NULL FROM snowflake_stats'),
	'node_id not set|t|41|10|12|0|3|t',
	"snowflake_stats: status 'node_id not set', nothing issued, 3 calls refused"
);

# ---------------------------------------------------------------------------
# Decoding needs no node id.
# ---------------------------------------------------------------------------
is( $node->safe_psql(
		'postgres', q{
		SELECT d.ts = '2025-03-04 05:06:07.089+00', d.node_id, d.sequence
		FROM snowflake_decode(snowflake_compose('2025-03-04 05:06:07.089+00', 1023, 4095)) d}
	),
	't|1023|4095',
	'compose and decode work while node_id is not set');
is( $node->safe_psql(
		'postgres',
		"SELECT snowflake_timestamp(0) = '2024-01-01 00:00:00+00', "
		  . "snowflake_min_id('2024-01-01 00:00:00.001+00'), "
		  . "snowflake_max_id('2024-01-01 00:00:00+00')"),
	't|4194304|4194303',
	'snowflake_timestamp/min_id/max_id use the default layout and epoch');

# ---------------------------------------------------------------------------
# With node_id set and a restart, generation works.
# ---------------------------------------------------------------------------
$node->append_conf('postgresql.conf', 'snowflake.node_id = 1023');
$node->restart;

my ($id1, $id2) = split /\n/,
  $node->safe_psql('postgres',
	"INSERT INTO t (v) VALUES (1), (2) RETURNING id");
ok($id1 > 0 && $id2 > $id1, 'after setting node_id, IDs are issued, increasing');
is( $node->safe_psql(
		'postgres',
		"SELECT snowflake_node_id($id1), snowflake_node_id($id2), status, node_id FROM snowflake_stats"
	),
	'1023|1023|ready|1023',
	'the IDs carry node id 1023 and snowflake_stats says ready');

$node->stop;
done_testing();
