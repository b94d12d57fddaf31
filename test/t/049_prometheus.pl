# Copyright: see LICENSE
#
# 049_prometheus.pl
#	The monitoring files of monitoring/ against the real programs: Debian's
#	postgres_exporter, started on loopback with monitoring/postgres_exporter.yml,
#	exports every metric that file promises, with its type, a help text and
#	the value snowflake_stats (and the claims table) holds, after known
#	events: a fresh server, IDs minted, a clock step absorbed, a call
#	refused, node id claims (another server's, then this one's), a reset of
#	the counters, and on a streaming standby.  Then promtool checks the
#	rules file and runs its unit tests (monitoring/snowflake.rules.test.yml).
#
# In the no-preload pass (test/check.sh, 17 and later) the servers run
# without shared_preload_libraries and the same metrics hold; the lead is
# capped at 1 s there, so the clock step absorbed is 0.5 s under a
# max_drift_ms of 800 ms (5 s under 10 s with the preload).
#
# The exporter runs as a role with pg_monitor and SELECT on the claims
# table only, as docs/operations.md#monitoring says, on 127.0.0.1 and a free
# port of its own (never the packaged service's 9187), and is stopped by its
# PID.  A scrape is compared with snowflake_stats read just before and just
# after it: the counters must not have moved in between (otherwise the
# comparison is made again; the background writer may still be writing
# after a burst), and the lead, which only shrinks while no ID is issued,
# must lie between the two readings.
#
# The server's clock is stepped with libfaketime (see 012_clock_steps.pl).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use File::Basename ();
use File::Spec;
use HTTP::Tiny;
use IPC::Run;
use JSON::PP qw(decode_json);
use POSIX ();
use Time::HiRes;

my $root = File::Spec->rel2abs(
	File::Spec->catdir(File::Basename::dirname(__FILE__), '..', '..'));
my $queries = "$root/monitoring/postgres_exporter.yml";
my $rules = "$root/monitoring/snowflake.rules.yml";
my $rules_test = "$root/monitoring/snowflake.rules.test.yml";

# The programs, from Debian's packages (test/setup.sh installs them); a
# missing one is a skip, "command NAME not found", which test/check.sh
# accepts only where test/setup.sh installed no package for it.
skip_without_command($_) foreach ('prometheus-postgres-exporter', 'promtool');

my $primary = start_snowflake_node(
	'prom',
	node_id => 3,
	settings => { 'snowflake.node_id_span' => 2 },
	init => { allows_streaming => 1 },
	with => 'faketime');
$primary->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE ROLE exporter LOGIN IN ROLE pg_monitor;
GRANT SELECT ON snowflake_node_claims TO exporter;});

# --- the exporter ---

my @exporters;

# The exporter's own collectors (which ones there are depends on its
# version: 0.11 in Debian 12, 0.17 in trixie), all switched off: the test
# is about the queries file's metrics, and a collector that does not know
# a newer PostgreSQL would only add errors to the log.
sub exporter_collectors
{
	my ($ok, $out, $err) = run_in_dir('.', {}, 60,
		[ 'prometheus-postgres-exporter', '--help' ]);
	my %names = map { $_ => 1 } ($out . $err) =~ /--(?:\[no-\])?collector\.(\w+)/g;
	return sort keys %names;
}

# Start postgres_exporter for $node's database postgres; return its harness
# and the URL of its metrics, once it answers.
sub start_exporter
{
	my ($node) = @_;
	my $port = PostgreSQL::Test::Cluster::get_free_port();
	my $log = $node->basedir . '/exporter.log';
	my $dsn = sprintf('host=%s port=%d dbname=postgres user=exporter sslmode=disable',
		$node->host, $node->port);
	local $ENV{DATA_SOURCE_NAME} = $dsn;
	my $h = IPC::Run::start(
		[
			'prometheus-postgres-exporter',
			"--web.listen-address=127.0.0.1:$port",
			"--extend.query-path=$queries",
			'--disable-default-metrics', '--disable-settings-metrics',
			map { "--no-collector.$_" } exporter_collectors()
		],
		'<', \undef, '>', $log, '2>&1');
	push @exporters, $h;
	my $url = "http://127.0.0.1:$port/metrics";
	note 'postgres_exporter PID ' . $h->{KIDS}[0]{PID} . " on $url";
	# Ready when its landing page answers, which does not query the server:
	# the first scrape, checked below, is the first use of the exporter's
	# connection (without the preload, the first snowflake call there).
	my $http = HTTP::Tiny->new(timeout => 10);
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while (time() < $deadline)
	{
		my $r = $http->get("http://127.0.0.1:$port/");
		return ($h, $url) if $r->{success};
		if (waitpid($h->{KIDS}[0]{PID}, POSIX::WNOHANG()) > 0)
		{
			@exporters = grep { $_ != $h } @exporters;
			die "postgres_exporter exited:\n" . slurp_file($log);
		}
		Time::HiRes::sleep(0.1);
	}
	die "postgres_exporter did not answer on $url:\n" . slurp_file($log);
}

