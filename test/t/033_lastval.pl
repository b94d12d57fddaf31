# Copyright: see LICENSE
#
# 033_lastval.pl
#	snowflake_lastval() (1.2) is the session's own: the last ID that
#	snowflake_nextval() or snowflake_nextval_batch() handed to this session
#	(of a batch, its largest), 55000 before the first, untouched by what
#	other sessions mint meanwhile and by a rollback, forgotten by DISCARD
#	ALL and DISCARD SEQUENCES.  Two sessions stay open side by side and mint
#	in turns; a third mints concurrently (pgbench) while they check; a
#	parallel CREATE TABLE AS leaves the leader the last ID it minted.  Runs
#	with and without the preload (test/check.sh's NO_PRELOAD_TESTS), where a
#	session loads the library at its first snowflake call.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use IPC::Run;

my $node = start_snowflake_node('lastval', node_id => 30);
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$node->safe_psql('postgres',
	'CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), who text)');

my $not_defined = "55000: snowflake_lastval is not yet defined in this session\n"
  . 'HINT:  Call it in the session that called snowflake_nextval() or '
  . 'snowflake_nextval_batch(), and behind a transaction pooler in the same transaction.';

# A new session (psql's own) has none: the whole error.
is(error_report($node, 'SELECT snowflake_lastval()'),
	$not_defined, 'a new session has no last value: 55000');

# The error a background session's statement raised, "SQLSTATE: message",
# or 'none'.
sub session_error
{
	my ($sess, $sql) = @_;
	$sess->{stderr} = '';
	$sess->query($sql);
	my $error = $sess->{stderr} =~ /ERROR:  ([0-9A-Z]{5}: [^\n]*)/ ? $1 : 'none';
	# Cleared, or the session's next query_safe() would see it.
	$sess->{stderr} = '';
	return $error;
}

my $sa = $node->background_psql('postgres', on_error_stop => 0);
my $sb = $node->background_psql('postgres', on_error_stop => 0);
$sa->query_safe('\set VERBOSITY verbose');
$sb->query_safe('\set VERBOSITY verbose');

is(session_error($sa, 'SELECT snowflake_lastval()'),
	'55000: snowflake_lastval is not yet defined in this session',
	'session A: 55000 before its first ID');
# B mints first: A still has none.
my $b1 = query_value($sb, 'SELECT snowflake_nextval()');
is(session_error($sa, 'SELECT snowflake_lastval()'),
	'55000: snowflake_lastval is not yet defined in this session',
	"session A: still 55000 after session B's first ID");
is(query_value($sb, 'SELECT snowflake_lastval()'), $b1,
	"session B: its own ID from snowflake_nextval()");

# Interleaved: each session sees its own last ID.
my $a1 = query_value($sa, 'SELECT snowflake_nextval()');
my $b2 = query_value($sb, 'SELECT snowflake_nextval()');
cmp_ok($b2, '>', $a1, "B's second ID comes after A's first");
is(query_value($sa, 'SELECT snowflake_lastval()'), $a1,
	"session A: its own ID, not B's later one");
is(query_value($sb, 'SELECT snowflake_lastval()'), $b2, 'session B: its own');

# A default fills it: INSERT without RETURNING, then the key read back.
$sa->query_safe(q{INSERT INTO t (who) VALUES ('a')});
is( query_value($sa,
		q{SELECT snowflake_lastval() = (SELECT id FROM t WHERE who = 'a')}),
	't', 'session A: the key of the row its INSERT just made');
# Several rows: the last one made, the largest.
$sa->query_safe(q{INSERT INTO t (who) SELECT 'a-many' FROM generate_series(1, 50)});
is( query_value($sa,
		q{SELECT snowflake_lastval() = (SELECT max(id) FROM t WHERE who = 'a-many')}),
	't', 'session A: after a 50-row INSERT, its last (largest) key');

# A batch: its largest ID.  B's batch leaves A alone.
is( query_value($sb,
		q{CREATE TEMP TABLE batch AS SELECT b FROM snowflake_nextval_batch(1000) b;
		  SELECT snowflake_lastval() = max(b), count(*) FROM batch}),
	't|1000', 'session B: after a batch of 1000, its largest ID');
is( query_value($sa,
		q{SELECT snowflake_lastval() = (SELECT max(id) FROM t WHERE who = 'a-many')}),
	't', "session A: unchanged by B's batch");

# A batch read only in part was handed out whole: its largest ID still.
my ($first, $last_of_10) = split /\|/, query_value($sb,
	q{SELECT b, snowflake_lastval() FROM (SELECT snowflake_nextval_batch(10) b LIMIT 1) s;});
my $after = query_value($sb, 'SELECT snowflake_nextval()');
cmp_ok($last_of_10, '>', $first, 'a batch read in part: its last value is past the row read');
cmp_ok($after, '>', $last_of_10, 'and the next ID comes after it');

# Other sessions minting concurrently (pgbench, 4 clients) while A reads.
my $script = PostgreSQL::Test::Utils::tempdir() . '/insert.sql';
PostgreSQL::Test::Utils::append_to_file($script,
	"INSERT INTO t (who) VALUES ('pgbench');\n");
my ($out, $err) = ('', '');
my $pgbench = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '4', '-t', '500', '-f', $script,
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$out, '2>', \$err,
	IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
