# Copyright: see LICENSE
#
# 085_upgrade_order.pl
#	A rolling upgrade from 1.2 to this version, in the order the README's
#	"Upgrading" gives for every release that changes what is written to
#	WAL: standbys (restore hosts, DR sites) first, then the primary.
#
# snowflake 1.2 writes no WAL record; this version writes one of its own
# resource manager (id 183) whenever the history's lead must reach the
# standbys (a snowflake.max_drift_ms raised above the built-in minimum, and
# its lowerings), and a server that replays such a record needs a library
# that registers that resource manager.  Each server runs from an
# installation of its own (a host), where the upgrade installs the new
# files; test/setup.sh builds 1.2 from its commit (SNOWFLAKE_RELEASE_DIR).
#
#  - In order: a 1.2 primary and its streaming standby, each host's files
#    replaced and each server restarted once, the standby first; then the
#    primary raises snowflake.max_drift_ms to 2 s and mints, which writes a
#    record (pg_walinspect shows it), and the standby replays it: no
#    unplanned stop (each postmaster is the one of its planned restart, and
#    each log shows exactly two starts), ALTER EXTENSION ... UPDATE on the
#    primary reaches the standby, and the standby has every row.
#  - The other order: the primary upgraded first writes the record, and the
#    1.2 standby, which preloads snowflake, stops: "resource manager with ID
#    183 not registered", with PostgreSQL's hint to preload a library that
#    it already preloads (no "registered custom resource manager" line at
#    its start: the older library), and "shutting down due to startup
#    process failure".  The way back: the new files installed on the
#    standby's host and the standby started again; it replays the record
#    and catches up.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes;

my $old = '1.2';
my $new = do {
	my $probe = PostgreSQL::Test::Cluster->new('version_probe');
	my $share = $probe->config_data('--sharedir');
	(slurp_file("$share/extension/snowflake.control") =~ /^default_version\s*=\s*'([^']+)'/m)[0];
};

# The hosts: one installation each, with snowflake 1.2's files.
my $primary_host = installation_copy();
my $standby_host = installation_copy();

my $registered = qr/LOG:  registered custom resource manager "snowflake" with ID 183\n/;

# Which version of the library $node loaded at its start (the log from
# $offset on): this version registers its resource manager, and says so.
sub loaded
{
	my ($node, $offset) = @_;
	return $node->log_contains($registered, $offset) ? 'registers 183' : 'no resource manager';
}

# How many times $node's log says that it started (as a primary, or as a
# standby ready for read-only connections).
sub starts
{
	my ($node) = @_;
	my @starts = slurp_file($node->logfile) =~
	  /database system is ready to accept (?:read-only )?connections/g;
	return scalar @starts;
}

# The PID of $node's running postmaster, from postmaster.pid.
sub postmaster_pid
{
	my ($node) = @_;
	my ($pid) = slurp_file($node->data_dir . '/postmaster.pid') =~ /^(\d+)/;
	return $pid;
}

# A 1.2 primary (node id 1) and its streaming standby, each on its host,
# with a table keyed by snowflake_nextval() in database postgres.
sub pair
{
	my ($name) = @_;
	install_snowflake($_, $old) foreach $primary_host, $standby_host;
	my $primary = start_snowflake_node("${name}_primary",
		install_path => $primary_host,
		node_id => 1,
		preload => 1,
		init => { allows_streaming => 1 });
	$primary->safe_psql(
		'postgres', q{
CREATE EXTENSION snowflake;
CREATE EXTENSION pg_walinspect;
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), item text);
INSERT INTO orders (item) SELECT 'on 1.2' FROM generate_series(1, 100);});
	$primary->backup("${name}_backup");
	my $standby = start_snowflake_node("${name}_standby",
		install_path => $standby_host,
		from_backup => [ $primary, "${name}_backup", has_streaming => 1 ]);
	$primary->wait_for_catchup($standby);
	is( $primary->safe_psql('postgres',
			"SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"),
		$old, "$name: the primary runs snowflake $old");
	is(join(' ', map { loaded($_, 0) } $primary, $standby),
		'no resource manager no resource manager',
		"$name: neither library registers a resource manager (1.2)");
	return ($primary, $standby);
}

