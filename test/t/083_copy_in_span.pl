# Copyright: see LICENSE
#
# 083_copy_in_span.pl
#	A copy beside its original, with a span (issue 52, finding 5).  An
#	original with snowflake.node_id_span = 2 and node id 1 owns node ids
#	1 and 2: its standby, promoted to timeline 2, mints with node id 2.  A
#	copy of its data directory started beside it (a base backup started
#	without a signal file, as docs/operations.md's copy-beside recipe makes
#	one) with node id 2, inside that span, mints the keys of the
#	original's next failover; the claims cannot tell it (same system
#	identifier).  Its first start logs a WARNING that its node id falls
#	within the span of the server it was copied from; a copy given node id
#	3, outside it, logs none.  In 1.3 as issue 52 found it, nothing was
#	logged (564 keys in common of 100,000 with the promoted standby in the
#	issue's drill).  The recipe itself is 063_restored_copy.pl's.  With
#	the preload only: without it a start is not seen
#	(docs/deployment/no-preload.md).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $origin = start_snowflake_node('origin',
	node_id => 1,
	init => { allows_streaming => 1 },
	settings => { 'snowflake.node_id_span' => 2 });
$origin->safe_psql('postgres', 'CREATE EXTENSION snowflake');
mint_into($origin, 1000);
$origin->backup('copy');

# The original's own standby, promoted (a failover), mints with node id 2.
my $standby = start_snowflake_node('standby',
	from_backup => [ $origin, 'copy', has_streaming => 1 ]);
$origin->wait_for_catchup($standby);
promote_and_wait($standby);
is($standby->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	'2', 'the original\'s standby, promoted to timeline 2, mints with node id 2');
$standby->stop;

# A copy of the running original, started beside it with node id $node_id,
# out of recovery, asked for an ID once (whatever it answers: its start
# and its first reservation write are then in its log): the copy, and the
# answer, as error_report() gives it.
sub copy_beside
{
	my ($node_id) = @_;
	my $copy = start_snowflake_node("copy_$node_id",
		from_backup => [ $origin, 'copy' ],
		node_id => $node_id);
	$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die "the copy with node id $node_id did not leave recovery";
	return ($copy, error_report($copy, 'SELECT snowflake_nextval()'));
}

my ($inside) = copy_beside(2);
ok( $inside->log_contains(qr/WARNING:  [^\n]*\bnode id 2 [^\n]*span/),
	'a copy given node id 2, inside the original\'s span, warns at its first start');
$inside->stop;

my ($outside, $report) = copy_beside(3);
is($report, 'none', 'a copy given node id 3, outside the span, mints');
is($outside->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	'3', 'with node id 3');
unlike(slurp_file($outside->logfile), qr/WARNING:  [^\n]*span/,
	'and logs no warning about the span');
$outside->stop;
$origin->stop;

done_testing();
