# Copyright: see LICENSE
#
# 052_fdw_sharding.pl
#	Sharding with postgres_fdw, as docs/deployment/distributed.md shows
#	it: a router (node id 1) whose partitioned tables, LIST-partitioned
#	by region, have as partitions foreign tables on two shard servers
#	(node ids 2 and 3), all on loopback.  Each shard has one table
#	"orders" keyed by DEFAULT snowflake_nextval(); the router sees it
#	through three partitioned tables that differ only in how they declare
#	the key column:
#
#  - orders_routed (DEFAULT snowflake_nextval()): the router evaluates the
#    default and postgres_fdw sends the value, so the router mints.
#  - orders_sharded (GENERATED ALWAYS AS (NULL) STORED): postgres_fdw
#    sends DEFAULT for a generated column, so the shard evaluates its own
#    default and mints; RETURNING gives the shard's key, an UPDATE through
#    the router leaves the key alone, and a key given by the client is
#    refused (428C9).  A table partitioned by the key itself cannot be
#    declared so (42P17): the router needs the key to route the row.  No
#    primary key on the router over foreign partitions (42809): each
#    shard's own holds.
#  - orders_plain (no default): postgres_fdw sends every column of the
#    foreign table, NULL for this one, so the shard's default is never
#    used and the insert fails (23502).
#
#    Through orders_routed and orders_sharded: concurrent pgbench inserts
#    through the router and directly on each shard, INSERT ... SELECT and
#    COPY through the router.  Every key is read back from the shards:
#    the node field is the server the table above names, and no key is
#    there twice, on one shard or across both.  An UPDATE through the
#    router that changes the partition key leaves the row on its shard.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $router = start_snowflake_node('router', node_id => 1);
my $shard1 = start_snowflake_node('shard1', node_id => 2);
my $shard2 = start_snowflake_node('shard2', node_id => 3);
my @shards = ($shard1, $shard2);

foreach my $shard (@shards)
{
	$shard->safe_psql(
		'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
                     region integer NOT NULL, src text NOT NULL);});
}

# The router: a foreign server per shard, and the three partitioned tables
# over the same two shard tables (region 1 on shard1, 2 on shard2).
my $tables = '';
foreach my $t (
	[ routed => 'id bigint DEFAULT snowflake_nextval()' ],
	[ sharded => 'id bigint GENERATED ALWAYS AS (NULL) STORED' ],
	[ plain => 'id bigint' ])
{
	my ($name, $key) = @$t;
	$tables .= qq{
CREATE TABLE orders_$name ($key, region integer NOT NULL, src text NOT NULL)
    PARTITION BY LIST (region);
CREATE FOREIGN TABLE orders_${name}_1 PARTITION OF orders_$name FOR VALUES IN (1)
    SERVER shard1 OPTIONS (table_name 'orders');
CREATE FOREIGN TABLE orders_${name}_2 PARTITION OF orders_$name FOR VALUES IN (2)
    SERVER shard2 OPTIONS (table_name 'orders');};
}
$router->safe_psql(
	'postgres', qq{
CREATE EXTENSION snowflake;
CREATE EXTENSION postgres_fdw;
CREATE SERVER shard1 FOREIGN DATA WRAPPER postgres_fdw
    OPTIONS (host '${\ $shard1->host}', port '${\ $shard1->port}', dbname 'postgres');
CREATE SERVER shard2 FOREIGN DATA WRAPPER postgres_fdw
    OPTIONS (host '${\ $shard2->host}', port '${\ $shard2->port}', dbname 'postgres');
CREATE USER MAPPING FOR CURRENT_USER SERVER shard1;
CREATE USER MAPPING FOR CURRENT_USER SERVER shard2;
$tables
CREATE TABLE incoming (region integer NOT NULL);
INSERT INTO incoming SELECT 1 + g % 2 FROM generate_series(1, 100) g;});

# --- what postgres_fdw sends ---

like(
	$router->safe_psql('postgres',
		"EXPLAIN (VERBOSE, COSTS OFF) INSERT INTO orders_routed_1 (region, src) VALUES (1, 'x')"),
	qr/Remote SQL: INSERT INTO public\.orders\(id, region, src\) VALUES \(\$1, \$2, \$3\)/,
	'a key column with a default: postgres_fdw sends the value the router computed');
like(
	$router->safe_psql('postgres',
		"EXPLAIN (VERBOSE, COSTS OFF) INSERT INTO orders_sharded_1 (region, src) VALUES (1, 'x')"),
	qr/Remote SQL: INSERT INTO public\.orders\(id, region, src\) VALUES \(DEFAULT, \$\d+, \$\d+\)/,
	'a generated key column: postgres_fdw sends DEFAULT');
is( error_report($router,
		"INSERT INTO orders_sharded (id, region, src) VALUES (1, 1, 'explicit')"),
	qq{428C9: cannot insert a non-DEFAULT value into column "id"\n}
	  . 'DETAIL:  Column "id" is a generated column.',
	'orders_sharded takes no key from the client');
is( error_report($router,
		'CREATE TABLE by_key (id bigint GENERATED ALWAYS AS (NULL) STORED) PARTITION BY RANGE (id)'),
	qq{42P17: cannot use generated column in partition key\n}
	  . 'DETAIL:  Column "id" is a generated column.',
	'a table partitioned by its key cannot leave the key to the shards');
