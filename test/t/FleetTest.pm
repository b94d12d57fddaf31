# Copyright: see LICENSE
#
# FleetTest.pm
#	Helpers shared by the fleet TAP tests (020 to 023): servers that
#	publish and subscribe with built-in logical replication, a table keyed
#	by snowflake_nextval(), inserts run on several servers at once, a
#	"relay" of inserts whose order across servers is known, and the checks
#	made where the rows meet.

package FleetTest;

use strict;
use warnings;

use Exporter 'import';
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

our @EXPORT = qw(fleet_node fleet_connstr events_table insert_concurrently
  single_then_bulk relay
  wait_until_no_lead subscription_problems conflict_columns ordering
  build_fan_in load_fan_in check_fan_in);

# A fleet member, started by start_snowflake_node (which %opts go to: a
# faked clock, start => 0...): wal_level = logical, room for a few
# subscriptions, and cluster_name set to $name (which the node claims
# record).  $node_id may be undef: a server that only collects rows does not
# need one.  Returns the node.
sub fleet_node
{
	my ($name, $node_id, %opts) = @_;
	return start_snowflake_node(
		$name,
		node_id => $node_id,
		settings => {
			wal_level => 'logical',
			cluster_name => $name,
			max_worker_processes => 16,
			max_logical_replication_workers => 10,
			max_replication_slots => 10,
			max_wal_senders => 10
		},
		%opts);
}

# A connection string for a subscription to $node's database "postgres".
sub fleet_connstr
{
	my ($node) = @_;
	return $node->connstr . ' dbname=postgres';
}

# The table every fleet test uses.  "src" names the server that inserted the
# row (independently of the ID), "step" the row's place in a relay.
sub events_table
{
	return q{
CREATE TABLE events (
	id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
	src text NOT NULL,
	step integer UNIQUE
);};
}

