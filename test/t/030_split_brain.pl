# Copyright: see LICENSE
#
# 030_split_brain.pl
#	A split brain with one node id: snowflake.node_id_span.
#
# A primary and its streaming standby share node id 5 (one configuration
# for every instance, as CloudNativePG applies it).  The standby is promoted
# while the old primary keeps accepting writes, and both mint at once:
#  - with snowflake.node_id_span = 2 they mint under node ids 5 (timeline 1)
#    and 6 (timeline 2): no key comes out of both;
#  - the old primary, rewound with pg_rewind and promoted again (timeline
#    3), mints with node id 5 again, above every key either server issued;
#  - with the default span of 1 both mint with node id 5 and keys come out
#    of both: the test can see the split brain it guards against.
# Both servers run a bounded pgbench load until the old primary's IDs have
# gone well past the promoted standby's first ID (the floor, now plus
# max_drift_ms), so that they minted in the same milliseconds; that they did
# is checked too, or "no key in common" would prove nothing.
# Also: two sibling standbys promoted separately both take timeline 2 and
# mint with the same node id (what the span does not cover, as the docs
# say); a span whose node ids do not all fit the node field stops the
# server at start, naming both settings; and snowflake_claim_node() claims
# every node id of the span.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# The load: each statement inserts five IDs, committed at once.
my $script = PostgreSQL::Test::Utils::tempdir() . '/insert_ids.sql';
open my $fh, '>', $script or die "could not write $script: $!";
print $fh "INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 5);\n";
close $fh;

# Start a pgbench load of two clients on $node, bounded by 120 s; the
# caller stops it by its harness.
sub start_load
{
	my ($node) = @_;
	my ($out, $err) = ('', '');
	return IPC::Run::start(
		[
			'pgbench', '-n', '-c', '2', '-j', '2', '-T', '120',
			'-f', $script, '-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err);
}

# The IDs of table ids on $node above $above, as a hash.
sub ids_above
{
	my ($node, $above) = @_;
	my %ids = map { $_ => 1 } split /\n/,
	  $node->safe_psql('postgres', "SELECT id FROM ids WHERE id > $above");
	return \%ids;
}

# The milliseconds (ID time) of table ids on $node above $above, as a hash.
sub ms_above
{
	my ($node, $above) = @_;
	my %ms = map { $_ => 1 } split /\n/,
	  $node->safe_psql('postgres',
		"SELECT DISTINCT snowflake_timestamp(id) FROM ids WHERE id > $above");
	return \%ms;
}

# The timeline $node writes WAL on.
sub timeline
{
	my ($node) = @_;
	return hex(substr(
			$node->safe_psql('postgres',
				'SELECT pg_walfile_name(pg_current_wal_lsn())'),
			0, 8));
}

# A primary (node id 5, the given span) and a streaming standby made from
# it; the standby is promoted while the old primary keeps accepting writes,
# and both mint at once.  Returns the old primary, the promoted standby, the
# largest ID before the promotion, and the number of keys and of
# milliseconds both servers minted in.
sub split_brain
{
	my ($span) = @_;
	my $old = start_snowflake_node("primary_span$span",
		node_id => 5,
		init => { allows_streaming => 1 },
		settings => {
			'snowflake.node_id_span' => $span,
			'snowflake.max_drift_ms' => '200ms',
			'wal_log_hints' => 'on',
			# pg_rewind reads the old primary's WAL from before the split.
			'wal_keep_size' => '1GB'
		});
	$old->safe_psql(
		'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint PRIMARY KEY);
INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 1000);
});
	$old->backup("backup_span$span");
	my $new = start_snowflake_node("standby_span$span",
		from_backup => [ $old, "backup_span$span", has_streaming => 1 ]);
	$old->wait_for_catchup($new);
	my $before = $old->safe_psql('postgres', 'SELECT max(id) FROM ids');

	promote_and_wait($new);
	# The promoted server's first ID: past the floor (now plus the lead).
	my $first_new =
	  $new->safe_psql('postgres', 'INSERT INTO ids SELECT snowflake_nextval() RETURNING id');
	my $first_new_ts = $new->safe_psql('postgres', "SELECT snowflake_timestamp($first_new)");

	my $load_old = start_load($old);
	my $load_new = start_load($new);
	# The old primary's IDs reach well past the promoted server's first:
	# from then on both mint in the same milliseconds.
	my $overlapped = $old->poll_query_until('postgres',
		"SELECT max(snowflake_timestamp(id)) > '$first_new_ts'::timestamptz + interval '1 s' FROM ids");
	# And the promoted server has minted in that time too.
	$overlapped &&= $new->poll_query_until('postgres',
		"SELECT max(snowflake_timestamp(id)) > '$first_new_ts'::timestamptz + interval '1 s' FROM ids");
	$load_old->kill_kill;
	$load_new->kill_kill;
	ok($overlapped, "span $span: both servers minted for a second past the promotion's floor");

	my $ids_old = ids_above($old, $before);
	my $ids_new = ids_above($new, $before);
	my $common = grep { $ids_new->{$_} } keys %$ids_old;
	my $ms_old = ms_above($old, $before);
	my $ms_new = ms_above($new, $before);
	my $common_ms = grep { $ms_new->{$_} } keys %$ms_old;
	note(sprintf('span %d: %d and %d keys, %d milliseconds in common, %d keys in common',
			$span, scalar(keys %$ids_old), scalar(keys %$ids_new), $common_ms, $common));
	cmp_ok($common_ms, '>', 10,
		"span $span: the two servers minted in the same milliseconds ($common_ms)");
	return ($old, $new, $before, $common);
}

