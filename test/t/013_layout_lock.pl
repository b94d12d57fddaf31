# Copyright: see LICENSE
#
# 013_layout_lock.pl
#	The epoch and layout recorded in the state file, and the node id.
#
# IDs minted under one epoch and layout mean something else under another,
# and new IDs could collide with stored ones.  So a server started with an
# epoch or layout other than the recorded one refuses to generate (55000,
# with a detail of recorded versus configured values) while decoding keeps
# working; restoring the settings lifts the refusal (the refused run must
# not have overwritten the record); a superuser can adopt the new settings
# deliberately with snowflake_adopt_layout() (others get 42501), after which
# new IDs carry times above those of all old IDs, even if the clock is
# behind them.  A changed node id is accepted, with a LOG line.
# Without the preload (the no-preload pass) the lead is capped at 1 s: a
# last ID 30 s ahead of the stepped-back clock cannot be followed, so the
# lower node id draws the capped WARNING and 58000 until the clock returns.
#
# The server's clock is stepped with libfaketime (see 010_restart_clock_back.pl).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# The snowflake settings live in their own file, rewritten at each step.
# Callers write the reservation themselves: on PostgreSQL 15 the background
# writer was seen reading the real clock under libfaketime, and it applies
# every start's floor at once, on its clock.
my $node = start_snowflake_node(
	'layout_lock',
	settings => { timezone => 'UTC', 'snowflake.background_writer' => 'off' },
	include => [ 'snowflake_test.conf', 'snowflake.node_id' => 7 ],
	with => 'faketime');

# Restart with new snowflake settings, named without their "snowflake."
# prefix (a setting left out reverts to its default).
sub restart_with
{
	my (%settings) = @_;
	$node->stop;
	write_conf_file($node, 'snowflake_test.conf',
		map { ("snowflake.$_" => $settings{$_}) } keys %settings);
	start_faked($node);
	return;
}

# The Unix time in milliseconds of the newest ID in table ids, decoded with
# the layout the server runs with now.
sub max_id_unix_ms
{
	return $node->safe_psql('postgres',
		'SELECT (extract(epoch FROM snowflake_timestamp(max(id))) * 1000)::bigint FROM ids');
}

$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint PRIMARY KEY);
INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 1000);
CREATE ROLE alice LOGIN;
});
my $old_max = $node->safe_psql('postgres', 'SELECT max(id) FROM ids');
my $old_max_ms = max_id_unix_ms();

# --- sequence_bits changed: refused, decoding still works ---

restart_with(node_id => 7, sequence_bits => 10);
my ($sqlstate, $stderr) = sql_error($node, 'SELECT snowflake_nextval()');
is($sqlstate, '55000', 'changed layout: snowflake_nextval() fails with 55000');
is( error_report($node, 'SELECT snowflake_nextval()'),
	qq{55000: snowflake epoch or layout differs from the one recorded in "snowflake.state"\n}
	  . 'DETAIL:  The state file records epoch 2024-01-01 00:00:00.000+00 and layout 41/10/12 (timestamp/node/sequence bits); the server is configured with epoch 2024-01-01 00:00:00.000+00 and layout 41/10/10.'
	  . "\n"
	  . 'HINT:  Restore the recorded settings, or have a superuser run SELECT snowflake_adopt_layout() to adopt the configured ones; indexes and generated columns that decode IDs must then be rebuilt.',
	'the whole message: the layout differs, the recorded and the configured values, the hint names snowflake_adopt_layout()'
);
($sqlstate) = sql_error($node, 'SELECT count(*) FROM snowflake_nextval_batch(10)');
is($sqlstate, '55000', 'snowflake_nextval_batch() fails with 55000');
my $st = stats($node);
is($st->{status}, 'layout changed', 'snowflake_stats says the layout changed');
is("$st->{ids_issued}|$st->{refused}", '0|3',
	'nothing was issued, the 3 calls were refused');

is( $node->safe_psql(
		'postgres', q{
SELECT snowflake_decode(snowflake_compose('2025-01-01 00:00:00.123+00', 5, 1000))}),
	'("2025-01-01 00:00:00.123+00",5,1000)',
	'decoding works, with the configured layout');
is( $node->safe_psql('postgres',
		"SELECT snowflake_node_id($old_max) >= 0 AND snowflake_sequence($old_max) < 1024"),
	't', 'old IDs decode too (as the configured layout reads their bits)');

# --- the recorded layout restored: generation resumes above the old IDs ---

restart_with(node_id => 7);
is(stats($node)->{status}, 'ready', 'recorded layout restored: generator ready');
is( $node->safe_psql(
		'postgres', qq{
WITH n AS (
	INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 100)
	RETURNING id)
SELECT min(id) > $old_max FROM n}),
	't',
	'the refused run kept the record: new IDs are above the old ones');
$old_max_ms = max_id_unix_ms();

# --- changed again, and adopted deliberately, with the clock 30 s behind ---

