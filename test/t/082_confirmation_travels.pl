# Copyright: see LICENSE
#
# 082_confirmation_travels.pl
#	A confirmation that must reach a standby (issue 52, finding 4).  A
#	server that waits for snowflake_confirm_restore() is cloned into a
#	streaming standby (pg_basebackup from it), then confirmed; the
#	standby, later promoted normally (pg_ctl promote, a new timeline)
#	after the confirmed server is lost, mints at once, and shares no key
#	with it:
#  - a restore (archive recovery) with snowflake.confirm_restore on;
#  - a standby started without standby.signal, which left recovery
#    without a new timeline (074's case; asked whatever the setting).
# In 1.3 as issue 52 found it, the confirmation was written into the
# confirmed server's state file only, and the clone carried the request in
# its own copy of the file: promoted, it refused every call ("not
# confirmed after a restore" / "after leaving recovery without a new
# timeline"), with a hint to do what had been done.
#
# And what still holds: docs/operations.md says that the safeguard does
# not stop a standby's start and its promotion, and that a request stands
# until a superuser confirms the node id (or the server is given its
# own).  A standby cloned from the restore while it still waits starts
# and is promoted; the request it carries from its primary, never
# confirmed, stands after the promotion until it is confirmed there (the
# server it was cloned from may be a copy beside its original).
# With the preload only: without it a start is not seen
# (docs/deployment/no-preload.md).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node_id = 3;
my $count = 16000;
my %no_archive = (archive_mode => 'off');

# $node mints $count IDs into its table of mint_into (created here if need
# be): the call's error_report(), 'none' if it minted.
sub try_mint
{
	my ($node) = @_;
	my $table = 'minted_' . $node->name;
	$node->safe_psql('postgres', "CREATE TABLE IF NOT EXISTS $table (id bigint NOT NULL)");
	return error_report($node,
		"INSERT INTO $table SELECT snowflake_nextval_batch($count)");
}

# $waiting (a server waiting for its node id to be confirmed) is cloned
# into a streaming standby named $name (a base backup of it, made with
# pg_basebackup), caught up.
sub clone
{
	my ($waiting, $name) = @_;
	$waiting->backup("clone_$name");
	my $clone = start_snowflake_node($name,
		from_backup => [ $waiting, "clone_$name", has_streaming => 1 ],
		settings => \%no_archive);
	$waiting->wait_for_catchup($clone);
	return $clone;
}

# $waiting is confirmed and mints; its clone catches up; $waiting is lost,
# and the clone is promoted: it mints, and shares no key with $waiting.
sub confirm_then_promote_clone
{
	my ($label, $waiting, $clone) = @_;
	is($waiting->safe_psql('postgres', "SELECT snowflake_confirm_restore($node_id)"),
		$node_id, "$label: a superuser confirms node id $node_id");
	mint_into($waiting, $count);
	$waiting->wait_for_catchup($clone);
	my $ids = minted_file($waiting);
	$waiting->stop('immediate');
	promote_and_wait($clone);
	my $report = try_mint($clone);
	diag("$label: the clone promoted: " . (split /\n/, $report)[0]);
	is($report, 'none', "$label: the clone, promoted after the confirmation, mints");
	is(keys_in_common($clone, $ids), '0', "$label: and shares no key with the confirmed server");
	$clone->stop;
	return;
}

my $origin = start_snowflake_node('origin',
	node_id => $node_id,
	init => { allows_streaming => 1, has_archiving => 1 });
$origin->safe_psql('postgres', 'CREATE EXTENSION snowflake');
mint_into($origin, 1000);
$origin->safe_psql('postgres', 'ALTER SYSTEM SET snowflake.confirm_restore = on');
$origin->restart;
$origin->backup('guarded');
$origin->safe_psql('postgres', 'SELECT pg_switch_wal()');

# ---------------------------------------------------------------------------
# A restore waiting for its confirmation, cloned
# ---------------------------------------------------------------------------

my $restored = start_snowflake_node('restored',
	from_backup => [ $origin, 'guarded', has_restoring => 1, standby => 0 ],
	settings => \%no_archive);
$restored->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the restore did not end';
like(error_report($restored, 'SELECT snowflake_nextval()'),
	qr/^55000: snowflake node id $node_id is not confirmed after a restore\n/,
	'the restore waits for the confirmation of its node id');
my $clone = clone($restored, 'restore_clone');
my $unconfirmed = clone($restored, 'unconfirmed_clone');

# What still holds: a clone of the restore while it waits, promoted before
# any confirmation.
is($unconfirmed->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'a standby cloned from a waiting restore starts');
promote_and_wait($unconfirmed);
like(error_report($unconfirmed, 'SELECT snowflake_nextval()'),
	qr/^55000: snowflake node id $node_id is not confirmed after a restore\n/,
	'promoted before any confirmation, it still waits for the one its primary waited for');
$unconfirmed->safe_psql('postgres', "SELECT snowflake_confirm_restore($node_id)");
is($unconfirmed->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
	$node_id, 'confirmed there, it mints');
$unconfirmed->stop;

confirm_then_promote_clone('a restore cloned, then confirmed', $restored, $clone);

# ---------------------------------------------------------------------------
# A server that left recovery without a new timeline, cloned
# ---------------------------------------------------------------------------

my $continued = start_snowflake_node('continued',
	from_backup => [ $origin, 'guarded', has_streaming => 1 ],
	settings => \%no_archive);
$origin->wait_for_catchup($continued);
$origin->stop;
$continued->stop;
unlink($continued->data_dir . '/standby.signal') or die "standby.signal: $!";
$continued->start;
$continued->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
  or die 'the standby did not leave recovery';
like(error_report($continued, 'SELECT snowflake_nextval()'),
	qr/^55000: snowflake node id $node_id is not confirmed after leaving recovery without a new timeline\n/,
	'a standby started without standby.signal waits for the confirmation of its node id');
$clone = clone($continued, 'continued_clone');
confirm_then_promote_clone('a server that left recovery without a new timeline, cloned, then confirmed',
	$continued, $clone);

done_testing();
