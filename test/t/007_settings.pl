# Copyright: see LICENSE
#
# 007_settings.pl
#	The snowflake settings' contexts, as an operator and a user see them.
#
# What decides uniqueness (node_id, epoch, widths) is postmaster-context:
# no session can change it, a reload does not, a restart does.  The lead
# bound snowflake.max_drift_ms is an operator knob changed by a reload;
# snowflake.max_wait_ms is a per-session choice of how long a call may
# sleep.  The prefix "snowflake." is reserved.  A value PostgreSQL cannot accept for one of the reload settings
# does not stop the server: it logs a WARNING and uses the default (a
# reload: a LOG line, the value in force stays).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use FindBin;

my $node = start_snowflake_node(
	'settings',
	preload => 1,
	node_id => 11,
	settings => {
		timezone => 'UTC',
		'snowflake.max_drift_ms' => 200
	});
$node->safe_psql('postgres',
	'CREATE EXTENSION snowflake; CREATE ROLE app LOGIN');
my $app = $node->connstr('postgres') . ' user=app';

# ---------------------------------------------------------------------------
# Contexts and units, as pg_settings reports them.
# ---------------------------------------------------------------------------
is( $node->safe_psql(
		'postgres', q{
		SELECT string_agg(name || ':' || context || ':' || coalesce(unit, ''), ' ' ORDER BY name)
		FROM pg_settings WHERE name LIKE 'snowflake.%'}),
	join(' ',
		'snowflake.background_writer:sighup:',
		'snowflake.confirm_restore:postmaster:',
		'snowflake.epoch:postmaster:',
		'snowflake.max_drift_ms:sighup:ms',
		'snowflake.max_wait_ms:user:ms',
		'snowflake.node_bits:postmaster:',
		'snowflake.node_id:postmaster:',
		'snowflake.node_id_base:postmaster:',
		'snowflake.node_id_count:postmaster:',
		'snowflake.node_id_from:postmaster:',
		'snowflake.node_id_span:postmaster:',
		'snowflake.public_keys_file:superuser:',
		'snowflake.sequence_bits:postmaster:',
		'snowflake.spread_sequence:sighup:',
		'snowflake.timestamp_bits:postmaster:',
		'snowflake.writer_idle_timeout:sighup:ms'),
	'pg_settings: postmaster for the layout, the node id settings and confirm_restore, sighup for max_drift_ms, spread_sequence and the background writer, superuser for the key file of public IDs, user for max_wait_ms'
);

# ---------------------------------------------------------------------------
# Nothing deciding uniqueness can be changed in a session.
# ---------------------------------------------------------------------------
foreach my $setting (
	[ 'snowflake.node_id', '12' ],
	[ 'snowflake.node_id_span', '2' ],
	[ 'snowflake.epoch', "'2020-01-01'" ],
	[ 'snowflake.timestamp_bits', '40' ],
	[ 'snowflake.node_bits', '11' ],
	[ 'snowflake.sequence_bits', '11' ])
{
	my ($name, $value) = @$setting;
	is( error_report($node, "SET $name = $value"),
		qq{55P02: parameter "$name" cannot be changed without restarting the server},
		"SET $name fails with 55P02");
}
is( error_report($node, "ALTER ROLE app SET snowflake.node_id = 12"),
	'55P02: parameter "snowflake.node_id" cannot be changed without restarting the server',
	'ALTER ROLE ... SET snowflake.node_id fails with 55P02');
is( error_report($node, 'SET snowflake.max_drift_ms = 5000'),
	'55P02: parameter "snowflake.max_drift_ms" cannot be changed now',
	'SET snowflake.max_drift_ms fails with 55P02 (it is a server-wide setting)');
is( error_report($node, 'SET snowflake.no_such_setting = 1'),
	qq{42602: invalid configuration parameter name "snowflake.no_such_setting"\n}
	  . 'DETAIL:  "snowflake" is a reserved prefix.',
	'the prefix "snowflake." is reserved');
is($node->safe_psql('postgres', 'SHOW snowflake.node_id'),
	'11', 'node_id unchanged');

# ---------------------------------------------------------------------------
# An ordinary user: generates, reads stats, sets max_wait_ms, cannot reset.
# ---------------------------------------------------------------------------
is( $node->safe_psql(
		'postgres', q{
		SET snowflake.max_wait_ms = 50;
		SHOW snowflake.max_wait_ms;
		SELECT snowflake_node_id(snowflake_nextval());
		SELECT status FROM snowflake_stats},
		connstr => $app),
	"50ms\n11\nready",
	'an ordinary user sets max_wait_ms for the session, generates and reads stats');
