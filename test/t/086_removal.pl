# Copyright: see LICENSE
#
# 086_removal.pl
#	Removing the C extension, as docs/removal.md says, read from the page
#	(the blocks marked <!-- recipe: removal/... -->) and run as written.
#
# A primary that preloads snowflake (wal_level = logical, archiving) with
# the extension in two databases, a streaming standby, logical slots, and a
# lead raised to 2 s so that its WAL holds a record of snowflake's resource
# manager (id 183).  Each server runs from an installation of its own (a
# host).  The page's steps, in order: a new default and DROP EXTENSION in
# every database; the position every record lies before, and the records
# (pg_walinspect, the page's output compared); the logical slots past it
# (a consumer reading one, the page's advance for another; a third left
# behind on purpose, which the page's check lists); a checkpoint on the
# primary; then the preload removed and, in place of the page's restart, a
# crash (pg_ctl stop -m immediate) with the library's files removed from
# the primary's host: it starts, its WAL holds no record after the
# position (the page's pg_waldump), and the slot its consumer kept up reads
# on while the one left behind fails ("resource manager with ID 183 not
# registered"); the standby's restartpoint past the position, then the
# same crash without the library: it starts and streams on; a base backup
# taken after the position, restored from the archive on a host without
# the library: it starts; one taken before the record cannot (the page's
# warning), and the page's pg_waldump over the archive shows the record.
# And the id: a module that registers resource manager 183 too stops the
# server's start beside snowflake, in either order, as the page quotes.

use strict;
use warnings;

use File::Basename qw(dirname);
use File::Spec;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes;

my $root = File::Spec->rel2abs(dirname(__FILE__) . '/../..');
my $page = "$root/docs/removal.md";
my %recipes = doc_recipes($page);
my @steps = qw(new-default.sh drop.sh position.sh position.out slots.sh advance.sh
  checkpoint.sh check-primary.sh standby.sh archive.sh archive.out clash.log);
is( join(' ', sort grep { m{^removal/} } keys %recipes),
	join(' ', sort map { "removal/$_" } @steps),
	'docs/removal.md has every step this test runs');

my $work = PostgreSQL::Test::Utils::tempdir();

# Run the page's step $name (bash -e -o pipefail) in $work with the
# variables %env; return (success, stdout, stderr).
sub run_step
{
	my ($name, %env) = @_;
	my $file = "$work/" . ($name =~ s{/}{_}gr);
	open my $fh, '>', $file or die "could not write $file: $!";
	print $fh $recipes{"removal/$name"};
	close $fh;
	return run_in_dir($work, \%env, 300, [ 'bash', '-e', '-o', 'pipefail', $file ]);
}

# The same, which must succeed; returns its standard output.
sub step
{
	my ($name, %env) = @_;
	my ($ok, $out, $err) = run_step($name, %env);
	ok($ok, "the page's $name runs") or diag("stdout:\n$out\nstderr:\n$err");
	die "step $name failed\n" unless $ok;
	return $out;
}

# The variables of a step run against $node.
sub on
{
	my ($node) = @_;
	return (PGHOST => $node->host, PGPORT => $node->port, PGDATA => $node->data_dir);
}

# Take snowflake out of $node's configuration (shared_preload_libraries and
# the snowflake.* settings), as the page says to.
sub unpreload
{
	my ($node) = @_;
	foreach my $file ('postgresql.conf', 'postgresql.auto.conf')
	{
		my $path = $node->data_dir . "/$file";
		next unless -e $path;
		my $conf = slurp_file($path);
		$conf =~ s/^([ \t]*(?:shared_preload_libraries|snowflake\.)\b)/# $1/mg;
		open my $fh, '>', $path or die "could not write $path: $!";
		print $fh $conf;
		close $fh;
	}
	return;
}

# $node cannot load the library (no file of it in its installation).
sub library_absent
{
	my ($node) = @_;
	my ($ret, undef, $stderr) = $node->psql('postgres', "LOAD 'snowflake'");
	return $ret != 0 && $stderr =~ /could not access file "snowflake"/ ? 'absent' : "present: $stderr";
}

# Lines of text with what varies from run to run made alike: LSNs and
# record lengths, runs of blanks and of dashes.
sub alike
{
	my ($text) = @_;
	$text =~ s{\b[0-9A-F]+/[0-9A-F]+\b}{LSN}g;
	$text =~ s{len \(rec/tot\):\s*\d+/\s*\d+}{len (rec/tot): N/N}g;
	$text =~ s/-+/-/g;
	$text =~ s/[ \t]+/ /g;
	$text =~ s/^ | $//mg;
	$text =~ s/\n+\z/\n/;
	return $text;
}

