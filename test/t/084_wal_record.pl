# Copyright: see LICENSE
#
# 084_wal_record.pl
#	snowflake's WAL record (src/walrecord.h: its format and the rule for
#	changing it), on a real primary and standby:
#  - a server whose history never raised snowflake.max_drift_ms above the
#    minimum every start assumes (1000 ms) writes no record at all,
#    through starts, restarts and a crash: its WAL needs no library;
#  - a raise above it writes one record, the lowering back another, and a
#    restart at the lower value none;
#  - a standby replays a record that carries more fields than 1.3 knows
#    (as a later release may add) and skips a kind it does not know (as a
#    later release may add one older readers may skip);
#  - a record that needs a later release stops the standby's replay with
#    snowflake's own message, naming the release to install.
# The records of a later release are written by test/walwriter.c, a
# test-only function compiled here.  Needs the preload (nothing is
# WAL-logged without it).

use strict;
use warnings;

use File::Basename;
use File::Spec;
use Time::HiRes qw(usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# The test-only writer of records, compiled against this server's headers.
my $src = File::Spec->rel2abs(
	File::Spec->catfile(dirname(__FILE__), '..', 'walwriter.c'));
my $lib = PostgreSQL::Test::Utils::tempdir() . '/walwriter.so';
my $includes = `pg_config --includedir-server`;
chomp $includes;
my ($out, $err);
IPC::Run::run([ 'cc', '-shared', '-fPIC', '-O2', "-I$includes", '-o', $lib, $src ],
	'>', \$out, '2>', \$err)
  or die "could not compile $src: $err";

# 16 IDs a millisecond: a batch of 32,000 leads the clock by 2 s.
my $primary = start_snowflake_node('primary',
	node_id => 1,
	layout => '41/10/4',
	init => { allows_streaming => 1 });
$primary->safe_psql('postgres', q{
CREATE EXTENSION snowflake;
CREATE EXTENSION pg_walinspect;
});
$primary->safe_psql('postgres',
	"CREATE FUNCTION sf_test_wal(integer, bytea) RETURNS pg_lsn AS '$lib', 'sf_test_wal' LANGUAGE C STRICT");
my $start = $primary->safe_psql('postgres', 'SELECT pg_current_wal_lsn()');

# The records of snowflake's resource manager written since the start.
sub records_sql
{
	return qq{
SELECT coalesce(string_agg(record_type, ',' ORDER BY start_lsn), '')
  FROM pg_get_wal_records_info('$start', pg_current_wal_flush_lsn())
 WHERE resource_manager = 'snowflake'};
}

sub records
{
	return $primary->safe_psql('postgres', records_sql());
}

# --- No record while the lead stays at the minimum ---
$primary->safe_psql('postgres', 'SELECT snowflake_nextval() FROM generate_series(1, 1000)');
$primary->restart;
$primary->safe_psql('postgres', 'SELECT snowflake_nextval()');
$primary->stop('immediate');
$primary->start;
$primary->safe_psql('postgres', 'SELECT snowflake_nextval()');
is(records(), '',
	'a start, a restart and a crash at the default lead write no snowflake WAL record');

# --- A raise writes one, the lowering another, a restart at 1 s none ---
set_drift($primary, '3s', '3s');
$primary->safe_psql('postgres',
	'SELECT count(*) FROM snowflake_nextval_batch(32000)');
is(records(), 'LEADS', 'a raise to 3 s that IDs use writes one record');
# The background writer records a lowering at the reload, without a call.
set_drift($primary, undef, '1s');
ok($primary->poll_query_until('postgres', records_sql(), 'LEADS,LEADS'),
	'lowering it back writes one more, at the reload');
# The batch's IDs lead the clock by 2 s: the call waits for it.
$primary->safe_psql('postgres', "SET snowflake.max_wait_ms = '10s'; SELECT snowflake_nextval()");
is(records(), 'LEADS,LEADS', 'and a call under the lower lead none');
$primary->restart;
$primary->safe_psql('postgres', 'SELECT snowflake_nextval()');
is(records(), 'LEADS,LEADS', 'a restart at 1 s writes none');

# --- A standby replays what a later release may write ---
$primary->backup('b');
my $standby = start_snowflake_node('standby',
	from_backup => [ $primary, 'b', has_streaming => 1 ]);

# Header: format, needs (release * 100); LEADS (info 0x10): lead, horizon.
sub record_bytes
{
	my ($format, $needs, @fields) = @_;
	return '\\x' . unpack('H*', pack('v v', $format, $needs) . join('', @fields));
}

my $longer = record_bytes(2, 103, pack('q< q<', 7000, 0), pack('q<', 42));
my $lsn = $primary->safe_psql('postgres', "SELECT sf_test_wal(16, '$longer')");
$primary->wait_for_catchup($standby, 'replay', $lsn);
is(read_state($standby)->{max_lead_ms}, 7000,
	'a record with fields 1.3 does not know is replayed: the standby records its lead');
ok($standby->log_contains(
		qr/LOG:  snowflake IDs of this server's history may lead the clock by 7000 ms, as replayed from WAL/),
	'and says so');

my $unknown = record_bytes(2, 103, pack('q< q<', 1, 2));
$lsn = $primary->safe_psql('postgres', "SELECT sf_test_wal(112, '$unknown')");
$primary->wait_for_catchup($standby, 'replay', $lsn);
pass('a kind 1.3 does not know, which 1.3 may replay, is skipped');

# --- A record that needs a later release stops the standby ---
my $later = record_bytes(5, 999, pack('q< q<', 9000, 0));
my $offset = -s $standby->logfile;
$lsn = $primary->safe_psql('postgres', "SELECT sf_test_wal(16, '$later')");
ok( log_appears($standby,
		qr/FATAL:  snowflake WAL record at [0-9A-F]+\/[0-9A-F]+ needs snowflake 9\.99 or later to be replayed\n[^\n]*DETAIL:  This server runs snowflake 1\.3, which replays records of format 1; the record has format 5\.\n[^\n]*HINT:  Install snowflake 9\.99 or later on this server and start it again\. Standbys, restore hosts and DR sites are upgraded before their primary\.\n/,
		$offset),
	'a record that needs a later release stops replay with snowflake\'s message');
my $pidfile = $standby->data_dir . '/postmaster.pid';
my $deadline = time + $PostgreSQL::Test::Utils::timeout_default;
usleep(100_000) while -e $pidfile && time < $deadline;
ok(!-e $pidfile, 'and the standby stops');
$standby->_update_pid(0);
is(read_state($standby)->{max_lead_ms}, 7000, 'having recorded nothing of it');

# The primary's own crash recovery would meet the record too: a checkpoint
# puts it behind the redo point before the primary stops.
$primary->safe_psql('postgres', 'CHECKPOINT');
$primary->stop;

done_testing();