is(error_report($node, 'SELECT snowflake_stats_reset()', connstr => $app),
	'42501: permission denied for function snowflake_stats_reset',
	'an ordinary user cannot reset the counters');
is(error_report($node, 'SELECT snowflake_adopt_layout()', connstr => $app),
	'42501: permission denied for function snowflake_adopt_layout',
	'an ordinary user cannot adopt a layout');

# ---------------------------------------------------------------------------
# max_wait_ms bounds the sleep of one call, per session.
#
# Batches of 819201 IDs each span exactly max_drift_ms (200 ms) of
# timestamps.  Reserved back to back in one statement (LIMIT 1: reserved at
# the first row, the rest never produced), the k-th one (from 0) ends
# 200 * (k + 1) ms after the clock the first one saw, so it can only be
# issued once the clock has moved on by 200 * k ms.  Six of them in a row
# can all be issued without a sleep only if the statement is held up for a
# whole second between the first and the last, which no scheduler does to
# a few microseconds of work: at least one call must sleep (or, with
# max_wait_ms = 0, fail).  How many sleep is up to the scheduler, so the
# counts are checked against each other, not against a fixed number.
# Before each attempt, wait for any earlier lead to vanish so the first
# batch needs no sleep.
# ---------------------------------------------------------------------------
my $per_batch = 819201;
my $batches = 6;
my $six_batches = 'SELECT '
  . join(', ',
	map { "(SELECT snowflake_nextval_batch($per_batch) LIMIT 1) AS b$_" }
	  1 .. $batches);

sub no_lead
{
	$node->poll_query_until('postgres',
		'SELECT coalesce(lead_ms, 0) = 0 FROM snowflake_stats')
	  or die 'the lead over the clock never went back to 0';
	$node->safe_psql('postgres', 'SELECT snowflake_stats_reset()');
	return;
}

# No sleeping allowed: the first batch that would have to sleep fails, and
# issues nothing; the statement stops there.
no_lead();
like(
	error_report($node, "SET snowflake.max_wait_ms = 0;\n$six_batches"),
	qr/\A58000:\ snowflake\ IDs\ are\ \d+\ ms\ ahead\ of\ the\ system\ clock\ after\ a\ burst\n
	   DETAIL:\ \ More\ IDs\ were\ asked\ for\ than\ the\ sequence\ field\ holds\ per\ millisecond,\ and\ the\ time\ borrowed\ from\ the\ future\ exceeds\ what\ IDs\ may\ lead\ the\ clock\ by,\ 200\ ms\ \(snowflake\.max_drift_ms\),\ plus\ what\ a\ call\ may\ wait,\ 0\ ms\ \(snowflake\.max_wait_ms\);\ no\ ID\ was\ issued\.\n
	   HINT:\ \ Ask\ for\ fewer\ IDs\ at\ once,\ or\ raise\ "snowflake\.max_wait_ms"\ or\ "snowflake\.max_drift_ms"\.\z/x,
	'max_wait_ms = 0: a burst that would have to sleep fails with 58000, saying it is a burst; the detail names both settings');
my $st = stats($node);
is("$st->{refused}|$st->{waits}", '1|0', 'one call refused, none slept');
is($st->{ids_issued} % $per_batch, 0,
	"only whole batches were issued ($st->{ids_issued} IDs): the refused one issued nothing");
cmp_ok($st->{ids_issued} / $per_batch, '>=', 1, 'the batches before it were issued');
cmp_ok($st->{ids_issued} / $per_batch, '<', $batches,
	'the statement stopped at the refused batch');

