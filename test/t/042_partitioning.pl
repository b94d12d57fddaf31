# Copyright: see LICENSE
#
# 042_partitioning.pl
#	Partitioning a table on its snowflake key, the two recipes of the
#	docs/adoption/partitioning.md: plain declarative partitions with snowflake_min_id() bounds,
#	pruned for "id >= snowflake_min_id(now() - interval '1 day')"; and
#	pg_partman's ID-based partitioning with one day's worth of IDs per
#	partition (aligned to the epoch, so partitions are UTC days), its
#	maintenance run creating partitions ahead, and retention dropping old
#	ones.  pg_partman's time-based mode does not accept a bigint control
#	column with an encoder, hence the ID-based mode.
#
# pg_partman comes from Debian's postgresql-NN-partman (4.x on 15, 5.x
# later), which test/setup.sh installs where the archive has it.  The file
# asks the server under test and skips where it cannot create pg_partman
# (a new major whose pg_partman is not packaged yet, a server built from
# source), saying "extension pg_partman is not available on this server";
# test/check.sh accepts that only where test/setup.sh installed no package
# for it.  Works with both major versions of pg_partman: 4.x wants p_type
# 'native', 5.x calls it 'range' (its default).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = start_snowflake_node('partitioning',
	node_id => 7,
	settings => { timezone => 'UTC' });
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');

skip_without_extension($node, 'pg_partman');

# The partitions of $table, as "name|lower|upper" with the bounds as IDs
# (the default partition as "name|default|").
my $partitions_sql = q{
SELECT string_agg(c.relname || '|' ||
         CASE WHEN pg_get_expr(c.relpartbound, c.oid) = 'DEFAULT' THEN 'default|'
              ELSE regexp_replace(pg_get_expr(c.relpartbound, c.oid),
                                  '^FOR VALUES FROM \(''?(-?\d+)''?\) TO \(''?(-?\d+)''?\)$', '\1|\2')
         END, E'\n' ORDER BY c.relname)
  FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
 WHERE i.inhparent = '%s'::regclass};

sub partitions
{
	my ($table) = @_;
	my $out = $node->safe_psql('postgres', sprintf($partitions_sql, $table));
	return map { [ split /\|/, $_, -1 ] } split /\n/, $out;
}

# One day's worth of IDs: the IDs of 86 400 000 milliseconds.
my $day_ids = $node->safe_psql('postgres',
	q{SELECT snowflake_min_id(now()) - snowflake_min_id(now() - interval '1 day')});
is($day_ids, 86_400_000 * 2**22, 'a day is 86400000 << 22 IDs in the default layout');

# ---------------------------------------------------------------------------
# Plain declarative partitioning, one partition per UTC day, and pruning.
# ---------------------------------------------------------------------------
$node->safe_psql(
	'postgres', q{
	CREATE TABLE ledger (id bigint NOT NULL DEFAULT snowflake_nextval(), note text)
	    PARTITION BY RANGE (id);
	-- The recipe of docs/adoption/partitioning.md: a partition per day, bounds from snowflake_min_id().
	DO $$
	DECLARE
	    day date;
	BEGIN
	    FOR day IN SELECT generate_series(current_date - 3, current_date + 1, interval '1 day')::date LOOP
	        EXECUTE format('CREATE TABLE %I PARTITION OF ledger FOR VALUES FROM (%s) TO (%s)',
	                       'ledger_' || to_char(day, 'YYYYMMDD'),
	                       snowflake_min_id(day::timestamptz),
	                       snowflake_min_id(day::timestamptz + interval '1 day'));
	    END LOOP;
	END
	$$;
	-- (an hour younger than d days, so that "1 day ago" is still within
	-- the last day when the test queries it)
	INSERT INTO ledger (id, note)
	SELECT snowflake_compose(now() - d * interval '1 day' + interval '1 hour', 7, 0),
	       d || ' days ago'
	  FROM generate_series(1, 3) d;
	INSERT INTO ledger (note) VALUES ('now');
});
my @ledger = partitions('ledger');
is(scalar @ledger, 5, 'five daily partitions');
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*) FROM ledger l
		 WHERE to_char(snowflake_timestamp(l.id), '"ledger_"YYYYMMDD') = l.tableoid::regclass::text}),
	4, 'every row is in the partition of its UTC day');

my $today = $node->safe_psql('postgres', q{SELECT to_char(current_date, 'YYYYMMDD')});
my $yesterday = $node->safe_psql('postgres', q{SELECT to_char(current_date - 1, 'YYYYMMDD')});
my $tomorrow = $node->safe_psql('postgres', q{SELECT to_char(current_date + 1, 'YYYYMMDD')});
my $plan = $node->safe_psql('postgres',
	q{EXPLAIN (COSTS OFF) SELECT * FROM ledger WHERE id >= snowflake_min_id(now() - interval '1 day')});
my @scanned = sort $plan =~ /Seq Scan on (ledger_\d+)/g;
is_deeply(\@scanned,
	[ "ledger_$yesterday", "ledger_$today", "ledger_$tomorrow" ],
	'EXPLAIN: only the partitions from yesterday on are scanned')
  or diag($plan);
like($plan, qr/Subplans Removed: 2/,
	'EXPLAIN: the two older partitions are pruned at executor start-up');
is( $node->safe_psql(
		'postgres',
		q{SELECT string_agg(note, ',' ORDER BY id) FROM ledger WHERE id >= snowflake_min_id(now() - interval '1 day')}),
	'1 days ago,now',
	'and the query returns the rows of the last day');

