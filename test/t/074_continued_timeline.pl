# Copyright: see LICENSE
#
# 074_continued_timeline.pl
#	A server that leaves recovery without a new timeline continues its
#	predecessor's timeline, and with snowflake.node_id_span its node field:
#	such a start is refused until its node id is confirmed or it is given
#	its own (issue 44).
#  - A standby started without standby.signal while its primary runs.
#  - An old primary rewound with pg_rewind after its standby was promoted,
#    then started as a primary (without standby.signal) while the new
#    primary runs; with node ids derived per member (snowflake.node_id_from)
#    it mints at once instead, with its own node id, which the new primary
#    never takes: no key in common either.
# In each case the running server mints on through the range of IDs the
# refused one would have minted first, and the two share no key; in 1.2
# they shared nearly every one (798,976 of 800,000 in the issue's drill).
# With the preload only: without it the start cannot be seen
# (docs/deployment/no-preload.md says so).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my %settings = (
	'snowflake.node_id_span' => 2,
	'snowflake.max_drift_ms' => '30s',
	'snowflake.max_wait_ms' => '10s',
	wal_log_hints => 'on',
	wal_keep_size => '256MB');

# The IDs $node mints now in a batch of $count, written to a new file
# (empty if the call fails): the file, and the call's SQLSTATE.
sub try_mint
{
	my ($node, $count) = @_;
	my $file = PostgreSQL::Test::Utils::tempdir() . '/tried';
	PostgreSQL::Test::Utils::append_to_file($file, '');
	my ($state) = sql_error($node,
		"COPY (SELECT snowflake_nextval_batch($count)) TO '$file'");
	return ($file, $state);
}

# $node mints batches until its IDs lead the clock by most of the lead:
# through any range a server that started since may have minted in.
sub mint_through_lead
{
	my ($node) = @_;
	for (1 .. 10)
	{
		mint_into($node, 100000);
		last if stats($node)->{lead_ms} > 28000;
	}
	return;
}

my $continued_error =
  "55000: snowflake node id %d is not confirmed after leaving recovery without a new timeline\nDETAIL:  %s "
  . "Its node id is the one its predecessor mints with on this timeline, and that server may still run.\n"
  . 'HINT:  If the server it continues no longer mints, have a superuser run SELECT snowflake_confirm_restore(%d); otherwise give it its own "snowflake.node_id" and restart it. A standby is started with standby.signal and promoted with pg_ctl promote, which gives it a new timeline.';

# ---------------------------------------------------------------------------
# A standby started without standby.signal
# ---------------------------------------------------------------------------

my $primary = start_snowflake_node('primary',
	node_id => 1,
	layout => '41/10/4',
	init => { allows_streaming => 1 },
	settings => \%settings);
$primary->safe_psql('postgres', 'CREATE EXTENSION snowflake');
mint_into($primary, 1000);
$primary->backup('b');
my $standby = start_snowflake_node('standby',
	from_backup => [ $primary, 'b', has_streaming => 1 ]);
$primary->wait_for_catchup($standby);
$standby->stop;
unlink($standby->data_dir . '/standby.signal') or die "standby.signal: $!";
$standby->start;
$standby->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby did not leave recovery';
my ($file, $state) = try_mint($standby, 20000);
is($state, '55000', 'a standby started without standby.signal mints nothing');
is( error_report($standby, 'SELECT snowflake_nextval()'),
	sprintf($continued_error, 1,
		'This server was a standby (or was rewound by pg_rewind) and started without standby.signal: it leaves recovery without a new timeline, continuing the timeline of the server it replicated.',
		1),
	'the whole error: what happened, why it matters, what to do');
mint_through_lead($primary);
is(keys_in_common($primary, $file), '0',
	'no key in common with the primary, which minted on through the same range');

# Given its own node id, it mints.
$standby->stop;
$standby->append_conf('postgresql.conf', "snowflake.node_id = 5\n");
my $offset = -s $standby->logfile;
$standby->start;
mint_into($standby, 20000);
is($standby->safe_psql('postgres',
		'SELECT min(snowflake_node_id(id))::text || max(snowflake_node_id(id))::text FROM minted_standby'),
	'55', 'given its own node id, it mints with it');
is(keys_in_common($standby, $primary), '0', 'and shares no key with the primary');
$standby->stop;
$primary->stop;

# ---------------------------------------------------------------------------
# An old primary rewound after a failover, started as a primary
# ---------------------------------------------------------------------------

