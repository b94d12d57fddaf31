# Copyright: see LICENSE
#
# 036_node_id_from_host.pl
#	Node ids from one configuration: snowflake.node_id_from derives the
#	node id from the number that ends the host name ('hostname') or an
#	environment variable of the postmaster ('env:NAME'), added to
#	snowflake.node_id_base, within snowflake.node_id_count node ids:
#	member n takes base + n * span .. base + n * span + span - 1.
#
# Each server runs in a UTS namespace of its own with the host name the
# test gives it (test/hostns.c, SnowflakeTest's hostname option):
#  - the derived node id is the one IDs carry, snowflake_stats shows it
#    and where it came from (node_id_source), the log says how it was
#    derived; a host name's domain is not read ("db-007.example.com" is
#    member 7); an environment variable of the postmaster works the same;
#  - a host name without a number, a number outside the count, a missing
#    variable, both node id settings, no count, a count outside the node
#    field or below the span, a bad value: with the preload the server
#    does not start and says why; without it (17+) the first call fails
#    with the same message (the settings are read then);
#  - a derived node id that differs from the one the state file records
#    for this data directory's own IDs (the data directory moved to
#    another host name): the server starts, says so, and refuses to
#    generate (55000) until a superuser runs snowflake_adopt_node_id(),
#    which records the new node id before anything is issued; an explicit
#    snowflake.node_id that changes is still accepted with a LOG line; the
#    same after a crash, also soon after a promotion (before the checkpoint
#    it asks for: pg_control's minimum recovery point names the new
#    timeline, its latest checkpoint the old one);
#  - a changed derived node id and a changed epoch: the layout is refused
#    and adopted first, then the node id; an adoption whose write fails
#    adopts nothing, not even after a clean restart;
#  - without the preload, a crash re-initialisation keeps the derived node
#    id of the server's start (the settings file), and its source;
#  - with the preload and logging_collector = on, the derived node id and
#    the refusal of a host name without a number are in the collector's
#    log file; single-user mode without the variable (as pg_rewind runs it
#    for a crash recovery) replays, says so and refuses to generate, saying
#    why, and postgres -C prints a value; a standby without it does not
#    start (it needs its number too).

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node_conf = 'snowflake_node.conf';

# What a node's first use says about where its node id came from.
sub derivation
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		'SELECT node_id, node_id_in_use, node_id_span, node_id_source, status FROM snowflake_stats'
	);
}

# --- Derived from the host name, with a span ---

my $member = start_snowflake_node(
	'member',
	hostname => 'pg-3',
	settings => {
		'snowflake.node_id_from' => 'hostname',
		'snowflake.node_id_base' => 8,
		'snowflake.node_id_count' => 16,
		'snowflake.node_id_span' => 2,
		restart_after_crash => 'on'
	});
$member->safe_psql('postgres',
	'CREATE EXTENSION snowflake; CREATE TABLE ids (id bigint PRIMARY KEY)');
is($member->safe_psql('postgres', q{SELECT rtrim(pg_read_file('/proc/sys/kernel/hostname'), E'\n')}),
	'pg-3', 'the server runs under host name pg-3');
is($member->safe_psql('postgres',
		'WITH i AS (INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 100) RETURNING id)'
		  . ' SELECT string_agg(DISTINCT snowflake_node_id(id)::text, \',\') FROM i'),
	'14', 'pg-3 with base 8 and span 2: IDs carry node id 8 + 3 * 2 = 14');
is(derivation($member), '14|14|2|hostname pg-3|ready',
	'snowflake_stats: node id 14, in use, span 2, from the host name pg-3');
ok( $member->log_contains(
		qr/LOG:  snowflake node id 14 derived from the host name "pg-3"\n.*DETAIL:  The host name's first label "pg-3" ends in the digits "3": member number 3\. Member number 3 times "snowflake\.node_id_span" = 2, plus "snowflake\.node_id_base" = 8: this server takes node ids 14 to 15, one per timeline, of the cluster's 8 to 23 \("snowflake\.node_id_count" = 16\)\./
	),
	'the log says where the node id came from and which node ids the server takes');