my $a2 = query_value($sa, q{INSERT INTO t (who) VALUES ('a2'); SELECT snowflake_lastval()});
$pgbench->finish;
is($pgbench->result(0), 0, 'pgbench minted 2000 keys meanwhile') or diag($err);
is($node->safe_psql('postgres', q{SELECT count(*) FROM t WHERE who = 'pgbench'}),
	'2000', 'its 2000 rows are there');
is(query_value($sa, 'SELECT snowflake_lastval()'), $a2,
	"session A: its own key, whatever the others minted meanwhile");
is($node->safe_psql('postgres', qq{SELECT who FROM t WHERE id = $a2}),
	'a2', "and it is the key of A's row");

# A rollback does not undo it: the ID was handed out all the same.
$sa->query_safe(q{BEGIN; INSERT INTO t (who) VALUES ('rolled back')});
my $rolled = query_value($sa, 'SELECT snowflake_lastval()');
$sa->query_safe('ROLLBACK');
cmp_ok($rolled, '>', $a2, 'an ID made in a transaction');
is(query_value($sa, 'SELECT snowflake_lastval()'), $rolled,
	'session A: the rolled-back ID is still its last value');
is($node->safe_psql('postgres', "SELECT count(*) FROM t WHERE id = $rolled"),
	'0', 'though no row has it');
# Nor a savepoint's rollback, nor an aborted transaction.
$sa->query_safe(q{BEGIN; SAVEPOINT s; SELECT snowflake_nextval()});
my $in_sp = query_value($sa, 'SELECT snowflake_lastval()');
$sa->query_safe('ROLLBACK TO SAVEPOINT s; COMMIT');
is(query_value($sa, 'SELECT snowflake_lastval()'), $in_sp,
	'session A: an ID of a rolled-back savepoint stays');
$sa->query_safe('BEGIN');
my $in_failed = query_value($sa, 'SELECT snowflake_nextval()');
is(session_error($sa, 'SELECT 1/0'), '22012: division by zero', 'a failed transaction');
$sa->query_safe('ROLLBACK');
is(query_value($sa, 'SELECT snowflake_lastval()'), $in_failed,
	'session A: an ID of an aborted transaction stays');

# A call that fails issues nothing, and changes nothing.
is(session_error($sa, 'SELECT snowflake_nextval_batch(0)'),
	'22023: batch size must be between 1 and 1000000', 'a refused batch');
is(query_value($sa, 'SELECT snowflake_lastval()'), $in_failed,
	'session A: unchanged by a refused batch');

# DISCARD ALL and DISCARD SEQUENCES forget it, as they forget lastval();
# DISCARD PLANS and DISCARD TEMP do not.
$sa->query_safe('DISCARD PLANS; DISCARD TEMP');
is(query_value($sa, 'SELECT snowflake_lastval()'), $in_failed,
	'session A: DISCARD PLANS and DISCARD TEMP keep it');
$sa->query_safe('DISCARD SEQUENCES');
is(session_error($sa, 'SELECT snowflake_lastval()'),
	'55000: snowflake_lastval is not yet defined in this session',
	'session A: DISCARD SEQUENCES forgets it');
is(query_value($sb, 'SELECT snowflake_lastval()'), $after,
	"session B: A's DISCARD leaves B's alone");
$sb->query_safe('DISCARD ALL');
is(session_error($sb, 'SELECT snowflake_lastval()'),
	'55000: snowflake_lastval is not yet defined in this session',
	'session B: DISCARD ALL forgets it');
my $b3 = query_value($sb, 'SELECT snowflake_nextval()');
is(query_value($sb, 'SELECT snowflake_lastval()'), $b3,
	'session B: the next ID sets it again');

# lastval() of sequences and snowflake_lastval() are independent.
$sa->query_safe('CREATE SEQUENCE s; SELECT nextval(\'s\')');
my $a3 = query_value($sa, 'SELECT snowflake_nextval()');
is(query_value($sa, 'SELECT lastval(), snowflake_lastval()'), "1|$a3",
	"a sequence's lastval() and snowflake_lastval() each keep their own");

# A parallel plan: the generators are PARALLEL RESTRICTED (1.2), so the
# scan runs in parallel workers and the IDs are minted in the leader, whose
# last value is the statement's last ID.  The leader takes no part in the
# scan: an ID minted in a worker could not hide behind a later one of the
# leader's.  Without the preload, the leader also attaches the shared state
# in parallel mode.
$sa->query_safe(
	q{CREATE TABLE big AS SELECT g FROM generate_series(1, 20000) g; ANALYZE big;
	  SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0;
	  SET min_parallel_table_scan_size = 0; SET max_parallel_workers_per_gather = 2;
	  SET parallel_leader_participation = off});
my $plan = query_value($sa,
	q{EXPLAIN (COSTS OFF) CREATE TABLE par AS SELECT snowflake_nextval() AS id, g FROM big});
like($plan, qr/Gather\n.*Workers Planned: 2\n.*->  Parallel Seq Scan on big/s,
	'a parallel plan: the scan under a Gather');
$sa->query_safe(q{CREATE TABLE par AS SELECT snowflake_nextval() AS id, g FROM big});
is( query_value($sa,
		q{SELECT count(DISTINCT id), snowflake_lastval() = max(id) FROM par}),
	'20000|t',
	'session A: after a parallel CREATE TABLE AS, the largest ID it minted');

$sa->quit;
$sb->quit;
$node->stop;
done_testing();