# The default (1000 ms) allows the sleeps.
no_lead();
my @ids = split /\|/, $node->safe_psql('postgres', $six_batches);
is(scalar(grep { $ids[$_] > $ids[ $_ - 1 ] } 1 .. $#ids),
	$batches - 1, 'max_wait_ms = 1000: all six batches are issued, in order');
$st = stats($node);
is("$st->{ids_issued}|$st->{refused}",
	$batches * $per_batch . '|0', 'every batch issued, none refused');
cmp_ok($st->{waits}, '>=', 1, "calls slept ($st->{waits})");
cmp_ok($st->{waits}, '<', $batches, 'the first batch did not');
ok(defined $st->{lead_ms} && $st->{lead_ms} <= 200,
	'the lead stays within max_drift_ms');

{
	# A backend's latch is set by many things (a reload's SIGHUP, a
	# timeout's SIGALRM, sinval catch-up, notifications...), and a wait must
	# survive that.  Here the backend sets its own latch deterministically,
	# by signalling itself with pg_log_backend_memory_contexts() in the
	# target list before the two batches (evaluated left to right: the
	# batches are initplans, run when their value is first needed).
	my $woken_batches = $six_batches;
	$woken_batches =~ s/^SELECT /SELECT pg_log_backend_memory_contexts(pg_backend_pid()) AS signalled, /;

	# Each batch needs at most ~201 ms of sleep, which 300 ms allows.
	no_lead();
	my ($sqlstate, $err) =
	  sql_error($node, "SET snowflake.max_wait_ms = 300;\n$woken_batches");
	is($sqlstate, 'none',
		'max_wait_ms = 300 suffices for a 200 ms wait despite a latch wake-up')
	  or diag($err);
	cmp_ok(stats($node)->{waits}, '>=', 1, 'and calls did sleep');

	# wait_ms cannot exceed the time the statement took.
	no_lead();
	my $elapsed = $node->safe_psql(
		'postgres', qq{
		SELECT round(extract(epoch FROM clock_timestamp() - statement_timestamp()) * 1000)
		FROM ($woken_batches OFFSET 0) x});
	my $wait_ms = stats($node)->{wait_ms};
	cmp_ok($wait_ms, '<=', $elapsed + 1,
		"wait_ms ($wait_ms) is at most the statement's duration ($elapsed ms)");
}

# ---------------------------------------------------------------------------
# max_drift_ms is changed by a reload; node_id is not.
# ---------------------------------------------------------------------------
$node->append_conf('postgresql.conf',
	"snowflake.max_drift_ms = 300\nsnowflake.node_id = 12");
my $log_offset = -s $node->logfile;
$node->reload;
ok($node->poll_query_until('postgres', 'SHOW snowflake.max_drift_ms', '300ms'),
	'a reload changes max_drift_ms');
is( $node->safe_psql(
		'postgres',
		"SELECT current_setting('snowflake.node_id'), pending_restart FROM pg_settings WHERE name = 'snowflake.node_id'"
	),
	'11|t',
	'a reload does not change node_id; pg_settings shows the restart pending');
ok( log_appears(
		$node,
		qr/parameter "snowflake\.node_id" cannot be changed without restarting the server/,
		$log_offset),
	'the server log says node_id needs a restart');
is($node->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	'11', 'IDs still carry node id 11');

# A restart applies the new node id, logged against the state file.
$log_offset = -s $node->logfile;
$node->restart;
is($node->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval()), node_id FROM snowflake_stats'),
	'12|12', 'after a restart IDs carry node id 12');
ok($node->log_contains(qr/parameter "snowflake\.node_id" changed from 11 to 12/, $log_offset),
	'the node id change is logged');

# ---------------------------------------------------------------------------
# A value PostgreSQL cannot accept for a reload (or session) setting, in
# postgresql.conf: the server starts, logs a WARNING naming the setting and
# uses the default, not the value of an earlier line.  (From PostgreSQL 16
# the range in the message carries the unit too: "(0 ms .. 3600000 ms)".)  A reload with such a
# value logs it (LOG) and keeps the value in force.
# ---------------------------------------------------------------------------
my %bad = (
	'snowflake.max_drift_ms' => [ '-5', '1s',
		qr/-5 ms is outside the valid range for parameter "snowflake\.max_drift_ms" \(0(?: ms)? \.\. 3600000(?: ms)?\)/ ],
	'snowflake.max_wait_ms' => [ '-1', '1s',
		qr/-1 ms is outside the valid range for parameter "snowflake\.max_wait_ms" \(0(?: ms)? \.\. 3600000(?: ms)?\)/ ],
	'snowflake.background_writer' => [ 'maybe', 'on',
		qr/parameter "snowflake\.background_writer" requires a Boolean value/ ],
	'snowflake.spread_sequence' => [ '7', 'off',
		qr/parameter "snowflake\.spread_sequence" requires a Boolean value/ ],
	'snowflake.writer_idle_timeout' => [ '50ms', '1min',
		qr/50 ms is outside the valid range for parameter "snowflake\.writer_idle_timeout" \(100(?: ms)? \.\. 86400000(?: ms)?\)/ ],);