set_clock('-30');
restart_with(node_id => 7, sequence_bits => 10);
($sqlstate) = sql_error($node, 'SELECT snowflake_nextval()');
is($sqlstate, '55000', 'changed layout refused again');

is( error_report($node, 'SELECT snowflake_adopt_layout()',
		extra_params => [ '-U', 'alice' ]),
	'42501: permission denied for function snowflake_adopt_layout',
	'a non-superuser cannot adopt the layout (42501)');
is(stats($node)->{status}, 'layout changed', 'and the refusal stays');

# Two fewer sequence bits make new IDs about four times smaller than the
# old ones: they would land among stored keys, so a plain adoption refuses.
($sqlstate, $stderr) = sql_error($node, 'SELECT snowflake_adopt_layout()');
is($sqlstate, '55000',
	'narrower fields: adoption refused, new IDs would not all be larger (55000)');
like(
	error_report($node, 'SELECT snowflake_adopt_layout()'),
	qr/\A55000:\ IDs\ of\ the\ configured\ snowflake\ layout\ would\ not\ all\ be\ larger\ than\ existing\ ones\n
	   DETAIL:\ \ The\ first\ new\ ID\ would\ be\ \d+,\ but\ IDs\ up\ to\ \d+\ may\ already\ exist\.\n
	   HINT:\ \ New\ IDs\ could\ collide\ with\ stored\ keys\.\ Restore\ the\ recorded\ settings,\ or\ widen\ the\ node\ or\ sequence\ fields\ instead;\ call\ snowflake_adopt_layout\(force\ =>\ true\)\ only\ if\ no\ key\ minted\ under\ the\ old\ layout\ will\ meet\ a\ new\ one\.\z/x,
	'the whole message: the first new ID, the bound of the old ones, the hint names the forced adoption');
is(stats($node)->{status}, 'layout changed', 'and the refusal stays');

my $log_offset = -s $node->logfile;
$node->safe_psql('postgres', 'SELECT snowflake_adopt_layout(force => true)');
ok( $node->log_contains(
		qr/LOG:\s+snowflake layout 41\/10\/10 adopted by force/, $log_offset),
	'a superuser adopts the layout by force, and the log says so');
is(stats($node)->{status}, 'ready', 'generator ready after the adoption');
is( error_report($node, 'SELECT snowflake_adopt_layout()'),
	"55000: no changed snowflake layout to adopt\n"
	  . 'DETAIL:  The server\'s epoch and layout are those recorded in "snowflake.state", or that file is unusable.',
	'adopting again: nothing to adopt (55000)');

# The clock is 30 s behind the old IDs: the adopted generator does not go
# back to the clock's time, it fails instead.
($sqlstate) = sql_error($node,
	"SET snowflake.max_wait_ms = 100;\nSELECT snowflake_nextval()");
is($sqlstate, '58000',
	'with the clock behind the old IDs, the adopted layout refuses (58000)');
is(stats($node)->{ids_issued}, 0, 'nothing was issued');

set_clock('+0');
ok( $node->poll_query_until('postgres',
		"SELECT clock_timestamp() > to_timestamp($old_max_ms / 1000.0)"),
	'the clock caught up with the old IDs');
is( $node->safe_psql(
		'postgres', qq{
WITH n AS (
	INSERT INTO ids SELECT snowflake_nextval() FROM generate_series(1, 1000)
	RETURNING id)
SELECT count(*),
	min(snowflake_timestamp(id)) > to_timestamp($old_max_ms / 1000.0),
	bool_and(snowflake_sequence(id) < 1024),
	bool_and(snowflake_compose(snowflake_timestamp(id), snowflake_node_id(id),
		snowflake_sequence(id)) = id)
FROM n}),
	'1000|t|t|t',
	'after the adoption, new IDs use the new layout and carry later times than every old ID'
);
my $new_max = $node->safe_psql('postgres', 'SELECT snowflake_nextval()');

# The adoption is durable: a restart neither refuses nor goes back.
restart_with(node_id => 7, sequence_bits => 10);
is(stats($node)->{status}, 'ready', 'after a restart the adopted layout is the recorded one');
cmp_ok($node->safe_psql('postgres', 'SELECT snowflake_nextval()'),
	'>', $new_max, 'and generation continues above');

# --- the epoch changed ---

# The time of the last ID under the old epoch.
my $last_ms = $node->safe_psql('postgres',
	'SELECT (extract(epoch FROM snowflake_timestamp(snowflake_nextval())) * 1000)::bigint');
restart_with(
	node_id => 7,
	sequence_bits => 10,
	epoch => '2023-01-01 00:00:00+00');
($sqlstate, $stderr) = sql_error($node, 'SELECT snowflake_nextval()');
is($sqlstate, '55000', 'changed epoch: generation fails with 55000');
like(
	$stderr,
	qr{DETAIL:\s+The state file records epoch 2024-01-01 00:00:00\.000\+00 and layout 41/10/10 .*the server is configured with epoch 2023-01-01 00:00:00\.000\+00 and layout 41/10/10\.},
	'the detail gives both epochs');
