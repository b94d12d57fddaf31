# Copyright: see LICENSE
#
# 075_skipped_timeline.pl
#	Node fields apart along a timeline's ancestry, whatever numbers were
#	skipped (issue 44).  A restore drill that archives into the primary's
#	WAL archive takes timeline 2; the real failover then goes to timeline
#	3, whose history has timeline 1 as its parent.  With
#	snowflake.node_id_span = 2 the node field of timeline 3 by its number,
#	1 + (3 - 1) % 2, is the old primary's: in a split brain the two minted
#	the same keys (796,000 of 800,000 in the issue's drill).  Timeline 3
#	takes the offset its parent did not.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes;

# Without the preload the lead is capped at 1 s (the runs of IDs below
# scale with it).
my $lead = no_preload() ? 1000 : 30000;
my %settings = (
	'snowflake.node_id_span' => 2,
	'snowflake.max_drift_ms' => "${lead}ms",
	'snowflake.max_wait_ms' => '10s');

my $primary = start_snowflake_node('primary',
	node_id => 1,
	layout => '41/10/4',
	init => { allows_streaming => 1, has_archiving => 1 },
	settings => \%settings);
$primary->safe_psql('postgres', 'CREATE EXTENSION snowflake');
mint_into($primary, 1000);
$primary->backup('b');
my $archive = $primary->archive_dir;

# The real standby, streaming and restoring from the archive, replays past
# the backup's end.
my $standby = start_snowflake_node('standby',
	from_backup => [ $primary, 'b', has_streaming => 1, has_restoring => 1 ]);
mint_into($primary, 1000);
$primary->safe_psql('postgres', 'SELECT pg_switch_wal()');
mint_into($primary, 1000);
$primary->wait_for_catchup($standby);

# The drill: the backup restored through the archive to its end (a branch
# behind the standby), archiving into it: it takes timeline 2.
my $drill = start_snowflake_node('drill',
	from_backup => [ $primary, 'b', has_restoring => 1, standby => 0 ],
	start => 0);
$drill->append_conf('postgresql.conf', qq{
snowflake.node_id = 9
archive_mode = on
archive_command = 'cp "%p" "$archive/%f"'
recovery_target = 'immediate'
recovery_target_action = 'promote'
});
$drill->start;
$drill->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the drill did not end its recovery';
for (my $i = 0; !-f "$archive/00000002.history" && $i < 10 * $PostgreSQL::Test::Utils::timeout_default; $i++)
{
	Time::HiRes::usleep(100_000);
}
ok(-f "$archive/00000002.history", 'the drill took timeline 2, in the primary\'s archive');
$drill->stop;

# The standby is promoted while the old primary still runs: timeline 3.
mint_into($primary, 1000);
$primary->wait_for_catchup($standby);
promote_and_wait($standby);
$standby->safe_psql('postgres', 'CHECKPOINT');
is($standby->safe_psql('postgres', 'SELECT timeline_id FROM pg_control_checkpoint()'),
	'3', 'the promotion skipped timeline 2: the standby is on timeline 3');
mint_into($standby, 8000);
is($standby->safe_psql('postgres',
		'SELECT min(snowflake_node_id(id))::text || max(snowflake_node_id(id))::text FROM minted_standby'),
	'22', 'on timeline 3, branched from 1, it mints with node id 2, not the old primary\'s 1');
ok( $standby->log_contains(qr/LOG:  snowflake IDs carry node id 2 on timeline 3\n/),
	'and says so in its log')
  unless no_preload();

# The split brain: the old primary mints on through the same range.
for (1 .. 10)
{
	mint_into($primary, $lead * 16 / 4);
	last if stats($primary)->{lead_ms} > $lead * 0.9;
}
is(keys_in_common($standby, $primary), '0',
	'no key in common with the old primary, which still runs on timeline 1');
$standby->stop;
$primary->stop;

done_testing();
