# Copyright: see LICENSE
#
# 048_citus.pl
#	snowflake on a Citus cluster: a coordinator (node id 1) and two
#	workers (node ids 2 and 3) on loopback, shared_preload_libraries =
#	'citus,snowflake' (Citus must come first).
#
#  - CREATE EXTENSION snowflake on the coordinator reaches the workers
#    through citus_add_node, and a later DROP and CREATE are propagated.
#  - Node id claims (snowflake_claim_node) span the cluster: each node
#    claims its own id; a fourth server given worker1's node id is refused
#    (and worker1's claim again is refused too), both named; a server with
#    another epoch is refused, both named.
#  - Keys of a distributed table (distributed by the key) and of a
#    reference table, from concurrent pgbench inserts through the
#    coordinator and through each worker, COPY, INSERT ... SELECT from a
#    local and from a distributed source: no key twice, and the node field
#    is the node that evaluated the default, as docs/deployment/distributed.md
#    says: the coordinator for rows routed through it, the worker for rows
#    sent to it, for INSERT ... SELECT from a distributed source the worker
#    holding the source row's shard, from a local source the node running
#    the statement.
#  - UPDATE ... SET key = snowflake_nextval() is refused (0A000); the CTE
#    form works, and mints on the workers holding the rows.
#  - Decoders and snowflake_min_id() run on the workers (EXPLAIN VERBOSE).
#  - The page's INSERT ... SELECT forms: plain, with a window function,
#    with GROUP BY on the distribution column, minted by the workers
#    holding the source rows; with GROUP BY on another column, 3 rows kept
#    (keys of workers) of more keys minted; an aggregate over the whole
#    table, minted by the coordinator.
#  - Rebalancing: a third worker added and citus_rebalance_start() under
#    inserts through the coordinator: no insert fails, shards move, every
#    key stays as it was.
#  - Removing snowflake: DROP EXTENSION refused while the key's default
#    calls snowflake_nextval(), naming orders; the page's steps (undistribute,
#    drop the default, distribute again, DROP EXTENSION) keep every key.
# The blocks of docs/deployment/distributed.md marked as its recipes
# (<!-- not run: needs a Citus cluster; recipe: citus/... -->) are read from
# the page and run as it shows them (the new worker's address replaced).
#
# Citus is not part of snowflake, and no package archive CI reaches ships
# it: CI does not install it.  The file runs on a server where Citus is
# installed for the major under test (as it was, by hand, for Citus
# 14.0.1 on PostgreSQL 17), e.g. PROVE_TESTS=test/t/048_citus.pl
# test/check.sh; elsewhere it skips, saying so, which test/check.sh
# accepts.

use strict;
use warnings;

use File::Basename ();
use File::Spec;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# The page's recipes (docs/deployment/distributed.md, blocks marked
# <!-- not run: ...; recipe: citus/... -->), run as the page shows them.
# Read before the skip: a page that lost one fails the file everywhere,
# not only where Citus is installed.
my %page = doc_recipes(
	File::Spec->rel2abs(File::Basename::dirname(__FILE__) . '/../../docs/deployment/distributed.md'));
my $page_recipes = join(' ',
	sort map { "citus/$_.sql" }
	  qw(insert-select legacy update-refused update-cte rebalance drop-extension move-off));
die "docs/deployment/distributed.md lacks a recipe of this test: it has "
  . join(' ', sort grep { m{^citus/} } keys %page) . ", not $page_recipes\n"
  unless join(' ', sort grep { m{^citus/} } keys %page) eq $page_recipes;

# Whether this server has Citus, asked of a server that does not load it.
my $probe = start_snowflake_node('probe', preload => 0, start => 0);
plan skip_all => 'Citus 14 runs on PostgreSQL 16 to 18: need PostgreSQL 16 or later'
  if $probe->pg_version->major < 16;
$probe->start;
skip_without_extension($probe, 'citus',
	'no package archive CI reaches ships Citus; where Citus is installed for this '
	  . 'PostgreSQL, PROVE_TESTS=test/t/048_citus.pl test/check.sh runs this file');
