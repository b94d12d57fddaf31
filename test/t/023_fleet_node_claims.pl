# Copyright: see LICENSE
#
# 023_fleet_node_claims.pl
#	Two fleet members given one node id are caught by the database.
#
# Every server claims its node id with snowflake_claim_node(), and the
# claims table is published with the data.  site_a and site_b both have
# node id 1; a hub subscribes to both.
#
#  - A claim needs a node id: the hub, which has none, cannot claim.
#  - site_a's claim reaches the hub first.  site_b's claim, applied after
#    it, fails in the hub's apply worker with an error naming the node id
#    and both servers (system identifiers); the subscription to site_b
#    stops there, so none of the rows site_b minted after its claim reach
#    the hub, while site_a's keep arriving.
#  - site_c, also node id 1, receives site_a's claim first: its own claim
#    fails at once, before it mints anything.
#  - Repair as docs/fleets.md describes: site_b gets node id 2, removes its
#    wrong claim (snowflake_unclaim_node) and claims again; the hub skips the refused transaction.
#    Replication resumes, site_a's claim of node id 1 stays.
#  - The role that created the extension, not a superuser (the owner of a
#    trusted install), may claim and read claims (1.2), and remove this
#    server's own claims through snowflake_unclaim_node(), but not delete
#    or change another server's claim; another role may do none of it; a
#    superuser may do all of it.

use strict;
use warnings;

use FleetTest;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $site_a = fleet_node('site_a', 1);
my $site_b = fleet_node('site_b', 1);
my $site_c = fleet_node('site_c', 1);
my $hub = fleet_node('hub');

# The claims a server holds: "node_id:server_name ...".
my $claims_sql = q{
SELECT string_agg(node_id || ':' || server_name, ' ' ORDER BY node_id)
FROM snowflake_node_claims};

my %sysid = map {
	(   $_->name => $_->safe_psql(
			'postgres',
			'SELECT system_identifier FROM pg_catalog.pg_control_system()'))
} $site_a, $site_b, $site_c;

foreach my $node ($site_a, $site_b, $site_c, $hub)
{
	$node->safe_psql('postgres',
		"CREATE EXTENSION snowflake;\n" . events_table());
}
$_->safe_psql('postgres',
	'CREATE PUBLICATION fleet FOR TABLE events, snowflake_node_claims')
  foreach $site_a, $site_b;

# A claim needs a node id.
my ($sqlstate, $stderr) = sql_error($hub, 'SELECT snowflake_claim_node()');
is($sqlstate, '55000', 'a server without a node id cannot claim one');
like(
	$stderr,
	qr/ERROR:  55000: parameter "snowflake\.node_id" is not set\n.*HINT:  Set "snowflake\.node_id" in postgresql\.conf and restart the server before claiming a node id\.\n/s,
	'and the error says what to set');

foreach my $site ($site_a, $site_b)
{
	my $sub = 'from_' . $site->name;
	my $connstr = fleet_connstr($site);
	$hub->safe_psql('postgres',
		"CREATE SUBSCRIPTION $sub CONNECTION '$connstr' PUBLICATION fleet");
}
$hub->wait_for_subscription_sync($_, 'from_' . $_->name, 'postgres')
  foreach $site_a, $site_b;

my $insert = sub {
	my ($node, $n) = @_;
	$node->safe_psql('postgres',
		"INSERT INTO events (src) SELECT '"
		  . $node->name
		  . "' FROM generate_series(1, $n)");
};

# --- site_a claims node id 1 and mints ---

is($site_a->safe_psql('postgres', 'SELECT snowflake_claim_node()'),
	'1', 'site_a claims node id 1');
$insert->($site_a, 100);
$site_a->wait_for_catchup('from_site_a');
is( $hub->safe_psql(
		'postgres',
		'SELECT node_id, system_identifier, server_name FROM snowflake_node_claims'),
	"1|$sysid{site_a}|site_a",
	'the hub holds site_a\'s claim');