# --- span 2: no key in common ---

my ($old, $new, $before, $common) = split_brain(2);
is($common, 0, 'span 2: no key came out of both servers');
is($old->safe_psql('postgres',
		"SELECT string_agg(DISTINCT snowflake_node_id(id)::text, ',') FROM ids WHERE id > $before"),
	'5', 'span 2: the old primary (timeline 1) minted with node id 5');
is($new->safe_psql('postgres',
		"SELECT string_agg(DISTINCT snowflake_node_id(id)::text, ',') FROM ids WHERE id > $before"),
	'6', 'span 2: the promoted standby (timeline 2) minted with node id 6');
is($old->safe_psql('postgres', 'SELECT node_id, node_id_in_use, node_id_span FROM snowflake_stats'),
	'5|5|2', 'span 2: the old primary shows node id 5 in use, span 2');
is($new->safe_psql('postgres', 'SELECT node_id, node_id_in_use, node_id_span FROM snowflake_stats'),
	'5|6|2', 'span 2: the promoted standby shows node id 6 in use, span 2');

# A claim covers the span: the promoted standby shares the old primary's
# system identifier, so its claim of the same node ids stands.
is($old->safe_psql('postgres',
		"SELECT snowflake_claim_node('old'); SELECT string_agg(node_id::text, ',' ORDER BY node_id) FROM snowflake_node_claims"),
	"5\n5,6", 'span 2: snowflake_claim_node() claims node ids 5 and 6');
is($new->safe_psql('postgres',
		"SELECT snowflake_claim_node('new'); SELECT string_agg(node_id::text, ',' ORDER BY node_id) FROM snowflake_node_claims"),
	"5\n5,6", 'span 2: the promoted standby claims the same node ids');

# --- the old primary rewound and promoted again: timeline 3 ---

my $max_all = $old->safe_psql('postgres', 'SELECT max(id) FROM ids');
my $max_new = $new->safe_psql('postgres', 'SELECT max(id) FROM ids');
$max_all = $max_new if $max_new > $max_all;
$old->stop;
# pg_rewind copies the source's configuration files: keep the old
# primary's own (its port).
my $conf = $old->data_dir . '/postgresql.conf';
my $saved = slurp_file($conf);
my $rewound = run_log(
	[
		'pg_rewind', '--target-pgdata', $old->data_dir,
		'--source-server', $new->connstr('postgres')
	]);
ok($rewound, 'the old primary is rewound to the promoted standby')
  or die 'pg_rewind failed: the rest of the file would wait in vain';
open my $cfh, '>', $conf or die "could not write $conf: $!";
print $cfh $saved;
close $cfh;
$old->enable_streaming($new);
$old->start;
$new->wait_for_catchup($old);
$new->stop;
promote_and_wait($old);
is(timeline($old), 3, 'the old primary, promoted again, runs on timeline 3');
is(first_above($old, $max_all), 't',
	'timeline 3: the first ID lies above every key either server minted');
is($old->safe_psql('postgres',
		'WITH i AS (INSERT INTO ids SELECT snowflake_nextval() RETURNING id) SELECT snowflake_node_id(id) FROM i'),
	'5', 'timeline 3: IDs carry node id 5 again');
