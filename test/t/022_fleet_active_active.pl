# Copyright: see LICENSE
#
# 022_fleet_active_active.pl
#	Active-active: three servers (node ids 1, 2, 3), each subscribed to the
#	other two with origin = none, all inserting into the same table at once.
#	Every server converges to the same set of rows, with no key conflict
#	and no replication loop (origin = none: a server forwards only the
#	changes made on it, never those it received).
#
#	The node id claims travel the same way: every server ends up with all
#	three, and a server restarted with a node id another one holds has its
#	claim refused at once, before it mints anything.
#
# origin = none needs PostgreSQL 16 or later: on 15 the test is skipped
# (docs/fleets.md says what 15 users can do instead).

use strict;
use warnings;

use FleetTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my @nodes = map { fleet_node("peer$_", $_, start => 0) } 1 .. 3;
if ($nodes[0]->pg_version < 16)
{
	plan skip_all =>
	  'subscriptions with origin = none need PostgreSQL 16 or later';
}
$_->start foreach @nodes;

foreach my $node (@nodes)
{
	$node->safe_psql('postgres',
		    "CREATE EXTENSION snowflake;\n"
		  . events_table()
		  . "\nCREATE PUBLICATION mesh FOR TABLE events, snowflake_node_claims;"
	);
}
# Subscriptions "<subscriber>_from_<publisher>"; the tables are empty, so
# nothing needs copying.
my @subs;
foreach my $sub (@nodes)
{
	foreach my $pub (@nodes)
	{
		next if $sub == $pub;
		my $name = $sub->name . '_from_' . $pub->name;
		my $connstr = fleet_connstr($pub);
		$sub->safe_psql('postgres',
			"CREATE SUBSCRIPTION $name CONNECTION '$connstr' PUBLICATION mesh "
			  . 'WITH (origin = none, copy_data = false)');
		push @subs, [ $pub, $name ];
	}
}
$_->wait_for_subscription_sync foreach @nodes;
my $catch_up = sub { $_->[0]->wait_for_catchup($_->[1]) foreach @subs };
$catch_up->();

# --- claims ---

is($_->safe_psql('postgres', 'SELECT snowflake_claim_node()'),
	$_->name =~ s/peer//r, $_->name . ' claims its node id')
  foreach @nodes;
$catch_up->();
my $claims_sql = q{
SELECT string_agg(node_id || ':' || server_name, ' ' ORDER BY node_id),
	count(DISTINCT system_identifier) FROM snowflake_node_claims};
is($_->safe_psql('postgres', $claims_sql),
	'1:peer1 2:peer2 3:peer3|3', $_->name . ' holds the claims of all three')
  foreach @nodes;

# --- all three insert at once ---

insert_concurrently(\@nodes, sub { single_then_bulk($_[0]->name, 1000, 3000) });
$catch_up->();

my $set_sql = q{
SELECT count(*), count(DISTINCT id), md5(string_agg(id || src, ',' ORDER BY id))
FROM events};
my $first = $nodes[0]->safe_psql('postgres', $set_sql);
like($first, qr/^12000\|12000\|/,
	'peer1 holds every row once: 3 servers x 4000 rows');
is($_->safe_psql('postgres', $set_sql), $first,
	$_->name . ' holds the same rows')
  foreach @nodes[ 1 .. 2 ];
is( $nodes[0]->safe_psql(
		'postgres', q{
SELECT string_agg(x, ' ' ORDER BY x) FROM (
	SELECT DISTINCT src || ':' || snowflake_node_id(id) AS x FROM events) s}),
	'peer1:1 peer2:2 peer3:3',
	'snowflake_node_id(id) names the server that inserted each row');
foreach my $node (@nodes)
{
	is(subscription_problems($node), '0',
		$node->name . ': no apply error or conflict');
}
if ($nodes[0]->pg_version >= 18)
{
	cmp_ok(scalar(conflict_columns($nodes[0])), '>', 0,
		'the conflict counters of PostgreSQL 18 are among those checked');
}

# No loop: after everything has been applied, no server's WAL sender has
# anything more to send (a loop would keep them busy), and the counts above
# are exact.  One more row on one server arrives once on the others.
$nodes[0]->safe_psql('postgres', "INSERT INTO events (src) VALUES ('last')");
$catch_up->();
is($_->safe_psql('postgres', "SELECT count(*) FROM events WHERE src = 'last'"),
	'1', $_->name . ' received the last row exactly once')
  foreach @nodes;

# --- a shared node id in the mesh ---

# peer3 is restarted with node id 1, which peer1 claimed: its claim fails at
# once, naming the node id and both servers, before it minted anything.
my $sysid = sub {
	$_[0]->safe_psql('postgres',
		'SELECT system_identifier FROM pg_catalog.pg_control_system()');
};
my ($sysid1, $sysid3) = map { $sysid->($_) } @nodes[ 0, 2 ];
$nodes[2]->append_conf('postgresql.conf', 'snowflake.node_id = 1');
$nodes[2]->restart;
my ($sqlstate, $stderr) =
  sql_error($nodes[2], 'SELECT snowflake_claim_node()');
is($sqlstate, '23505', 'a claim of a node id another server holds fails with 23505');
like(
	$stderr,
	qr/ERROR:  23505: snowflake node id 1 is claimed by two servers\n.*DETAIL:  Server "peer1" \(system identifier $sysid1\) claimed it at [-0-9:. +]+; server "peer3" \(system identifier $sysid3\) claims it too\.\n.*HINT:  Give every server that mints IDs its own "snowflake\.node_id", and remove the wrong claim once no server mints with it\./s,
	'the error names the node id and both servers');
is(stats($nodes[2])->{ids_issued}, 0, 'peer3 has minted nothing with it');

$_->stop foreach @nodes;
done_testing();