is( error_report($router, 'ALTER TABLE orders_sharded ADD PRIMARY KEY (id, region)'),
	qq{42809: cannot create unique index on partitioned table "orders_sharded"\n}
	  . 'DETAIL:  Table "orders_sharded" contains partitions that are foreign tables.',
	'the router cannot hold a primary key over foreign partitions');
is( error_report($router, "INSERT INTO orders_plain (region, src) VALUES (1, 'plain')"),
	qq{23502: null value in column "id" of relation "orders" violates not-null constraint\n}
	  . 'DETAIL:  Failing row contains (null, 1, plain).',
	'a key column without a default: the router sends NULL, the shard default is not used');

# --- concurrent inserts through the router and on each shard ---

pgbench_on_each(
	[
		[
			$router,
			"\\set region random(1, 2)\n"
			  . "INSERT INTO orders_routed (region, src) VALUES (:region, 'pgbench routed');\n"
			  . "INSERT INTO orders_sharded (region, src) VALUES (:region, 'pgbench sharded');\n"
		],
		map { [ $_, "INSERT INTO orders (region, src) VALUES (0, 'pgbench direct');\n" ] } @shards
	]);

# --- INSERT ... SELECT and COPY through the router ---

foreach my $name ('routed', 'sharded')
{
	$router->safe_psql('postgres',
		"INSERT INTO orders_$name (region, src) SELECT region, 'select $name' FROM incoming");
	$router->safe_psql('postgres',
		"COPY orders_$name (region, src) FROM STDIN;\n"
		  . join('', map { (1 + $_ % 2) . "\tcopy $name\n" } 1 .. 100)
		  . "\\.\n");
}

# --- RETURNING and UPDATE through the router ---

my $returned = $router->safe_psql('postgres',
	"INSERT INTO orders_sharded (region, src) VALUES (2, 'returning') RETURNING id");
is( $shard2->safe_psql(
		'postgres',
		"SELECT snowflake_node_id(id), src FROM orders WHERE id = $returned"),
	'3|returning',
	'RETURNING through orders_sharded gives the key shard2 minted and stored');
my $keys_sql =
  'SELECT md5(string_agg(id::text, \',\' ORDER BY id)) || \' \' || count(*) FROM orders';
my @before = map { $_->safe_psql('postgres', $keys_sql) } @shards;
$router->safe_psql('postgres',
	"UPDATE orders_sharded SET src = src || ' updated' WHERE src LIKE 'copy%'");
$router->safe_psql('postgres',
	"UPDATE orders_routed SET src = replace(src, ' updated', '') WHERE src LIKE 'copy%'");
is_deeply([ map { $_->safe_psql('postgres', $keys_sql) } @shards ],
	\@before, 'an UPDATE through the router leaves every key as it was');

# --- which server minted each key ---

# On one shard: "source:node ids that minted its keys" for each source.
my $minted_sql = q{
SELECT string_agg(src || ':' || nodes, ' ' ORDER BY src)
  FROM (SELECT src, string_agg(DISTINCT snowflake_node_id(id)::text, ',') AS nodes
          FROM orders GROUP BY src) s};
is( $shard1->safe_psql('postgres', $minted_sql),
	'copy routed:1 copy sharded:2 pgbench direct:2 pgbench routed:1 pgbench sharded:2 '
	  . 'select routed:1 select sharded:2',
	'shard1: keys routed through orders_routed minted by the router, the others by shard1');
is( $shard2->safe_psql('postgres', $minted_sql),
	'copy routed:1 copy sharded:3 pgbench direct:3 pgbench routed:1 pgbench sharded:3 '
	  . 'returning:3 select routed:1 select sharded:3',
	'shard2: the same, with shard2 minting');

# --- no key twice ---

my %seen;
my @counts;
foreach my $shard (@shards)
{
	my @ids = split /\n/, $shard->safe_psql('postgres', 'SELECT id FROM orders');
	push @counts, scalar @ids;
	$seen{$_}++ foreach @ids;
}
my $twice = grep { $_ > 1 } values %seen;
is( "$counts[0] + $counts[1] keys, " . scalar(keys %seen) . " distinct, $twice twice",
	"$counts[0] + $counts[1] keys, " . ($counts[0] + $counts[1]) . ' distinct, 0 twice',
	'every key is on one shard only, once');
# 2 x 200 direct on each shard, 4 x 200 through the router, 2 x 100 by
# INSERT ... SELECT and 2 x 100 by COPY, one RETURNING.
is($counts[0] + $counts[1], 2 * 400 + 800 + 200 + 200 + 1, 'and every row is there');
note "keys: shard1 $counts[0], shard2 $counts[1], shared 0";

# An UPDATE through the router that changes the partition key leaves the
# row where it is, with the new value (docs/deployment/distributed.md):
# postgres_fdw sends the UPDATE to the shard, nothing moves the row.
my $moved = $router->safe_psql('postgres',
	"INSERT INTO orders_routed (region, src) VALUES (1, 'moved') RETURNING id");
$router->safe_psql('postgres', "UPDATE orders_routed SET region = 2 WHERE id = $moved");
is( join(' / ',
		map { $_->safe_psql('postgres', "SELECT count(*) || ' ' || coalesce(max(region), 0) FROM orders WHERE id = $moved") }
		  @shards),
	'1 2 / 0 0',
	'an UPDATE of the partition key through the router leaves the row on shard1, region 2');

$_->stop foreach ($router, @shards);
done_testing();