$probe->stop;

is( join(' ', sort grep { m{^citus/} } keys %page),
	$page_recipes, 'docs/deployment/distributed.md has every recipe this test runs');

# A Citus node: snowflake preloaded after Citus, TCP on loopback (Citus
# connects to the nodes it knows by host and port).
sub citus_node
{
	my ($name, $node_id, %settings) = @_;
	my $node = start_snowflake_node(
		$name,
		node_id => $node_id,
		preload => 0,
		settings => {
			shared_preload_libraries => 'citus,snowflake',
			listen_addresses => '127.0.0.1',
			cluster_name => $name,
			# Citus moves shards by logical replication (rebalancing, below).
			wal_level => 'logical',
			%settings
		});
	$node->safe_psql('postgres', 'CREATE EXTENSION citus');
	return $node;
}

my $coord = citus_node('coord', 1);
my $worker1 = citus_node('worker1', 2);
my $worker2 = citus_node('worker2', 3);
my @nodes = ($coord, $worker1, $worker2);
my %node_id = (coord => 1, worker1 => 2, worker2 => 3);
# The Citus address of each node, and the node id of the node at a port.
my %addr = map { $_->name => '127.0.0.1:' . $_->port } @nodes;
my $port_to_node_id =
  'CASE nodeport '
  . join(' ', map { 'WHEN ' . $_->port . " THEN $node_id{$_->name}" } @nodes)
  . ' END';

# For the rows of $table matching $where, with a value $k (an expression,
# the column k by default) of the distribution column of $source: how many
# there are, how many keys were minted by another node than the one holding
# that value's shard of $source, and the node ids that minted them.
sub rows_off_their_shard
{
	my ($node, $source, $table, $where, $k) = @_;
	$k //= 'k';
	my @rows = map { [ split /\|/ ] } split /\n/, $node->safe_psql('postgres',
		"SELECT $k, snowflake_node_id(id) FROM $table WHERE $where");
	my %ks = map { $_->[0] => 1 } @rows;
	my %holder = split /[|\n]/, $node->safe_psql(
		'postgres', qq{
SELECT k, $port_to_node_id
  FROM unnest(ARRAY[${\ join(',', sort keys %ks) }]::integer[]) k,
       LATERAL (SELECT nodeport FROM citus_shards
                 WHERE table_name = '$source'::regclass
                   AND shardid = get_shard_id_for_distribution_column('$source', k)) s});
	my $off = grep { !defined $holder{ $_->[0] } || $holder{ $_->[0] } != $_->[1] } @rows;
	my %minted = map { $_->[1] => 1 } @rows;
	return scalar(@rows) . " rows, $off minted elsewhere, minted on nodes "
	  . join(' ', sort keys %minted);
}

# The extension, created on the coordinator before the workers join.
$coord->safe_psql(
	'postgres', qq{
SELECT citus_set_coordinator_host('127.0.0.1', ${\ $coord->port});
CREATE EXTENSION snowflake;});
foreach my $w ($worker1, $worker2)
{
	$coord->safe_psql('postgres',
		"SELECT citus_add_node('127.0.0.1', " . $w->port . ')');
}
my $default_version = $coord->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'snowflake'");
my $version_sql = "SELECT coalesce((SELECT extversion FROM pg_extension WHERE extname = 'snowflake'), 'none')";
is( join(' ', map { $_->safe_psql('postgres', $version_sql) } $worker1, $worker2),
	"$default_version $default_version",
	'citus_add_node creates the extension on each worker');
$coord->safe_psql('postgres', 'DROP EXTENSION snowflake');
is(join(' ', map { $_->safe_psql('postgres', $version_sql) } $worker1, $worker2),
	'none none', 'DROP EXTENSION on the coordinator drops it on the workers');
$coord->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is( join(' ', map { $_->safe_psql('postgres', $version_sql) } $worker1, $worker2),
	"$default_version $default_version",
	'and CREATE EXTENSION creates it there again');