# Stop an exporter by its PID (TERM, then KILL after a grace period).
sub stop_exporter
{
	my ($h) = @_;
	$h->kill_kill(grace => 10);
	@exporters = grep { $_ != $h } @exporters;
	return;
}

END
{
	$_->kill_kill(grace => 5) foreach @exporters;
}

# The snowflake_* families of one scrape: {type}{name}, {help}{name}, and
# {value}{"name" or "name{label=value}"} (the exporter's "server" label,
# which each of them must carry with the server's address, left out).
sub scrape
{
	my ($url, $node) = @_;
	my $r = HTTP::Tiny->new(timeout => 30)->get($url);
	die "GET $url: $r->{status} $r->{reason}" unless $r->{success};
	my %m = (type => {}, help => {}, value => {}, text => $r->{content});
	my $server = $node->host . ':' . $node->port;
	foreach my $line (split /\n/, $r->{content})
	{
		if ($line =~ /^# (TYPE|HELP) (snowflake_\w+) (.*)$/)
		{
			$m{ lc $1 }{$2} = $3;
		}
		elsif ($line =~ /^(snowflake_\w+)(?:\{(.*)\})? (\S+)$/)
		{
			my ($name, $labels, $value) = ($1, $2 // '', $3);
			my %l = $labels =~ /(\w+)="((?:[^"\\]|\\.)*)"/g;
			die "$name has server=\"$l{server}\", not \"$server\""
			  if defined $l{server} && $l{server} ne $server;
			delete $l{server};
			my $key = $name
			  . (%l ? '{' . join(',', map { "$_=$l{$_}" } sort keys %l) . '}' : '');
			$m{value}{$key} = $value;
		}
	}
	return \%m;
}

# What each metric must be: its type, and its value from the stats row
# (SQL over snowflake_stats s; NULL: exported as NaN).  Claims and the
# drift bound come from what the test did (the arguments).
my @statuses = ('ready', 'recovery', 'node_id not set', 'layout changed',
	'state file unusable', 'settings file not written', 'node id changed',
	'node id not confirmed');

sub expected_sql
{
	my (%known) = @_;
	my %sql = (
		snowflake_node_id => 's.node_id',
		snowflake_node_id_in_use => 's.node_id_in_use',
		snowflake_node_id_span => 's.node_id_span',
		snowflake_timestamp_bits => 's.timestamp_bits',
		snowflake_node_bits => 's.node_bits',
		snowflake_sequence_bits => 's.sequence_bits',
		snowflake_epoch_timestamp_seconds => 'extract(epoch FROM s.epoch)',
		snowflake_last_id_timestamp_seconds => 'extract(epoch FROM s.last_timestamp)',
		snowflake_lead_seconds => 'coalesce(s.lead_ms, 0) / 1000.0',
		snowflake_max_drift_seconds => $known{max_drift_seconds},
		snowflake_ids_issued_total => 's.ids_issued',
		snowflake_borrowed_seconds_total => 's.borrowed_ms / 1000.0',
		snowflake_clock_regressions_total => 's.clock_regressions',
		snowflake_clock_regression_max_seconds => 's.max_clock_regression_ms / 1000.0',
		snowflake_waits_total => 's.waits',
		snowflake_wait_seconds_total => 's.wait_ms / 1000.0',
		snowflake_refusals_total => 's.refused',
		snowflake_reserved_until_timestamp_seconds => 'extract(epoch FROM s.reserved_until)',
		snowflake_reservation_wait_seconds_total => 's.caller_wait_ms / 1000.0',
		snowflake_reservation_last_write_timestamp_seconds =>
		  'extract(epoch FROM s.last_reservation_write)',
		snowflake_stats_reset_timestamp_seconds => 'extract(epoch FROM s.stats_reset)',
		'snowflake_reservation_writes_total{kind=background}' => 's.background_writes',
		'snowflake_reservation_writes_total{kind=caller}' => 's.caller_writes',
		snowflake_claims_recorded => $known{claims_recorded},
		snowflake_claims_own_node_ids => $known{claims_own},
		snowflake_claims_conflicting_node_ids => $known{claims_conflicting});
	$sql{"snowflake_status_current{status=$_}"} = "(s.status = '$_')::int"
	  foreach @statuses;
	# The servers here have snowflake.node_id set.
	$sql{'snowflake_node_id_source_info{source=snowflake.node_id}'} =
	  "(s.node_id_source = 'snowflake.node_id')::int";
	return 'SELECT json_build_object('
	  . join(', ', map { "'$_', $sql{$_}" } sort keys %sql)
	  . ') FROM snowflake_stats s';
}

