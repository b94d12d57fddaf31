# Copyright: see LICENSE
#
# 073_raised_lead.pl
#	The fleet's largest lead reaches every copy (issue 44): a primary whose
#	snowflake.max_drift_ms was raised (ALTER SYSTEM: neither replicated nor
#	in an older backup's postgresql.auto.conf) after its standby and a
#	backup were made mints ahead of the clock by the new lead, and is lost:
#  - the backup, restored with point-in-time recovery past the raise,
#    places its first ID past the primary's: with the preload the raise
#    reached it in WAL (a record of snowflake's resource manager);
#  - the standby, promoted on the same host (same clock, same node id),
#    does the same.
# Both keep 1 s in their configuration, and say at a start that it is
# below their history's lead.  Without the preload nothing can carry a
# raise, and the lead cannot be raised past 1 s (a value compiled into
# every copy): the primary's IDs never lead by more, which every start's
# floor covers.  In 1.2 the promoted standby and the restored backup placed
# their first ID 1 s past the clock, among the primary's.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $raised = 15000;
my $replayed = qr/LOG:  snowflake IDs of this server's history may lead the clock by $raised ms, as replayed from WAL\n/;
my $primary = start_snowflake_node('primary',
	node_id => 1,
	layout => '41/10/4',
	init => { allows_streaming => 1, has_archiving => 1 },
	settings => { 'snowflake.max_wait_ms' => '10s' });
$primary->safe_psql('postgres', 'CREATE EXTENSION snowflake');
mint_into($primary, 1000);
$primary->backup('before_raise');
my $standby = start_snowflake_node('standby',
	from_backup => [ $primary, 'before_raise', has_streaming => 1 ]);

# The raise, on the primary only.  The standby and the backup keep 1 s:
# after the restore or the failover their first IDs lie 15 s past the
# clock, and calls wait until the clock is within 1 s of them.
$primary->safe_psql('postgres',
	"ALTER SYSTEM SET snowflake.max_drift_ms = '${raised}ms'; SELECT pg_reload_conf()");
$primary->poll_query_until('postgres', show_setting('snowflake.max_drift_ms'), '15s')
  or die 'the raise was not seen';
# A batch that ends 14 s past the clock (16 IDs a millisecond).
my $ahead = 14 * 1000 * 16;
if (no_preload())
{
	like( error_report($primary, "SELECT count(*) FROM snowflake_nextval_batch($ahead)"),
		qr/^22023: a batch of $ahead snowflake IDs cannot be issued within "snowflake\.max_drift_ms"\nDETAIL:  With snowflake\.sequence_bits = 4 a batch of $ahead IDs spans 14000 milliseconds, more than the 1000 ms that IDs may lead the clock\.\n/,
		'without the preload the lead cannot be raised: a batch of 14 s of IDs is refused');
	my (undef, $stderr) = sql_error($primary, 'SELECT snowflake_nextval()');
	like($stderr,
		qr/WARNING:  55000: parameter "snowflake\.max_drift_ms" is capped at 1000 ms without the preload\nDETAIL:  It is set to 15000 ms\. Without "shared_preload_libraries" no WAL record carries a raised lead to standbys and restores, so IDs never lead the clock by more than 1000 ms\.\n/,
		'and each process that generates IDs says why');
	$ahead = 16000;
}
# The next reservation write records the raise, in the state file and in
# WAL, before any ID leads the clock by more than the old lead: the
# background writer's, maybe after these IDs (within what the reservation
# already covered) are issued, so the standby's replay of it is waited for.
mint_into($primary, 1000);
$primary->wait_for_catchup($standby);

# A standby that starts with a lower lead than its history's says so.
unless (no_preload())
{
	ok(log_appears($standby, $replayed), 'the standby replayed the raise from WAL');
	my $offset = -s $standby->logfile;
	$standby->restart;
	like(slurp_file($standby->logfile, $offset),
		qr/LOG:  "snowflake\.max_drift_ms" \(1000 ms\) is lower than the largest lead over the clock in this data directory's history \($raised ms\)/,
		'restarted, the standby says that its configured lead is below its history\'s');
}

# The primary runs ahead of the clock by what its lead allows, and is lost
# with every WAL segment archived.
mint_into($primary, $ahead);
cmp_ok(stats($primary)->{lead_ms}, no_preload() ? '<=' : '>',
	no_preload() ? 1000 : 10000,
	no_preload() ? 'the lead stays within 1 s' : 'the primary mints more than 10 s ahead of the clock');
my $walfile = $primary->safe_psql('postgres', 'SELECT pg_walfile_name(pg_switch_wal())');
$primary->poll_query_until('postgres',
	"SELECT last_archived_wal >= '$walfile' FROM pg_stat_archiver")
  or die 'the WAL was not archived';
$primary->wait_for_catchup($standby);
my $primary_ids = minted_file($primary);
$primary->stop('immediate');

# ---------------------------------------------------------------------------
# The backup made before the raise, restored past it
# ---------------------------------------------------------------------------

my $restored = start_snowflake_node('restored',
	from_backup => [ $primary, 'before_raise', has_restoring => 1, standby => 0 ]);
$restored->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the restore did not end';
mint_into($restored, 16000, '30s');
is(keys_in_common($restored, $primary_ids), '0',
	'the backup made before the raise, restored past it: no key shared with the primary');
ok($restored->log_contains($replayed), 'it replayed the raise from the archive')
  unless no_preload();
$restored->stop;

# ---------------------------------------------------------------------------
# The standby, promoted
# ---------------------------------------------------------------------------

promote_and_wait($standby);
mint_into($standby, 16000, '30s');
is(keys_in_common($standby, $primary_ids), '0',
	'the promoted standby shares no key with the primary whose lead was raised after it was made');
$standby->stop;

done_testing();
