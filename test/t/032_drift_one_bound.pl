# Copyright: see LICENSE
#
# 032_drift_one_bound.pl
#	One server, one bound on the lead: a backend still running a statement
#	under a snowflake.max_drift_ms that a reload lowered never issues IDs
#	further ahead than the state file records.
#
# The lead the state file records is what a standby, a backup or a restart
# places its floor with.  Session A starts a statement under
# max_drift_ms = 3s and waits inside it; a reload lowers the setting to 0
# and calls from other sessions let the recorded lead fall to 0 (after the
# old value has elapsed).  Then A, still under 3s (a backend applies a
# reload only between statements), issues a batch that leads the clock by
# about 150 ms, within the reservation the background writer keeps ahead.
# The state file, read by A just after, must record a lead at least that
# large (or A must have been held to the recorded one); before 1.2 it said
# 0, and a standby made then could place its floor below A's IDs.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# Sequence bits 10: 1024 IDs per millisecond, so a batch of 150,000 spans
# about 146 ms.
my $node = start_snowflake_node('one_bound',
	node_id => 2,
	layout => '41/10/10',
	settings => { 'snowflake.max_drift_ms' => '3s' });
$node->safe_psql(
	'postgres', q{
CREATE EXTENSION snowflake;
CREATE TABLE ctl (go boolean NOT NULL);
INSERT INTO ctl VALUES (false);
CREATE TABLE results (drift text, lead_ms float8, state bytea);
SELECT snowflake_nextval();
});

# Session A: one statement that waits for the go (bounded), then issues the
# batch and reads the state file at once.
my $a = $node->background_psql('postgres');
$a->query_until(
	qr/waiting/, q{
\echo waiting
DO $$
DECLARE
	deadline timestamptz := clock_timestamp() + interval '180 s';
	m bigint;
BEGIN
	PERFORM snowflake_nextval();
	WHILE NOT (SELECT go FROM ctl) LOOP
		IF clock_timestamp() > deadline THEN
			RAISE EXCEPTION 'no go within 180 s';
		END IF;
		PERFORM pg_sleep(0.01);
	END LOOP;
	SELECT max(x) INTO m FROM snowflake_nextval_batch(150000) x;
	INSERT INTO results
		SELECT current_setting('snowflake.max_drift_ms'),
		       extract(epoch FROM snowflake_timestamp(m) - clock_timestamp()) * 1000,
		       pg_read_binary_file('snowflake.state');
END $$;
});

$node->safe_psql('postgres',
	"ALTER SYSTEM SET snowflake.max_drift_ms = 0; SELECT pg_reload_conf()");
ok($node->poll_query_until('postgres', show_setting('snowflake.max_drift_ms'), '0'),
	'a reload lowered snowflake.max_drift_ms to 0');
# Calls under the new value, until the state file records the lower lead
# (once the old one has elapsed): the largest lead, an int64 at byte 64.
ok( $node->poll_query_until(
		'postgres', q{
SELECT snowflake_nextval() > 0
   AND substring(pg_read_binary_file('snowflake.state') FROM 65 FOR 8) = '\x0000000000000000'::bytea}),
	'the state file came to record a largest lead of 0');

$node->safe_psql('postgres', 'UPDATE ctl SET go = true');
ok($node->poll_query_until('postgres', 'SELECT count(*) = 1 FROM results'),
	'session A issued its batch');
$a->quit;

my ($drift, $lead, $state_hex) = split /\|/,
  $node->safe_psql('postgres',
	"SELECT drift, lead_ms, encode(state, 'hex') FROM results");
my $recorded = unpack('q', substr(pack('H*', $state_hex), 64, 8));
is($drift, '3s', 'session A still ran under the old value');
note("session A's batch led the clock by $lead ms; the state file records $recorded ms");
cmp_ok($recorded, '>=', $lead,
	"the lead the state file records covers session A's IDs");

done_testing();