my %types = map { $_ => ($_ =~ /_total$/ ? 'counter' : 'gauge') } qw(
  snowflake_node_id snowflake_node_id_in_use snowflake_node_id_span
  snowflake_timestamp_bits snowflake_node_bits snowflake_sequence_bits
  snowflake_epoch_timestamp_seconds snowflake_last_id_timestamp_seconds
  snowflake_lead_seconds snowflake_max_drift_seconds
  snowflake_ids_issued_total snowflake_borrowed_seconds_total
  snowflake_clock_regressions_total snowflake_clock_regression_max_seconds
  snowflake_waits_total snowflake_wait_seconds_total snowflake_refusals_total
  snowflake_reserved_until_timestamp_seconds
  snowflake_reservation_wait_seconds_total
  snowflake_reservation_last_write_timestamp_seconds
  snowflake_stats_reset_timestamp_seconds snowflake_reservation_writes_total
  snowflake_status_current snowflake_node_id_source_info snowflake_claims_recorded
  snowflake_claims_own_node_ids snowflake_claims_conflicting_node_ids);

# Whether an exported value (text) is the expected one (a number or undef).
sub same_value
{
	my ($got, $want) = @_;
	return $got eq 'NaN' unless defined $want;
	return 0 if $got !~ /^-?[0-9.]+(?:e[-+]?[0-9]+)?$/;
	# Floats: the exporter prints float64s, the expected values are
	# decimals; equal to a microsecond (timestamps) or exactly (counts).
	return abs($got - $want) <= 2e-6;
}

