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
#    primary runs.
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

done_testing();