# --- node id claims across the cluster ---

is(join(' ', map { $_->safe_psql('postgres', 'SELECT snowflake_claim_node()') } @nodes),
	'1 2 3', 'each node claims its own node id');
is($worker1->safe_psql('postgres', 'SELECT snowflake_claim_node()'),
	'2', 'a claim again by the same node stands');
my %sysid = map {
	($_->name => $_->safe_psql('postgres',
			'SELECT system_identifier FROM pg_control_system()'))
} @nodes;

# A fourth server given worker1's node id joins the cluster.
my $twin = citus_node('twin', 2);
$coord->safe_psql('postgres',
	"SELECT citus_add_node('127.0.0.1', " . $twin->port . ')');
my $twin_sysid = $twin->safe_psql('postgres',
	'SELECT system_identifier FROM pg_control_system()');
my $twin_addr = '127.0.0.1:' . $twin->port;
my $hint =
  'HINT:  Give every server that mints IDs its own "snowflake.node_id", and remove the wrong claim once no server mints with it.';
(my $twin_report = error_report($twin, 'SELECT snowflake_claim_node()')) =~
  s/claimed it at [-0-9:.+ ]+, as/claimed it at TIME, as/;
is( $twin_report,
	"23505: snowflake node id 2 is claimed by two servers\n"
	  . "DETAIL:  Server \"worker1\" (system identifier $sysid{worker1}) claimed it at TIME, as Citus node $addr{worker1} records; server \"twin\" (system identifier $twin_sysid) claims it too.\n"
	  . $hint,
	'a server claiming a node id another Citus node claimed is refused, naming both');
is( error_report($worker1, 'SELECT snowflake_claim_node()'),
	"23505: snowflake node id 2 is claimed by two servers\n"
	  . "DETAIL:  Server \"twin\" (system identifier $twin_sysid), Citus node $twin_addr, mints with it; server \"worker1\" (system identifier $sysid{worker1}) claims it too.\n"
	  . $hint,
	'and the first claimer, claiming again, is refused naming the newcomer');
is($twin->safe_psql('postgres', 'SELECT count(*) FROM snowflake_node_claims'),
	'0', 'the refused server holds no claim');
$coord->safe_psql('postgres',
	"SELECT citus_remove_node('127.0.0.1', " . $twin->port . ')');
$twin->stop;

# A server with node id 4 and another epoch.
my $stranger = citus_node('stranger', 4, 'snowflake.epoch' => '2025-01-01 00:00:00+00');
$coord->safe_psql('postgres',
	"SELECT citus_add_node('127.0.0.1', " . $stranger->port . ')');
my $stranger_sysid = $stranger->safe_psql('postgres',
	'SELECT system_identifier FROM pg_control_system()');
is( error_report($stranger, 'SELECT snowflake_claim_node()'),
	"55000: snowflake epoch or layout differs between the servers of the Citus cluster\n"
	  . "DETAIL:  Server \"coord\" (system identifier $sysid{coord}), Citus node $addr{coord}, mints with epoch 2024-01-01 00:00:00.000+00 and layout 41/10/12; server \"stranger\" (system identifier $stranger_sysid) with epoch 2025-01-01 00:00:00.000+00 and layout 41/10/12.\n"
	  . 'HINT:  Give every node of the Citus cluster the same "snowflake.epoch", "snowflake.timestamp_bits", "snowflake.node_bits" and "snowflake.sequence_bits": decoders and snowflake_min_id() run on any node.',
	'a server with another epoch is refused, naming both');
$coord->safe_psql('postgres',
	"SELECT citus_remove_node('127.0.0.1', " . $stranger->port . ')');
$stranger->stop;

# --- tables ---