# The hosts: the primary's and the standby's with snowflake installed, a
# restore host without it.
my $primary_host = installation_copy();
my $standby_host = installation_copy();
my $restore_host = installation_copy();
install_snowflake($_, 'current') foreach $primary_host, $standby_host;

my $primary = start_snowflake_node('primary',
	install_path => $primary_host,
	node_id => 1,
	preload => 1,
	init => { allows_streaming => 'logical', has_archiving => 1 });
$primary->safe_psql('postgres', 'CREATE EXTENSION snowflake; CREATE DATABASE shop');
$primary->safe_psql(
	'shop', q{
CREATE EXTENSION snowflake;
CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), item text);
INSERT INTO orders (item) SELECT 'before the record' FROM generate_series(1, 100);
SELECT 'cdc', pg_create_logical_replication_slot('cdc', 'test_decoding');
SELECT 'idle', pg_create_logical_replication_slot('idle', 'test_decoding');
SELECT 'behind', pg_create_logical_replication_slot('behind', 'test_decoding');});
$primary->backup('before');
my $standby = start_snowflake_node('standby',
	install_path => $standby_host,
	from_backup => [ $primary, 'before', has_streaming => 1 ]);

# A record: the lead raised above 1000 ms, then IDs.
$primary->safe_psql('postgres', 'CREATE EXTENSION pg_walinspect');
my $from = $primary->safe_psql('postgres', 'SELECT pg_current_wal_flush_lsn()');
set_drift($primary, '2000', '2s');
my $record = '';
foreach (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
{
	$primary->safe_psql('shop',
		"INSERT INTO orders (item) SELECT 'lead raised' FROM generate_series(1, 100)");
	$record = $primary->safe_psql('postgres',
		"SELECT max(start_lsn) FROM pg_get_wal_records_info('$from', pg_current_wal_flush_lsn()) WHERE resource_manager = 'snowflake'"
	);
	last if $record ne '';
	Time::HiRes::usleep(100_000);
}
isnt($record, '', "the primary's WAL holds a record of snowflake's resource manager ($record)");
# The consumer of slot cdc reads what there is.
$primary->safe_psql('shop', "SELECT count(*) FROM pg_logical_slot_get_changes('cdc', NULL, NULL)");
$primary->wait_for_catchup($standby);

# ---------------------------------------------------------------------------
# 1. A new default, and DROP EXTENSION in every database
# ---------------------------------------------------------------------------

step('new-default.sh', on($primary), DB => 'shop');
step('drop.sh', on($primary));
is( join(' ',
		map { $primary->safe_psql($_, "SELECT count(*) FROM pg_extension WHERE extname = 'snowflake'") }
		  'postgres', 'shop'),
	'0 0', 'no database has the extension any more');
is( $primary->safe_psql(
		'shop', q{
INSERT INTO orders (item) VALUES ('new default') RETURNING id > (SELECT max(id) FROM orders WHERE item <> 'new default')}),
	't', 'the new default continues above the stored keys');
my $rows = $primary->safe_psql('shop', 'SELECT count(*) FROM orders');

# ---------------------------------------------------------------------------
# 2. The position every record lies before
# ---------------------------------------------------------------------------

my $shown = step('position.sh', on($primary));
my $position = slurp_file("$work/snowflake-removal.lsn");
chomp $position;
is($primary->safe_psql('postgres', "SELECT '$record'::pg_lsn < '$position'"),
	't', "the position ($position) is past the record");
like($shown, qr/^ \Q$record\E \| LEADS /m, 'the page\'s query lists the record');
is(alike($shown), alike($recipes{'removal/position.out'}), 'as the page shows it');
# A base backup started after step 2, for step 6.
$primary->backup('after');

# ---------------------------------------------------------------------------
# 3. The logical slots
# ---------------------------------------------------------------------------

my ($ok, $out, $err) = run_step('slots.sh', on($primary));
ok(!$ok, 'the page\'s slots.sh fails while slots are behind');
is($out, "logical slots before the last snowflake record: behind cdc idle\n", 'and lists them');
# cdc's consumer reads on; idle is advanced as the page says; behind is
# left as it is.
my $past_sql = "SELECT string_agg(slot_name, ' ' ORDER BY slot_name) FROM pg_replication_slots WHERE restart_lsn >= '$position'";
foreach (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
{
	$primary->safe_psql('shop', "SELECT count(*) FROM pg_logical_slot_get_changes('cdc', NULL, NULL)");
	($ok, $out, $err) = run_step('advance.sh', on($primary), SLOT => 'idle');
	die "the page's advance.sh failed: $err" unless $ok;
	last if $primary->safe_psql('postgres', $past_sql) eq 'cdc idle';
	run_step('slots.sh', on($primary));
	Time::HiRes::usleep(100_000);
}
is($primary->safe_psql('postgres', $past_sql), 'cdc idle',
	"slots cdc (its consumer read on) and idle (the page's advance.sh) are past the position");
($ok, $out, $err) = run_step('slots.sh', on($primary));
is(($ok ? 'exit 0' : 'exit 1') . " $out", "exit 1 logical slots before the last snowflake record: behind\n",
	'then only the slot left behind on purpose is listed');

# ---------------------------------------------------------------------------
# 4. The primary: a checkpoint, then a crash without the library
# ---------------------------------------------------------------------------

step('checkpoint.sh', on($primary));
unpreload($primary);
$primary->stop('immediate');
remove_snowflake($primary_host);
my $offset = -s $primary->logfile;
ok($primary->start(fail_ok => 1), 'the primary, crashed without the preload and its files, starts');
ok(!$primary->log_contains(qr/not registered/, $offset), 'its recovery met no record');
is(library_absent($primary), 'absent', 'the library is not there');
is($primary->safe_psql('shop', 'SELECT count(*) FROM orders'), $rows, 'it has every row');
is(step('check-primary.sh', on($primary)), '', "the page's pg_waldump: no record after the position");

# The slot its consumer kept up reads on; the one left behind fails.
$primary->safe_psql('shop', "INSERT INTO orders (item) VALUES ('after the removal')");
like(
	$primary->safe_psql('shop',
		"SELECT string_agg(data, ' ') FROM pg_logical_slot_get_changes('cdc', NULL, NULL)"),
	qr/table public\.orders: INSERT: id\[bigint\]:\d+ item\[text\]:'after the removal'/,
	'slot cdc reads on without the library');
is($primary->safe_psql('shop', "SELECT count(*) > 0 FROM pg_logical_slot_get_changes('idle', NULL, NULL)"),
	't', 'and slot idle, advanced as the page says');
my ($ret, undef, $stderr) = $primary->psql('shop',
	"SELECT count(*) FROM pg_logical_slot_get_changes('behind', NULL, NULL)");
like($stderr, qr/ERROR:  resource manager with ID 183 not registered/,
	'the slot left behind fails: resource manager with ID 183 not registered');
$primary->safe_psql('shop', "SELECT pg_drop_replication_slot('behind')");

# ---------------------------------------------------------------------------
# 5. The standby: a restartpoint past the position, then a crash without
#    the library
# ---------------------------------------------------------------------------

step('standby.sh',
	PRIMARY => $primary->connstr('postgres'),
	STANDBY => $standby->connstr('postgres'));
unpreload($standby);
$standby->stop('immediate');
remove_snowflake($standby_host);
$offset = -s $standby->logfile;
ok($standby->start(fail_ok => 1), 'the standby, crashed without the preload and its files, starts');
$primary->safe_psql('shop', "INSERT INTO orders (item) VALUES ('streamed')");
$primary->wait_for_catchup($standby);
ok(!$standby->log_contains(qr/not registered/, $offset), 'its replay met no record');
is(library_absent($standby), 'absent', 'the library is not there');
is($standby->safe_psql('shop', 'SELECT count(*) FROM orders'),
	$primary->safe_psql('shop', 'SELECT count(*) FROM orders'), 'it streams on');

# ---------------------------------------------------------------------------
# 6. Restores: a backup started after the position needs no library; one
#    from before the record does; the archive holds the record
# ---------------------------------------------------------------------------

# Every segment up to the current one archived (the archiver's statistics
# were lost with the crash: its directory is read instead).
my $last_segment = $primary->safe_psql('postgres', 'SELECT pg_walfile_name(pg_switch_wal())');
foreach (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
{
	last if -e $primary->archive_dir . "/$last_segment";
	Time::HiRes::usleep(100_000);
}
ok(-e $primary->archive_dir . "/$last_segment", "the archive has every segment up to $last_segment");

my $after = start_snowflake_node('restored_after',
	install_path => $restore_host,
	from_backup => [ $primary, 'after', has_restoring => 1, standby => 0 ],
	settings => { archive_mode => 'off' },
	start => 0);
unpreload($after);
ok($after->start(fail_ok => 1), 'a base backup taken after the position, restored without the library, starts');
$after->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the restore did not end';
is(library_absent($after), 'absent', 'on a host without the library');
is($after->safe_psql('shop', "SELECT count(*) FROM orders WHERE item = 'streamed'"),
	'1', 'and it replayed the archive to its end');
$after->stop;

my $before = start_snowflake_node('restored_before',
	install_path => $restore_host,
	from_backup => [ $primary, 'before', has_restoring => 1, standby => 0 ],
	settings => { archive_mode => 'off' },
	start => 0);
unpreload($before);
$before->start(fail_ok => 1);
ok( $before->wait_for_log(
		qr/FATAL:  resource manager with ID 183 not registered\n[^\n]*HINT:  Include the extension module that implements this resource manager in "?shared_preload_libraries"?\./
	),
	'a base backup taken before the record, restored without the library, stops at the record');
foreach (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
{
	last unless -e $before->data_dir . '/postmaster.pid';
	Time::HiRes::usleep(100_000);
}
$before->_update_pid(0);

my $archived = step('archive.sh', ARCHIVE => $primary->archive_dir);
(my $waldump_lsn = $record) =~ s{/([0-9A-F]+)$}{'/' . ('0' x (8 - length $1)) . $1}e;
like($archived, qr/^rmgr: custom183 .* lsn: \Q$waldump_lsn\E, .*rmid: 183$/m,
	"the page's pg_waldump over the archive shows the record");
is(alike((grep { /lsn: \Q$waldump_lsn\E/ } split /\n/, $archived)[0] . "\n"),
	alike($recipes{'removal/archive.out'}), 'as the page shows it');

$standby->stop;
$primary->stop;

# ---------------------------------------------------------------------------
# The id: another module registering resource manager 183 stops the start
# ---------------------------------------------------------------------------

my $probe = PostgreSQL::Test::Cluster->new('clash_probe');
my $includes = $probe->config_data('--includedir-server');
my $module = PostgreSQL::Test::Utils::tempdir() . '/other';
open my $src, '>', "$module.c" or die "$module.c: $!";
print $src <<'C';
/* A module that registers custom resource manager 183, named "other". */
#include "postgres.h"
#include "access/xlog_internal.h"
#include "fmgr.h"

PG_MODULE_MAGIC;

void		_PG_init(void);

static void
other_redo(XLogReaderState *record)
{
}

static RmgrData other_rmgr = {.rm_name = "other",.rm_redo = other_redo};

void
_PG_init(void)
{
	RegisterCustomRmgr(183, &other_rmgr);
}
C
close $src;
my ($cc_out, $cc_err);
IPC::Run::run([ 'cc', '-shared', '-fPIC', '-O2', "-I$includes", '-o', "$module.so", "$module.c" ],
	'>', \$cc_out, '2>', \$cc_err)
  or die "could not compile $module.c: $cc_err";

my %first = (snowflake => 'other', other => 'snowflake');
foreach my $order ([ 'snowflake', $module ], [ $module, 'snowflake' ])
{
	my $second = $order->[1] eq 'snowflake' ? 'snowflake' : 'other';
	my $clash = start_snowflake_node("clash_$second",
		node_id => 1,
		preload => 0,
		settings => { shared_preload_libraries => join(', ', @$order) },
		start => 0);
	ok(!$clash->start(fail_ok => 1), "snowflake and another resource manager 183: the server does not start ($second second)");
	my $log = slurp_file($clash->logfile);
	like($log,
		qr/FATAL:  failed to register custom resource manager "$second" with ID 183\n[^\n]*DETAIL:  Custom resource manager "$first{$second}" already registered with the same ID\./,
		"and says why, naming both ($second second)");
	next unless $second eq 'snowflake';
	my @want = split /\n/, $recipes{'removal/clash.log'};
	my @got = map { s/^.*?\b((?:FATAL|DETAIL):  )/$1/r } grep { /(?:FATAL|DETAIL):  / } split /\n/, $log;
	is(join("\n", @got[ 0 .. $#want ]), join("\n", @want), 'as the page quotes it');
}

done_testing();