# Nothing that chooses the node id can be set in a session.
foreach my $name ('snowflake.node_id_from', 'snowflake.node_id_base', 'snowflake.node_id_count')
{
	my $value = $name eq 'snowflake.node_id_from' ? 'env:PGUSER' : '1';
	if (no_preload())
	{
		is( error_report($member, "SET $name = '$value'; SELECT snowflake_nextval()"),
			qq{22023: invalid value for parameter "$name": "$value"\n}
			  . 'DETAIL:  The snowflake node id is read from the server configuration only, but this value was set for a database, a role or the session.',
			"no preload: $name set in a session is refused");
	}
	else
	{
		is( error_report($member, "SET $name = '$value'"),
			qq{55P02: parameter "$name" cannot be changed without restarting the server},
			"SET $name fails with 55P02");
	}
}

# Without the preload, a crash re-initialisation keeps the node id of the
# server's start and its source: the settings file records the node id.
if (no_preload())
{
	my $victim = $member->background_psql('postgres');
	my $pid = query_value($victim, 'SELECT pg_backend_pid()');
	my $offset = -s $member->logfile;
	kill('KILL', $pid) or die "could not kill $pid";
	log_appears($member, qr/all server processes terminated; reinitializing/, $offset)
	  or die 'the server did not re-initialise';
	eval { $victim->quit };
	$member->poll_query_until('postgres', 'SELECT true') or die 'the server did not come back';
	is(derivation($member), '14|14|2|hostname pg-3|ready',
		'no preload: after a crash re-initialisation, node id 14 from the host name still');
}
$member->stop;

# --- Only the host name's first label; leading zeros; span 1 ---

my $fqdn = start_snowflake_node(
	'fqdn',
	hostname => 'db-007.example.com',
	settings => {
		'snowflake.node_id_from' => 'hostname',
		'snowflake.node_id_base' => 100,
		'snowflake.node_id_count' => 10
	});
$fqdn->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is($fqdn->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	'107', 'db-007.example.com with base 100: member 7, node id 107');
is(derivation($fqdn), '107|107|1|hostname db-007.example.com|ready',
	'snowflake_stats: node id 107 from the host name db-007.example.com');
ok( $fqdn->log_contains(
		qr/LOG:  snowflake node id 107 derived from the host name "db-007\.example\.com"\n.*DETAIL:  The host name's first label "db-007" ends in the digits "007": member number 7\. Member number 7 plus "snowflake\.node_id_base" = 100: this server takes node id 107 of the cluster's 100 to 109 \("snowflake\.node_id_count" = 10\)\./
	),
	'span 1: the log names the one node id');
ok( $fqdn->log_contains(
		qr/WARNING:  other host names give the same snowflake member number as the host name "db-007\.example\.com"\n[^\n]*DETAIL:  Leading zeros do not count: "db-7" gives member number 7 too\./
	),
	'and warns that leading zeros do not count');
$fqdn->stop;

# --- From an environment variable of the postmaster ---

my $env = start_snowflake_node(
	'env',
	settings => {
		'snowflake.node_id_from' => 'env:SF_TEST_MEMBER',
		'snowflake.node_id_count' => 64,
		'snowflake.node_id_span' => 4
	},
	start => 0);
{
	local $ENV{SF_TEST_MEMBER} = '5';
	$env->start;
}
$env->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is($env->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	'20', 'env:SF_TEST_MEMBER = 5, span 4: node id 5 * 4 = 20');
is(derivation($env), '20|20|4|env:SF_TEST_MEMBER 5|ready',
	'snowflake_stats: node id 20 from the environment variable');
ok( $env->log_contains(
		qr/LOG:  snowflake node id 20 derived from the environment variable "SF_TEST_MEMBER" \("5"\)\n/),
	'the log names the variable and its value');
$env->stop;

# --- Errors at start ---