is(stats($node)->{status}, 'layout changed', 'snowflake_stats says so');
$node->safe_psql('postgres', 'SELECT snowflake_adopt_layout()');
is( $node->safe_psql(
		'postgres', qq{
SELECT snowflake_timestamp(x) > to_timestamp($last_ms / 1000.0),
	snowflake_timestamp(x) > clock_timestamp() - interval '1 minute'
FROM snowflake_nextval() x}),
	't|t',
	'after adopting the new epoch, IDs carry the current time, later than every old ID'
);

# --- the node id changed: accepted and logged ---

$log_offset = -s $node->logfile;
my $before = $node->safe_psql('postgres', 'SELECT snowflake_nextval()');
restart_with(
	node_id => 8,
	sequence_bits => 10,
	epoch => '2023-01-01 00:00:00+00');
# Preloaded, the state file is read at startup; without the preload, at the
# first use (here, snowflake_stats): the line is in the log after both.
my $status = stats($node)->{status};
ok( $node->log_contains(
		qr/LOG:\s+parameter "snowflake\.node_id" changed from 7 to 8/, $log_offset),
	'a changed node id is logged');
is($status, 'ready', 'and accepted');
is( $node->safe_psql(
		'postgres',
		"SELECT snowflake_node_id(x), x > $before FROM snowflake_nextval() x"),
	'8|t',
	'new IDs carry the new node id and are above the ones issued before');

# --- a lower node id after a clean stop, the last ID still ahead of the clock ---

# A clean stop records the exact last ID.  Resuming right after it, in the
# same millisecond, would give a smaller ID under a lower node id (the node
# field lies above the sequence): the restarted generator must move on to
# the next millisecond.  The clock is set back so that the last ID is still
# ahead of it after the restart, and max_drift_ms lets IDs lead that far.
$before = $node->safe_psql('postgres', 'SELECT snowflake_nextval()');
set_clock('-30');
restart_with(
	node_id => 2,
	sequence_bits => 10,
	epoch => '2023-01-01 00:00:00+00',
	max_drift_ms => 60000);
if (no_preload())
{
	# Without the preload the lead is capped at 1 s: no ID can follow one
	# 30 s ahead of the clock, so the call is refused until the clock returns.
	my (undef, $stderr) = sql_error($node,
		"SET snowflake.max_wait_ms = 100;\nSELECT snowflake_nextval()");
	like($stderr,
		qr/WARNING:  55000: parameter "snowflake\.max_drift_ms" is capped at 1000 ms without the preload\nDETAIL:  It is set to 60000 ms\./,
		'without the preload max_drift_ms = 60000 is capped at 1 s, and the call says so');
	like(stderr_report($stderr), clock_behind_report(),
		'with the last ID 30 s ahead of the clock, the call fails with 58000');
	set_clock('+0');
	ok( $node->poll_query_until('postgres',
			"SELECT clock_timestamp() > snowflake_timestamp($before)"),
		'the clock caught up with the last ID');
}
is( $node->safe_psql(
		'postgres',
		"SELECT snowflake_node_id(x), x > $before, "
		  . "snowflake_timestamp(x) > snowflake_timestamp($before) "
		  . 'FROM snowflake_nextval() x'),
	'2|t|t',
	'with a lower node id, the next ID is larger, in a later millisecond');
set_clock('+0');

# --- a wider node field, its bit taken from the sequence or the timestamp field ---

# A wider node field alone does not fit (003: node_bits = 11 with the
# default layout stops the server); the bit comes from another field, and
# either way snowflake_adopt_layout() accepts it without force: the new IDs
# sort above the old ones (docs/operations.md, docs/fleets.md).
foreach my $case (
	[ 'from the sequence field (41/11/9)', node_bits => 11, sequence_bits => 9 ],
	[ 'from the timestamp field (40/12/9)',
		timestamp_bits => 40, node_bits => 12, sequence_bits => 9 ])
{
	my ($what, %widths) = @$case;
	$before = $node->safe_psql('postgres', 'SELECT snowflake_nextval()');
	# The 60 s lead allowed above still counts with the preload; without it
	# the lead was capped at 1 s, and a larger setting would only warn.
	restart_with(
		node_id => 2,
		epoch => '2023-01-01 00:00:00+00',
		no_preload() ? () : (max_drift_ms => 60000),
		%widths);
	$node->safe_psql('postgres', 'SELECT snowflake_adopt_layout()');
	is( $node->safe_psql(
			'postgres', "SELECT x > $before, snowflake_node_id(x) FROM snowflake_nextval() x"),
		't|2',
		"a wider node field, its bit $what: adopted without force, new IDs above the old");
}

$node->stop;
done_testing();