# Run the statements $sql_for->($node) returns on every node of @$nodes at
# the same time, each node in its own psql (one statement after the other,
# each in its own transaction unless it commits itself), and wait for all of
# them.  A gate makes them start together: each psql first waits for an
# advisory lock that a session of ours holds on its server until every psql
# is connected and waiting.  Dies if one fails.
sub insert_concurrently
{
	my ($nodes, $sql_for) = @_;
	my (@runs, %out, %err);
	my @gates = map { $_->background_psql('postgres') } @$nodes;
	$_->query_safe('SELECT pg_advisory_lock(20)') foreach @gates;
	foreach my $node (@$nodes)
	{
		my $name = $node->name;
		push @runs,
		  IPC::Run::start(
			[
				'psql', '-XAtq', '-v', 'ON_ERROR_STOP=1',
				'-d', $node->connstr('postgres'),
				'-c', 'SELECT pg_advisory_lock_shared(20)',
				map { ('-c', $_) } $sql_for->($node)
			],
			'>', \$out{$name}, '2>', \$err{$name},
			IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
	}
	foreach my $node (@$nodes)
	{
		$node->poll_query_until('postgres',
			"SELECT count(*) = 1 FROM pg_catalog.pg_locks WHERE locktype = 'advisory' AND NOT granted"
		) or die 'timed out waiting for the inserts on ' . $node->name . ' to wait at the gate';
	}
	$_->query_safe('SELECT pg_advisory_unlock(20)') foreach @gates;
	foreach my $i (0 .. $#runs)
	{
		my $name = $nodes->[$i]->name;
		$runs[$i]->finish
		  or die "inserts on $name failed: $err{$name}";
	}
	$_->quit foreach @gates;
	return;
}

# The statements, for insert_concurrently(), that insert rows of source
# $src into events: $single rows in transactions of one row each (the
# server sleeping $pause seconds after each, if given), then $bulk rows in
# one statement.
sub single_then_bulk
{
	my ($src, $single, $bulk, $pause) = @_;
	my $pace = $pause ? "\n\t\tPERFORM pg_sleep($pause);" : '';
	return (
		qq{
DO \$\$
BEGIN
	FOR i IN 1..$single LOOP
		INSERT INTO events (src) VALUES ('$src');
		COMMIT;$pace
	END LOOP;
END \$\$},
		"INSERT INTO events (src) SELECT '$src' FROM generate_series(1, $bulk)");
}

# Insert $steps rows one after the other, round robin over @$nodes, each
# committed before the next begins: the order of the "step" column is the
# real order in which the rows were created, whatever the servers' clocks
# say.  Row $step is inserted by $nodes->[$step % @$nodes] with src set to
# $src_of->($node).
sub relay
{
	my ($nodes, $steps, $src_of) = @_;
	my @sessions = map { $_->background_psql('postgres') } @$nodes;
	for my $step (1 .. $steps)
	{
		my $i = $step % @$nodes;
		my $src = $src_of->($nodes->[$i]);
		$sessions[$i]->query_safe(
			"INSERT INTO events (src, step) VALUES ('$src', $step)");
	}
	$_->quit foreach @sessions;
	return;
}

# Wait (bounded) until the generator of $node no longer runs ahead of its
# clock, so that the next IDs carry the server's clock time.
sub wait_until_no_lead
{
	my ($node) = @_;
	$node->poll_query_until('postgres',
		'SELECT coalesce(lead_ms, 0) = 0 FROM snowflake_stats')
	  or die 'timed out waiting for the lead of ' . $node->name . ' to end';
	return;
}

# The conflict counters of pg_stat_subscription_stats (PostgreSQL 18 and
# later), as a list of column names; empty before 18.
sub conflict_columns
{
	my ($node) = @_;
	my $cols = $node->safe_psql(
		'postgres', q{
SELECT string_agg(attname, ' ' ORDER BY attnum) FROM pg_catalog.pg_attribute
WHERE attrelid = 'pg_catalog.pg_stat_subscription_stats'::regclass
	AND attname LIKE 'confl\_%' AND NOT attisdropped});
	return split ' ', $cols;
}

# Apply errors, initial synchronisation errors and (18+) conflicts of every
# subscription of $node, summed: "0" when replication had no problem.
# PostgreSQL 19 counts synchronisation errors of tables and of sequences
# apart (sync_error_count became sync_table_error_count, and
# sync_seq_error_count is new).  major(): 19rc1 compares below 19.
sub subscription_problems
{
	my ($node) = @_;
	my @sync =
	  $node->pg_version->major >= 19
	  ? qw(sync_table_error_count sync_seq_error_count)
	  : qw(sync_error_count);
	my $sum = join ' + ', 'apply_error_count', @sync,
	  conflict_columns($node);
	return $node->safe_psql('postgres',
		"SELECT coalesce(sum($sum), 0) FROM pg_catalog.pg_stat_subscription_stats"
	);
}

# Ordering of the relay's rows on $node, where all of them meet.  For every
# pair of rows a, b from different servers with a created before b (a.step
# < b.step), the amount by which ID order contradicts creation order is
# snowflake_timestamp(a.id) - snowflake_timestamp(b.id) when a.id > b.id.
# Returns a hash: pairs, inverted (pairs with a.id > b.id), and per ordered
# pair of node ids "na>nb" the largest inversion in milliseconds (0 when
# inverted pairs share their millisecond; absent without inversions).
sub ordering
{
	my ($node) = @_;
	my %r;
	my $rows = $node->safe_psql(
		'postgres', q{
WITH r AS (SELECT id, step, snowflake_node_id(id) AS n,
		(extract(epoch FROM snowflake_timestamp(id)) * 1000)::bigint AS ms
	FROM events WHERE step IS NOT NULL)
SELECT a.n, b.n, count(*), count(*) FILTER (WHERE a.id > b.id),
	max(a.ms - b.ms) FILTER (WHERE a.id > b.id)
FROM r a JOIN r b ON a.step < b.step AND a.n <> b.n
GROUP BY a.n, b.n ORDER BY 1, 2});
	$r{pairs} = 0;
	$r{inverted} = 0;
	foreach my $line (split /\n/, $rows)
	{
		my ($na, $nb, $pairs, $inverted, $max) = split /\|/, $line;
		$r{pairs} += $pairs;
		$r{inverted} += $inverted;
		$r{"$na>$nb"} = $max if $inverted > 0;
	}
	return \%r;
}

# The fan-in: every source gets the extension, the events table and a
# publication "fleet" of it; $hub gets the same table and one subscription
# per source ("from_<source name>"), synchronised before this returns.
sub build_fan_in
{
	my ($hub, @sources) = @_;
	my $schema = "CREATE EXTENSION snowflake;\n" . events_table();
	foreach my $node (@sources)
	{
		$node->safe_psql('postgres',
			$schema . "\nCREATE PUBLICATION fleet FOR TABLE events;");
	}
	# A new data directory's first ID goes snowflake.max_drift_ms past its
	# clock (no state file yet); let that lead pass, so that the IDs of the
	# load carry each source's clock time.
	foreach my $node (@sources)
	{
		$node->safe_psql('postgres', 'SELECT snowflake_nextval()');
		wait_until_no_lead($node);
	}
	$hub->safe_psql('postgres', $schema);
	foreach my $node (@sources)
	{
		my $sub = 'from_' . $node->name;
		my $connstr = fleet_connstr($node);
		$hub->safe_psql('postgres',
			"CREATE SUBSCRIPTION $sub CONNECTION '$connstr' PUBLICATION fleet");
	}
	$hub->wait_for_subscription_sync($_, 'from_' . $_->name, 'postgres')
	  foreach @sources;
	return;
}

# Rows inserted per source by load_fan_in(): single-row transactions, one
# bulk statement, and the relay (spread over all sources).
our $SINGLE_ROWS = 1500;
our $BULK_ROWS = 5000;
our $RELAY_STEPS = 300;

# Load the fan-in: the sources insert at the same time, each $SINGLE_ROWS
# rows in single-row transactions interleaved with the others', then
# $BULK_ROWS rows in one statement (faster than one per millisecond, so IDs
# borrow ahead of the clock).  Then, once no generator leads its clock, the
# relay: $RELAY_STEPS rows created in a known real order.  Waits until $hub
# has received everything.
sub load_fan_in
{
	my ($hub, @sources) = @_;
	# At least a millisecond per single row: each source's stretch lasts
	# seconds, far longer than the gates take to open one by one.
	insert_concurrently(\@sources,
		sub { single_then_bulk($_[0]->name, $SINGLE_ROWS, $BULK_ROWS, 0.001) });
	wait_until_no_lead($_) foreach @sources;
	relay(\@sources, $RELAY_STEPS, sub { $_[0]->name });
	$_->wait_for_catchup('from_' . $_->name) foreach @sources;
	return;
}

# The checks every fan-in passes where the rows meet: no replication
# problem, the rows add up source by source, snowflake_node_id(id) names
# each row's source ($node_ids->{source name}), the single-row inserts of
# the sources overlapped in time, and each source's relay rows increase with
# their steps.  $offset_ms->{source name} is the offset of a source's clock
# in milliseconds, if any.  Returns ordering($hub).
sub check_fan_in
{
	my ($hub, $node_ids, $offset_ms, @sources) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;

	is(subscription_problems($hub), '0',
		'no apply error, synchronisation error or conflict on the hub');
	if ($hub->pg_version >= 18)
	{
		cmp_ok(scalar(conflict_columns($hub)), '>', 0,
			'the conflict counters of PostgreSQL 18 are among those checked');
	}

	my $total = 0;
	foreach my $node (@sources)
	{
		my $name = $node->name;
		my $local = $node->safe_psql('postgres',
			'SELECT count(*), sum(id::numeric) FROM events');
		is( $hub->safe_psql(
				'postgres',
				"SELECT count(*), sum(id::numeric) FROM events WHERE src = '$name'"
			),
			$local,
			"the hub holds exactly the rows of $name");
		$total += (split /\|/, $local)[0];
	}
	is($total, @sources * ($SINGLE_ROWS + $BULK_ROWS) + $RELAY_STEPS,
		'every source inserted its rows');
	is($hub->safe_psql('postgres', 'SELECT count(*) FROM events'),
		$total, 'the hub\'s row count is the sum of the sources\'');

	my $expected = join ' ',
	  map { "$_:$node_ids->{$_}" } sort keys %$node_ids;
	is( $hub->safe_psql(
			'postgres', q{
SELECT string_agg(x, ' ' ORDER BY x)
FROM (SELECT DISTINCT src || ':' || snowflake_node_id(id) AS x FROM events) s}),
		$expected,
		'snowflake_node_id(id) names the source of every row');

	# The single-row inserts ran at the same time: each source's stretch of
	# ID time, less its clock's offset, overlaps every other's.
	my $offsets = join ', ',
	  map { "('" . $_->name . "', " . ($offset_ms->{ $_->name } // 0) . ')' }
	  @sources;
	is( $hub->safe_psql(
			'postgres', qq{
SELECT max(lo) < min(hi) FROM (
	SELECT src, min(ms - o.ms_off) AS lo, max(ms - o.ms_off) AS hi
	FROM (SELECT src, row_number() OVER (PARTITION BY src ORDER BY id) AS n,
			extract(epoch FROM snowflake_timestamp(id)) * 1000 AS ms
		FROM events WHERE step IS NULL) s
	JOIN (VALUES $offsets) o(src, ms_off) USING (src)
	WHERE n <= $SINGLE_ROWS GROUP BY src) r}),
		't',
		'the sources inserted at the same time');

	foreach my $node (@sources)
	{
		is( $node->safe_psql(
				'postgres', q{
SELECT bool_and(id > prev) FROM (SELECT id, lag(id) OVER (ORDER BY step) AS prev
	FROM events WHERE step IS NOT NULL) s WHERE prev IS NOT NULL}),
			't',
			'on ' . $node->name . ', the relay rows\' IDs increase with their steps');
	}

	my $ord = ordering($hub);
	my $per = $RELAY_STEPS / @sources;
	is( $ord->{pairs},
		$RELAY_STEPS * ($RELAY_STEPS - 1) / 2 - @sources * ($per * ($per - 1) / 2),
		'every pair of relay rows from different sources is compared');
	return $ord;
}

1;