my $bad = start_snowflake_node('bad', include => [$node_conf], start => 0);
my $derive = {
	'snowflake.node_id_from' => 'hostname',
	'snowflake.node_id_base' => 8,
	'snowflake.node_id_count' => 16,
	'snowflake.node_id_span' => 2
};
my @errors = (
	[
		'a host name without a number', 'primary', $derive,
		'snowflake.node_id_from', 'hostname',
		'The host name "primary" does not end in a number.'
	],
	[
		'a number outside the count', 'pg-8', $derive,
		'snowflake.node_id_from', 'hostname',
		'The host name "pg-8" gives member number 8, but 16 node ids from "snowflake.node_id_base" = 8, 2 per member, hold member numbers 0 to 7.'
	],
	[
		'a number too long for any count', 'pg-12345678901', $derive,
		'snowflake.node_id_from', 'hostname',
		'The host name "pg-12345678901" ends in a number too large for a member number: 16 node ids from "snowflake.node_id_base" = 8, 2 per member, hold member numbers 0 to 7.'
	],
	[
		'a number only after the first dot', 'pg-x.y3', $derive,
		'snowflake.node_id_from', 'hostname',
		'The host name "pg-x.y3" does not end in a number before its first dot.'
	],
	[
		'an environment variable not set', 'pg-1',
		{ %$derive, 'snowflake.node_id_from' => 'env:SF_TEST_NOT_SET' },
		'snowflake.node_id_from', 'env:SF_TEST_NOT_SET',
		'The environment variable "SF_TEST_NOT_SET" is not set for the server.'
	],
	[
		'snowflake.node_id set too', 'pg-1', { %$derive, 'snowflake.node_id' => 5 },
		'snowflake.node_id_from', 'hostname',
		'"snowflake.node_id" is set too (5): set one of them only.'
	],
	[
		'no count', 'pg-1', { 'snowflake.node_id_from' => 'hostname' },
		'snowflake.node_id_from', 'hostname',
		'"snowflake.node_id_count" must be set too: how many node ids, from "snowflake.node_id_base" on, the cluster\'s members derive theirs from.'
	],
	[
		'a count past the node field', 'pg-1',
		{ %$derive, 'snowflake.node_id_base' => 1000, 'snowflake.node_id_count' => 100 },
		'snowflake.node_id_count', '100',
		'The cluster\'s node ids, 1000 to 1099, do not all fit the node field: with "snowflake.node_bits" = 10 the largest is 1023.'
	],
	[
		'a count below the span', 'pg-1',
		{ %$derive, 'snowflake.node_id_count' => 1 },
		'snowflake.node_id_count', '1',
		'The cluster\'s 1 node ids do not hold the 2 of one member ("snowflake.node_id_span").'
	],);

foreach my $case (@errors)
{
	my ($what, $host, $settings, $name, $value, $detail) = @$case;
	write_conf_file($bad, $node_conf, %$settings);
	set_hostname($bad, $host);
	my $message = qq{invalid value for parameter "$name": "$value"};
	if (no_preload())
	{
		# The settings are read at the first call.
		$bad->start;
		$bad->safe_psql('postgres', 'CREATE EXTENSION IF NOT EXISTS snowflake');
		is(error_report($bad, 'SELECT snowflake_nextval()'),
			"22023: $message\nDETAIL:  $detail",
			"no preload: $what: the first call fails, saying why");
		$bad->stop;
		next;
	}
	my $offset = -s $bad->logfile;
	ok(!$bad->start(fail_ok => 1), "$what: the server does not start");
	ok( $bad->log_contains(
			qr/FATAL:  \Q$message\E\n.*DETAIL:  \Q$detail\E\n.*HINT:  Correct the settings, or the host name or environment the server starts with, and start the server again\./,
			$offset),
		"$what: the log says why");
}

# An environment variable's value is the member number itself: digits
# only.  A sign, a space or a name is refused (in 1.2 the digits that ended
# it were read: "-1" became member 1, another member's node id), and an
# empty value is told from one that is not set.
foreach my $case (
	[ 'a minus sign', '-1' ], [ 'a plus sign', '+3' ], [ 'a leading space', ' 3' ],
	[ 'a trailing space', '3 ' ], [ 'a name', 'cluster-5' ], [ 'empty', '' ])
{
	my ($what, $value) = @$case;
	my $detail = $value eq ''
	  ? 'The environment variable "SF_TEST_MEMBER" is empty for the server.'
	  : qq{The environment variable "SF_TEST_MEMBER" ("$value") is not a member number: its value must be digits only, with no sign and no spaces.};
	my $message = 'invalid value for parameter "snowflake.node_id_from": "env:SF_TEST_MEMBER"';
	write_conf_file($bad, $node_conf, %$derive, 'snowflake.node_id_from' => 'env:SF_TEST_MEMBER');
	local $ENV{SF_TEST_MEMBER} = $value;
	if (no_preload())
	{
		$bad->start;
		$bad->safe_psql('postgres', 'CREATE EXTENSION IF NOT EXISTS snowflake');
		is(error_report($bad, 'SELECT snowflake_nextval()'),
			"22023: $message\nDETAIL:  $detail",
			"no preload: env:NAME with $what: the first call fails, saying why");
		$bad->stop;
		next;
	}
	my $offset = -s $bad->logfile;
	ok(!$bad->start(fail_ok => 1), "env:NAME with $what: the server does not start");
	ok( $bad->log_contains(
			qr/FATAL:  \Q$message\E\n.*DETAIL:  \Q$detail\E\n/, $offset),
		"env:NAME with $what: the log says why");
}

