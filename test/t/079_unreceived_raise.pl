# Copyright: see LICENSE
#
# 079_unreceived_raise.pl
#	A raise the standby has not received yet (issue 52, finding 1): with
#	snowflake.node_id_span 1 (the default) a primary's snowflake.max_drift_ms
#	is raised (ALTER SYSTEM, reload), a batch leads the clock by nearly
#	the new lead, and the primary is lost while its standby lags behind
#	the WAL record of the raise; the standby is promoted on the same host
#	and mints.  It may share no key with the lost primary: either the batch
#	waited until the standby flushed the record, or it was refused (55000,
#	naming the standby or slot that lags).  The standbys lag as the primary
#	can see them:
#  (a) a physical replication slot whose standby is stopped; a connected
#      streaming standby whose flush lags (its walsender held with SIGSTOP
#      before the raise, so that nothing the primary writes after it is
#      sent; the primary is then killed, and the held walsender with it);
#  (b) a synchronous standby, held the same way, when the IDs come from a
#      statement without an xid, which waits for no synchronous commit:
#      SELECT snowflake_nextval_batch(...) and COPY (SELECT ...) TO STDOUT;
#  (c) a standby the primary cannot see (no slot, stopped) is covered by
#      snowflake.node_id_span = 2: promoted, it mints with node id 2.
# In 1.3 as issue 52 found it, (a) and (b) share every key the promoted
# standby mints (16,000 of 16,000): the record of the raise was flushed
# locally only.  With the preload only (without it the lead is capped at
# 1 s, docs/deployment/no-preload.md).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# The raise, and the batch that leads the clock by nearly all of it: 9 s of
# IDs of the layout 41/10/4 (16 a millisecond).  The promoted standby,
# which knows a lead of 1 s, mints 1 s of IDs past the clock plus 1 s:
# all of them among the batch's while its promotion takes less than 7 s.
my $raised = 10000;
my $ahead = 9 * 1000 * 16;
my $minted = 16000;

# A primary (node id 1, snowflake.node_id_span $span) and its streaming
# standby named $standby_name, made from a backup before any raise,
# caught up; with $slot, the standby streams through a physical
# replication slot of that name.
sub primary_and_standby
{
	my ($tag, $standby_name, $span, $slot) = @_;
	my $primary = start_snowflake_node("primary_$tag",
		node_id => 1,
		layout => '41/10/4',
		init => { allows_streaming => 1 },
		settings => { 'snowflake.node_id_span' => $span });
	$primary->safe_psql('postgres', 'CREATE EXTENSION snowflake');
	$primary->safe_psql('postgres',
		"SELECT pg_create_physical_replication_slot('$slot', true)")
	  if defined $slot;
	mint_into($primary, 1000);
	$primary->backup('b');
	my $standby = start_snowflake_node($standby_name,
		from_backup => [ $primary, 'b', has_streaming => 1 ],
		settings => defined $slot ? { primary_slot_name => $slot } : {});
	$primary->wait_for_catchup($standby);
	return ($primary, $standby);
}

