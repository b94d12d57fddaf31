# Copyright: see LICENSE
#
# 093_sql_edition_move.pl
#	The SQL edition's moves of its key sequence (sql-edition/src/
#	30-generator.sql), on servers without the C library: a move held
#	inside, after it took L and before its setval(), while other calls take
#	keys; and the move path under load, at every millisecond's boundary and
#	past the layout's capacity.
#
# A move sets the generator's state to "a move under way", takes the key
# sequence's next value L, and sets the sequence to T, above L plus B (how
# many server processes there can be).  setval() is neither transactional
# nor conditional: beside calls that take keys with nextval() without the
# lock, it can set the sequence back.  The argument of 30-generator.sql is
# that at most B values can be taken between L and the setval(), by calls
# that read the state before the move set it.  Here:
#  - The move held: a session holds ALTER SEQUENCE's lock on
#    _snowflake_life_seq, which a move reads right after it took L (nothing
#    else reads it), so that a call stops inside its move, the state set
#    and L taken (both seen from outside).  Meanwhile B values are taken
#    with nextval() as the owner, as many as calls under way may take
#    without the lock, and four pgbench clients insert keys: they read the
#    state, find the move under way and wait for the lock (their waits are
#    seen in pg_locks), none fails.  Then the lock goes: the move's key is
#    above all B values, every key after it above it, and none was handed
#    out twice.  Done in the server's layout (41/10/12), where T lies a
#    millisecond, four million values, above L, and in 41/2/2 (sixteen keys
#    a millisecond), where T lies just above L + B.
#  - The hazard the argument guards against is real: in 41/2/2, with B +
#    40 values taken while the move is held (more than calls under way can
#    take), the setval() sets the sequence below values already taken, and
#    the next nextval() returns one of them again.
#  - Under load (EditionTest.pm, load_and_check, as 067): eight clients
#    for SNOWFLAKE_EDITION_MOVE_SECONDS (default 10) in 41/10/2, where every
#    fifth key of a millisecond carries into the node field and the keys
#    run ahead of the clock until calls wait for it, and in 41/2/2, where
#    every move skips past B values: unique, increasing in each session and
#    across sessions, the node id in each, within the lead.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use EditionTest;
use Test::More;

my $seconds = $ENV{SNOWFLAKE_EDITION_MOVE_SECONDS} // 10;
my %settings = (max_connections => 20, synchronous_commit => 'off');

# A server whose edition is of layout $layout (undef: the server's own),
# node id $node_id, as the extension in database postgres.
sub edition_node
{
	my ($name, $layout, $node_id) = @_;
	my $build = defined $layout ? edition_build('--layout', $layout) : edition_build();
	my $node = start_edition_node($name, edition_installation($build), settings => \%settings);
	$node->safe_psql('postgres', "CREATE EXTENSION snowflake; SELECT snowflake_set_node_id($node_id)");
	return $node;
}

# Hold a call inside a move of $node's key sequence (of a layout whose
# node and sequence fields have $node_bits and $seq_bits bits), the keys
# leading the clock, and take $window values with nextval() meanwhile,
# while four pgbench clients insert 200 keys each into table $table (phase
# $phase; none with $table undef); then let the move go on.  Returns L,
# the move's key, and the largest value taken while it was held.
sub held_move
{
	my ($node, $node_bits, $seq_bits, $window, $table, $phase) = @_;
	my $node_id = $node->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())');
	my $moving = $node_id + (1 << $node_bits);

	my $holder = $node->background_psql('postgres');
	my $mover = $node->background_psql('postgres');
	my $mover_pid = query_value($mover, 'SELECT pg_backend_pid()');

	# Keys that lead the clock by up to nine tenths of a second (a
	# batch), so that the move's key lies just above L + B, not at the
	# clock's time; then a move owed, as a move cancelled half-way leaves it
	# (the state not the node id): the next call moves the sequence.
	my $batch = 900 * (1 << $seq_bits);
	$batch = 1000000 if $batch > 1000000;
	$node->safe_psql('postgres', "SELECT count(*) FROM snowflake_nextval_batch($batch)");
	$node->safe_psql('postgres', "SELECT setval('_snowflake._snowflake_state_seq', $moving)");

	# The lock a move waits for right after it took L, and the call.
	query_value($holder, 'BEGIN; ALTER SEQUENCE _snowflake._snowflake_life_seq NO CYCLE');
	$mover->query_until(qr/started/, "\\echo started\nSELECT snowflake_nextval() AS key \\gset\n");
	ok( $node->poll_query_until(
			'postgres', qq{
SELECT count(*) = 1 FROM pg_locks
 WHERE pid = $mover_pid AND NOT granted AND relation = '_snowflake._snowflake_life_seq'::regclass}),
		"phase $phase: a call stops inside its move, waiting for the lock on _snowflake_life_seq");
	my ($state, $l) = split /\|/, $node->safe_psql('postgres',
		"SELECT pg_sequence_last_value('_snowflake._snowflake_state_seq'), pg_sequence_last_value('_snowflake._snowflake_id_seq')"
	);
	is($state, $moving, "phase $phase: the state says a move is under way (the node id plus the flag)");

	# Values taken without the lock while the move is held.
	my $window_max = $node->safe_psql('postgres',
		"SELECT max(nextval('_snowflake._snowflake_id_seq')) FROM generate_series(1, $window)");
	is($window_max, $l + $window, "phase $phase: $window values taken with nextval() after L ($l)");

	# Calls meanwhile: they find the move under way and wait for the lock.
	if (!defined $table)
	{
		query_value($holder, 'ROLLBACK');
		my $key = query_value($mover, 'SELECT :key');
		$holder->quit;
		$mover->quit;
		return (l => $l, key => $key, window_max => $window_max);
	}
	my $dir = PostgreSQL::Test::Utils::tempdir();
	open my $fh, '>', "$dir/insert.sql" or die $!;
	print $fh "INSERT INTO $table (id, phase) VALUES (snowflake_nextval(), $phase);\n";
	close $fh;
	my $load_out = '';
	my $load = IPC::Run::start(
		[
			'pgbench', '-n', '-c', 4, '-j', 2, '-t', 200, '-f', "$dir/insert.sql", '-h', $node->host,
			'-p', $node->port, 'postgres'
		],
		'>', \$load_out, '2>&1', IPC::Run::timeout(180));
	# (The first waits for the move's subtransaction, the others queue for
	# the row behind it.)
	ok( $node->poll_query_until(
			'postgres', qq{
SELECT count(*) FILTER (WHERE a.wait_event_type = 'Lock' AND a.wait_event IN ('transactionid', 'tuple')) = 4
       AND count(*) FILTER (WHERE $mover_pid = ANY (pg_blocking_pids(a.pid))) >= 1
  FROM pg_stat_activity a WHERE a.query LIKE 'INSERT INTO $table %'}),
		"phase $phase: four calls made meanwhile wait for the lock the move holds")
	  or diag($node->safe_psql('postgres',
			'SELECT pid, application_name, wait_event_type, wait_event, pg_blocking_pids(pid), query FROM pg_stat_activity')
		  . "\npgbench: " . (eval { $load->pump_nb; 1 } ? $load_out : $@));
	is($node->safe_psql('postgres', "SELECT count(*) FROM $table WHERE phase = $phase"),
		'0', "phase $phase: none of them took a key while the move was held");

	# The move goes on.
	query_value($holder, 'ROLLBACK');
	my $key = query_value($mover, 'SELECT :key');
	$load->finish;
	like($load_out, qr/number of failed transactions: 0 /, "phase $phase: the calls that waited went on, none failed");
	$holder->quit;
	$mover->quit;
	return (l => $l, key => $key, window_max => $window_max);
}