# --- site_b claims node id 1 too, and mints ---

my $log_offset = -s $hub->logfile;
is($site_b->safe_psql('postgres', 'SELECT snowflake_claim_node()'),
	'1', 'site_b, which has not seen site_a\'s claim, claims node id 1 too');
$insert->($site_b, 100);

$hub->wait_for_log(qr/ERROR:  snowflake node id 1 is claimed by two servers/,
	$log_offset);
my $log = slurp_file($hub->logfile, $log_offset);
like(
	$log,
	qr/ERROR:  snowflake node id 1 is claimed by two servers\n[^\n]*DETAIL:  Server "site_a" \(system identifier $sysid{site_a}\) claimed it at [-0-9:. +]+; server "site_b" \(system identifier $sysid{site_b}\) claims it too\.\n[^\n]*HINT:  Give every server that mints IDs its own "snowflake\.node_id", and remove the wrong claim once no server mints with it\./,
	'the hub\'s apply worker refuses site_b\'s claim, naming node id 1 and both servers'
);
$hub->poll_query_until(
	'postgres', q{
SELECT apply_error_count > 0 FROM pg_catalog.pg_stat_subscription_stats
WHERE subname = 'from_site_b'})
  or die 'timed out waiting for the apply error to be counted';
ok(1, 'the apply error is counted in pg_stat_subscription_stats');

# site_a's rows keep arriving, site_b's do not.
$insert->($site_a, 100);
$site_a->wait_for_catchup('from_site_a');
is( $hub->safe_psql(
		'postgres',
		"SELECT count(*) FILTER (WHERE src = 'site_a'), count(*) FILTER (WHERE src = 'site_b') FROM events"
	),
	'200|0',
	'the hub has all of site_a\'s rows and none that site_b minted after its claim');
is($hub->safe_psql('postgres', $claims_sql), '1:site_a', 'and only site_a\'s claim');

# --- site_c sees site_a's claim before claiming ---

# (Subscription names are slot names on the publisher: unique per server.)
$site_c->safe_psql('postgres',
	"CREATE SUBSCRIPTION site_c_from_site_a CONNECTION '"
	  . fleet_connstr($site_a)
	  . "' PUBLICATION fleet");
$site_c->wait_for_subscription_sync($site_a, 'site_c_from_site_a', 'postgres');
($sqlstate, $stderr) = sql_error($site_c, 'SELECT snowflake_claim_node()');
is($sqlstate, '23505',
	'site_c, which received site_a\'s claim, cannot claim node id 1');
like(
	$stderr,
	qr/ERROR:  23505: snowflake node id 1 is claimed by two servers\n.*DETAIL:  Server "site_a" \(system identifier $sysid{site_a}\) claimed it at [-0-9:. +]+; server "site_c" \(system identifier $sysid{site_c}\) claims it too\./s,
	'the error names node id 1, site_a and site_c');
is(stats($site_c)->{ids_issued}, 0, 'site_c has minted nothing');

# --- repair: site_b moves to node id 2, the hub skips the refused claim ---

$site_b->append_conf('postgresql.conf', 'snowflake.node_id = 2');
$site_b->restart;
is( $site_b->safe_psql(
		'postgres', q{
SELECT snowflake_unclaim_node(1);
SELECT snowflake_claim_node();}),
	"1\n2",
	'site_b removes its wrong claim and claims node id 2');

my ($lsn) = $log =~
  /snowflake node id 1 is claimed by two servers.*?finished at ([0-9A-F]+\/[0-9A-F]+)/s;
ok(defined $lsn, 'the apply error\'s context gives the LSN to skip');
$hub->safe_psql('postgres',
	"ALTER SUBSCRIPTION from_site_b SKIP (lsn = '$lsn')");
$site_b->wait_for_catchup('from_site_b');
is($hub->safe_psql('postgres', $claims_sql), '1:site_a 2:site_b',
	'replication resumes: site_a keeps node id 1, site_b holds node id 2');