# Raise the lead on $primary and mint a batch $ahead IDs long by the
# statement $how ('insert': into the table of mint_into, which has an xid;
# 'select' and 'copy': SELECT and COPY ... TO STDOUT, without one), waiting
# for at most 2 s.  Returns the SQLSTATE ('none' if served), psql's
# standard error and a file of the IDs the primary handed out.
sub raise_and_mint
{
	my ($primary, $how) = @_;
	set_drift($primary, "${raised}ms", '10s');
	my $table = 'minted_' . $primary->name;
	my %sql = (
		insert => "INSERT INTO $table SELECT snowflake_nextval_batch($ahead)",
		select => "SELECT snowflake_nextval_batch($ahead)",
		copy => "COPY (SELECT snowflake_nextval_batch($ahead)) TO STDOUT");
	my ($state, $stderr, $stdout) =
	  sql_error($primary, "SET snowflake.max_wait_ms = '2s';\n$sql{$how}");
	note("the raised batch ($how): $state, the primary's lead "
		  . (stats($primary)->{lead_ms} // 'none') . ' ms');
	return ($state, $stderr, minted_file($primary)) if $how eq 'insert';
	my $file = PostgreSQL::Test::Utils::tempdir() . '/handed_out';
	PostgreSQL::Test::Utils::append_to_file($file, $stdout);
	return ($state, $stderr, $file);
}

# The raised batch was served, or refused because the standby named $who
# (its slot or application name) has not flushed the record of the raise.
sub served_or_refused
{
	my ($label, $state, $stderr, $who) = @_;
	ok($state eq 'none' || $state eq '55000',
		"$label: the raised batch is served, or refused with 55000 ($state)")
	  or diag($stderr);
	like(stderr_report($stderr), qr/\Q$who\E/,
		"$label: the refusal names $who")
	  if $state eq '55000';
	return;
}

# The promoted $standby mints, and shares no key with the IDs in $file
# that the lost primary handed out.
sub promoted_shares_none
{
	my ($label, $standby, $file) = @_;
	promote_and_wait($standby);
	mint_into($standby, $minted, '30s');
	my $common = keys_in_common($standby, $file);
	diag("$label: $common keys in common of the $minted the promoted standby minted");
	is($common, '0', "$label: the promoted standby shares no key with the lost primary");
	return;
}

# The PID of $primary's walsender to the standby named $name, stopped
# with SIGSTOP: it stays connected, streaming, and sends nothing more.
sub hold_walsender
{
	my ($primary, $name) = @_;
	my $pid = $primary->safe_psql('postgres',
		"SELECT pid FROM pg_stat_replication WHERE application_name = '$name' AND state = 'streaming'");
	die "no walsender streaming to $name" unless $pid =~ /^\d+$/;
	kill('STOP', $pid) or die "could not stop walsender $pid: $!";
	return $pid;
}

# Lose $primary at once with its walsender $pid held: the postmaster,
# then the walsender are killed (SIGKILL), so what the walsender held is
# never sent.
sub lose_with_held_walsender
{
	my ($primary, $pid) = @_;
	$primary->kill9;
	kill('KILL', $pid) or die "could not kill walsender $pid: $!";
	return;
}

# ---------------------------------------------------------------------------
# (a) A physical replication slot whose standby is stopped
# ---------------------------------------------------------------------------

{
	my ($primary, $standby) =
	  primary_and_standby('slot', 'slot_standby', 1, 'lagging_slot');
	$standby->stop;
	ok( $primary->poll_query_until('postgres',
			"SELECT NOT active FROM pg_replication_slots WHERE slot_name = 'lagging_slot'"),
		'the primary sees the slot of its stopped standby, inactive');
	my ($state, $stderr, $file) = raise_and_mint($primary, 'insert');
	served_or_refused('a slot whose standby is stopped', $state, $stderr, 'lagging_slot');
	$primary->stop('immediate');
	$standby->start;
	promoted_shares_none('a slot whose standby is stopped', $standby, $file);
	$standby->stop;
}

# ---------------------------------------------------------------------------
# (a) A connected streaming standby whose flush lags
# ---------------------------------------------------------------------------

{
	my ($primary, $standby) = primary_and_standby('held', 'held_standby', 1);
	my $walsender = hold_walsender($primary, 'held_standby');
	my ($state, $stderr, $file) = raise_and_mint($primary, 'insert');
	is( $primary->safe_psql('postgres',
			"SELECT state FROM pg_stat_replication WHERE application_name = 'held_standby'"),
		'streaming', 'the primary sees its standby streaming');
	served_or_refused('a connected standby whose flush lags', $state, $stderr, 'held_standby');
	lose_with_held_walsender($primary, $walsender);
	promoted_shares_none('a connected standby whose flush lags', $standby, $file);
	$standby->stop;
}

# ---------------------------------------------------------------------------
# (b) A synchronous standby, IDs from a statement without an xid
# ---------------------------------------------------------------------------

foreach my $how ('select', 'copy')
{
	my $name = "sync_standby_$how";
	my $label = "a synchronous standby, IDs by "
	  . ($how eq 'select' ? 'SELECT' : 'COPY (SELECT ...) TO STDOUT');
	my ($primary, $standby) = primary_and_standby("sync_$how", $name, 1);
	$primary->safe_psql('postgres',
		"ALTER SYSTEM SET synchronous_standby_names = '$name'; SELECT pg_reload_conf()");
	$primary->poll_query_until('postgres',
		"SELECT sync_state FROM pg_stat_replication WHERE application_name = '$name'",
		'sync')
	  or die "$name did not become synchronous";
	my $walsender = hold_walsender($primary, $name);
	my ($state, $stderr, $file) = raise_and_mint($primary, $how);
	served_or_refused($label, $state, $stderr, $name);
	lose_with_held_walsender($primary, $walsender);
	promoted_shares_none($label, $standby, $file);
	$standby->stop;
}

# ---------------------------------------------------------------------------
# (c) A standby the primary cannot see, with snowflake.node_id_span = 2
# ---------------------------------------------------------------------------

{
	my ($primary, $standby) = primary_and_standby('span', 'span_standby', 2);
	$standby->stop;
	my ($state, $stderr, $file) = raise_and_mint($primary, 'insert');
	is($state, 'none', 'a standby the primary cannot see: the raised batch is served')
	  or diag($stderr);
	$primary->stop('immediate');
	$standby->start;
	promoted_shares_none('a standby the primary cannot see, node_id_span 2', $standby, $file);
	is( $standby->safe_psql('postgres',
			'SELECT string_agg(DISTINCT snowflake_node_id(id)::text, \',\') FROM minted_span_standby'),
		'2', 'it mints with node id 2 on timeline 2');
	$standby->stop;
}

done_testing();
