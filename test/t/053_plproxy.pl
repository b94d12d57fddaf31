# Copyright: see LICENSE
#
# 053_plproxy.pl
#	Sharding with PL/Proxy, as docs/deployment/distributed.md shows it: a
#	proxy server (node id 1) with a cluster of two partitions (servers
#	with node ids 2 and 3), defined with SQL/MED, all on loopback.  Each
#	partition has a table "purchases" keyed by DEFAULT snowflake_nextval()
#	and the functions the proxy's functions of the same name call there.
#
#  - insert_purchase(customer, src), RUN ON hashint4(customer): the partition
#    the hash picks inserts the row and mints its key (concurrent pgbench
#    clients through the proxy, and directly on each partition, too).
#  - insert_purchase_keyed(id, customer, src), RUN ON hashint8(id), called as
#    insert_purchase_keyed(snowflake_nextval(), ...): the proxy mints the
#    key, and the key's hash picks the partition.
#  - insert_everywhere(src), RUN ON ALL: each partition mints its own.
#
#    Every row is on the partition its hash names, its node field is the
#    server that minted it, and no key is there twice, on one partition
#    or across both.
#
# PL/Proxy comes from Debian's postgresql-NN-plproxy, which test/setup.sh
# installs where the archive has it; the file asks the server under test
# and skips where it cannot create the extension (test/check.sh accepts
# that only where test/setup.sh installed no package for it).

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $proxy = start_snowflake_node('proxy', node_id => 1);
skip_without_extension($proxy, 'plproxy');
my $part0 = start_snowflake_node('part0', node_id => 2);
my $part1 = start_snowflake_node('part1', node_id => 3);
my @parts = ($part0, $part1);

foreach my $part (@parts)
{
	$part->safe_psql(
		'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE purchases (id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
                     customer integer NOT NULL, src text NOT NULL);
CREATE FUNCTION insert_purchase(customer integer, src text) RETURNS bigint
    LANGUAGE sql AS 'INSERT INTO purchases (customer, src) VALUES ($1, $2) RETURNING id';
CREATE FUNCTION insert_purchase_keyed(id bigint, customer integer, src text) RETURNS bigint
    LANGUAGE sql AS 'INSERT INTO purchases (id, customer, src) VALUES ($1, $2, $3) RETURNING id';
CREATE FUNCTION insert_everywhere(src text) RETURNS SETOF bigint
    LANGUAGE sql AS 'INSERT INTO purchases (customer, src) VALUES (0, $1) RETURNING id';});
}

my $connstr = sub {
	my ($node) = @_;
	return sprintf('host=%s port=%d dbname=postgres', $node->host, $node->port);
};
$proxy->safe_psql(
	'postgres', qq{
CREATE EXTENSION snowflake;
CREATE EXTENSION plproxy;
CREATE SERVER purchases_cluster FOREIGN DATA WRAPPER plproxy
    OPTIONS (p0 '${\ $connstr->($part0)}', p1 '${\ $connstr->($part1)}');
CREATE USER MAPPING FOR PUBLIC SERVER purchases_cluster;
CREATE FUNCTION insert_purchase(customer integer, src text) RETURNS bigint AS \$\$
    CLUSTER 'purchases_cluster';
    RUN ON hashint4(customer);
\$\$ LANGUAGE plproxy;
CREATE FUNCTION insert_purchase_keyed(id bigint, customer integer, src text) RETURNS bigint AS \$\$
    CLUSTER 'purchases_cluster';
    RUN ON hashint8(id);
\$\$ LANGUAGE plproxy;
CREATE FUNCTION insert_everywhere(src text) RETURNS SETOF bigint AS \$\$
    CLUSTER 'purchases_cluster';
    RUN ON ALL;
\$\$ LANGUAGE plproxy;});

# --- concurrent inserts through the proxy and on each partition ---

pgbench_on_each(
	[
		[
			$proxy,
			"\\set c random(1, 1000000)\n"
			  . "SELECT insert_purchase(:c, 'pgbench hashed');\n"
			  . "SELECT insert_purchase_keyed(snowflake_nextval(), :c, 'pgbench keyed');\n"
		],
		map { [ $_, "INSERT INTO purchases (customer, src) VALUES (0, 'pgbench direct');\n" ] } @parts
	]);

# One call on every partition: a key from each.
is( $proxy->safe_psql(
		'postgres',
		"SELECT string_agg(snowflake_node_id(id)::text, ',' ORDER BY 1) FROM insert_everywhere('everywhere') id"
	),
	'2,3',
	'RUN ON ALL: each partition mints its own key');

# --- where each row is, and who minted its key ---

# On partition $i of 2: how many rows of each path are on the partition
# their hash does not name (PL/Proxy takes the hash modulo 2).
foreach my $i (0, 1)
{
	is( $parts[$i]->safe_psql(
			'postgres', qq{
SELECT count(*) FILTER (WHERE src = 'pgbench hashed' AND hashint4(customer) & 1 <> $i)
       || ' ' || count(*) FILTER (WHERE src = 'pgbench keyed' AND hashint8(id) & 1 <> $i)
  FROM purchases}),
		'0 0',
		"partition $i holds only the rows whose hash names it");
}
my $minted_sql = q{
SELECT string_agg(src || ':' || nodes, ' ' ORDER BY src)
  FROM (SELECT src, string_agg(DISTINCT snowflake_node_id(id)::text, ',') AS nodes
          FROM purchases GROUP BY src) s};
is( $part0->safe_psql('postgres', $minted_sql),
	'everywhere:2 pgbench direct:2 pgbench hashed:2 pgbench keyed:1',
	'partition 0: keys minted there, but those the proxy passed in');
is( $part1->safe_psql('postgres', $minted_sql),
	'everywhere:3 pgbench direct:3 pgbench hashed:3 pgbench keyed:1',
	'partition 1: the same');

# --- no key twice ---

my %seen;
my @counts;
foreach my $part (@parts)
{
	my @ids = split /\n/, $part->safe_psql('postgres', 'SELECT id FROM purchases');
	push @counts, scalar @ids;
	$seen{$_}++ foreach @ids;
}
my $twice = grep { $_ > 1 } values %seen;
is( "$counts[0] + $counts[1] keys, " . scalar(keys %seen) . " distinct, $twice twice",
	"$counts[0] + $counts[1] keys, " . ($counts[0] + $counts[1]) . ' distinct, 0 twice',
	'every key is on one partition only, once');
# 2 x 200 direct on each partition, 2 x 200 hashed and 2 x 200 keyed
# through the proxy, one on each partition through RUN ON ALL.
is($counts[0] + $counts[1], 2 * 400 + 400 + 400 + 2, 'and every row is there');
note "keys: partition 0 $counts[0], partition 1 $counts[1], shared 0";

$_->stop foreach ($proxy, @parts);
done_testing();
