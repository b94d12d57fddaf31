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
# and calls from other sessions lower the recorded lead to the minimum
# every start assumes, 1000 ms (history.h; the IDs issued under 3s move
# into the horizon).  Then A, still under 3s (a backend applies a reload
# only between statements), issues a batch that leads the clock by about
# 2.3 s, past that minimum.  The state file, read by A just after, must
# record a lead at least that large (A's call records its larger lead
# before it relies on it, or is held to the recorded one); before 1.2 it
# said 0, and a standby made then could place its floor below A's IDs.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# Sequence bits 8: 256 IDs per millisecond, so a batch of 600,000 spans
# about 2,344 ms.  Without the preload the lead is capped at the minimum
# (1000 ms, config.h), which the file always records: a batch of 150,000
# with 1024 IDs per millisecond (about 146 ms) then.
my ($layout, $batch) = no_preload() ? ('41/10/10', 150000) : ('41/14/8', 600000);
my $node = start_snowflake_node('one_bound',
	node_id => 2,
	layout => $layout,
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
	qr/waiting/, (q{
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
	SELECT max(x) INTO m FROM snowflake_nextval_batch($batch) x;
	INSERT INTO results
		SELECT current_setting('snowflake.max_drift_ms'),
		       extract(epoch FROM snowflake_timestamp(m) - clock_timestamp()) * 1000,
		       pg_read_binary_file('snowflake.state');
END $$;
} =~ s/\$batch\b/$batch/r));

$node->safe_psql('postgres',
	"ALTER SYSTEM SET snowflake.max_drift_ms = 0; SELECT pg_reload_conf()");
ok($node->poll_query_until('postgres', show_setting('snowflake.max_drift_ms'), '0'),
	'a reload lowered snowflake.max_drift_ms to 0');
# Calls under the new value, until the state file records the lower lead:
# the history's lead, an int64 at byte 64, at the minimum (1000 ms).
ok( $node->poll_query_until(
		'postgres', q{
SELECT snowflake_nextval() > 0
   AND substring(pg_read_binary_file('snowflake.state') FROM 65 FOR 8) = '\xe803000000000000'::bytea}),
	'the state file came to record the minimum lead, 1000 ms');

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
