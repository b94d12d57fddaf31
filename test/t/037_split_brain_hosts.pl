# Copyright: see LICENSE
#
# 037_split_brain_hosts.pl
#	The split brain that snowflake.node_id_span cannot close, closed by
#	node ids derived from the host name.
#
# test/t/030_split_brain.pl shows two sibling standbys of one primary,
# promoted separately, both taking timeline 2 and minting with the same
# node id under one shared configuration.  Here every server has the same
# configuration (the standbys are copies of the primary's data directory,
# its postgresql.conf included): snowflake.node_id_from = 'hostname',
# snowflake.node_id_base = 0, snowflake.node_id_count = 8,
# snowflake.node_id_span = 2; each server runs under a host name of its own
# (pg-0, pg-1, pg-2: test/hostns.c).  Both standbys are promoted while the
# primary keeps accepting writes, and all three mint at once under a
# pgbench load until each has minted for a second past the later
# promotion's floor: the primary on timeline 1 with node id 0, the
# siblings on timeline 2 with node ids 2 + 1 = 3 and 4 + 1 = 5.  No key
# comes out of two servers, though they minted in the same milliseconds
# (checked, or "no key in common" would prove nothing).  The standbys,
# whose state files came from the primary with its node id, start without
# a refusal (a standby's start does not vouch for the file).

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $script = PostgreSQL::Test::Utils::tempdir() . '/insert_ids.sql';
open my $fh, '>', $script or die "could not write $script: $!";
print $fh "INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 5);\n";
close $fh;

# A pgbench load of one client on $node, bounded by 120 s; the caller stops
# it by its harness.
sub start_load
{
	my ($node) = @_;
	my ($out, $err) = ('', '');
	return IPC::Run::start(
		[
			'pgbench', '-n', '-c', '1', '-T', '120', '-f', $script,
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err);
}

# The rows of query $sql on $node above ID $above, as a hash.
sub rows_above
{
	my ($node, $sql, $above) = @_;
	return { map { $_ => 1 } split /\n/,
		  $node->safe_psql('postgres', "$sql WHERE id > $above") };
}

sub timeline
{
	my ($node) = @_;
	return hex(substr(
			$node->safe_psql('postgres', 'SELECT pg_walfile_name(pg_current_wal_lsn())'),
			0, 8));
}

my $primary = start_snowflake_node(
	'pg0',
	hostname => 'pg-0',
	init => { allows_streaming => 1 },
	settings => {
		'snowflake.node_id_from' => 'hostname',
		'snowflake.node_id_base' => 0,
		'snowflake.node_id_count' => 8,
		'snowflake.node_id_span' => 2,
		'snowflake.max_drift_ms' => '200ms'
	});
$primary->safe_psql('postgres',
	'CREATE EXTENSION snowflake; CREATE TABLE ids (id bigint PRIMARY KEY);'
	  . ' INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 1000)');
$primary->backup('shared');
my @siblings = map {
	start_snowflake_node("pg$_",
		hostname => "pg-$_",
		from_backup => [ $primary, 'shared', has_streaming => 1 ])
} (1, 2);
$primary->wait_for_catchup($_) foreach @siblings;
my $before = $primary->safe_psql('postgres', 'SELECT max(id) FROM ids');
is( join(',',
		map { $_->safe_psql('postgres', 'SELECT status FROM snowflake_stats') } @siblings),
	'recovery,recovery',
	"the standbys start with the primary's state file and no refusal");
is(error_report($siblings[0], 'SELECT snowflake_adopt_node_id()'),
	'25006: cannot adopt a snowflake node id during recovery',
	'a standby has no node id to adopt');

promote_and_wait($_) foreach @siblings;
is(join(',', map { timeline($_) } @siblings),
	'2,2', 'each standby, promoted on its own, takes timeline 2');

# Each promoted server's first ID lies past its floor (now plus the lead);
# from a second past the later of them on, all three mint at once.
my $start_ts = '-infinity';
foreach my $node (@siblings)
{
	my $ts = $node->safe_psql('postgres',
		'INSERT INTO ids SELECT snowflake_nextval() RETURNING snowflake_timestamp(id)');
	$start_ts = $ts if $ts gt $start_ts;
}
my @servers = ($primary, @siblings);
my @loads = map { start_load($_) } @servers;
my $overlapped = 1;
foreach my $node (@servers)
{
	$overlapped &&= $node->poll_query_until('postgres',
		"SELECT max(snowflake_timestamp(id)) > '$start_ts'::timestamptz + interval '1 s' FROM ids");
}
$_->kill_kill foreach @loads;
ok($overlapped, 'all three servers minted for a second past the later floor');

my @names = ('pg-0', 'pg-1', 'pg-2');
my @ids = map { rows_above($_, 'SELECT id FROM ids', $before) } @servers;
my @ms = map {
	rows_above($_, 'SELECT DISTINCT snowflake_timestamp(id) FROM ids', $before)
} @servers;
foreach my $pair ([ 0, 1 ], [ 0, 2 ], [ 1, 2 ])
{
	my ($a, $b) = @$pair;
	my $common = grep { $ids[$b]{$_} } keys %{ $ids[$a] };
	my $common_ms = grep { $ms[$b]{$_} } keys %{ $ms[$a] };
	note(sprintf('%s and %s: %d and %d keys, %d milliseconds in common, %d keys in common',
			$names[$a], $names[$b], scalar(keys %{ $ids[$a] }),
			scalar(keys %{ $ids[$b] }), $common_ms, $common));
	cmp_ok($common_ms, '>', 10,
		"$names[$a] and $names[$b] minted in the same milliseconds ($common_ms)");
	is($common, 0, "$names[$a] and $names[$b]: no key came out of both");
}

is( join(' ',
		map {
			$_->safe_psql('postgres',
				"SELECT string_agg(DISTINCT snowflake_node_id(id)::text, ',') FROM ids WHERE id > $before")
		} @servers),
	'0 3 5',
	'the primary (timeline 1) minted with node id 0, the siblings (timeline 2) with 3 and 5');
is( join(' ',
		map {
			$_->safe_psql('postgres',
				q{SELECT node_id || '/' || node_id_in_use || '/' || node_id_source FROM snowflake_stats})
		} @servers),
	'0/0/hostname pg-0 2/3/hostname pg-1 4/5/hostname pg-2',
	'snowflake_stats: each server its own node ids, from its own host name');
ok( $siblings[0]->log_contains(
		qr/LOG:  snowflake IDs carry node id 3 on timeline 2\n.*DETAIL:  With node id 2, derived from hostname pg-1, and "snowflake\.node_id_span" = 2, each timeline takes the next node id in turn\./
	),
	'the log says which node id the promoted server mints with, and why');
$_->stop foreach @servers;

done_testing();