my $b_sql = 'SELECT _snowflake_max_backends()';

# The keys of phase $phase: how many, how many above $above, all distinct,
# all with node id $node_id.
sub phase_keys
{
	my ($node, $phase, $above, $node_id) = @_;
	return $node->safe_psql(
		'postgres', qq{
SELECT count(*), count(*) FILTER (WHERE id > $above), count(DISTINCT id) = count(*),
       bool_and(snowflake_node_id(id) = $node_id)
  FROM moved WHERE phase = $phase});
}

# --- the server's layout ---

my $node = edition_node('edition_move', undef, 5);
my $b = $node->safe_psql('postgres', $b_sql);
note "B, how many server processes there can be: $b";
$node->safe_psql('postgres', 'CREATE TABLE moved (id bigint PRIMARY KEY, phase int NOT NULL)');
my %m = held_move($node, 10, 12, $b, 'moved', 1);
cmp_ok($m{key}, '>', $m{window_max},
	"41/10/12: the move's key ($m{key}) is above L + B ($m{window_max}), every value taken while it was held");
is(phase_keys($node, 1, $m{key}, 5), '800|800|t|t',
	'41/10/12: the 800 keys of the calls that waited lie above it, distinct, with the node id');
$node->stop;

# --- 41/2/2: sixteen keys a millisecond ---

$node = edition_node('edition_move_tight', '41/2/2', 1);
$b = $node->safe_psql('postgres', $b_sql);
$node->safe_psql('postgres', 'CREATE TABLE moved (id bigint PRIMARY KEY, phase int NOT NULL)');
%m = held_move($node, 2, 2, $b, 'moved', 1);
cmp_ok($m{key}, '>', $m{window_max},
	"41/2/2: the move's key ($m{key}) is above L + B ($m{window_max}), every value taken while it was held");
cmp_ok($m{key} - $m{window_max}, '<=', 16,
	'41/2/2: and within a millisecond\'s keys of it: the bound, not the layout, kept them apart');
is(phase_keys($node, 1, $m{key}, 1), '800|800|t|t',
	'41/2/2: the 800 keys of the calls that waited lie above it, distinct, with the node id');

# The hazard: more values taken while the move is held than calls under way
# can take.
%m = held_move($node, 2, 2, $b + 40, undef, 2);
cmp_ok($m{key}, '<=', $m{window_max},
	"41/2/2, B + 40 values taken meanwhile: the move handed out $m{key}, which was among them: it set the sequence below values already taken"
);
cmp_ok($node->safe_psql('postgres', "SELECT nextval('_snowflake._snowflake_id_seq')"),
	'<=', $m{window_max}, 'and nextval() takes one of them again: what the bound of B prevents');
$node->stop;

# --- under load ---

$node = edition_node('edition_move_carry', '41/10/2', 9);
load_and_check($node, 'postgres', 'calls', 9, 8, $seconds, label => '41/10/2', min_keys => 2000);
$node->stop;

$node = edition_node('edition_move_skip', '41/2/2', 2);
# (Here a call in four or so moves the sequence, one at a time under the
# lock, the others waiting, and a session starts its next call as soon as
# one returns: the call that ended last before a call began is mostly
# that session's own, 3 % of them another's on a busy machine.)
load_and_check($node, 'postgres', 'calls', 2, 8, $seconds, label => '41/2/2', min_keys => 1000,
	min_other => 20);
$node->stop;

done_testing();