my $old = start_snowflake_node('old',
	node_id => 1,
	layout => '41/10/4',
	init => { allows_streaming => 1 },
	settings => \%settings);
$old->safe_psql('postgres', 'CREATE EXTENSION snowflake');
mint_into($old, 1000);
$old->backup('b');
my $new = start_snowflake_node('new',
	from_backup => [ $old, 'b', has_streaming => 1 ]);
$old->wait_for_catchup($new);
promote_and_wait($new);
$new->safe_psql('postgres', 'CHECKPOINT');
is($new->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	'2', 'the promoted standby mints with node id 2 on timeline 2');
mint_into($old, 1000);    # the old primary went on for a while
$old->stop;
my $conf = slurp_file($old->data_dir . '/postgresql.conf');
command_ok(
	[ 'pg_rewind', '--target-pgdata', $old->data_dir,
		'--source-server', $new->connstr('postgres') ],
	'pg_rewind of the old primary');
open my $fh, '>', $old->data_dir . '/postgresql.conf' or die $!;
print $fh $conf;
close $fh;
$old->start;
$old->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the rewound server did not leave recovery';
is($old->safe_psql('postgres', 'SELECT timeline_id FROM pg_control_checkpoint()'),
	'2', 'started as a primary, the rewound server continues timeline 2');
($file, $state) = try_mint($old, 20000);
is($state, '55000', 'and mints nothing');
like(error_report($old, 'SELECT snowflake_nextval()'),
	qr/^55000: snowflake node id 2 is not confirmed after leaving recovery without a new timeline\n/,
	'it would take node id 2, the new primary\'s');
mint_through_lead($new);
is(keys_in_common($new, $file), '0', 'no key in common with the new primary');
$old->stop;
$new->stop;

# ---------------------------------------------------------------------------
# The same with node ids derived per member (snowflake.node_id_from, here
# from an environment variable; a host name works alike): the rewound old
# primary derives its own node id, which its successor never minted with,
# and mints at once (docs/operations.md, "Snapshots and copies")
# ---------------------------------------------------------------------------

my %derived = (
	%settings,
	'snowflake.node_id_from' => 'env:SF_TEST_MEMBER',
	'snowflake.node_id_count' => 8);
my ($old_d, $new_d);
{
	local $ENV{SF_TEST_MEMBER} = '1';
	$old_d = start_snowflake_node('old_derived',
		layout => '41/10/4',
		init => { allows_streaming => 1 },
		settings => \%derived);
}
$old_d->safe_psql('postgres', 'CREATE EXTENSION snowflake');
mint_into($old_d, 1000);
$old_d->backup('d');
{
	local $ENV{SF_TEST_MEMBER} = '2';
	$new_d = start_snowflake_node('new_derived',
		from_backup => [ $old_d, 'd', has_streaming => 1 ]);
}
$old_d->wait_for_catchup($new_d);
promote_and_wait($new_d);
$new_d->safe_psql('postgres', 'CHECKPOINT');
is($new_d->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	'5', 'member 2, promoted, mints with node id 5 on timeline 2 (4 + 1)');
mint_into($old_d, 1000);
$old_d->stop;
$conf = slurp_file($old_d->data_dir . '/postgresql.conf');
command_ok(
	[ 'pg_rewind', '--target-pgdata', $old_d->data_dir,
		'--source-server', $new_d->connstr('postgres') ],
	'pg_rewind of the old primary, member 1');
open $fh, '>', $old_d->data_dir . '/postgresql.conf' or die $!;
print $fh $conf;
close $fh;
{
	local $ENV{SF_TEST_MEMBER} = '1';
	$old_d->start;
}
$old_d->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the rewound server did not leave recovery';
is($old_d->safe_psql('postgres', 'SELECT timeline_id FROM pg_control_checkpoint()'),
	'2', 'started as a primary, the rewound member 1 continues timeline 2');
($file, $state) = try_mint($old_d, 20000);
is($state, 'none', 'and mints at once');
is( $old_d->safe_psql('postgres',
		"CREATE TABLE tried (id bigint); COPY tried FROM '$file'; SELECT string_agg(DISTINCT snowflake_node_id(id)::text, ',') FROM tried"),
	'3', 'with node id 3, its own on timeline 2 (2 + 1), never its successor\'s');
mint_through_lead($new_d);
is(keys_in_common($new_d, $file), '0', 'no key in common with the new primary');
$old_d->stop;
$new_d->stop;

done_testing();