# Scrape $url and check every metric of $node against its snowflake_stats,
# named $what in the test descriptions; return the scrape.  %known: the
# values the test knows (see expected_sql).
sub check_scrape
{
	my ($what, $url, $node, %known) = @_;
	my $sql = expected_sql(%known);
	my ($before, $m, $after);
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while (1)
	{
		$before = decode_json($node->safe_psql('postgres', $sql));
		$m = scrape($url, $node);
		$after = decode_json($node->safe_psql('postgres', $sql));
		my @moved = grep {
			$_ ne 'snowflake_lead_seconds'
			  && (defined $before->{$_} ? $before->{$_} : 'NULL') ne
			  (defined $after->{$_} ? $after->{$_} : 'NULL')
		} sort keys %$before;
		last unless @moved;
		die "$what: the stats kept moving (@moved)" if time() > $deadline;
		note "$what: @moved moved during the scrape, again";
		Time::HiRes::sleep(0.2);
	}
	is_deeply([ sort keys %{ $m->{type} } ], [ sort keys %types ],
		"$what: the snowflake metrics exported are those of the queries file");
	foreach my $name (sort keys %types)
	{
		is($m->{type}{$name}, $types{$name}, "$what: $name is a $types{$name}");
		like($m->{help}{$name} // '', qr/^\S.*\.$/,
			"$what: $name has a help text");
	}
	is_deeply([ sort keys %{ $m->{value} } ], [ sort keys %$before ],
		"$what: every expected series is exported, and no other");
	foreach my $key (sort keys %$before)
	{
		my $got = $m->{value}{$key} // 'missing';
		if ($key eq 'snowflake_lead_seconds')
		{
			# The lead only shrinks between the readings.
			ok( $got ne 'missing'
				  && $got <= $before->{$key} + 1e-9
				  && $got >= $after->{$key} - 1e-9,
				"$what: $key = $got, between $before->{$key} and $after->{$key}");
			next;
		}
		ok(same_value($got, $before->{$key}),
			"$what: $key = $got, as snowflake_stats says ("
			  . ($before->{$key} // 'NULL') . ')');
	}
	return $m;
}


my %no_claims = (
	max_drift_seconds => 1,
	claims_recorded => 0,
	claims_own => 0,
	claims_conflicting => 0);

my ($exporter, $url) = start_exporter($primary);

# --- a fresh server: nothing issued ---

my $m = check_scrape('fresh server', $url, $primary, %no_claims);
is($m->{value}{'snowflake_status_current{status=ready}'}, 1, 'fresh server: status ready');
is($m->{value}{snowflake_ids_issued_total}, 0, 'fresh server: no IDs issued');
is($m->{value}{snowflake_node_id}, 3, 'node id 3');
is($m->{value}{snowflake_node_id_in_use}, 3, 'node id in use 3 (timeline 1)');
is($m->{value}{snowflake_node_id_span}, 2, 'span 2');
is( join('/',
		map { $m->{value}{"snowflake_${_}_bits"} } qw(timestamp node sequence)),
	'41/10/12',
	'layout 41/10/12');
cmp_ok($m->{value}{snowflake_epoch_timestamp_seconds}, '==', 1704067200,
	'epoch 2024-01-01 00:00:00+00 as a Unix timestamp');

# --- IDs minted ---

# 1000 single IDs and a batch of 5000 (which borrows at least a millisecond).
my ($last) = reverse split /\n/,
  $primary->safe_psql('postgres',
	'SELECT count(snowflake_nextval()) FROM generate_series(1, 1000); '
	  . 'SELECT max(b) FROM snowflake_nextval_batch(5000) b');
# The first ID of a new data directory goes max_drift_ms past the clock
# (025_lineage.pl): let the lead pass.
$primary->poll_query_until('postgres', 'SELECT lead_ms = 0 FROM snowflake_stats')
  or die 'the lead never went back to 0';
$m = check_scrape('IDs minted', $url, $primary, %no_claims);
is($m->{value}{snowflake_ids_issued_total}, 6000, 'IDs minted: 6000 issued');
cmp_ok($m->{value}{snowflake_borrowed_seconds_total}, '>=', 0.001,
	'IDs minted: the batch borrowed time');
cmp_ok($m->{value}{snowflake_reservation_last_write_timestamp_seconds}, '>', 0,
	'IDs minted: a reservation write is stamped');
is( $primary->safe_psql(
		'postgres',
		"SELECT extract(epoch FROM snowflake_timestamp($last)) = "
		  . $m->{value}{snowflake_last_id_timestamp_seconds}),
	't',
	'IDs minted: the last ID\'s time is that of the last ID minted');
is($primary->safe_psql('postgres',
		'SELECT reservation_writes = background_writes + caller_writes FROM snowflake_stats'),
	't', 'the writes by kind add up to all reservation writes');

# --- a clock step back, absorbed ---

# With max_drift_ms 10 s, a 5 s step back is absorbed: the next ID runs
# about 5 s ahead of the clock, and the regression is counted.  Without the
# preload the lead is capped at 1 s (a larger setting is used as 1000 ms,
# with a WARNING): max_drift_ms 800 ms absorbs a step of 0.5 s.
my ($drift, $drift_s, $step) = no_preload() ? ('800ms', 0.8, 0.5) : ('10s', 10, 5);
set_drift($primary, $drift, $drift);
my $session = $primary->background_psql('postgres');
$session->query_safe('SELECT snowflake_nextval()');
set_clock("-$step");
$session->query_safe('SELECT snowflake_nextval()');
$session->quit;
$m = check_scrape("clock stepped back $step s", $url, $primary, %no_claims,
	max_drift_seconds => $drift_s);
is($m->{value}{snowflake_clock_regressions_total}, 1,
	'clock step: one regression counted');
cmp_ok($m->{value}{snowflake_clock_regression_max_seconds}, '>', 0,
	'clock step: the largest regression is exported in seconds');
cmp_ok($m->{value}{snowflake_clock_regression_max_seconds}, '<=', $step,
	'clock step: at most the step');
is($m->{value}{snowflake_max_drift_seconds}, $drift_s, 'max_drift_seconds follows a reload');
set_clock('+0');
$primary->poll_query_until('postgres', 'SELECT lead_ms = 0 FROM snowflake_stats')
  or die 'the lead never went back to 0';
set_drift($primary, undef, '1s');

# --- a refused call ---

# A 10 s step back with max_drift_ms 1 s and max_wait_ms 100 ms: the call
# fails with 58000 and issues nothing.
set_clock('-10');
my ($sqlstate) = sql_error($primary,
	"SET snowflake.max_wait_ms = 100;\nSELECT snowflake_nextval()");
is($sqlstate, '58000', 'a call 10 s behind the last ID is refused (58000)');
set_clock('+0');
$primary->poll_query_until('postgres', 'SELECT lead_ms = 0 FROM snowflake_stats')
  or die 'the lead never went back to 0';
$m = check_scrape('a refused call', $url, $primary, %no_claims);
is($m->{value}{snowflake_refusals_total}, 1, 'refused call: refusals_total 1');
is($m->{value}{snowflake_ids_issued_total}, 6002, 'refused call: nothing issued');

# --- node id claims ---

# Another server (system identifier 42) claimed node id 4, the second of
# this server's span: a conflict, and this server's own claim is missing.
$primary->safe_psql('postgres',
	"INSERT INTO snowflake_node_claims (node_id, system_identifier, server_name) VALUES (4, 42, 'other')");
$m = check_scrape('another server claims node id 4', $url, $primary, %no_claims,
	claims_recorded => 1, claims_conflicting => 1);
is($m->{value}{snowflake_claims_conflicting_node_ids}, 1, 'claims: the conflict is exported');
$primary->safe_psql('postgres',
	'DELETE FROM snowflake_node_claims WHERE system_identifier = 42; '
	  . "SELECT snowflake_claim_node('prom')");
$m = check_scrape('the server claims its span', $url, $primary, %no_claims,
	claims_recorded => 2, claims_own => 2);
is($m->{value}{snowflake_claims_own_node_ids}, 2,
	'claims: both node ids of the span are claimed by this server');

# --- a reset of the counters ---

my $reset_before = $m->{value}{snowflake_stats_reset_timestamp_seconds};
$primary->safe_psql('postgres', 'SELECT snowflake_stats_reset()');
$m = check_scrape('counters reset', $url, $primary, %no_claims,
	claims_recorded => 2, claims_own => 2);
is($m->{value}{$_}, 0, "counters reset: $_ is 0")
  foreach qw(snowflake_ids_issued_total snowflake_refusals_total
  snowflake_clock_regressions_total snowflake_borrowed_seconds_total);
cmp_ok($m->{value}{snowflake_stats_reset_timestamp_seconds}, '>', $reset_before,
	'counters reset: the reset time moved');
cmp_ok($m->{value}{snowflake_reservation_last_write_timestamp_seconds}, '>', 0,
	'counters reset: the last reservation write is kept');

# --- a streaming standby ---

$primary->backup('prom_backup');
my $standby = start_snowflake_node('prom_standby',
	from_backup => [ $primary, 'prom_backup', has_streaming => 1 ]);
$primary->wait_for_catchup($standby);
my ($standby_exporter, $standby_url) = start_exporter($standby);
($sqlstate) = sql_error($standby, 'SELECT snowflake_nextval()');
is($sqlstate, '25006', 'the standby refuses to generate (25006)');
$m = check_scrape('standby', $standby_url, $standby, %no_claims,
	claims_recorded => 2, claims_own => 2);
is($m->{value}{'snowflake_status_current{status=recovery}'}, 1, 'standby: status recovery');
is($m->{value}{'snowflake_status_current{status=ready}'}, 0, 'standby: not ready');
is($m->{value}{snowflake_node_id_in_use}, 'NaN',
	'standby: no node id in use (the next timeline decides it)');
is($m->{value}{snowflake_ids_issued_total}, 0, 'standby: issued nothing');
is($m->{value}{snowflake_refusals_total}, 1, 'standby: the refused call is counted');
is($m->{value}{snowflake_claims_own_node_ids}, 2,
	'standby: the primary\'s claims are its own (same system identifier)');

stop_exporter($standby_exporter);
stop_exporter($exporter);
$standby->stop;
$primary->stop;

# --- the exporter's role, connected as docs/operations.md#loading-the-files says ---

# Debian's pg_hba.conf lets a Unix-socket connection in by peer (as the
# role of the operating system user's name) and TCP from 127.0.0.1 by
# scram-sha-256.  The page's pg_ident.conf map and pg_hba.conf line (this
# test's user in place of "prometheus", its database in place of "app"),
# above those lines, let the operating system user in as the role
# exporter; without them it is refused.  The password way: the page's
# ALTER ROLE, over TCP.
{
	my %recipe = doc_recipes("$root/docs/operations.md");
	my $os_user = getpwuid($<);
	my $auth = PostgreSQL::Test::Cluster->new('prom_auth');
	$auth->init;
	$auth->append_conf('postgresql.conf', "listen_addresses = '127.0.0.1'");
	my $debian = "local all all peer\nhost all all 127.0.0.1/32 scram-sha-256\n";
	my $hba = $auth->data_dir . '/pg_hba.conf';
	PostgreSQL::Test::Utils::append_to_file($hba . '.debian', $debian);
	rename($hba . '.debian', $hba) or die "$hba: $!";
	$auth->start;
	$auth->safe_psql('postgres', 'CREATE ROLE exporter LOGIN IN ROLE pg_monitor');
	my $socket = 'host=' . $auth->host . ' port=' . $auth->port . ' dbname=postgres user=exporter';
	my $connects = sub {
		my ($connstr) = @_;
		my ($ret, $out, $err) = $auth->psql('postgres', 'SELECT current_user',
			connstr => $connstr, on_error_stop => 1);
		return $ret == 0 ? $out : "refused: $err";
	};
	like($connects->($socket), qr/refused: .*Peer authentication failed for user "exporter"/,
		'peer over the socket, without the map: the operating system user is refused as exporter');
	PostgreSQL::Test::Utils::append_to_file($auth->data_dir . '/pg_ident.conf',
		$recipe{'monitoring/pg_ident.conf'} =~ s/\bprometheus\b/$os_user/r);
	PostgreSQL::Test::Utils::append_to_file("$hba.page",
		($recipe{'monitoring/pg_hba.conf'} =~ s/\bapp\b/postgres/r) . $debian);
	rename("$hba.page", $hba) or die "$hba: $!";
	my $loaded = $auth->safe_psql('postgres', 'SELECT pg_conf_load_time()');
	$auth->reload;
	# A new session inherits the postmaster's load time: the reload is done.
	$auth->poll_query_until('postgres', "SELECT pg_conf_load_time() > '$loaded'")
	  or die 'the server did not reload its configuration';
	is($connects->($socket), 'exporter',
		"with the page's pg_ident.conf map and pg_hba.conf line, it connects as exporter");
	my ($password) = $recipe{'monitoring/password.sql'} =~ /PASSWORD '([^']+)'/;
	$auth->safe_psql('postgres', $recipe{'monitoring/password.sql'});
	my $tcp = 'host=127.0.0.1 port=' . $auth->port . ' dbname=postgres user=exporter';
	is($connects->("$tcp password=$password"), 'exporter',
		"the password way: the page's ALTER ROLE, over TCP by scram-sha-256");
	like($connects->("$tcp password=wrong"),
		qr/refused: .*password authentication failed for user "exporter"/,
		'and a wrong password is refused');
	$auth->stop;
}

# --- the rules file and its unit tests ---

foreach my $cmd ([ 'promtool', 'check', 'rules', $rules ],
	[ 'promtool', 'test', 'rules', $rules_test ])
{
	my ($ok, $out, $err) =
	  run_in_dir("$root/monitoring", {}, $PostgreSQL::Test::Utils::timeout_default, $cmd);
	ok($ok, "@$cmd[0..2] succeeds") or diag("$out\n$err");
	like($out . $err, qr/SUCCESS/, "@$cmd[0..2] says SUCCESS");
}

done_testing();