$coord->safe_psql(
	'postgres', q{
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), src text, k integer, item text);
SELECT create_distributed_table('orders', 'id');
CREATE TABLE items (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), src text NOT NULL);
SELECT create_reference_table('items');
CREATE TABLE source_rows (k integer PRIMARY KEY);
SELECT create_distributed_table('source_rows', 'k');
INSERT INTO source_rows SELECT generate_series(1, 300);
CREATE TABLE local_rows (k integer);
INSERT INTO local_rows SELECT generate_series(1, 100);});
$worker1->safe_psql('postgres',
	'CREATE TABLE local_rows (k integer); INSERT INTO local_rows SELECT generate_series(1, 100);');

# --- concurrent inserts through every node ---

my $dir = PostgreSQL::Test::Utils::tempdir();
my @runs;
foreach my $node (@nodes)
{
	my $clients = $node == $coord ? 4 : 2;
	my $script = "$dir/" . $node->name . '.sql';
	open my $fh, '>', $script or die "could not write $script: $!";
	print $fh "INSERT INTO orders (src) VALUES ('pgbench " . $node->name . "');\n"
	  . "INSERT INTO items (src) VALUES ('pgbench " . $node->name . "');\n";
	close $fh;
	my ($out, $err) = ('', '');
	my $h = IPC::Run::start(
		[
			'pgbench', '-n', '-c', $clients, '-j', $clients, '-t', '200',
			'-f', $script, '-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err,
		IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	push @runs, [ $node->name, $h, \$out, \$err ];
}
foreach my $run (@runs)
{
	my ($name, $h, $out, $err) = @$run;
	ok($h->finish, "pgbench through $name ran without error") or diag($$err);
}

# The node field of the rows each node inserted.
my $by_src_sql = sub {
	my ($table, $where) = @_;
	$where //= 'true';
	return qq{
SELECT string_agg(src || ':' || nodes, ' ' ORDER BY src)
  FROM (SELECT src, string_agg(DISTINCT snowflake_node_id(id)::text, ',') AS nodes
          FROM $table WHERE $where GROUP BY src) s};
};
is( $coord->safe_psql('postgres', $by_src_sql->('orders')),
	'pgbench coord:1 pgbench worker1:2 pgbench worker2:3',
	'distributed table: keys minted by the node each insert went to');
is( $coord->safe_psql('postgres', $by_src_sql->('items')),
	'pgbench coord:1 pgbench worker1:2 pgbench worker2:3',
	'reference table: the same');
is( join(' ', map { $_->safe_psql('postgres', 'SELECT count(*) FROM items') } @nodes),
	'1600 1600 1600',
	'every node reads all 1,600 rows of the reference table');

# --- COPY ---

foreach my $node ($coord, $worker2)
{
	$node->safe_psql('postgres',
		"COPY orders (src) FROM STDIN;\n"
		  . join('', map { 'copy ' . $node->name . "\n" } 1 .. 100)
		  . "\\.\n");
}

# --- INSERT ... SELECT ---

# From a distributed source, run on the coordinator: each row is minted by
# the worker that holds the source row's shard.
$coord->safe_psql('postgres',
	"INSERT INTO orders (src, k) SELECT 'select distributed', k FROM source_rows");
is( rows_off_their_shard($coord, 'source_rows', 'orders', "src = 'select distributed'"),
	'300 rows, 0 minted elsewhere, minted on nodes 2 3',
	'INSERT ... SELECT from a distributed source: each key minted on the worker holding its source shard'
);
# From a local table: minted by the node that runs the statement.
$coord->safe_psql('postgres',
	"INSERT INTO orders (src) SELECT 'select local coord' FROM local_rows");
$worker1->safe_psql('postgres',
	"INSERT INTO orders (src) SELECT 'select local worker1' FROM local_rows");
is( $coord->safe_psql(
		'postgres', $by_src_sql->('orders', "src NOT LIKE 'pgbench%'")),
	'copy coord:1 copy worker2:3 select distributed:2,3 select local coord:1 select local worker1:2',
	'COPY mints on the node that receives it; INSERT ... SELECT from a local table on the node running it'
);

# --- UPDATE ---

is( error_report($coord,
		"UPDATE orders SET id = snowflake_nextval() WHERE src = 'copy coord'"),
	'0A000: functions used in UPDATE queries on distributed tables must not be VOLATILE',
	'UPDATE ... SET id = snowflake_nextval() is refused on a distributed table');
# The page's legacy table, its refused UPDATE and its CTE form.
$coord->safe_psql('postgres', $page{'citus/legacy.sql'});
is( error_report($coord, $page{'citus/update-refused.sql'}),
	'0A000: functions used in UPDATE queries on distributed tables must not be VOLATILE',
	'also for a column that is not the distribution column (the page\'s UPDATE)');
$coord->safe_psql('postgres', $page{'citus/update-cte.sql'});
is( rows_off_their_shard($coord, 'legacy', 'legacy', 'id IS NOT NULL'),
	'100 rows, 0 minted elsewhere, minted on nodes 2 3',
	'the page\'s CTE form sets every key, minted on the worker holding the row');

# --- no key twice ---

is( $coord->safe_psql(
		'postgres', q{
SELECT count(*), count(DISTINCT id)
  FROM (SELECT id FROM orders UNION ALL SELECT id FROM items
        UNION ALL SELECT id FROM legacy) t}),
	'4000|4000',
	'4,000 keys minted through three nodes (2,300 in orders, 1,600 in items, 100 in legacy), each once');

# --- decoders on the workers ---

my $plan = $coord->safe_psql(
	'postgres', q{
EXPLAIN (VERBOSE, COSTS OFF)
SELECT snowflake_node_id(id), count(*) FROM orders
 WHERE id >= snowflake_min_id(now() - interval '1 hour') GROUP BY 1});
like(
	$plan,
	qr/Query: SELECT public\.snowflake_node_id\(id\) AS snowflake_node_id, count\(\*\) AS count FROM public\.orders_\d+ orders WHERE \(id OPERATOR\(pg_catalog\.>=\) public\.snowflake_min_id\(/,
	'snowflake_node_id() and snowflake_min_id() are sent to the workers in the shard queries');
is( $worker2->safe_psql(
		'postgres', q{
SELECT count(*) FROM orders WHERE id >= snowflake_min_id(now() - interval '1 hour')}),
	'2300', 'and a worker runs them over the whole table');

# --- the page's INSERT ... SELECT forms ---

# Who mints each key, and how many keys are minted for the rows kept (the
# workers mint for partial groups that the coordinator merges).
my $issued_sql = 'SELECT ids_issued FROM snowflake_stats';
my $issued = sub {
	my $n = 0;
	$n += $_->safe_psql('postgres', $issued_sql) foreach @nodes;
	return $n;
};
my $issued_before = $issued->();
my $rows_before = $coord->safe_psql('postgres', 'SELECT count(*) FROM orders');
$coord->safe_psql('postgres', $page{'citus/insert-select.sql'});
my $kept = $coord->safe_psql('postgres', 'SELECT count(*) FROM orders') - $rows_before;
my $minted = $issued->() - $issued_before;
foreach my $form ('stock', 'window', 'group')
{
	is( rows_off_their_shard($coord, 'stock', 'orders', "item LIKE '$form %'",
			"split_part(item, ' ', 2)::integer"),
		'90 rows, 0 minted elsewhere, minted on nodes 2 3',
		"INSERT ... SELECT, $form: each key minted on the worker holding its row of stock");
}
is( $coord->safe_psql('postgres',
		q{SELECT count(*), bool_and(snowflake_node_id(id) IN (2, 3)) FROM orders WHERE item LIKE 'shelf %'}),
	'3|t', 'INSERT ... SELECT with GROUP BY on another column: 3 rows kept, their keys minted by workers');
is( $coord->safe_psql('postgres',
		q{SELECT count(*), min(snowflake_node_id(id)) FROM orders WHERE item LIKE 'total %'}),
	'1|1', 'INSERT ... SELECT of an aggregate over the whole table: minted by the coordinator');
diag("the page's INSERT ... SELECT forms minted $minted keys for the $kept rows they kept");
cmp_ok($minted, '>', $kept,
	'keys are minted for partial groups that are thrown away (the page says so)');

# --- rebalancing under inserts (the page's recipe) ---

my $worker3 = citus_node('worker3', 4);
my $keys_sql = q{SELECT count(*) || ' ' || md5(string_agg(id::text || ':' || coalesce(src, item, ''), ',' ORDER BY id)) FROM orders};
my $keys_before = $coord->safe_psql('postgres', $keys_sql);
my $max_before = $coord->safe_psql('postgres', 'SELECT max(id) FROM orders');
my $load_script = "$dir/rebalance.sql";
open my $load_fh, '>', $load_script or die "could not write $load_script: $!";
print $load_fh "INSERT INTO orders (src) VALUES ('during the rebalance');\n";
close $load_fh;
my ($load_out, $load_err) = ('', '');
my $load = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '2', '-j', '2', '-t', '2000', '-f', $load_script,
		'-h', $coord->host, '-p', $coord->port, 'postgres'
	],
	'>', \$load_out, '2>', \$load_err,
	IPC::Run::timeout(10 * $PostgreSQL::Test::Utils::timeout_default));
(my $rebalance = $page{'citus/rebalance.sql'}) =~
  s/citus_add_node\('worker3', 5432\)/citus_add_node('127.0.0.1', ${\ $worker3->port})/;
like($rebalance, qr/citus_add_node\('127\.0\.0\.1', \d+\)/, 'the page\'s rebalancing adds the worker');
$coord->safe_psql('postgres', $rebalance);
ok($load->finish, 'no insert failed during the rebalance') or diag($load_err);
my $moved = $coord->safe_psql('postgres',
	'SELECT count(*) FROM citus_shards WHERE nodeport = ' . $worker3->port);
diag("the rebalance moved $moved shards to worker3 while 4,000 inserts went through the coordinator");
cmp_ok($moved, '>', 0, 'the rebalance moved shards to the new worker');
is( $coord->safe_psql('postgres', "$keys_sql WHERE id <= $max_before"),
	$keys_before, 'every key minted before the rebalance is unchanged');
is( $coord->safe_psql('postgres',
		"SELECT count(*), count(DISTINCT id) FROM orders WHERE src = 'during the rebalance'"),
	'4000|4000', 'the 4,000 rows inserted during it have a key each, none twice');
push @nodes, $worker3;

# --- removing snowflake (the page's recipes) ---

my (undef, $drop_err) = sql_error($coord, $page{'citus/drop-extension.sql'});
like($drop_err, qr/ERROR:  2BP01: cannot drop extension snowflake because other objects depend on it/,
	'DROP EXTENSION snowflake is refused while a default calls snowflake_nextval()');
like($drop_err, qr/default value for column id of table orders depends on function snowflake_nextval\(\)/,
	'naming the key of orders, as the page shows');
# The other tables whose defaults call it (the page's orders is the only
# one there) are given none first.
$coord->safe_psql('postgres', 'ALTER TABLE items ALTER COLUMN id DROP DEFAULT');
my $keys_kept = $coord->safe_psql('postgres', $keys_sql);
$coord->safe_psql('postgres', $page{'citus/move-off.sql'});
is(join(' ', map { $_->safe_psql('postgres', $version_sql) } @nodes),
	'none none none none', 'the page\'s steps: the extension is gone from every node');
is($coord->safe_psql('postgres', $keys_sql), $keys_kept, 'orders kept every key');
is( $coord->safe_psql('postgres',
		q{SELECT count(*) FROM pg_dist_partition WHERE logicalrelid = 'orders'::regclass}),
	'1', 'and is distributed again');
is( $coord->safe_psql('postgres',
		"INSERT INTO orders (id, src) VALUES ($max_before + 1, 'after') RETURNING id = $max_before + 1"),
	't', 'an insert that gives its key goes in');

$_->stop foreach @nodes;
done_testing();