# On $primary: raise the lead above the built-in minimum of 1000 ms and
# mint until a record of snowflake's resource manager is in the WAL (the
# first reservation write after the raise writes it); return its LSN.
sub write_record
{
	my ($primary) = @_;
	my $from = $primary->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');
	set_drift($primary, '2000', '2s');
	my $record_sql = qq{
INSERT INTO orders (item) SELECT 'lead raised' FROM generate_series(1, 100);
SELECT max(start_lsn) FROM pg_get_wal_records_info('$from', pg_current_wal_flush_lsn())
 WHERE resource_manager = 'snowflake'};
	my $lsn;
	foreach (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		$lsn = $primary->safe_psql('postgres', $record_sql);
		last if $lsn ne '';
		Time::HiRes::usleep(100_000);
	}
	isnt($lsn, '', "the primary wrote a record of snowflake's resource manager ($lsn)");
	return $lsn;
}

# ---------------------------------------------------------------------------
# Standbys first, then the primary
# ---------------------------------------------------------------------------

my ($primary, $standby) = pair('in_order');

# The standby's host gets the new files; the standby restarts once.
install_snowflake($standby_host, 'current');
my $offset = -s $standby->logfile;
$standby->restart;
is(loaded($standby, $offset), 'registers 183', "the standby restarted on snowflake $new");
my $standby_pid = postmaster_pid($standby);

# Then the primary's host, and the primary restarts once.
install_snowflake($primary_host, 'current');
$offset = -s $primary->logfile;
$primary->restart;
is(loaded($primary, $offset), 'registers 183', "the primary restarted on snowflake $new");
my $primary_pid = postmaster_pid($primary);
$primary->safe_psql('postgres', 'ALTER EXTENSION snowflake UPDATE');

# A record, replayed by the standby.
my $record = write_record($primary);
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('flush'));
is($standby->safe_psql('postgres', "SELECT pg_last_wal_replay_lsn() > '$record'"),
	't', 'the standby replayed past the record');
is( $standby->safe_psql('postgres',
		"SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"),
	$new, 'ALTER EXTENSION snowflake UPDATE on the primary reached the standby');
my $rows_sql = "SELECT count(*), count(DISTINCT id), count(*) FILTER (WHERE item = 'lead raised') > 0 FROM orders";
is($standby->safe_psql('postgres', $rows_sql), $primary->safe_psql('postgres', $rows_sql),
	'the standby has every row, the ones minted after the raise too');

# No unplanned stop: each postmaster is the one its restart started, and
# each log shows two starts (the first, and the upgrade's restart).
is(postmaster_pid($standby), $standby_pid, 'the standby never stopped after its restart');
is(postmaster_pid($primary), $primary_pid, 'nor the primary');
is(starts($standby) . ' ' . starts($primary), '2 2', 'each server started twice: once, and at its upgrade');
ok( !$standby->log_contains(
		qr/not registered|PANIC|startup process \(PID \d+\) exited|due to startup process failure/),
	'the standby\'s log has no PANIC, and its replay never stopped');
$_->stop foreach $standby, $primary;

# ---------------------------------------------------------------------------
# The primary first: the 1.2 standby stops; the way back
# ---------------------------------------------------------------------------

($primary, $standby) = pair('primary_first');
$offset = -s $standby->logfile;
install_snowflake($primary_host, 'current');
$primary->restart;
$primary->safe_psql('postgres', 'ALTER EXTENSION snowflake UPDATE');
$record = write_record($primary);

ok( $standby->wait_for_log(
		qr/FATAL:  resource manager with ID 183 not registered\n[^\n]*HINT:  Include the extension module that implements this resource manager in "?shared_preload_libraries"?\./,
		$offset),
	'the 1.2 standby stops replay: resource manager with ID 183 not registered, with the hint to preload it');
ok($standby->wait_for_log(qr/LOG:  shutting down due to startup process failure/, $offset),
	'and the standby shuts down');
like(slurp_file($standby->data_dir . '/postgresql.conf'),
	qr/^shared_preload_libraries = 'snowflake'$/m, 'although it preloads snowflake (the older library)');
foreach (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
{
	last unless -e $standby->data_dir . '/postmaster.pid';
	Time::HiRes::usleep(100_000);
}
ok(!-e $standby->data_dir . '/postmaster.pid', 'its postmaster is gone');
$standby->_update_pid(0);

# The way back: the standby's host gets the new files, and the standby
# starts again, replays the record and catches up.
install_snowflake($standby_host, 'current');
$offset = -s $standby->logfile;
$standby->start;
is(loaded($standby, $offset), 'registers 183', "the standby starts on snowflake $new");
$primary->wait_for_catchup($standby, 'replay', $primary->lsn('flush'));
is($standby->safe_psql('postgres', "SELECT pg_last_wal_replay_lsn() > '$record'"),
	't', 'and replays past the record');
is($standby->safe_psql('postgres', $rows_sql), $primary->safe_psql('postgres', $rows_sql),
	'and has every row');
$_->stop foreach $standby, $primary;

done_testing();