# ---------------------------------------------------------------------------
# pg_partman, ID-based, a day's worth of IDs per partition.
# ---------------------------------------------------------------------------
my ($ret, $stdout, $stderr) = $node->psql('postgres',
	'CREATE SCHEMA partman; CREATE EXTENSION pg_partman SCHEMA partman');
is($ret, 0, 'pg_partman is installed (Debian package postgresql-NN-partman)')
  or BAIL_OUT("pg_partman is missing: $stderr");
my $partman_version = $node->safe_psql('postgres',
	q{SELECT extversion FROM pg_extension WHERE extname = 'pg_partman'});
my ($partman_major) = $partman_version =~ /^(\d+)\./;
note("pg_partman $partman_version");
my $type_arg = $partman_major >= 5 ? '' : q{, p_type := 'native'};

$node->safe_psql(
	'postgres', qq{
	CREATE TABLE events (id bigint NOT NULL DEFAULT snowflake_nextval(), payload text,
	                     PRIMARY KEY (id))
	    PARTITION BY RANGE (id);
	-- The recipe of docs/adoption/partitioning.md: partitions of one day's worth of IDs, starting
	-- with the oldest day to keep, some days made ahead.
	SELECT partman.create_parent(
	    p_parent_table := 'public.events',
	    p_control := 'id',
	    p_interval := (snowflake_min_id(now()) - snowflake_min_id(now() - interval '1 day'))::text,
	    p_premake := 6,
	    p_start_partition := snowflake_min_id(now() - interval '5 days')::text
	    $type_arg);
});
my @events = grep { $_->[1] ne 'default' } partitions('events');
my $made = scalar @events;
cmp_ok($made, '>=', 7, "create_parent made $made partitions, from 5 days ago on");
is(scalar(grep { $_->[2] - $_->[1] == $day_ids } @events), $made,
	'each holds one day\'s worth of IDs');
is(scalar(grep { $_->[1] % $day_ids == 0 } @events), $made,
	'each starts at a multiple of it: aligned to the epoch');
is( $node->safe_psql(
		'postgres', q{
		SELECT count(*) FROM (
		    SELECT (regexp_match(pg_get_expr(c.relpartbound, c.oid), '\d+'))[1]::bigint AS lower
		      FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
		     WHERE i.inhparent = 'events'::regclass
		       AND pg_get_expr(c.relpartbound, c.oid) <> 'DEFAULT') p
		 WHERE snowflake_timestamp(lower) = date_trunc('day', snowflake_timestamp(lower))}),
	$made, 'so every partition is one UTC day, from midnight to midnight');

# Rows of the last days (as imported or written then) and new ones.
$node->safe_psql(
	'postgres', q{
	INSERT INTO events (id, payload)
	SELECT snowflake_compose(now() - d * interval '1 day', 7, 0), d || ' days ago'
	  FROM generate_series(1, 5) d;
	INSERT INTO events (payload) SELECT 'now' FROM generate_series(1, 10);
});
is( $node->safe_psql(
		'postgres', q{SELECT count(*) FROM events WHERE tableoid = 'events_default'::regclass}),
	0, 'no row went to the default partition');

# Maintenance makes partitions ahead of the newest ID.
$node->safe_psql('postgres', q{SELECT partman.run_maintenance('public.events')});
@events = grep { $_->[1] ne 'default' } partitions('events');
my $max_upper = (sort { $b <=> $a } map { $_->[2] } @events)[0];
my $ahead = $node->safe_psql('postgres',
	qq{SELECT $max_upper >= snowflake_min_id(date_trunc('day', now()) + interval '7 days')});
is($ahead, 't', 'run_maintenance() made partitions six days ahead of today');
cmp_ok(scalar @events, '>', $made, 'more partitions than create_parent made');

# Retention: three days' worth of IDs below the newest one.
my $old_partitions_sql = q{
SELECT count(*) FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
 WHERE i.inhparent = 'events'::regclass
   AND c.relname IN (SELECT 'events_p' || snowflake_min_id(date_trunc('day', now() - d * interval '1 day'))
                       FROM generate_series(4, 5) d)};
is($node->safe_psql('postgres', $old_partitions_sql),
	2, 'before retention, the partitions of four and five days ago exist');
$node->safe_psql(
	'postgres', qq{
	UPDATE partman.part_config
	   SET retention = (3 * $day_ids)::text, retention_keep_table = false
	 WHERE parent_table = 'public.events';
	SELECT partman.run_maintenance('public.events');
});
my $oldest_kept = $node->safe_psql('postgres',
	q{SELECT min(snowflake_timestamp(id)) > now() - interval '4 days' FROM events});
is($oldest_kept, 't', 'retention dropped the partitions older than three days');
is( $node->safe_psql(
		'postgres', q{
		SELECT string_agg(payload, ',' ORDER BY id) FROM events WHERE payload <> 'now'}),
	'3 days ago,2 days ago,1 days ago',
	'the rows of the last three days remain');
is($node->safe_psql('postgres', $old_partitions_sql),
	0, 'the partitions of four and five days ago are gone');

# New rows still go where they belong.
$node->safe_psql('postgres', q{INSERT INTO events (payload) VALUES ('later')});
is( $node->safe_psql(
		'postgres', q{
		SELECT tableoid::regclass::text = 'events_p' || snowflake_min_id(date_trunc('day', now()))
		  FROM events WHERE payload = 'later'}),
	't', 'a new row goes to today\'s partition');

$node->stop;
done_testing();