# How a host name gives its number, and names that give the same one: the
# start's log says both.
foreach my $case (
	[ 'ip-10-0-1-12', 12,
		'The host name\'s first label "ip-10-0-1-12" ends in the digits "12": member number 12.',
		'Only the digits that end the first label count: any name that ends in "12" gives member number 12 too, whatever digits come before ("ip-10-0-1-12" has other digits).' ],
	[ 'db-01', 1,
		'The host name\'s first label "db-01" ends in the digits "01": member number 1.',
		'Leading zeros do not count: "db-1" gives member number 1 too.' ])
{
	my ($host, $number, $mapping, $alike) = @$case;
	write_conf_file($bad, $node_conf, 'snowflake.node_id_from' => 'hostname',
		'snowflake.node_id_count' => 64);
	set_hostname($bad, $host);
	my $offset = -s $bad->logfile;
	$bad->start;
	$bad->safe_psql('postgres', 'SELECT count(*) FROM snowflake_stats') if no_preload();
	ok( $bad->log_contains(
			qr/LOG:  snowflake node id $number derived from the host name "$host"\n[^\n]*DETAIL:  \Q$mapping\E Member number $number plus/,
			$offset),
		"host name $host: the log says how it gives member number $number");
	ok( $bad->log_contains(
			qr/WARNING:  other host names give the same snowflake member number as the host name "$host"\n[^\n]*DETAIL:  \Q$alike\E\n[^\n]*HINT:  Give every member of the cluster a host name that ends in its own number, written the same way \(no leading zeros\), or derive the node id from an environment variable \("env:NAME"\)\./,
			$offset),
		"host name $host: and warns about the names that give it too");
	$bad->stop;
}

# A value the setting does not accept: its check hook says why, and the
# server does not start with the setting ignored.
write_conf_file($bad, $node_conf, %$derive, 'snowflake.node_id_from' => 'hostnam');
set_hostname($bad, 'pg-1');
my $syntax =
  'The value must be "hostname", "env:" followed by the name of an environment variable, or empty (the node id is "snowflake.node_id").';
if (no_preload())
{
	$bad->start;
	is(error_report($bad, 'SELECT snowflake_nextval()'),
		qq{22023: invalid value for parameter "snowflake.node_id_from": "hostnam"\nDETAIL:  $syntax},
		'no preload: a bad value of snowflake.node_id_from fails the first call');
	$bad->stop;
}
else
{
	my $offset = -s $bad->logfile;
	ok(!$bad->start(fail_ok => 1), 'a bad value of snowflake.node_id_from stops the server');
	ok( $bad->log_contains(
			qr/invalid value for parameter "snowflake\.node_id_from": "hostnam"\n.*DETAIL:  \Q$syntax\E\n(?s:.*)FATAL:  invalid value for parameter "snowflake\.node_id_from": "hostnam"\n/,
			$offset),
		'the check hook says why, and the server does not start with the setting ignored');
}

# --- Where the start-up lines go; servers that only replay WAL ---

