# Copyright: see LICENSE
#
# 067_sql_edition_load.pl
#	The SQL edition under load, on a server without the C library: eight
#	pgbench clients for a minute (SNOWFLAKE_EDITION_LOAD_SECONDS), each
#	transaction one call of snowflake_nextval() (nine in ten) or a batch of
#	three, every call's key stored with the times just before and just after
#	the call, read in the same backend (EditionTest.pm, load_and_check).
#
#  - Unique: no key twice (and pgbench saw no failed transaction).
#  - Within each session, strictly increasing in the order of its calls.
#  - Across sessions, the order that holds: a call that returned before
#    another call began, in any session of the database, has the smaller
#    key (the keys are taken in one sequence, in the order of the calls;
#    calls that overlap in time may come out in either order).  Every pair
#    of calls whose times do not overlap is checked.
#  - Every key carries the node id; none lies behind the clock when its
#    call began, or more than the allowed second ahead of it.
# test/t/093_sql_edition_move.pl drives the moves of the key sequence
# harder (layouts whose milliseconds hold four keys, a move held paused).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use EditionTest;
use Test::More;

my $seconds = $ENV{SNOWFLAKE_EDITION_LOAD_SECONDS} // 60;
my $node_id = 77;

my $install = edition_installation(edition_build());
my $node = start_edition_node('edition_load', $install,
	settings => { max_connections => 30, synchronous_commit => 'off' });
$node->safe_psql('postgres', "CREATE EXTENSION snowflake; SELECT snowflake_set_node_id($node_id)");

load_and_check($node, 'postgres', 'calls', $node_id, 8, $seconds);

$node->stop;
done_testing();