is($hub->safe_psql('postgres',
		"SELECT count(*) FROM events WHERE src = 'site_b'"),
	'100', 'and site_b\'s rows arrive (those minted with node id 1 among them)');

# --- the extension's owner claims without superuser (1.2) ---

$site_a->safe_psql(
	'postgres', q{
CREATE ROLE shop_owner LOGIN;
CREATE ROLE clerk LOGIN;
CREATE DATABASE shop OWNER shop_owner;});
my %as_owner = (connstr => $site_a->connstr('shop') . ' user=shop_owner');
my %as_clerk = (connstr => $site_a->connstr('shop') . ' user=clerk');
$site_a->safe_psql('shop', 'CREATE EXTENSION snowflake', %as_owner);
is( $site_a->safe_psql(
		'shop', q{
SELECT snowflake_claim_node('shop');
SELECT node_id, system_identifier, server_name FROM snowflake_node_claims;},
		%as_owner),
	"1\n1|$sysid{site_a}|shop",
	'the role that created the extension, not a superuser, claims the node id and reads the claim');
my (undef, undef, $clerk_err) = $site_a->psql('shop', 'SELECT snowflake_claim_node()', %as_clerk);
like($clerk_err, qr/ERROR:  permission denied for function snowflake_claim_node/,
	'another role may not claim');

# The claims table also holds the claims other servers replicated in: the
# owner may not delete rows of it, only this server's own claims, through
# snowflake_unclaim_node() (1.2).  Here a claim of site_b's (of node id 9),
# as replication would bring it in.
$site_a->safe_psql('shop',
	"INSERT INTO snowflake_node_claims (node_id, system_identifier, server_name) VALUES (9, $sysid{site_b}, 'site_b')"
);
my ($owner_state, $owner_err) = sql_error($site_a,
	'DELETE FROM snowflake_node_claims WHERE node_id = 9', %as_owner);
is($owner_state, '42501', 'the owner may not delete another server\'s claim');
like($owner_err, qr/permission denied for table snowflake_node_claims/,
	'permission denied for the table');
($owner_state) = sql_error($site_a,
	'DELETE FROM snowflake_node_claims WHERE node_id = 1', %as_owner);
is($owner_state, '42501', 'nor this server\'s, directly');
($owner_state) = sql_error($site_a,
	"UPDATE snowflake_node_claims SET system_identifier = $sysid{site_a} WHERE node_id = 9",
	%as_owner);
is($owner_state, '42501', 'nor make another server\'s claim its own');
is($site_a->safe_psql('shop', 'SELECT snowflake_unclaim_node(9)', %as_owner),
	'0', 'snowflake_unclaim_node() leaves another server\'s claim alone');
is($site_a->safe_psql('shop', 'SELECT snowflake_unclaim_node(1)', %as_owner),
	'1', 'and removes this server\'s own claim of a node id');
is( $site_a->safe_psql(
		'shop', 'SELECT node_id, server_name FROM snowflake_node_claims ORDER BY 1',
		%as_owner),
	'9|site_b',
	'the other server\'s claim stands');
is( $site_a->safe_psql(
		'shop', q{
SELECT snowflake_claim_node('shop');
SELECT snowflake_unclaim_node();
SELECT count(*) FROM snowflake_node_claims WHERE server_name = 'shop';},
		%as_owner),
	"1\n1\n0",
	'without an argument, every claim of this server goes');
my (undef, undef, $clerk_unclaim) =
  $site_a->psql('shop', 'SELECT snowflake_unclaim_node()', %as_clerk);
like($clerk_unclaim,
	qr/ERROR:  permission denied for function snowflake_unclaim_node/,
	'another role may not remove claims');
is($site_a->safe_psql('shop',
		'DELETE FROM snowflake_node_claims WHERE node_id = 9 RETURNING server_name'),
	'site_b', 'a superuser still may remove any claim');

$_->stop foreach $hub, $site_a, $site_b, $site_c;
done_testing();