is($old->safe_psql('postgres', 'SELECT node_id_in_use FROM snowflake_stats'),
	'5', 'timeline 3: the stats show node id 5 in use');
$old->stop;

# --- span 1: the split brain duplicates keys ---

($old, $new, $before, $common) = split_brain(1);
cmp_ok($common, '>', 0, "span 1: keys came out of both servers ($common)");
is($new->safe_psql('postgres', 'SELECT node_id_in_use, node_id_span FROM snowflake_stats'),
	'5|1', 'span 1: the promoted standby mints with node id 5 too');
$old->stop;
$new->stop;

# --- two sibling standbys promoted separately: the same next timeline ---

# What the span separates is a promoted server from the one it replaced,
# consecutive timelines of one history.  Two standbys of one primary, each
# promoted without seeing the other's history file (no shared archive),
# both take timeline 2, hence the same node id: the docs say so, and that
# one node id per member is what keeps siblings apart.
my $root = start_snowflake_node('primary_siblings',
	node_id => 5,
	init => { allows_streaming => 1 },
	settings => { 'snowflake.node_id_span' => 2 });
$root->safe_psql('postgres',
	'CREATE EXTENSION snowflake; CREATE TABLE ids (id bigint PRIMARY KEY);'
	  . ' INSERT INTO ids SELECT snowflake_nextval()');
$root->backup('backup_siblings');
my @siblings = map {
	start_snowflake_node("sibling_$_",
		from_backup => [ $root, 'backup_siblings', has_streaming => 1 ])
} (1, 2);
$root->wait_for_catchup($_) foreach @siblings;
$root->stop;
promote_and_wait($_) foreach @siblings;
is(join(',', map { timeline($_) } @siblings),
	'2,2', 'siblings: each standby, promoted on its own, takes timeline 2');
is( join(',',
		map {
			$_->safe_psql('postgres',
				'WITH i AS (INSERT INTO ids SELECT snowflake_nextval() RETURNING id) SELECT snowflake_node_id(id) FROM i'
			  )
		} @siblings),
	'6,6',
	'siblings: both mint with node id 6; the span does not keep siblings apart');
$_->stop foreach @siblings;

# Only the span changes (2 to 1) on timeline 2: the node id becomes 5, and
# the log says so without claiming that snowflake.node_id changed.
my $sibling = $siblings[0];
$sibling->append_conf('postgresql.conf', 'snowflake.node_id_span = 1');
my $log_offset = -s $sibling->logfile;
$sibling->start;
is($sibling->safe_psql('postgres',
		'WITH i AS (INSERT INTO ids SELECT snowflake_nextval() RETURNING id) SELECT snowflake_node_id(id) FROM i'),
	'5', 'span changed to 1 on timeline 2: IDs carry node id 5');
ok( log_appears(
		$sibling,
		qr/LOG:  snowflake node id changed from 6 to 5 on timeline 2\n.*DETAIL:  On timeline 2, "snowflake\.node_id" = 5 and "snowflake\.node_id_span" = 1 give node id 5; IDs minted from now on carry it, from the next millisecond on\./,
		$log_offset),
	'the log names both settings that give the new node id');
ok(!$sibling->log_contains(qr/parameter "snowflake\.node_id" changed/, $log_offset),
	'and does not say that snowflake.node_id changed');
$sibling->stop;

# --- a span that does not fit the node field ---

my $bad = start_snowflake_node('bad_span',
	node_id => 1022,
	settings => { 'snowflake.node_id_span' => 3 },
	start => 0);
if (no_preload())
{
	# Without the preload the settings are read at the first use instead.
	$bad->start;
	$bad->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	like((sql_error($bad, 'SELECT snowflake_nextval()'))[1],
		qr/invalid value for parameter "snowflake.node_id_span": "3"/,
		'no preload: node id 1022 with span 3 is refused at the first use');
	$bad->stop;
}
else
{
	ok(!$bad->start(fail_ok => 1), 'node id 1022 with span 3 stops the server at start');
	ok( $bad->log_contains(
			qr/FATAL:  invalid value for parameter "snowflake.node_id_span": 3\n.*DETAIL:  With snowflake.node_id = 1022 and snowflake.node_id_span = 3 the server mints with node ids up to 1024, but with snowflake.node_bits = 10 the largest is 1023./
		),
		'the message names both settings and the node field');
}

done_testing();