# With the preload: with logging_collector = on, the derived node id, and
# the refusal of a host name without a number, are in the collector's log
# file (said once the collector has the postmaster's standard error), not
# only on the standard error the server was started with.  A server that
# only replays WAL and mints nothing needs no node id: single-user mode
# (pg_rewind finishes a crash recovery so) starts without the variable,
# saying so, replays, and refuses to generate, saying why; postgres -C
# prints a value.  IDs minted after it are above the ones before.
if (!no_preload())
{
	my $coll = start_snowflake_node(
		'collector',
		hostname => 'pg-4',
		settings => {
			'snowflake.node_id_from' => 'hostname',
			'snowflake.node_id_count' => 8,
			logging_collector => 'on',
			log_directory => 'log',
			log_filename => 'collector.log'
		});
	my $collected = $coll->data_dir . '/log/collector.log';
	my $line = qr/LOG:  snowflake node id 4 derived from the host name "pg-4"\n[^\n]*DETAIL:  The host name's first label "pg-4" ends in the digits "4": member number 4\. Member number 4 plus "snowflake\.node_id_base" = 0: this server takes node id 4 of the cluster's 0 to 7/;
	like(slurp_file($collected), $line,
		'logging_collector = on: the derived node id is in the collector\'s log file');
	unlike(slurp_file($coll->logfile), qr/snowflake node id 4 derived/,
		'... and not on the standard error the server was started with');
	$coll->stop;
	set_hostname($coll, 'primary');
	my $offset = -s $collected;
	ok(!$coll->start(fail_ok => 1), 'logging_collector = on: host name "primary", the server does not start');
	like(
		substr(slurp_file($collected), $offset),
		qr/FATAL:  invalid value for parameter "snowflake\.node_id_from": "hostname"\n[^\n]*DETAIL:  The host name "primary" does not end in a number\.\n[^\n]*HINT:  Correct the settings, or the host name or environment the server starts with, and start the server again\./,
		'... and the collector\'s log file says why');
	ok(!-e $coll->data_dir . '/postmaster.pid', '... and the postmaster is gone');

	my $replay = start_snowflake_node(
		'replay',
		settings => {
			'snowflake.node_id_from' => 'env:SF_TEST_MEMBER',
			'snowflake.node_id_count' => 8
		},
		start => 0);
	my $pgdata = $replay->data_dir;
	my $max_before;
	{
		local $ENV{SF_TEST_MEMBER} = '6';
		$replay->start;
		$max_before = $replay->safe_psql('postgres',
			'CREATE EXTENSION snowflake; CREATE TABLE ids (id bigint PRIMARY KEY);'
			  . ' INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 1000);'
			  . ' SELECT max(id) FROM ids');
		$replay->stop('immediate');
	}
	delete local $ENV{SF_TEST_MEMBER};
	my $missing = 'The environment variable "SF_TEST_MEMBER" is not set for the server.';
	# The postgres program as pg_rewind runs it: $stdin on its standard
	# input, at most $secs seconds; (success, stdout, stderr).
	my $postgres = sub {
		my ($secs, $stdin, @args) = @_;
		my ($o, $e) = ('', '');
		my $done = eval {
			IPC::Run::run([ 'postgres', @args ], '<', \$stdin, '>', \$o, '2>', \$e,
				IPC::Run::timeout($secs));
		};
		return ($done, $o, $e . ($@ // ''));
	};
	my ($ok, $out, $err) = $postgres->(120, '', '--single', '-F', '-D', $pgdata, 'template1');
	ok($ok, 'single-user mode without the variable: the crash recovery pg_rewind runs this way succeeds')
	  or diag($err);
	like($err,
		qr/WARNING:  invalid value for parameter "snowflake\.node_id_from": "env:SF_TEST_MEMBER"\n[^\n]*DETAIL:  \Q$missing\E\n[^\n]*HINT:  A server in single-user mode starts without the node id, and generates no IDs\./,
		'... saying that it starts without the node id');
	($ok, $out, $err) = $postgres->(120, "SELECT snowflake_nextval();\nSELECT count(*) FROM ids;\n",
		'--single', '-D', $pgdata, 'postgres');
	like($err,
		qr/ERROR:  invalid value for parameter "snowflake\.node_id_from": "env:SF_TEST_MEMBER"\n[^\n]*DETAIL:  \Q$missing\E\n[^\n]*HINT:  The server runs in single-user mode, which starts without a node id it cannot derive and generates no IDs: correct the host name or environment it starts with, or generate IDs in a server started normally\./,
		'single-user mode without the variable: snowflake_nextval() refuses, saying why');
	like($out, qr/count = "1000"/, '... while the rest of the database answers');
	($ok, $out, $err) = $postgres->(60, '', '-D', $pgdata, '-C', 'shared_memory_size');
	ok($ok && $out =~ /^\d+\n\z/, 'postgres -C shared_memory_size without the variable prints the value')
	  or diag("$out$err");
	{
		local $ENV{SF_TEST_MEMBER} = '6';
		$replay->start;
		is( $replay->safe_psql('postgres',
				'WITH i AS (INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 1000) RETURNING id)'
				  . " SELECT count(*), count(*) FILTER (WHERE id > $max_before), min(snowflake_node_id(id)), max(snowflake_node_id(id)) FROM i"
			),
			'1000|1000|6|6',
			'started again with the variable: node id 6, every ID above those before');
		$replay->stop;
	}

	# A standby needs its number too, though it mints nothing while in
	# recovery (docs/deployment/pg_auto_failover.md and managed.md): one
	# started without the variable does not start, and says why; with its
	# own number it runs.
	my $member;
	{
		local $ENV{SF_TEST_MEMBER} = '1';
		$member = start_snowflake_node(
			'member_primary',
			init => { allows_streaming => 1 },
			settings => {
				'snowflake.node_id_from' => 'env:SF_TEST_MEMBER',
				'snowflake.node_id_count' => 8
			});
	}
	$member->backup('member_standby');
	my $secondary = start_snowflake_node('member_standby',
		from_backup => [ $member, 'member_standby', has_streaming => 1 ],
		start => 0);
	ok(!$secondary->start(fail_ok => 1), 'a standby without the variable does not start');
	like(slurp_file($secondary->logfile),
		qr/FATAL:  invalid value for parameter "snowflake\.node_id_from": "env:SF_TEST_MEMBER"\n[^\n]*DETAIL:  \Q$missing\E/,
		'and its log says why');
	{
		local $ENV{SF_TEST_MEMBER} = '2';
		$secondary->start;
	}
	$member->wait_for_catchup($secondary);
	is($secondary->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
		't', 'with its own number it starts, and replays');
	$secondary->stop;
	$member->stop;
}

# --- The data directory moves to another host name ---

my $moved = start_snowflake_node(
	'moved',
	hostname => 'pg-1',
	include => [
		$node_conf,
		'snowflake.node_id_from' => 'hostname',
		'snowflake.node_id_count' => 8
	]);
$moved->safe_psql('postgres',
	'CREATE EXTENSION snowflake; CREATE TABLE ids (id bigint PRIMARY KEY);'
	  . ' INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 100);'
	  . ' CREATE ROLE plain LOGIN');
my $max_before = $moved->safe_psql('postgres', 'SELECT max(id) FROM ids');
is($moved->safe_psql('postgres', "SELECT snowflake_node_id($max_before)"),
	'1', 'under pg-1 the IDs carry node id 1');
$moved->stop;

set_hostname($moved, 'pg-2');
my $offset = -s $moved->logfile;
$moved->start;
my $recorded =
  'The state file records IDs this data directory minted with node id 1 on timeline 1; the node id derived from hostname pg-2 is 2 there.';
my $changed = 'derived snowflake node id differs from the one recorded in "snowflake.state"';
my $adopt_hint =
  'If the change is intended, run SELECT snowflake_adopt_node_id() as a superuser; otherwise restore the host name or the settings and restart the server.';
is(error_report($moved, 'INSERT INTO ids SELECT snowflake_nextval()'),
	"55000: $changed\nDETAIL:  $recorded\nHINT:  $adopt_hint",
	'moved to pg-2: generation is refused, naming both node ids');
ok( log_appears(
		$moved,
		qr/WARNING:  \Q$changed\E\n.*DETAIL:  \Q$recorded\E Calls that issue IDs fail until a superuser adopts the derived node id; decoding works\.\n.*HINT:  \Q$adopt_hint\E/,
		$offset),
	no_preload()
	? 'no preload: the first use of the generator logs a WARNING'
	: 'the server starts, and its log says why it will not generate');
is($moved->safe_psql('postgres',
		"SELECT status, node_id FROM snowflake_stats; SELECT count(*) FROM ids; SELECT snowflake_node_id($max_before)"),
	"node id changed|2\n100\n1",
	'snowflake_stats says so; nothing was issued; decoding works');
like((sql_error($moved, 'SELECT snowflake_adopt_node_id()', extra_params => [ '-U', 'plain' ]))[1],
	qr/ERROR:  42501: permission denied for function snowflake_adopt_node_id/,
	'an ordinary role cannot adopt the node id');
$moved->safe_psql('postgres', 'GRANT EXECUTE ON FUNCTION snowflake_adopt_node_id() TO plain');
is(error_report($moved, 'SELECT snowflake_adopt_node_id()', extra_params => [ '-U', 'plain' ]),
	"42501: permission denied to adopt a snowflake node id\nDETAIL:  Only superusers may adopt a derived node id.",
	'nor one granted EXECUTE: only a superuser may');

$offset = -s $moved->logfile;
is($moved->safe_psql('postgres', 'SELECT snowflake_adopt_node_id()'),
	'2', 'snowflake_adopt_node_id() returns the node id in use from now on');
ok( log_appears(
		$moved,
		qr/LOG:  snowflake node id 2 adopted in place of 1\n.*DETAIL:  It was derived from hostname pg-2\./,
		$offset),
	'the adoption is logged');
is( $moved->safe_psql('postgres',
		"WITH i AS (INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 100) RETURNING id)"
		  . " SELECT string_agg(DISTINCT snowflake_node_id(id)::text, ','), min(id) > $max_before FROM i"),
	'2|t', 'the next IDs carry node id 2, above every earlier one');
is(error_report($moved, 'SELECT snowflake_adopt_node_id()'),
	"55000: no changed snowflake node id to adopt\nDETAIL:  This server's node id is the one recorded in \"snowflake.state\", or it is not derived, or that file is unusable.",
	'nothing left to adopt');

# The adoption was recorded: a restart under pg-2 does not ask again.
$moved->restart;
is($moved->safe_psql('postgres',
		'SELECT snowflake_node_id(snowflake_nextval()); SELECT status FROM snowflake_stats'),
	"2\nready", 'after a restart under pg-2: ready, node id 2');

# Moved after a crash: the floor is owed (the start was not clean), but the
# state file is still this data directory's own, on the timeline it
# records, so the change is refused as after a clean shutdown.
$moved->stop('immediate');
set_hostname($moved, 'pg-3');
$moved->start;
is(error_report($moved, 'INSERT INTO ids SELECT snowflake_nextval()'),
	"55000: $changed\nDETAIL:  The state file records IDs this data directory minted with node id 2 on timeline 1; the node id derived from hostname pg-3 is 3 there.\nHINT:  $adopt_hint",
	'moved to pg-3 after a crash: generation is refused too');
$moved->stop;
set_hostname($moved, 'pg-2');
$moved->start;
is($moved->safe_psql('postgres',
		'SELECT snowflake_node_id(snowflake_nextval()); SELECT status FROM snowflake_stats'),
	"2\nready", 'back under pg-2: ready, node id 2');

# An explicit snowflake.node_id that changes is accepted, as before.
write_conf_file($moved, $node_conf, 'snowflake.node_id' => 5);
$offset = -s $moved->logfile;
$moved->restart;
is($moved->safe_psql('postgres',
		'SELECT snowflake_node_id(snowflake_nextval()); SELECT node_id_source FROM snowflake_stats'),
	"5\nsnowflake.node_id", 'an explicit snowflake.node_id 5: accepted, and shown as the source');
ok(log_appears($moved, qr/LOG:  parameter "snowflake\.node_id" changed from 2 to 5\n/, $offset),
	'with a LOG line saying the node id changed');
ok(!$moved->log_contains(qr/WARNING:  \Q$changed\E/, $offset),
	'and no refusal');
$moved->stop;

# --- Moved, and the epoch changed too: each refusal has its own remedy ---

# The layout comes first: the node id cannot be adopted before it, and
# adopting the layout leaves the changed node id refused.
my $both = start_snowflake_node(
	'both',
	settings => {
		'snowflake.node_id_from' => 'env:SF_TEST_MEMBER',
		'snowflake.node_id_count' => 8
	},
	start => 0);
{
	local $ENV{SF_TEST_MEMBER} = '1';
	$both->start;
	$both->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	is($both->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
		'1', 'member 1 mints with node id 1');
	$both->stop;
}
$both->append_conf('postgresql.conf', "snowflake.epoch = '2023-01-01 00:00:00+00'");
{
	local $ENV{SF_TEST_MEMBER} = '2';
	start_with_shim($both);
	my $layout_error =
	  qr/^55000: snowflake epoch or layout differs from the one recorded in "snowflake\.state"\n/;
	like(error_report($both, 'SELECT snowflake_nextval()'), $layout_error,
		'member 2 with another epoch: the layout is refused first');
	like(error_report($both, 'SELECT snowflake_adopt_node_id()'), $layout_error,
		'the node id cannot be adopted before the layout');
	$both->safe_psql('postgres', 'SELECT snowflake_adopt_layout()');
	is(error_report($both, 'SELECT snowflake_nextval()'),
		"55000: $changed\nDETAIL:  The state file records IDs this data directory minted with node id 1 on timeline 1; the node id derived from env:SF_TEST_MEMBER 2 is 2 there.\nHINT:  $adopt_hint",
		'the layout adopted: the changed node id is still refused');

	# An adoption whose write fails adopts nothing, not even at the next
	# restart (the clean shutdown records the state file's node id, not the
	# derived one).
	set_fault('open EACCES');
	is(error_report($both, 'SELECT snowflake_adopt_node_id()'),
		"42501: could not create file \"snowflake.state.tmp\": Permission denied\nDETAIL:  The derived snowflake node id was not adopted.",
		'an adoption whose state file write fails raises its error');
	set_fault();
	$both->restart;
	is(error_report($both, 'SELECT snowflake_nextval()'),
		"55000: $changed\nDETAIL:  The state file records IDs this data directory minted with node id 1 on timeline 1; the node id derived from env:SF_TEST_MEMBER 2 is 2 there.\nHINT:  $adopt_hint",
		'after a clean restart the derived node id is still refused: nothing was adopted');
	is($both->safe_psql('postgres', 'SELECT snowflake_adopt_node_id()'),
		'2', 'then adopted');
	is($both->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
		'2', 'and IDs carry node id 2');
	$both->stop;
}

# --- Moved after a crash soon after a promotion ---

# A standby promoted mints on timeline 2, and is killed before the
# checkpoint its promotion asks for has completed (spread over the hour of
# checkpoint_timeout, with thousands of buffers to write): pg_control's
# latest checkpoint is still of timeline 1, and only its minimum recovery
# point names timeline 2.  The state file is still this data directory's
# own: moved to another host name, it is refused.
my %streaming = (
	'snowflake.node_id_from' => 'hostname',
	'snowflake.node_id_count' => 8,
	checkpoint_timeout => '1h',
	shared_buffers => '32MB',
	bgwriter_lru_maxpages => 0);
my $old_primary = start_snowflake_node(
	'old_primary',
	hostname => 'pg-1',
	init => { allows_streaming => 1 },
	settings => \%streaming);
$old_primary->safe_psql('postgres', 'CREATE EXTENSION snowflake; SELECT snowflake_nextval()');
$old_primary->backup('for_standby');
my $promoted = start_snowflake_node(
	'promoted',
	hostname => 'pg-2',
	from_backup => [ $old_primary, 'for_standby', has_streaming => 1 ]);
# Buffers the standby's replay dirties, for the promotion's checkpoint.
$old_primary->safe_psql('postgres',
	"CREATE TABLE filler AS SELECT g, repeat('x', 200) AS pad FROM generate_series(1, 80000) g");
$old_primary->wait_for_catchup($promoted);
$old_primary->stop;
promote_and_wait($promoted);
is($promoted->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	'2', 'the promoted standby, pg-2, mints with node id 2');
is( $promoted->safe_psql('postgres',
		'SELECT c.timeline_id, r.min_recovery_end_timeline FROM pg_control_checkpoint() c, pg_control_recovery() r'
	),
	'1|2',
	'its latest checkpoint is still of timeline 1, its minimum recovery point on timeline 2');
$promoted->stop('immediate');
set_hostname($promoted, 'pg-3');
$promoted->start;
is(error_report($promoted, 'SELECT snowflake_nextval()'),
	"55000: $changed\nDETAIL:  The state file records IDs this data directory minted with node id 2 on timeline 2; the node id derived from hostname pg-3 is 3 there.\nHINT:  $adopt_hint",
	'moved to pg-3 after that crash: generation is refused');
$promoted->stop;

done_testing();