$node->append_conf('postgresql.conf',
	join("\n", map { "$_ = $bad{$_}[0]" } sort keys %bad));
$log_offset = -s $node->logfile;
$node->restart;
foreach my $name (sort keys %bad)
{
	my ($value, $default, $message) = @{ $bad{$name} };
	ok($node->log_contains(qr/WARNING:\s+$message/, $log_offset),
		"$name = $value: the server starts and logs a WARNING");
	is($node->safe_psql('postgres', "SHOW $name"),
		$default, "$name = $value: the default is in force");
}
is($node->safe_psql('postgres', "SELECT source FROM pg_settings WHERE name = 'snowflake.max_drift_ms'"),
	'default', 'not the value of an earlier line (max_drift_ms = 300)');
is(writers_running($node), '1', 'background_writer = maybe: the writer runs');
is($node->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	'12', 'and IDs are issued');

# A reload: a good value applies, a bad one after it is logged and ignored.
$node->append_conf('postgresql.conf', 'snowflake.max_drift_ms = 500');
$node->reload;
ok($node->poll_query_until('postgres', 'SHOW snowflake.max_drift_ms', '500ms'),
	'a reload applies max_drift_ms = 500');
$node->append_conf('postgresql.conf', 'snowflake.max_drift_ms = -7');
$log_offset = -s $node->logfile;
$node->reload;
ok( log_appears(
		$node,
		qr/LOG:\s+configuration file ".*" contains errors; unaffected changes were applied/,
		$log_offset),
	'a reload with max_drift_ms = -7 says the file contains errors');
ok( $node->log_contains(
		qr/LOG:\s+-7 ms is outside the valid range for parameter "snowflake\.max_drift_ms"/,
		$log_offset),
	'and names the setting');
is($node->safe_psql('postgres', 'SHOW snowflake.max_drift_ms'),
	'500ms', 'the value in force (500 ms) stays');

# ---------------------------------------------------------------------------
# A misspelt name in postgresql.conf: what the server logs at its start and
# at a reload, as docs/troubleshooting.md quotes it (the blocks marked
# <!-- recipe: log/misspelt-*.log -->, read from the page; the page's path
# of postgresql.conf is replaced by this server's).
# ---------------------------------------------------------------------------
my %page = doc_recipes("$FindBin::RealBin/../../docs/troubleshooting.md");
my $conf_path = $node->data_dir . '/postgresql.conf';

# The lines of $page_lines found in $node's log from $offset on, each whole
# (after the log line prefix), in order; the first that is not, or ''.
sub log_has_lines
{
	my ($page_lines, $offset) = @_;
	my @log = map { s/^.*?\b((?:LOG|WARNING|DETAIL|HINT|FATAL):  )/$1/r }
	  split /\n/, substr(slurp_file($node->logfile), $offset);
	my $at = 0;
	foreach my $want (split /\n/, $page_lines)
	{
		$want =~ s{"/etc/postgresql/15/main/postgresql\.conf"}{"$conf_path"};
		$at++ while $at < @log && $log[$at] ne $want;
		return $want if $at >= @log;
		$at++;
	}
	return '';
}
ok(defined $page{'log/misspelt-start.log'} && defined $page{'log/misspelt-reload.log'},
	'docs/troubleshooting.md quotes what a misspelt name logs at a start and at a reload');
$node->append_conf('postgresql.conf', 'snowflake.node_idd = 3');
$log_offset = -s $node->logfile;
$node->restart;
is(log_has_lines($page{'log/misspelt-start.log'}, $log_offset),
	'', 'a misspelt name at the start: the log says what the page says');
$log_offset = -s $node->logfile;
$node->reload;
ok( log_appears(
		$node, qr/LOG:\s+configuration file ".*" contains errors; unaffected changes were applied/,
		$log_offset),
	'a reload with the misspelt name ends');
is(log_has_lines($page{'log/misspelt-reload.log'}, $log_offset),
	'', 'a misspelt name at a reload: the log says what the page says');
is($node->safe_psql('postgres', 'SHOW snowflake.node_id'), '12', 'and the server goes on without the line');

$node->stop;
done_testing();
