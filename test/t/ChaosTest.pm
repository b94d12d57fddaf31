# Copyright: see LICENSE
#
# ChaosTest.pm
#	The seeded fault campaign (test/chaos.sh, 051_chaos.pl): a primary and
#	a streaming standby under libfaketime and the fault shim, clients that
#	record every ID the server acknowledged, a scheduler that injects
#	faults picked by a seeded generator, and a checker of the whole
#	history afterwards.
#
# The history is a directory of text files, one line per event, times in
# real (unfaked) seconds since the epoch as the clients' and the
# scheduler's own clocks read them:
#   client-N   A term server life t_start t_ack id,id,...   acknowledged
#              E term server life t_start t_end sqlstate message
#   schedule   F seq t kind params        a fault injected
#              C t offset_s               the servers' clock offset from then on
#              D t drift_ms               snowflake.max_drift_ms in force from then on
#              T t term server            the primary clients use from then on
#              B t_ack t_start term server first count
#                                         a batch of IDs the scheduler was given
#                                         (count consecutive IDs of one node)
#              U t_end t_start server sqlstate count first
#                                         an attempt to mint on a server that
#                                         must refuse (it left recovery
#                                         without a new timeline, or is a
#                                         copy whose node id falls within its
#                                         original's span, and its node id is
#                                         not confirmed): count IDs given (0:
#                                         refused with sqlstate)
#              X t_end t_start server sqlstate
#                                         a batch of the scheduler refused,
#                                         as it must be, while a standby
#                                         lags behind a raise (raise_lagging)
#              G t seq server what t_lost a start that must mint at once
#                                         (probe_mint: after_expiry, clone,
#                                         copy); t_lost: when the server it
#                                         succeeds was lost
#              P t_end t_start seq sqlstate id
#                                         one call of it (none: served)
#              W t server node_id inside warned
#                                         a copy started beside the
#                                         primary, its node id inside the
#                                         span of its original's or not,
#                                         and whether its start warned
#              N t what                   a note (what happened, for the
#                                         summary): the first word names it
# A term is one server's time as the primary (it changes at a promotion);
# the IDs of a server that must refuse have a term of their own
# ("refused-SEQ"); a life is one postmaster start (pg_postmaster_start_time()).

package ChaosTest;

use strict;
use warnings;

use Exporter 'import';
use DBI;
use File::Path ();
use POSIX ();
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use List::Util qw(sum0);
use Time::HiRes qw(time sleep);

our @EXPORT = qw(run_campaign check_history summary);

# The layout the campaign runs with (the defaults) and its epoch in ms.
my $shift = 22;
my $epoch_ms = 1704067200000;
my $clients = 4;
our $discarded = 0;

# SQLSTATEs of documented refusals (SPEC.md section 6): clock behind,
# during recovery, time out of range, preconditions (node id, layout,
# preload), and a state file write that failed (errcode_for_file_access:
# ENOSPC gives 53100, EIO 58030, EACCES 42501).
my %refusal = map { $_ => 1 } qw(58000 25006 22003 55000 53100 58030 42501);

# Errors of a lost or refused connection: expected while a server crashes,
# restarts or is stopped; the statement's outcome is unknown to the client,
# which records no ID.
sub connection_error
{
	my ($state, $msg) = @_;
	return 1 if $state =~ /^(08|57P0)/;
	return 1 if $state =~ /^(|S8006|S1000|22000)$/
	  && $msg =~ /connection|terminat|server closed|could not (connect|send|receive)|timeout expired|no such file/i;
	return 0;
}

# --- the clients ---------------------------------------------------------

# The primary clients use now: (term, server name, host, port).
sub read_target
{
	my ($file) = @_;
	open my $fh, '<', $file or return;
	my $line = <$fh>;
	close $fh;
	return unless defined $line && $line =~ /^(\d+) (\S+) (\S+) (\d+)$/;
	return ($1, $2, $3, $4);
}

# One client: until $deadline, insert single rows and batches on the
# current primary, recording each acknowledgement after the statement (an
# autocommitted INSERT) returned, and each error with its SQLSTATE.
sub client_main
{
	my ($n, $seed, $deadline, $dir) = @_;
	srand($seed * 1000 + $n);    # the workload's own choices only
	open my $out, '>>', "$dir/client-$n" or die "$dir/client-$n: $!";
	$out->autoflush(1);
	my ($dbh, $term, $server, $life);
	my $parent = getppid();
	while (time() < $deadline && getppid() == $parent)
	{
		my @target = read_target("$dir/target");
		if ($dbh && (!@target || $target[0] != $term))
		{
			$dbh->disconnect;
			undef $dbh;
		}
		if (!$dbh && @target)
		{
			my ($t, $s, $host, $port) = @target;
			$dbh = DBI->connect(
				"dbi:Pg:dbname=postgres;host=$host;port=$port;connect_timeout=2;application_name=chaos$n",
				'', '', { AutoCommit => 1, RaiseError => 0, PrintError => 0 });
			if ($dbh)
			{
				($life) = $dbh->selectrow_array(
					"SELECT to_char(pg_postmaster_start_time(), 'YYYYMMDDHH24MISS.US')");
				($term, $server) = ($t, $s);
				undef $dbh unless defined $life;
			}
		}
		if (!$dbh)
		{
			sleep(0.05);    # the pace of reconnection attempts
			next;
		}
		my $r = rand();
		my $count = $r < 0.7 ? 1 : $r < 0.98 ? 2 + int(rand(20)) : 100 + int(rand(900));
		my $t0 = time();
		my $ids = $count == 1
		  ? $dbh->selectcol_arrayref('INSERT INTO ids (client) VALUES (?) RETURNING id', undef, $n)
		  : $dbh->selectcol_arrayref(
			'INSERT INTO ids (client) SELECT ? FROM generate_series(1, ?) RETURNING id',
			undef, $n, $count);
		my $t1 = time();
		if ($ids)
		{
			printf $out "A\t%d\t%s\t%s\t%.6f\t%.6f\t%s\n", $term, $server, $life, $t0, $t1,
			  join(',', @$ids);
		}
		else
		{
			my ($state, $msg) = ($dbh->state // '', $dbh->errstr // '');
			$msg =~ s/\s+/ /g;
			printf $out "E\t%d\t%s\t%s\t%.6f\t%.6f\t%s\t%s\n", $term, $server, $life, $t0, $t1,
			  $state, $msg;
			if (!$dbh->ping)
			{
				undef $dbh;
			}
		}
		sleep(0.03);    # the workload's pace: about 30 statements a second per client
	}
	close $out;
	POSIX::_exit(0);    # no END block of the parent's test framework
}

# --- the servers ---------------------------------------------------------

# Start $node under the shared fake clock with the fault shim, retrying
# while a killed postmaster's orphans still hold the old shared memory.
sub start_node
{
	my ($node) = @_;
	for my $i (1 .. 300)
	{
		return if start_faked($node, shim => 1, fail_ok => 1);
		$node->stop('immediate', fail_ok => 1);
		sleep(0.2);
	}
	die $node->name . ' does not start again';
}

# A DBI connection to $node, or undef.
sub dbh_of
{
	my ($node) = @_;
	return DBI->connect(
		'dbi:Pg:dbname=postgres;host=' . $node->host . ';port=' . $node->port . ';connect_timeout=3',
		'', '', { AutoCommit => 1, RaiseError => 0, PrintError => 0 });
}

# Wait (bounded, 120 s) until $node answers; die otherwise.
sub wait_up
{
	my ($node) = @_;
	my $deadline = time() + 120;
	while (time() < $deadline)
	{
		my $dbh = dbh_of($node);
		if ($dbh && $dbh->selectrow_array('SELECT 1'))
		{
			$dbh->disconnect;
			return;
		}
		sleep(0.1);
	}
	die $node->name . ' did not come back within 120 s';
}

# PIDs of $node's backends of the given backend_type (client backends of
# the campaign's clients by default).
sub backend_pids
{
	my ($node, $type) = @_;
	my $dbh = dbh_of($node) or return ();
	my $where = defined $type
	  ? "backend_type = '$type'"
	  : "backend_type = 'client backend' AND application_name LIKE 'chaos%'";
	my $pids = $dbh->selectcol_arrayref("SELECT pid FROM pg_stat_activity WHERE $where ORDER BY pid");
	$dbh->disconnect;
	return @{ $pids // [] };
}

sub postmaster_pid
{
	my ($node) = @_;
	open my $fh, '<', $node->data_dir . '/postmaster.pid' or return;
	my $pid = <$fh>;
	close $fh;
	chomp $pid;
	return $pid;
}

# --- the campaign --------------------------------------------------------

# Fault kinds and their weights in the seeded draw.  Issue 44's five
# sequences (docs/guarantees.md, "Restarts and crashes") and issue 52's five
# (raise_lagging to copy_span: "The history's leads", "A request to confirm
# the node id", "A switchover and back") each copy, promote or rebuild a
# server, or wait out a raised lead, so each takes seconds where the others
# take one or less (the standby is brought back in the background, see
# standby jobs); issue 52's weigh most, so that each runs at least about
# ten times in ten minutes on a shared 2-CPU machine, while issue 44's and
# the others still run (docs/guarantees.md, "Under random faults", has the
# counts).  Without the preload issue 52's kinds but switchover_back are
# passed over (nothing is raised past 1 s there, and a start is not seen),
# as a standby started without standby.signal is.
my @kinds = (
	[ kill_backend => 3 ], [ kill_writer => 2 ], [ kill_postmaster => 1 ],
	[ stop_backend => 2 ], [ stop_postmaster => 1 ], [ clock_small => 3 ],
	[ clock_large => 2 ], [ state_file_fault => 3 ], [ drift_reload => 2 ],
	[ promote => 1 ], [ restart_no_preload => 1 ], [ restart => 1 ],
	[ restore_unwritable => 1 ],
	[ cold_copy => 1 ], [ unreadable_crash => 1 ], [ lead_raise => 1 ],
	[ standby_no_signal => 2 ], [ skipped_timeline => 1 ],
	[ raise_lagging => 10 ], [ raise_lower_expire => 10 ], [ switchover_back => 10 ],
	[ clone_unconfirmed => 10 ], [ copy_span => 10 ]);

# The kinds that take many seconds (a copy, a promotion, a server built
# anew): the clients run meanwhile, so the pause before one is a third of
# the schedule's (1 to 4 s) draw; and one drawn with less than $late
# seconds of the run left is passed over (counted in the summary), so that
# a run ends close to its length (CI's smoke of 20 s runs none of them).
my $late = 20;
my %long = map { $_ => 1 } qw(promote restore_unwritable cold_copy unreadable_crash
  lead_raise standby_no_signal skipped_timeline raise_lagging raise_lower_expire
  switchover_back clone_unconfirmed copy_span);

# The kinds passed over without the preload, and why (the note in the
# schedule; the summary counts them).
my %needs_preload = (
	raise_lagging => 'without the preload nothing is raised past 1 s',
	raise_lower_expire => 'without the preload nothing is raised past 1 s',
	clone_unconfirmed => 'without the preload a start that must be confirmed cannot be seen',
	copy_span => 'without the preload a copy\'s start cannot be seen');

# The next kind: drawn from a deck that holds each kind as many times as
# its weight, shuffled by the seeded generator and dealt out before it is
# shuffled again, so that a run of about one deck's length (ten minutes on
# the shared machine) runs each kind about as often as its weight says,
# which independent draws would not (ten minutes of seed 52 ran one kind
# of issue 52's once, another ten times, at the same weight).
my @deck;

sub pick_kind
{
	if (!@deck)
	{
		@deck = map { ($_->[0]) x $_->[1] } @kinds;
		for (my $i = $#deck; $i > 0; $i--)
		{
			my $j = int(rand($i + 1));
			@deck[ $i, $j ] = @deck[ $j, $i ];
		}
	}
	return shift @deck;
}

# snowflake.node_id_span of both servers, chosen by the seed: 2 for an odd
# seed, 1 for an even one.  Each tests what the other cannot:
#  - With span 2 a promoted server mints with another node field than its
#    parent timeline's, so a split brain (skipped_timeline: the old primary
#    mints on after the standby is promoted) must share no key, skipped
#    timeline numbers included.  But no failover can then collide,
#    whatever its floor: the node field changes at every promotion, and
#    the field of two timelines back returns only after a second
#    promotion, long after a raised lead has passed.  A raise before a
#    failover (lead_raise) would prove nothing.
#  - With span 1 (one node id for the primary and its standbys, the
#    default) every promotion mints with the old primary's node field: only
#    the floor, the clock plus the largest lead the history allowed, keeps
#    the promoted server's IDs above the old primary's.  A raise on the
#    primary that did not reach the standby (in WAL), or a floor skipped,
#    issues keys twice.  A split brain with span 1 issues keys twice by
#    design (the docs require a span of 2 or more for it), so with span 1
#    the old primary is always stopped before the promotion, once its IDs
#    lead the clock by no more than its lead (settle_lead), and the clock
#    offset stays at or below 0 (inject, clock steps).
# Choosing per run rather than per operation keeps the servers' settings
# fixed for the run, as in production: a change of span is a change of
# node id.  Publish one run of each parity.
sub span_of_seed
{
	my ($seed) = @_;
	return $seed % 2 ? 2 : 1;
}

# Run the campaign: seed $seed, $seconds of faults; the history goes to
# directory $dir.  Without the preload (SNOWFLAKE_TEST_NO_PRELOAD, PostgreSQL
# 17 and later) both servers run without it throughout.  Returns a hash of
# what was injected.
sub run_campaign
{
	my ($seed, $seconds, $dir) = @_;
	my %c = (dir => $dir, seed => $seed, offset => 0, drift => 1000, term => 1,
		preload => !no_preload(), no_preload_run => no_preload(),
		span => span_of_seed($seed), seq => 0, kinds => {}, skipped => {}, late => {});
	open my $sched, '>', "$dir/schedule" or die "$dir/schedule: $!";
	$sched->autoflush(1);
	$c{log} = $sched;

	my %conf = ('snowflake.max_drift_ms' => 1000);
	my $primary = start_snowflake_node('primary', node_id => 1,
		init => { allows_streaming => 1 },
		settings => {
			'snowflake.node_id_span' => $c{span}, restart_after_crash => 'on',
			wal_log_hints => 'on', wal_keep_size => '256MB', max_connections => 30 },
		include => [ 'chaos.conf', %conf ], start => 0);
	set_fault();
	start_node($primary);
	$primary->safe_psql('postgres', q{CREATE EXTENSION snowflake;
CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), client int NOT NULL)});
	$primary->backup('chaos');
	my $standby = start_snowflake_node('standby',
		from_backup => [ $primary, 'chaos', has_streaming => 1 ], start => 0);
	start_node($standby);
	$primary->wait_for_catchup($standby);
	@c{qw(primary standby conf version)} = ($primary, $standby, \%conf, $primary->pg_version);
	# Each server's own postgresql.conf (its port, socket directory and
	# node settings), for a server built anew from the other's copy.
	$c{pgconf}{ $_->name } = slurp_file($_->data_dir . '/postgresql.conf') foreach ($primary, $standby);
	event(\%c, 'C', 0);
	event(\%c, 'D', lead_of(\%c, 1000));
	set_target(\%c);

	my $deadline = time() + $seconds;
	my @pids;
	for my $n (1 .. $clients)
	{
		my $pid = fork() // die "fork: $!";
		client_main($n, $seed, $deadline, $dir) if $pid == 0;
		push @pids, $pid;
	}

	srand($seed);
	while (time() < $deadline)
	{
		my $gap = 1 + rand(3);
		my $kind = pick_kind();
		sleep($long{$kind} ? $gap / 3 : $gap);    # the schedule's pace between faults
		last if time() >= $deadline;
		if ($long{$kind} && time() + $late > $deadline)
		{
			$c{late}{$kind}++;
			next;
		}
		inject(\%c, $kind);
	}
	waitpid($_, 0) foreach @pids;
	# Heal: no disk fault, the standby back, and the primary must answer.
	set_fault();
	standby_wait(\%c);
	$c{up} = eval { wait_up($c{primary}); 1 } ? 1 : 0;
	$c{up_error} = $@;
	close $sched;
	return \%c;
}

# Append a line to the schedule: type, the time now, fields.
sub event
{
	my ($c, $type, @fields) = @_;
	printf { $c->{log} } "%s\t%.6f\t%s\n", $type, time(), join("\t", @fields);
	return;
}

# A note in the schedule and on stderr: $what (one word) and $detail.
sub note_event
{
	my ($c, $what, $detail) = @_;
	printf STDERR "# chaos      %s   note %-13s %s\n", POSIX::strftime('%H:%M:%S', localtime),
	  $what, $detail;
	$detail =~ s/\s+/ /g;
	event($c, 'N', $what, $detail);
	return;
}

sub set_target
{
	my ($c) = @_;
	my $p = $c->{primary};
	my $f = "$c->{dir}/target";
	open my $fh, '>', "$f.new" or die $!;
	printf $fh "%d %s %s %d\n", $c->{term}, $p->name, $p->host, $p->port;
	close $fh;
	rename "$f.new", $f or die $!;
	event($c, 'T', $c->{term}, $p->name);
	return;
}

# The lead IDs may have with snowflake.max_drift_ms = $drift in the mode the
# servers run in: without the preload it is capped at 1000 ms
# (SNOWFLAKE_NO_PRELOAD_MAX_DRIFT_MS, src/config.h), which the checker's
# bound (the D events) must know.
sub lead_of
{
	my ($c, $drift) = @_;
	return !$c->{preload} && $drift > 1000 ? 1000 : $drift;
}

# How SHOW prints a number of milliseconds.
sub shown_ms
{
	my ($ms) = @_;
	return $ms % 60000 == 0 ? ($ms / 60000) . 'min'
	  : $ms % 1000 == 0 ? ($ms / 1000) . 's' : "${ms}ms";
}

# Inject one fault of kind $kind; its parameters come from the seeded
# generator (drawn before anything that depends on timing).
sub inject
{
	my ($c, $kind) = @_;
	my $p = $c->{primary};
	my $r1 = rand();
	my $r2 = rand();
	my $params = '';
	my $seq = ++$c->{seq};
	my $t0 = time();
	my $log = sub {
		$params = join(' ', @_);
		printf STDERR "# chaos %4d %s %-18s %s\n", $seq,
		  POSIX::strftime('%H:%M:%S', localtime), $kind, $params;
		event($c, 'F', $seq, $kind, $params);
	};
	my $secs = sprintf('%.1f', 0.5 + 2.5 * $r2);
	my $after = sprintf('%.1f', 0.2 + $r2);    # the clients' IDs after a copy
	if ($kind eq 'kill_backend' || $kind eq 'stop_backend')
	{
		my @b = backend_pids($p);
		return $log->('no client backend') unless @b;
		my $pid = $b[ int($r1 * @b) ];
		if ($kind eq 'kill_backend')
		{
			$log->("pid $pid");
			kill 'KILL', $pid;
			wait_up($p);
		}
		else
		{
			my $secs = sprintf('%.1f', 0.2 + 2.8 * $r2);
			$log->("pid $pid for ${secs}s");
			kill 'STOP', $pid;
			sleep($secs);
			kill 'CONT', $pid;
		}
	}
	elsif ($kind eq 'kill_writer')
	{
		my @w = backend_pids($p, 'snowflake reservation writer');
		return $log->('no writer running') unless @w;
		$log->("pid $w[0]");
		kill 'KILL', $w[0];
		wait_up($p);
	}
	elsif ($kind eq 'kill_postmaster')
	{
		$log->('pid ' . postmaster_pid($p));
		$p->kill9;    # and the test framework forgets the PID
		start_node($p);
		wait_up($p);
	}
	elsif ($kind eq 'stop_postmaster')
	{
		my $pid = postmaster_pid($p);
		my $secs = sprintf('%.1f', 0.2 + 2.8 * $r2);
		$log->("pid $pid for ${secs}s");
		kill 'STOP', $pid;
		sleep($secs);
		kill 'CONT', $pid;
	}
	elsif ($kind eq 'clock_small' || $kind eq 'clock_large')
	{
		# Small: 20 to 900 ms; large: 2 to 20 s.  Backwards or forwards
		# at even odds, but the offset stays within -30 s .. +120 s, and
		# with span 1 within -30 s .. 0 (span_of_seed: there a failover
		# rests on the floor, and processes that the postmaster starts
		# at a promotion were seen reading the real clock under
		# libfaketime, 035_floor_clock_behind.pl: ahead of the servers'
		# clock their floor lies higher, which is safe, behind it lower).
		my $max = $c->{span} == 1 ? 0 : 120;
		my $size = $kind eq 'clock_small' ? 0.02 + 0.88 * $r2 : 2 + 18 * $r2;
		my $sign = $r1 < 0.5 ? -1 : 1;
		$sign = 1 if $c->{offset} - $size < -30;
		$sign = -1 if $c->{offset} + $size > $max;
		my $new = sprintf('%.3f', $c->{offset} + $sign * $size);
		$log->(sprintf('%+.3fs to %+.3fs', $sign * $size, $new));
		set_clock(sprintf('%+.3f', $new));
		event($c, 'C', $new);
		$c->{offset} = $new;
	}
	elsif ($kind eq 'state_file_fault')
	{
		my @f = ('open ENOSPC', 'write ENOSPC', 'fsync EIO', 'rename EIO', 'dirfsync EIO');
		my $fault = $f[ int($r1 * @f) ];
		my $secs = sprintf('%.1f', 0.2 + 2.8 * $r2);
		$log->("$fault for ${secs}s");
		set_fault($fault);
		sleep($secs);
		set_fault();
	}
	elsif ($kind eq 'drift_reload')
	{
		my @d = (50, 200, 1000, 3000);
		my $new = $d[ int($r1 * @d) ];
		$new = $d[ (int($r1 * @d) + 1) % @d ] if $new == $c->{drift};
		$log->("snowflake.max_drift_ms $c->{drift} to $new");
		set_drift_all($c, $new);
	}
	elsif ($kind eq 'promote')
	{
		standby_ready($c);
		$log->($p->name . ' stops, ' . $c->{standby}->name . ' is promoted, ' . $p->name . ' rewound');
		promote($c);
	}
	elsif ($kind eq 'restore_unwritable')
	{
		restore_in_place($c, $log, $r1 < 0.5 ? 'base backup' : 'volume snapshot', $secs);
	}
	elsif ($kind eq 'cold_copy')
	{
		cold_copy($c, $log, $after);
	}
	elsif ($kind eq 'unreadable_crash')
	{
		unreadable_crash($c, $log, $r1 < 0.5 ? 'base backup' : 'volume snapshot', $after);
	}
	elsif ($kind eq 'lead_raise')
	{
		lead_raise($c, $log);
	}
	elsif ($kind eq 'standby_no_signal')
	{
		if (!$c->{preload})
		{
			# Without the preload the start cannot be seen (the server
			# learns of no start before the first use of the generator,
			# after recovery removed its signs: docs/deployment/no-preload.md),
			# so the standby would mint with its primary's node field.
			$log->('skipped: without the preload a start without standby.signal cannot be seen');
			$c->{skipped}{$kind}++;
			return;
		}
		standby_no_signal($c, $log, 2 + int(5 * $r1));
	}
	elsif ($kind eq 'skipped_timeline')
	{
		skipped_timeline($c, $log, $after + 0.5);
	}
	elsif ($needs_preload{$kind} && !$c->{preload})
	{
		$log->("skipped: $needs_preload{$kind}");
		$c->{skipped}{$kind}++;
		return;
	}
	elsif ($kind eq 'raise_lagging')
	{
		raise_lagging($c, $log, $r1 < 0.5 ? 'held walsender' : 'slot');
	}
	elsif ($kind eq 'raise_lower_expire')
	{
		raise_lower_expire($c, $log, $r1 < 0.5 ? 'crash' : 'failover', 3000 + 100 * int(16 * $r2));
	}
	elsif ($kind eq 'switchover_back')
	{
		switchover_back($c, $log, 3500 + 100 * int(16 * $r2));
	}
	elsif ($kind eq 'clone_unconfirmed')
	{
		clone_unconfirmed($c, $log, $r1 < 0.5 ? 'base backup' : 'standby', $after);
	}
	elsif ($kind eq 'copy_span')
	{
		copy_span($c, $log);
	}
	elsif ($kind eq 'restart_no_preload' && $c->{version} >= 17 && !$c->{no_preload_run})
	{
		toggle_preload($c, $log);
	}
	else
	{
		# A clean restart (also restart_no_preload before 17, which has
		# no mode without the preload, and in a run without the preload
		# throughout).
		$kind = 'restart';
		$log->('fast');
		$p->stop('fast', fail_ok => 1);
		start_node($p);
		wait_up($p);
	}
	$c->{kinds}{$kind}++;
	$c->{secs}{$kind} += time() - $t0;
	return;
}

# Write chaos.conf of @nodes (both servers by default, after the standby
# job) from the campaign's settings.
sub write_conf
{
	my ($c, @nodes) = @_;
	if (!@nodes)
	{
		standby_wait($c);
		@nodes = ($c->{primary}, $c->{standby});
	}
	my %s = %{ $c->{conf} };
	$s{shared_preload_libraries} = '' unless $c->{preload};
	write_conf_file($_, 'chaos.conf', %s) foreach @nodes;
	return;
}

# Set snowflake.max_drift_ms on both servers.  The checker takes a raised
# lead as in force from before the reload, a lowered one from a second
# after every new session sees it (a backend rereads the setting at its
# next statement).
sub set_drift_all
{
	my ($c, $new) = @_;
	my $old = lead_of($c, $c->{drift});
	my $lead = lead_of($c, $new);
	event($c, 'D', $lead) if $lead > $old;
	$c->{conf}{'snowflake.max_drift_ms'} = $new;
	write_conf($c);
	foreach my $node ($c->{primary}, $c->{standby})
	{
		my $pm = postmaster_pid($node);
		$node->reload if $pm && kill(0, $pm);
	}
	$c->{primary}->poll_query_until('postgres',
		show_setting('snowflake.max_drift_ms'), shown_ms($new))
	  or die "max_drift_ms $new not seen";
	if ($lead < $old)
	{
		sleep(1);    # the grace the checker gives backends, see above
		event($c, 'D', $lead);
	}
	$c->{drift} = $new;
	return;
}

# Set the servers' clock to +0 before a copy whose restore's safety rests on
# a floor (its first ID past its clock plus the lead): on PostgreSQL 15
# libfaketime was seen leaving the background writer, which applies the
# floor, on the real clock (035_floor_clock_behind.pl), which must then be
# the servers' clock.  Made before the copy, a step back is safe: the
# copy's state file covers every ID issued before it, and the lost server
# issues none later further ahead of the new clock than its lead allows.
# (Not before a promotion: the promoted server knows nothing of the old
# primary's IDs but the lead, see settle_lead.)
sub floor_clock
{
	my ($c) = @_;
	return if $c->{offset} == 0;
	set_clock('+0');
	event($c, 'C', 0);
	$c->{offset} = 0;
	return;
}

# The timeline $node (a primary) writes WAL on.
sub timeline_of
{
	my ($node) = @_;
	return hex(substr($node->safe_psql('postgres',
		'SELECT pg_walfile_name(pg_current_wal_lsn())'), 0, 8));
}

# Make sure the standby runs before an operation that needs it.  A standby
# stops by design when it cannot record a lead replayed from WAL in its
# state file (a state file fault injected at that moment; reservation.c,
# snowflake_replay_lead), and its next start replays the record again: it
# is started again (built anew if it does not come back), with a note.
sub standby_ready
{
	my ($c) = @_;
	standby_wait($c);
	my $s = $c->{standby};
	my $pm = postmaster_pid($s);
	return if $pm && kill(0, $pm) && eval { wait_up($s); 1 };
	my ($why) = grep { /FATAL|PANIC/ } reverse split /\n/, slurp_file($s->logfile);
	note_event($c, 'standby_down', $why // 'its log has no FATAL line');
	$s->stop('immediate', fail_ok => 1);
	return if start_faked($s, shim => 1, fail_ok => 1) && eval { wait_up($s); 1 };
	note_event($c, 'standby_rebuilt', 'it did not start again');
	$s->stop('immediate', fail_ok => 1);
	rebuild_standby($c);
	return;
}

# The standby is promoted and the clients move to it; the old primary is
# rewound and rejoins as a standby.  With span 1 the old primary is stopped
# (immediate) first, a crash, once its IDs lead the clock by no more than
# $lead (settle_lead); with span 2 too unless $split: then it mints on for
# $split seconds after the promotion (the scheduler's batches, a split
# brain) before it stops.  With $skip a timeline number is taken by another
# branch first: the history file of the next timeline is placed in the
# standby's pg_wal, as a restore drill that archived into a WAL archive the
# standby restores from leaves it, so the promotion takes the one after it,
# whose parent is the old primary's.  With $lose (code) the old primary is
# lost that way instead of the immediate stop, and with $settled its lead
# was settled already (the caller did so before a raise that must not be
# waited out).  The time the old primary was lost is left in $c->{lost_at}.
sub promote
{
	my ($c, %o) = @_;
	my ($old, $new) = @{$c}{qw(primary standby)};
	settle_lead($c, $old, $o{lead} // lead_of($c, $c->{drift}))
	  if $c->{span} == 1 && !$o{settled};
	my $tli = eval { timeline_of($old) }
	  // $new->safe_psql('postgres', 'SELECT received_tli FROM pg_stat_wal_receiver');
	$c->{lost_at} = time();
	if ($o{lose})
	{
		$o{lose}->();
	}
	elsif (!$o{split})
	{
		$old->stop('immediate', fail_ok => 1);
	}
	take_timeline($c, $new, $tli, $old) if $o{skip};
	promote_and_wait($new);
	# pg_rewind reads the new timeline from the control file, which the
	# end-of-recovery checkpoint writes.
	$new->safe_psql('postgres', 'CHECKPOINT');
	my $new_tli = timeline_of($new);
	note_event($c, $o{skip} ? ($new_tli == $tli + 2 ? 'skipped' : 'not_skipped') : 'timeline',
		"timeline $tli to $new_tli" . ($o{skip} ? ' (' . ($tli + 1) . ' taken by another branch)' : ''));
	$c->{term}++;
	@{$c}{qw(primary standby)} = ($new, $old);
	set_target($c);
	if ($o{split})
	{
		my $n = burst($c, node => $old, term => $c->{term} - 1, seconds => $o{split});
		note_event($c, 'split_brain', sprintf('%s minted %d batches of a million IDs in %.1f s after the promotion, beside %s',
			$old->name, $n, $o{split}, $new->name));
		$old->stop('immediate', fail_ok => 1);
	}
	standby_job($c, sub { rewind_standby($c) });
	return;
}

# The old primary, stopped, is rewound by pg_rewind from the new one
# (keeping its own postgresql.conf) and started streaming from it.  Runs
# as a standby job.
sub rewind_standby
{
	my ($c) = @_;
	my ($p, $s) = @{$c}{qw(primary standby)};
	my $conf = $s->data_dir . '/postgresql.conf';
	my $saved = own_conf($c, $s);
	PostgreSQL::Test::Utils::run_log([ 'pg_rewind', '--no-sync', '--target-pgdata', $s->data_dir,
		'--source-server', $p->connstr('postgres') ])
	  or die 'pg_rewind failed';
	open my $fh, '>', $conf or die "$conf: $!";
	print $fh $saved;
	close $fh;
	write_conf($c, $s);
	job_note('raise_left', $s->name . "'s postgresql.auto.conf still raises the lead after pg_rewind")
	  if slurp_file($s->data_dir . '/postgresql.auto.conf') =~ /snowflake\.max_drift_ms/;
	$s->enable_streaming($p);
	start_node($s);
	return;
}

# --- standby jobs ----------------------------------------------------------
#
# Bringing the standby back (pg_rewind or pg_basebackup, then its start)
# takes seconds to tens of seconds on a shared machine.  As in production,
# where the primary serves while a standby is rebuilt, it runs in a process
# of its own while the scheduler goes on with the next faults, which hit
# the primary only; whatever touches the standby (its configuration, a
# reload, a stop, an operation that needs it) waits for the job first
# (standby_wait).  A job that fails (the primary was killed under
# pg_basebackup, say) is noted, and the standby is built anew then.

# Run $code (which may die) in a standby job.
sub standby_job
{
	my ($c, $code) = @_;
	standby_wait($c);
	my $pid = fork() // die "fork: $!";
	if ($pid == 0)
	{
		$ChaosTest::job_notes = "$c->{dir}/job-notes.$$";
		my $ok = eval { $code->(); 1 };
		print STDERR "# chaos standby job failed: $@" unless $ok;
		POSIX::_exit($ok ? 0 : 1);    # no END block of the test framework
	}
	$c->{job} = $pid;
	return;
}

# A note from a standby job: appended to a file of its own (the schedule is
# the scheduler's), which standby_wait copies into the schedule.
our $job_notes;

sub job_note
{
	my ($what, $detail) = @_;
	open my $fh, '>>', $job_notes or die "$job_notes: $!";
	print $fh "$what\t$detail\n";
	close $fh;
	return;
}

# Wait for the standby job, if one runs; take its notes; learn the
# standby's postmaster PID (the job's process started it); build the
# standby anew if the job failed.
sub standby_wait
{
	my ($c) = @_;
	my $pid = delete $c->{job} or return;
	waitpid($pid, 0);
	my $failed = $?;
	my $file = "$c->{dir}/job-notes.$pid";
	if (-e $file)
	{
		foreach my $line (split /\n/, slurp_file($file))
		{
			note_event($c, split /\t/, $line, 2);
		}
		unlink $file;
	}
	$c->{standby}->_update_pid(-1);
	return unless $failed;
	note_event($c, 'standby_job_failed', 'bringing ' . $c->{standby}->name . ' back failed: built anew');
	$c->{standby}->stop('immediate', fail_ok => 1);
	rebuild_standby($c);
	return;
}

# With span 1 a promoted server mints with the old primary's node field,
# and only its floor (its clock plus the history's lead) keeps its IDs above
# the old primary's, which holds while those lead the clock by no more than
# the old primary's lead, $lead (its max_drift_ms).  After the campaign
# steps the clock back they lead it by more until the clock has caught up
# (guarantee 3 allows that), and a failover meanwhile may issue keys twice
# by design: the floor covers a clock behind the old primary's only by the
# failover's own gap (docs/guarantees.md, "What is not guaranteed").  So the
# failover waits until the old primary's lead is within $lead again (a
# minute at most, else noted: a violation after that note is the
# campaign's, not the extension's).
sub settle_lead
{
	my ($c, $node, $lead) = @_;
	my $dbh = dbh_of($node);
	my $deadline = time() + 60;
	my $ahead;
	while ($dbh && time() < $deadline)
	{
		($ahead) = $dbh->selectrow_array('SELECT lead_ms FROM snowflake_stats');
		last if defined $ahead && $ahead <= $lead;
		sleep(0.2);
	}
	$dbh->disconnect if $dbh;
	note_event($c, 'lead_not_settled', $node->name . "'s IDs still lead the clock by "
		  . ($ahead // '?') . " ms, more than $lead ms: a failover now may issue keys twice by design")
	  unless defined $ahead && $ahead <= $lead;
	return;
}

# Place in $node's pg_wal the history file of timeline $tli + 1, branched
# from $tli just before $node's replay position (so that the standby, which
# may see it before the promotion, takes it for a branch behind it and
# stays on $tli: with recovery_target_timeline = 'latest' a standby follows
# a newer timeline that forks off at or after its replay position, and the
# drill's timeline then becomes its promoted timeline's parent, the old
# primary its grandparent, which a span of 2 cannot keep apart), with the
# ancestry of $tli (its history file, from $node's pg_wal or $other's).
sub take_timeline
{
	my ($c, $node, $tli, $other) = @_;
	my $lsn = $node->safe_psql('postgres', 'SELECT pg_last_wal_replay_lsn() - 1');
	my ($parent) = grep { -e $_ }
	  map { sprintf('%s/pg_wal/%08X.history', $_->data_dir, $tli) } ($node, $other);
	my $history = defined $parent ? slurp_file($parent) : '';
	$history .= "\n" if $history ne '' && $history !~ /\n\z/;
	my $file = sprintf('%s/pg_wal/%08X.history', $node->data_dir, $tli + 1);
	open my $fh, '>', $file or die "$file: $!";
	print $fh $history, "$tli\t$lsn\tsnowflake chaos: a restore drill took this timeline\n";
	close $fh;
	return;
}

# The primary's data directory is copied (a base backup, or a volume
# snapshot: the whole server stopped with SIGSTOP while it is copied) into a
# new directory, returned.
sub take_copy
{
	my ($c, $how) = @_;
	my $p = $c->{primary};
	my $copy = PostgreSQL::Test::Utils::tempdir() . '/copy';
	if ($how eq 'base backup')
	{
		PostgreSQL::Test::Utils::run_log([ 'pg_basebackup', '-D', $copy, '-X', 'stream',
			'-c', 'fast', '--no-sync', '-h', $p->host, '-p', $p->port ])
		  or die 'pg_basebackup failed';
	}
	else
	{
		volume_snapshot($p, $copy);
	}
	return $copy;
}

# The primary is lost (immediate stop) and the copy $copy of its data
# directory takes its place.  The standby, which has WAL the copy never
# wrote on the same timeline, is stopped with the primary (a walsender
# would wait at shutdown for a position it never sent): the caller builds
# it anew once the copy runs.  The configuration is the server's, not the
# copy's (as where it lives outside the data directory): only a configured
# max_drift_ms tells a copy made before a raise how far the lost server's
# IDs may have led (docs/guarantees.md).
sub replace_primary
{
	my ($c, $copy) = @_;
	standby_wait($c);
	my ($p, $s) = @{$c}{qw(primary standby)};
	my $pm = postmaster_pid($p);
	$p->stop('immediate', fail_ok => 1);
	$s->stop('immediate', fail_ok => 1);
	# A snapshot's postmaster.pid names the lost postmaster: wait until it is gone.
	for (my $i = 0; $pm && kill(0, $pm) && $i < 600; $i++)
	{
		sleep(0.1);
	}
	discard_dir($p->data_dir);
	rename($copy, $p->data_dir) or die "could not move the copy in place: $!";
	write_conf($c);
	return;
}

# Remove the directory $dir: renamed aside at once, then removed by a
# process of its own, which the campaign does not wait for (removing a data
# directory of tens of megabytes took seconds on the shared machine).
sub discard_dir
{
	my ($dir) = @_;
	my $aside = "$dir.discarded." . ++$discarded;
	rename($dir, $aside) or die "could not move $dir aside: $!";
	system("rm -rf '$aside' &");
	return;
}

# The primary's data directory is copied (take_copy), snowflake.max_drift_ms
# is raised to 10 s (if it is lower) and the scheduler issues a burst that
# runs 9 s ahead of the clock, the clients go on for $secs seconds, the
# primary is lost and the copy takes its place (replace_primary): its first
# start runs with the state file unwritable (the fault shim, "open EACCES"),
# it is stopped, the fault cleared, and it starts again; the clients go on
# with it, the same term.  A base backup with the preload cannot start
# unwritable at all (it must record a request to confirm its node id):
# then it starts once the fault is cleared, and is confirmed.  The standby
# is built anew from it.
sub restore_in_place
{
	my ($c, $log, $how, $secs) = @_;
	my $p = $c->{primary};
	$log->("$how, $secs s of IDs after it, then the primary is lost and the copy "
		  . 'starts in its place with the state file unwritable');
	floor_clock($c);
	my $copy = take_copy($c, $how);
	set_drift_all($c, 10000) if $c->{drift} < 10000;
	burst($c);
	sleep($secs);
	replace_primary($c, $copy);
	set_fault('open EACCES');
	if ($how eq 'base backup' && $c->{preload})
	{
		# As in unreadable_crash: it cannot start until the file is
		# writable, then must be confirmed.
		start_unconfirmed($c, $p, 'unwritable', 'create file "snowflake\.state\.tmp"',
			sub { set_fault() });
	}
	else
	{
		start_node($p);
		wait_up($p);
		sleep(1);    # the clients meet the refusals
		$p->stop('fast', fail_ok => 1);
		set_fault();
		start_node($p);
		wait_up($p);
	}
	standby_job($c, sub { rebuild_standby($c) });
	return;
}

# A cold copy restored in place (issue 44): snowflake.max_drift_ms raised
# to 10 s (if it is lower), the primary stopped cleanly, its data directory
# copied (cp -a), the primary started again, a burst ahead of the clock and
# $secs seconds of the clients' IDs, then the primary lost and the copy
# started in its place: its state file records the clean shutdown the copy
# was made at, exactly as the server's own clean restart finds it, and
# knows nothing of the IDs issued since.  The clients go on with it, the
# same term; the standby is built anew from it.
sub cold_copy
{
	my ($c, $log, $secs) = @_;
	my $p = $c->{primary};
	$log->("the primary stopped and copied (cp -a), started, $secs s of IDs, "
		  . 'then lost; the copy starts in its place');
	standby_wait($c);    # not under a pg_basebackup or pg_rewind of the standby
	floor_clock($c);
	set_drift_all($c, 10000) if $c->{drift} < 10000;
	my $copy = PostgreSQL::Test::Utils::tempdir() . '/cold';
	$p->stop('fast', fail_ok => 1);
	PostgreSQL::Test::Utils::run_log([ 'cp', '-a', $p->data_dir, $copy ])
	  or die 'could not copy the data directory';
	start_node($p);
	wait_up($p);
	burst($c);
	sleep($secs);
	replace_primary($c, $copy);
	start_node($p);
	wait_up($p);
	standby_job($c, sub { rebuild_standby($c) });
	return;
}

# An unreadable state file, then a backend crash (issue 44): a copy of the
# primary (take_copy), snowflake.max_drift_ms raised to 10 s (if lower), a
# burst and $secs seconds of IDs, the primary lost and the copy in its place
# (replace_primary) with snowflake.state unreadable (mode 000) at its first
# start: calls are refused (42501).  Then the file is made readable again,
# and a client backend is killed: the crash re-initialisation reads the file
# and must place its first ID past the floor, as any start.
# A base backup started without recovery.signal continues the lost
# primary's timeline: with the preload its start must record a request to
# confirm the node id, which an unreadable file cannot, so it does not start
# at all (by design, docs/guarantees.md); noted, the file made readable, it
# is started, the scheduler's attempts to mint must be refused (55000), and
# the node id is confirmed as the operator would, the primary being lost;
# then the backend crash.  The standby is built anew at the end.
sub unreadable_crash
{
	my ($c, $log, $how, $secs) = @_;
	my $p = $c->{primary};
	$log->("$how, $secs s of IDs after it, then the primary is lost and the copy starts in its "
		  . 'place with snowflake.state unreadable; made readable, then a client backend killed');
	floor_clock($c);
	my $copy = take_copy($c, $how);
	set_drift_all($c, 10000) if $c->{drift} < 10000;
	burst($c);
	sleep($secs);
	replace_primary($c, $copy);
	my $state = $p->data_dir . '/snowflake.state';
	chmod(0000, $state) or die "chmod $state: $!";
	if ($how eq 'base backup' && $c->{preload})
	{
		start_unconfirmed($c, $p, 'unreadable', 'open file "snowflake\.state"',
			sub { chmod(0600, $state) or die "chmod $state: $!" });
	}
	else
	{
		start_node($p);
		wait_up($p);
		sleep(1);    # the clients meet the refusals
		chmod(0600, $state) or die "chmod $state: $!";
	}
	kill_client_backend($c, $p);
	standby_job($c, sub { rebuild_standby($c) });
	return;
}

# A base backup started in place without recovery.signal, its state file
# unusable ($kind: unreadable or unwritable): with the preload its start
# must record a request to confirm the node id (it continues the lost
# primary's timeline), which it cannot, so it does not start at all (by
# design, docs/guarantees.md); noted with the FATAL line matching $fatal.
# Then $fix makes the file usable, it is started, the scheduler's attempts
# to mint must be refused (55000), and the node id is confirmed as the
# operator would, the primary being lost.
sub start_unconfirmed
{
	my ($c, $p, $kind, $fatal, $fix) = @_;
	my $started = start_must_fail($p);
	my $log_text = slurp_file($p->logfile, $p->{_sf_offset});
	note_event($c, $started ? "${kind}_started" : "${kind}_no_start",
		$started ? "the base backup started with its state file $kind"
		: ($log_text =~ /(FATAL:  could not $fatal[^\n]*)/ ? $1
			: 'the base backup did not start, and its log does not say why'));
	$fix->();
	start_node($p);
	wait_up($p);
	$p->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die 'the base backup did not leave recovery';
	confirm_node($c, $p, try_refused($c, $p, 3));
	return;
}

# Start $node as start_node does, once, where the start must fail; if it
# does start, it is stopped again (immediate).  The log of this start goes
# to a file of its own for the while (the test framework copies the whole
# log of a server that fails to start into the test's own), then is
# appended to the server's log, and the offset at which it begins there is
# left in $node->{_sf_offset}.  Returns true if the server started.
sub start_must_fail
{
	my ($node) = @_;
	my $log = $node->logfile;
	my $started;
	{
		local $node->{_logfile} = "$log.start";
		unlink("$log.start");
		$started = start_faked($node, shim => 1, fail_ok => 1);
		$node->stop('immediate', fail_ok => 1) if $started;
	}
	$node->{_sf_offset} = -s $log;
	PostgreSQL::Test::Utils::append_to_file($log, slurp_file("$log.start"));
	unlink("$log.start");
	return $started;
}

# Kill a client backend of $node (one of the clients', or one opened for
# the purpose if none is connected): the postmaster re-initialises the
# shared memory.  Waits until $node answers again.
sub kill_client_backend
{
	my ($c, $node) = @_;
	my @b = backend_pids($node);
	my $victim;
	if (!@b && ($victim = dbh_of($node)))
	{
		@b = $victim->selectrow_array('SELECT pg_backend_pid()');
	}
	note_event($c, 'crash', @b ? "client backend $b[0] of " . $node->name . ' killed'
		: 'no client backend to kill');
	my $offset = -s $node->logfile;
	kill 'KILL', $b[0] if @b;
	for (my $i = 0; @b && $i < 600; $i++)
	{
		last if slurp_file($node->logfile, $offset) =~ /reinitializing/;
		sleep(0.1);
	}
	wait_up($node);
	return;
}

# Confirm the node id of $node as its operator would, the server it
# continues being lost: SELECT snowflake_confirm_restore(N) with the node id
# it mints with, which the refusal $hint (a message with its hint) names.
sub confirm_node
{
	my ($c, $node, $hint) = @_;
	$hint //= '';
	my $dbh = dbh_of($node) or die 'no connection to ' . $node->name;
	my ($n) = $hint =~ /snowflake_confirm_restore\((\d+)\)/;
	my $ok = defined $n && $dbh->selectrow_array("SELECT snowflake_confirm_restore($n)");
	note_event($c, 'confirmed', defined $n
		? "node id $n of " . $node->name . ($ok ? '' : ': ' . ($dbh->errstr // '?'))
		: 'nothing to confirm on ' . $node->name . ": $hint");
	$dbh->disconnect;
	return;
}

# The scheduler tries to mint on $node, which must refuse, $tries times:
# each attempt a U event, and any IDs it is given also a B event of a term
# of their own, which the checker compares with every other ID.  Returns
# the last refusal's message (with its detail and hint), if any.
sub try_refused
{
	my ($c, $node, $tries) = @_;
	my $term = "refused-$c->{seq}";
	my $dbh = dbh_of($node) or return;
	my $message;
	for my $i (1 .. $tries)
	{
		my $count = $i % 2 ? 1000 : 1;
		my $t0 = time();
		my ($first) = $dbh->selectrow_array($count == 1 ? 'SELECT snowflake_nextval()'
			: "SELECT snowflake_nextval_batch($count) LIMIT 1");
		if (defined $first)
		{
			event($c, 'B', $t0, $term, $node->name, $first, $count);
			event($c, 'U', $t0, $node->name, 'none', $count, $first);
		}
		else
		{
			event($c, 'U', $t0, $node->name, $dbh->state // '', 0, '');
			$message = $dbh->errstr;
		}
		sleep(0.1);
	}
	$dbh->disconnect;
	return $message;
}

# A lead raised on the primary only, then a failover (issue 44):
# snowflake.max_drift_ms set with ALTER SYSTEM on the primary (neither
# replicated nor in the campaign's chaos.conf, which the standby reads too)
# 10 s above the largest lead the standby knows (its configuration and its
# state file), at most 30 s, a burst ahead of the clock under the raised
# lead, then the primary stops and the standby is promoted (promote).  With
# the preload the raise reaches the standby in WAL: its floor must lie past
# the old primary's IDs, which with span 1 carry its node field.  Without
# the preload the raise is capped at 1 s, as the checker's bound says.
# (A standby's state file keeps the largest lead it replayed until it is
# promoted or built anew, so back-to-back raises would climb: past 30 s,
# or where the standby knows as much already, the raise cannot matter, and
# a note says so.)
sub lead_raise
{
	my ($c, $log) = @_;
	standby_ready($c);
	my ($p, $s) = @{$c}{qw(primary standby)};
	my $known = $c->{drift};
	my $rec = eval { read_state($s) };
	$known = $rec->{max_lead_ms} if $rec && $rec->{max_lead_ms} > $known;
	my $raised = $known + 10000 > 30000 ? 30000 : $known + 10000;
	my $lead = lead_of($c, $raised);
	$log->(sprintf('snowflake.max_drift_ms raised to %d ms on %s only (%s knows %d ms)%s, '
		  . 'a burst, then %s stops and %s is promoted', $raised, $p->name, $s->name, $known,
		  $lead < $raised ? " (capped at $lead ms without the preload)" : '', $p->name, $s->name));
	note_event($c, 'raise_known', $s->name . " knows a lead of $known ms already")
	  if $raised <= $known;
	my $before = lead_of($c, $c->{drift});
	event($c, 'D', $lead) if $lead > $before;
	$p->safe_psql('postgres', "ALTER SYSTEM SET snowflake.max_drift_ms = '${raised}ms'");
	$p->reload;
	$p->poll_query_until('postgres', show_setting('snowflake.max_drift_ms'), shown_ms($raised))
	  or die "max_drift_ms $raised not seen";
	burst($c, lead => $lead);
	# The old primary stops with its raise; rewound, it has the new
	# primary's postgresql.auto.conf (pg_rewind copies it; rewind_standby
	# checks).
	promote($c, lead => $lead);
	event($c, 'D', $before) if $lead > $before;
	return;
}

# A standby started without standby.signal (issue 44): stopped, its
# standby.signal removed, started: it leaves recovery on its primary's
# timeline, and with it the primary's node field, while the primary runs.
# With the preload it must refuse to mint (55000) until its node id is
# confirmed: the scheduler tries $tries times (try_refused).  Then it is
# stopped and built anew as a standby.  (Without the preload the start
# cannot be seen: inject skips this kind.)
sub standby_no_signal
{
	my ($c, $log, $tries) = @_;
	standby_ready($c);
	my $s = $c->{standby};
	$log->($s->name . " stopped, started without standby.signal; $tries attempts to mint; built anew");
	$s->stop('fast', fail_ok => 1);
	unlink($s->data_dir . '/standby.signal') or die "standby.signal: $!";
	start_node($s);
	wait_up($s);
	if ($s->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()'))
	{
		try_refused($c, $s, $tries);
	}
	else
	{
		note_event($c, 'no_end_of_recovery', $s->name . ' did not leave recovery');
	}
	$s->stop('immediate', fail_ok => 1);
	standby_job($c, sub { rebuild_standby($c) });
	return;
}

# A skipped timeline (issue 44): the standby is promoted with the next
# timeline's number taken by another branch (promote with skip), so that
# its timeline's number is two past its parent's.  With span 2 the old
# primary mints on for $secs seconds beside it (a split brain): by number
# the two timelines' node fields would be one.
sub skipped_timeline
{
	my ($c, $log, $secs) = @_;
	standby_ready($c);
	my ($p, $s) = @{$c}{qw(primary standby)};
	my $split = $c->{span} >= 2 ? $secs : 0;
	$log->(sprintf('the next timeline taken by another branch, %s promoted%s', $s->name,
		$split ? sprintf(' while %s mints on for %s s (a split brain), then stops', $p->name, $split)
		: sprintf(' after %s stops', $p->name)) . ', ' . $p->name . ' rewound');
	promote($c, skip => 1, split => $split);
	return;
}

# --- issue 52's sequences ---------------------------------------------------

# Step the servers' clock forward to +0 if the campaign stepped it back,
# before issue 52's sequences: their starts must mint at once unless the
# IDs before them lead the clock (probe_mint), but a start's floor is
# applied by the background writer, which on PostgreSQL 15 libfaketime was
# seen leaving on the real clock (floor_clock): with the servers' clock
# behind it, the first IDs lie that far ahead of their clock, and calls
# wait for it, as for IDs ahead of the clock (in seed 52 the first IDs of
# a start lay 29.5 s ahead after a step back of 29 s).  And their
# failovers with span 1 would wait as long, until the old primary's IDs
# lead the clock by no more than its lead (settle_lead).  A step forward is
# safe at any time; steps back are faults of their own.
sub clock_forward
{
	my ($c) = @_;
	return if $c->{offset} >= 0;
	set_clock('+0');
	event($c, 'C', 0);
	$c->{offset} = 0;
	return;
}

# The PID of $node's walsender streaming to the standby named $name (its
# cluster_name, which its walsender shows as application_name), waiting
# for it (30 s at most: a standby started a moment ago connects soon);
# undef if none streams.
sub walsender_of
{
	my ($node, $name) = @_;
	my $deadline = time() + 30;
	while (time() < $deadline)
	{
		my $dbh = dbh_of($node);
		my ($pid) = $dbh ? $dbh->selectrow_array("SELECT pid FROM pg_stat_replication "
			  . "WHERE application_name = '$name' AND state = 'streaming'") : ();
		$dbh->disconnect if $dbh;
		return $pid if $pid;
		sleep(0.2);
	}
	return;
}

# Lose $node at once: its postmaster killed (SIGKILL), then the processes
# @held (stopped with SIGSTOP: they would run on, and send what they
# hold), which the postmaster's death cannot end, killed too; then wait
# (60 s at most) until every process of the server is gone, reaped
# included (PostgreSQL takes a postmaster.pid whose process exists, a
# zombie too, for a server that runs), so that pg_rewind's crash recovery
# of the data directory finds no server there.
sub kill_server
{
	my ($node, @held) = @_;
	my $pm = postmaster_pid($node);
	my @procs = ($pm, @held);
	foreach my $stat (glob('/proc/[0-9]*/stat'))
	{
		open my $sf, '<', $stat or next;
		my $line = <$sf>;
		close $sf;
		push @procs, $1 if defined $line && $line =~ /^(\d+) \(.*\) \S+ (\d+) / && $2 == $pm;
	}
	$node->kill9;
	kill 'KILL', @held;
	my $deadline = time() + 60;
	while (time() < $deadline && grep { -e "/proc/$_" } @procs)
	{
		sleep(0.1);
	}
	return;
}

# A raise while the standby lags (issue 52, finding 1, as
# 079_unreceived_raise.pl makes it lag; $how): its walsender held with
# SIGSTOP (it stays connected and streaming, and sends nothing more), or a
# physical replication slot created for it on the primary and the standby
# stopped.  Then snowflake.max_drift_ms is raised with ALTER SYSTEM on the
# primary only, 10 s above the largest lead the standby knows (at most
# 30 s), and the scheduler bursts under the raised lead, each batch
# waiting 100 ms at most: past the old bound every batch must be refused
# (55000, the record of the raise is not on the standby; X events, until
# three were), or be issued only under a bound the standby knows.  Then
# the primary is lost (the postmaster killed, then the held walsender; or
# an immediate stop, the stopped standby started again) and the standby is
# promoted.  With span 1 it mints with the old primary's node field, its
# floor placed by the lead it knows: a batch issued under the raise shares
# keys with its IDs (the checker).  The old primary's lead is settled
# (settle_lead) before the raise, not after.  (Passed over without the
# preload.)
sub raise_lagging
{
	my ($c, $log, $how) = @_;
	standby_ready($c);
	clock_forward($c);
	my ($p, $s) = @{$c}{qw(primary standby)};
	my $known = $c->{drift};
	my $rec = eval { read_state($s) };
	$known = $rec->{max_lead_ms} if $rec && $rec->{max_lead_ms} > $known;
	my $raised = $known + 10000 > 30000 ? 30000 : $known + 10000;
	my $before = lead_of($c, $c->{drift});
	$log->(sprintf('%s, snowflake.max_drift_ms raised to %d ms on %s only (%s knows %d ms), '
		  . 'a burst, then %s is lost and %s promoted',
		$how eq 'slot' ? 'a slot for ' . $s->name . ', which stops'
		: $s->name . "'s walsender held (SIGSTOP)", $raised, $p->name, $s->name, $known,
		$p->name, $s->name));
	note_event($c, 'raise_known', $s->name . " knows a lead of $known ms already")
	  if $raised <= $known;
	settle_lead($c, $p, $before) if $c->{span} == 1;
	my $held;
	if ($how eq 'held walsender')
	{
		$held = walsender_of($p, $s->name);
		if ($held)
		{
			kill 'STOP', $held;
		}
		else
		{
			note_event($c, 'no_walsender', $s->name . ' does not stream: a slot instead');
			$how = 'slot';
		}
	}
	my $slot = 'chaos_lagging';
	if ($how eq 'slot')
	{
		$p->safe_psql('postgres', "SELECT pg_create_physical_replication_slot('$slot', true)");
		$s->stop('fast', fail_ok => 1);
	}
	event($c, 'D', $raised) if $raised > $before;
	$p->safe_psql('postgres', "ALTER SYSTEM SET snowflake.max_drift_ms = '${raised}ms'");
	$p->reload;
	$p->poll_query_until('postgres', show_setting('snowflake.max_drift_ms'), shown_ms($raised))
	  or die "max_drift_ms $raised not seen";
	burst($c, lead => $raised, refusals => 3, wait_ms => 100);
	promote($c, settled => 1, lose => sub {
		if ($held)
		{
			kill_server($p, $held);
			return;
		}
		$p->stop('immediate', fail_ok => 1);
		# Slots are not copied by pg_rewind, but a rewound server
		# keeps its own: a slot no standby uses would hold every
		# later raise back (by design).
		File::Path::rmtree($p->data_dir . "/pg_replslot/$slot");
		start_node($s);
	});
	event($c, 'D', $before) if $raised > $before;
	return;
}

# A raise, a lowering and its expiry, then a crash before a checkpoint or a
# failover ($how; issue 52, finding 3, as 081_elapsed_lead.pl): with
# snowflake.max_drift_ms at 1 s (set so if it is not), a checkpoint (none
# is timed in the minutes after it, so the crash recovery below replays
# what follows), the setting raised to $raised ms on both servers, a burst
# to half of it ahead of the clock, the setting lowered to 1 s again, and
# the old lead waited out by the servers' clock: no ID leads the clock by
# more than 1 s any more.  Then the primary stops (immediate) and starts
# again, or it is lost and the standby, which replayed the raise and the
# lowering, is promoted; the scheduler asks the server for IDs at once
# (probe_mint): refused for longer than the lead in force, it brought the
# elapsed lead back (the checker).  (Passed over without the preload.)
sub raise_lower_expire
{
	my ($c, $log, $how, $raised) = @_;
	standby_ready($c);
	clock_forward($c);
	my ($p, $s) = @{$c}{qw(primary standby)};
	$log->(sprintf('snowflake.max_drift_ms raised to %d ms, a burst, lowered to 1000 ms, '
		  . 'the old lead waited out, then %s', $raised, $how eq 'crash'
		  ? $p->name . ' crashes (immediate stop) before its next checkpoint and starts again'
		  : $p->name . ' is lost and ' . $s->name . ' promoted'));
	set_drift_all($c, 1000) if $c->{drift} != 1000;
	settle_lead($c, $p, 1000);
	$p->safe_psql('postgres', 'CHECKPOINT');
	my $redo_sql = 'SELECT redo_lsn FROM pg_control_checkpoint()';
	my $redo = $p->safe_psql('postgres', $redo_sql);
	set_drift_all($c, $raised);
	burst($c, lead => $raised / 2);
	my $lowered = $p->safe_psql('postgres', 'SELECT clock_timestamp()');
	set_drift_all($c, 1000);
	$p->poll_query_until('postgres', "SELECT clock_timestamp() > '$lowered'::timestamptz "
		  . "+ interval '@{[ $raised + 100 ]} ms'")
	  or die 'the old lead did not elapse';
	if ($how eq 'crash')
	{
		my $now = $p->safe_psql('postgres', $redo_sql);
		note_event($c, 'checkpoint_between', $p->name . " checkpointed after the raise ($redo, then $now)")
		  if $now ne $redo;
		$c->{lost_at} = time();
		$p->stop('immediate', fail_ok => 1);
		start_node($p);
		wait_up($p);
	}
	else
	{
		promote($c);
	}
	probe_mint($c, $c->{primary}, 'after_expiry');
	return;
}

# A switchover and back (issue 52, finding 2, as 080_dropped_raise.pl):
# with snowflake.max_drift_ms at 1 s (set so if it is not), the primary A
# raises its lead to $l1 ms (ALTER SYSTEM, on A only), bursts to half of it
# ahead of the clock and lowers it again; a planned switchover (A stopped
# cleanly, the standby B promoted with pg_ctl promote, A started as B's
# standby with its own data directory, no pg_rewind); once A's old lead has
# elapsed, B raises its lead to $l1 - 1500 ms, smaller than A's old one (on
# B only: A knows it from WAL alone), bursts to 90% of it ahead, and is lost
# (immediate stop); A is promoted.  With span 1 A mints with B's node
# field, its floor by the leads it replayed: B's raise, replayed after A's
# lowering, must be in force there (the checker compares B's batches with
# A's IDs).  B is rewound and rejoins.  Without the preload the raises are
# capped at 1 s (nothing to wait out): a switchover and a failover back.
sub switchover_back
{
	my ($c, $log, $l1) = @_;
	standby_ready($c);
	clock_forward($c);
	my ($a, $b) = @{$c}{qw(primary standby)};
	my $l2 = $l1 - 1500;
	my ($lead1, $lead2, $before) = (lead_of($c, $l1), lead_of($c, $l2), lead_of($c, 1000));
	$log->(sprintf('%s raises to %d ms, a burst, lowers; %s stops, %s is promoted, %s follows it; '
		  . '%s raises to %d ms, a burst, is lost; %s is promoted', $a->name, $l1, $a->name,
		$b->name, $a->name, $b->name, $l2, $a->name));
	set_drift_all($c, 1000) if $c->{drift} != 1000;
	settle_lead($c, $a, 1000);
	event($c, 'D', $lead1) if $lead1 > $before;
	set_drift($a, "${l1}ms", shown_ms($l1));
	burst($c, lead => $lead1 / 2);
	my $lowered = $a->safe_psql('postgres', 'SELECT clock_timestamp()');
	set_drift($a, undef, shown_ms(1000));
	if ($lead1 > $before)
	{
		sleep(1);    # the grace the checker gives backends (set_drift_all)
		event($c, 'D', $before);
	}

	# The switchover: A follows B from its own data directory.
	$a->stop('fast', fail_ok => 1);
	promote_and_wait($b);
	note_event($c, 'timeline', 'switchover to timeline ' . timeline_of($b));
	$c->{term}++;
	@{$c}{qw(primary standby)} = ($b, $a);
	set_target($c);
	$a->enable_streaming($b);
	start_node($a);
	if (!walsender_of($b, $a->name))
	{
		note_event($c, 'no_switchback', $a->name . ' does not stream from ' . $b->name . ': built anew');
		$a->stop('immediate', fail_ok => 1);
		rebuild_standby($c);
	}

	# A's old lead elapses; B raises to less than it, bursts and is lost.
	$b->poll_query_until('postgres', "SELECT clock_timestamp() > '$lowered'::timestamptz "
		  . "+ interval '@{[ $lead1 + 100 ]} ms'")
	  or die 'the old lead did not elapse';
	event($c, 'D', $lead2) if $lead2 > $before;
	set_drift($b, "${l2}ms", shown_ms($l2));
	burst($c, lead => $lead2);
	promote($c, lead => $lead2);
	event($c, 'D', $before) if $lead2 > $before;
	return;
}

# A clone of a server that waits for its node id to be confirmed (issue
# 52, finding 4, as 082_confirmation_travels.pl).  The waiting server
# ($how): a base backup of the primary (take_copy) started in its place
# without a signal file once the primary is lost, or the standby started
# without standby.signal once the primary is lost (the clients move to it,
# a new term); either leaves recovery without a new timeline and must
# refuse to mint (try_refused) until confirmed.  While it waits it is
# cloned into the standby (pg_basebackup, rebuild_standby); then it is
# confirmed as its operator would (confirm_node), the clone replays the
# confirmation, the clients go on for $secs seconds, and the confirmed
# server is lost: the clone is promoted normally (promote) and must mint at
# once (probe_mint; a refusal "not confirmed" there is a violation).
# (Passed over without the preload.)
sub clone_unconfirmed
{
	my ($c, $log, $how, $secs) = @_;
	my ($p, $s) = @{$c}{qw(primary standby)};
	if ($how eq 'base backup')
	{
		$log->('a base backup of ' . $p->name . ' started in its place without a signal file once it is '
			  . "lost; cloned while it waits, confirmed, $secs s of IDs, lost; the clone promoted");
		floor_clock($c);
		my $copy = take_copy($c, 'base backup');
		replace_primary($c, $copy);
		start_node($p);
	}
	else
	{
		standby_ready($c);
		clock_forward($c);
		$log->($p->name . ' lost, ' . $s->name . ' started without standby.signal; cloned while it '
			  . "waits, confirmed, $secs s of IDs, lost; the clone promoted");
		settle_lead($c, $p, lead_of($c, $c->{drift})) if $c->{span} == 1;
		$c->{lost_at} = time();
		$p->stop('immediate', fail_ok => 1);
		$s->stop('fast', fail_ok => 1);
		unlink($s->data_dir . '/standby.signal') or die "standby.signal: $!";
		start_node($s);
		$c->{term}++;
		@{$c}{qw(primary standby)} = ($s, $p);
		set_target($c);
	}
	my $waiting = $c->{primary};
	wait_up($waiting);
	$waiting->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die $waiting->name . ' did not leave recovery';
	my $hint = try_refused($c, $waiting, 2);
	rebuild_standby($c);
	confirm_node($c, $waiting, $hint);
	my $lsn = $waiting->safe_psql('postgres', 'SELECT pg_current_wal_insert_lsn()');
	my $clone = $c->{standby};
	if (!$clone->poll_query_until('postgres', "SELECT pg_last_wal_replay_lsn() >= '$lsn'"))
	{
		note_event($c, 'clone_behind', $clone->name . " did not replay up to the confirmation at $lsn");
		return;
	}
	sleep($secs);
	promote($c);
	probe_mint($c, $c->{primary}, 'clone');
	return;
}

# A copy beside its original, with a span (issue 52, finding 5, as
# 083_copy_in_span.pl): a base backup of the primary (pg_basebackup)
# started beside it, a server of its own without a signal file, as
# docs/operations.md's copy-beside recipe makes one: first given a node id
# inside the span of the history's node id (with span 2: node id 2, which
# the original's promoted standbys take), then, a second copy, one outside
# it (node id 1 + span).  The copy inside must warn at its start and refuse
# to mint (try_refused) until confirmed, which it is not; the copy outside
# mints at once (probe_mint), without that warning, and its IDs (a burst
# too, B events of a term of its own) are compared with every other (W
# events say whether each warned; the checker).  With span 1 no node id but the original's own
# is in its span: only the copy outside runs.  Each copy is stopped and
# removed.  (Passed over without the preload.)
sub copy_span
{
	my ($c, $log) = @_;
	clock_forward($c);
	my $p = $c->{primary};
	my $span = $c->{span};
	my @ids = (($span >= 2 ? (1 + $span - 1) : ()), 1 + $span);
	$log->(sprintf('copies of %s started beside it with node id %s (its span: 1 to %d)', $p->name,
		join(' then ', @ids), $span));
	my $backup = take_copy($c, 'base backup');
	foreach my $id (@ids)
	{
		my $inside = $id <= $span ? 1 : 0;
		my $copy = copy_beside($c, "copy$c->{seq}_$id", $id, $backup, $id == $ids[-1]);
		if ($inside)
		{
			try_refused($c, $copy, 3);
		}
		else
		{
			$c->{lost_at} = time();
			probe_mint($c, $copy, 'copy', "copy-$c->{seq}");
			burst($c, node => $copy, term => "copy-$c->{seq}");
		}
		my $warned = slurp_file($copy->logfile) =~ /WARNING:  snowflake node id $id falls within the span/;
		event($c, 'W', $copy->name, $id, $inside, $warned ? 1 : 0);
		$copy->stop('immediate', fail_ok => 1);
		discard_dir($copy->data_dir);
	}
	return;
}

# A server named $name made from the base backup in $backup (moved into
# its data directory with $last, else copied), with the primary's
# configuration and its own port (as PostgreSQL::Test::Cluster's
# init_from_backup gives) and node id $id, started beside the primary;
# returned once it has left recovery.
sub copy_beside
{
	my ($c, $name, $id, $backup, $last) = @_;
	my $copy = PostgreSQL::Test::Cluster->new($name);
	if ($last)
	{
		rename($backup, $copy->data_dir) or die "could not move the copy: $!";
	}
	else
	{
		PostgreSQL::Test::Utils::run_log([ 'cp', '-a', $backup, $copy->data_dir ])
		  or die 'could not copy the base backup';
	}
	chmod(0700, $copy->data_dir);
	$copy->append_conf('postgresql.conf', sprintf("port = %d\nunix_socket_directories = '%s'\n"
		  . "snowflake.node_id = %d\n", $copy->port, $copy->host, $id));
	start_node($copy);
	wait_up($copy);
	$copy->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die $copy->name . ' did not leave recovery';
	return $copy;
}

# The scheduler asks $node, which must mint, for IDs right after its start
# or promotion ($what: after_expiry, clone, copy; the IDs of term $term,
# the current one by default): a call every 100 ms, each
# waiting 100 ms at most (snowflake.max_wait_ms), until three are served,
# or five are refused "not confirmed" (55000), or for the lead in force and
# 10 s more.  A G event (with the time the server it succeeds was lost,
# $c->{lost_at}), then a P event per call, and a B event per ID given; the
# checker holds how long the calls were refused against the lead in force,
# and the IDs against every other.
sub probe_mint
{
	my ($c, $node, $what, $term) = @_;
	my $seq = $c->{seq};
	$term //= $c->{term};
	event($c, 'G', $seq, $node->name, $what, sprintf('%.6f', $c->{lost_at} // time()));
	my $deadline = time() + lead_of($c, $c->{drift}) / 1000 + 10;
	my ($dbh, $served, $unconfirmed) = (undef, 0, 0);
	while ($served < 3 && $unconfirmed < 5 && time() < $deadline)
	{
		if (!$dbh && ($dbh = dbh_of($node)))
		{
			$dbh->do('SET snowflake.max_wait_ms = 100');
		}
		my $t0 = time();
		my ($id) = $dbh ? $dbh->selectrow_array('SELECT snowflake_nextval()') : ();
		if (defined $id)
		{
			event($c, 'B', $t0, $term, $node->name, $id, 1);
			event($c, 'P', $t0, $seq, 'none', $id);
			$served++;
		}
		else
		{
			my $state = $dbh ? $dbh->state // '' : '';
			event($c, 'P', $t0, $seq, $state eq '' ? 'connection' : $state, '');
			$unconfirmed++ if $state eq '55000';
			undef $dbh if $dbh && !$dbh->ping;
		}
		sleep(0.1);
	}
	$dbh->disconnect if $dbh;
	return;
}

# Stop both servers and start them again with the preload dropped (or
# restored).  Every server that replays WAL with snowflake's records must
# preload it (docs/guarantees.md): going without it, the standby first
# replays the primary's shutdown checkpoint and stops (a restartpoint
# there), so that neither replays a record written before; going back, the
# standby starts with the preload before the primary writes one.
sub toggle_preload
{
	my ($c, $log) = @_;
	standby_ready($c);
	my ($p, $s) = @{$c}{qw(primary standby)};
	$log->($c->{preload} ? 'without the preload' : 'preloaded again');
	my $old = lead_of($c, $c->{drift});
	$c->{preload} = !$c->{preload};
	my $new = lead_of($c, $c->{drift});
	event($c, 'D', $new) if $new > $old;
	$p->stop('fast', fail_ok => 1);
	my $rebuild = 0;
	if (!$c->{preload})
	{
		my ($checkpoint) = `pg_controldata -D '@{[ $p->data_dir ]}'` =~ /^Latest checkpoint location:\s+(\S+)$/m;
		$rebuild = !(defined $checkpoint && $s->poll_query_until('postgres',
			"SELECT pg_last_wal_replay_lsn() >= '$checkpoint'::pg_lsn"));
		note_event($c, 'standby_behind', $s->name . ' did not replay up to ' . $p->name
			  . "'s shutdown checkpoint " . ($checkpoint // '?') . ': built anew') if $rebuild;
	}
	$s->stop('fast', fail_ok => 1);
	event($c, 'D', $new) if $new < $old;
	write_conf($c);
	start_node($s) unless $rebuild;
	start_node($p);
	wait_up($p);
	rebuild_standby($c) if $rebuild;
	return;
}

# A burst on $node (the primary by default, minting for term $term, the
# current one by default): batches, one after the other, each recorded as a
# "B" event, of a million IDs (245 ms of ID time), fewer under a lead below
# 500 ms (half the lead's).  Only the first ID of a batch is fetched (the
# batch is issued whole, count consecutive IDs of one node, as
# 038_floor_obligation.pl checks).  Given seconds, for that long (a split
# brain's old primary); else until the IDs run 90% of the lead ($lead,
# snowflake.max_drift_ms in force by default) ahead of the clock (right
# after a start's floor at once: its first ID lies a whole lead ahead).  A
# batch refused (the clock, a fault) ends the burst, unless $refusals: then
# each refused batch is an expected refusal (an X event: a raise that the
# standbys have not flushed), and the burst goes on until that many were
# refused.  $wait_ms: the session's snowflake.max_wait_ms.  Returns the
# number of batches issued.
sub burst
{
	my ($c, %o) = @_;
	my $node = $o{node} // $c->{primary};
	my $term = $o{term} // $c->{term};
	my $lead = $o{lead} // lead_of($c, $c->{drift});
	my $until = $o{seconds} ? time() + $o{seconds} : undef;
	my $size = $lead >= 500 ? 1000000 : 4096 * int($lead / 2);
	return 0 if $size == 0;
	my $span_ms = $size / 4096;
	my $dbh = dbh_of($node) or return 0;
	$dbh->do("SET snowflake.max_wait_ms = $o{wait_ms}") if $o{wait_ms};
	my ($n, $refused) = (0, 0);
	while ($until ? time() < $until : $n < int($lead * 0.9 / $span_ms))
	{
		my $t0 = time();
		my ($first) = $dbh->selectrow_array(
			"SELECT snowflake_nextval_batch($size) LIMIT 1");
		if (!defined $first)
		{
			my $state = $dbh->state // '';
			last unless $o{refusals} && $state ne '' && $dbh->ping;
			event($c, 'X', $t0, $node->name, $state);
			last if ++$refused >= $o{refusals};
			next;
		}
		event($c, 'B', $t0, $term, $node->name, $first, $size);
		$n++;
		my $ahead = ($first >> $shift) + $epoch_ms + $span_ms
		  - int((time() + $c->{offset}) * 1000);
		last if !$until && $ahead >= $lead * 0.9 - $span_ms;
	}
	$dbh->disconnect;
	return $n;
}

# $node's own postgresql.conf, as it was at the campaign's start (the data
# directory's may be another server's, or half written, after a pg_rewind
# that failed: pg_rewind copies the configuration files too); the standby's
# primary_conninfo is appended anew each time (enable_streaming).
sub own_conf
{
	my ($c, $node) = @_;
	return $c->{pgconf}{ $node->name };
}

# Build the standby anew from the primary (pg_basebackup), keeping its own
# configuration, and start it streaming.
sub rebuild_standby
{
	my ($c) = @_;
	my ($p, $s) = @{$c}{qw(primary standby)};
	my $conf = $s->data_dir . '/postgresql.conf';
	my $saved = own_conf($c, $s);
	discard_dir($s->data_dir) if -e $s->data_dir;
	PostgreSQL::Test::Utils::run_log([ 'pg_basebackup', '-D', $s->data_dir, '-X', 'stream',
		'-c', 'fast', '--no-sync', '-h', $p->host, '-p', $p->port ])
	  or die 'pg_basebackup of the standby failed';
	chmod(0700, $s->data_dir);
	open my $fh, '>', $conf or die "$conf: $!";
	print $fh $saved;
	close $fh;
	write_conf($c, $s);
	$s->enable_streaming($p);
	start_node($s);
	return;
}

# --- the checker ---------------------------------------------------------

# The largest value of a step function (list of [time, value], sorted)
# anywhere in [$a, $b].
sub max_in_force
{
	my ($steps, $a, $b) = @_;
	my ($lo, $hi) = (0, $#$steps);
	while ($lo < $hi)    # the last step at or before $a (or the first)
	{
		my $mid = int(($lo + $hi + 1) / 2);
		if ($steps->[$mid][0] <= $a) { $lo = $mid } else { $hi = $mid - 1 }
	}
	my $max = $steps->[$lo][1];
	for (my $i = $lo + 1; $i < @$steps && $steps->[$i][0] <= $b; $i++)
	{
		$max = $steps->[$i][1] if $steps->[$i][1] > $max;
	}
	return $max;
}

# The scheduler's batches (B events: [t_ack, t_start, term, server, first,
# count], then last added): within the bounded lead, none sharing an ID
# with another batch or a client (the sorted file $idfile), and counted in
# %$acks for the monotonicity check.  Returns the violations found.
sub check_bursts
{
	my ($bursts, $acks, $clock, $drift, $idfile) = @_;
	my @viol;
	my $seq_mask = 4095;
	my $node = sub { my ($x) = @_; return ($x >> 12) & ((1 << ($shift - 12)) - 1); };
	foreach my $b (@$bursts)
	{
		my ($t1, $t0, $term, $server, $lo, $count) = @$b;
		# count consecutive packed values (ms << 12 | sequence) from lo's.
		my $p = (($lo >> $shift) << 12) + ($lo & $seq_mask) + $count - 1;
		my $hi = (($p >> 12) << $shift) | ($node->($lo) << 12) | ($p & $seq_mask);
		$b->[6] = $count;
		$b->[5] = $hi;
		my $off = max_in_force($clock, $t0 - 0.05, $t1 + 0.05);
		my $lead = max_in_force($drift, $t0, $t1);
		my $ts = ($hi >> $shift) + $epoch_ms;
		push @viol, [ $t1, "the scheduler's batch on $server: ID $hi is "
			  . ($ts - int(($t1 + 0.05 + $off) * 1000)) . " ms ahead of the clock, more than max_drift_ms allows" ]
		  if $ts > int(($t1 + 0.05 + $off) * 1000) + $lead + 1;
		push @{ $acks->{$term} }, [ $t0, $t1, $lo, $hi, 'the scheduler', $server ];
	}
	my @sorted = sort { $a->[4] <=> $b->[4] } @$bursts;
	for my $i (0 .. $#sorted)
	{
		for my $j ($i + 1 .. $#sorted)
		{
			last if $sorted[$j][4] > $sorted[$i][5];
			push @viol, [ $sorted[$j][0], "the scheduler's batches at $sorted[$i][0] and $sorted[$j][0] share IDs" ]
			  if $node->($sorted[$j][4]) == $node->($sorted[$i][4]);
		}
	}
	return @viol unless @sorted;
	# Client IDs inside a burst of their node: one pass over the sorted IDs.
	open my $ids, '-|', "sort -n -u -S 100M '$idfile'" or die "sort: $!";
	my ($next, @active, %hits) = (0);
	while (my $id = <$ids>)
	{
		chomp $id;
		push @active, $sorted[ $next++ ] while $next < @sorted && $sorted[$next][4] <= $id;
		@active = grep { $_->[5] >= $id } @active;
		foreach my $b (@active)
		{
			next unless $node->($id) == $node->($b->[4]);
			$hits{$b} //= [ $b, $id, 0 ];
			$hits{$b}[2]++;
		}
	}
	close $ids;
	foreach my $hit (sort { $a->[0][0] <=> $b->[0][0] } values %hits)
	{
		my ($b, $id, $n) = @$hit;
		push @viol, [ $b->[0], "$n IDs given to clients (the first $id) are also in the scheduler's "
			  . sprintf('batch on %s at %s', $b->[3], POSIX::strftime('%H:%M:%S', localtime $b->[0])) ];
	}
	return @viol;
}

# The starts that must mint at once (probe_mint: G and P events in
# %$probes), each against the history: the time its first calls were
# refused, from the first call to the first served, may not exceed the
# lead in force then (at least the 1,000 ms every start assumes) plus how
# far the IDs acknowledged before its predecessor was lost led the clock
# at the first call ($latest: the largest ID time acknowledged in each
# 10 ms), with 500 ms of slack for the calls' pace (100 ms) and wait
# (snowflake.max_wait_ms = 100 ms), whether it was served in the end or
# not (one not served and given up sooner is counted as undecided); a
# promoted clone refused "not confirmed" (55000) is a violation too.  The
# counts and the longest refusal go into %$h.  Returns the violations.
sub check_probes
{
	my ($h, $probes, $latest, $clock, $drift) = @_;
	my @viol;
	my @slots = sort { $a <=> $b } keys %$latest;
	my @prefix;
	my $max = -1;
	foreach my $slot (@slots)
	{
		$max = $latest->{$slot} if $latest->{$slot} > $max;
		push @prefix, $max;
	}
	# The largest ID time acknowledged before the time $t (Unix seconds).
	my $before = sub {
		my ($t) = @_;
		my ($lo, $hi) = (0, scalar @slots);
		while ($lo < $hi)
		{
			my $mid = int(($lo + $hi) / 2);
			if ($slots[$mid] < int($t * 100)) { $lo = $mid + 1 } else { $hi = $mid }
		}
		return $lo ? $prefix[ $lo - 1 ] : -1;
	};
	$h->{probes} = {};
	$h->{probe_refused} = [ 0, '' ];
	foreach my $p (sort { $a->{seq} <=> $b->{seq} } values %$probes)
	{
		my @calls = sort { $a->[0] <=> $b->[0] } @{ $p->{calls} };
		next unless @calls;
		$h->{probes}{ $p->{what} }++;
		my $t0 = $calls[0][0];
		my ($served) = grep { $_->[2] eq 'none' } @calls;
		my $unconfirmed = grep { $_->[2] eq '55000' } @calls;
		my $refused_for = ($served ? $served->[0] : $calls[-1][1]) - $t0;
		my $lead = max_in_force($drift, $t0, $t0);
		$lead = 1000 if $lead < 1000;
		my $now = int(($t0 + max_in_force($clock, $t0, $t0)) * 1000);
		my $ahead = $before->($p->{lost}) - $now;
		$ahead = 0 if $ahead < 0;
		my $allowed = ($lead + $ahead) / 1000 + 0.5;
		my $what = "$p->{server}, which must mint at once ($p->{what}, fault #$p->{seq})";
		$h->{probe_refused} = [ $refused_for, sprintf('%.1f s (%s, allowed %.1f s)', $refused_for,
				$p->{what}, $allowed) ]
		  if $refused_for > $h->{probe_refused}[0];
		if ($p->{what} eq 'clone' && $unconfirmed)
		{
			push @viol, [ $calls[0][1], "$what, a clone promoted after the server it was cloned from "
				  . "was confirmed, was refused $unconfirmed times with 55000 (not confirmed)" ];
		}
		elsif ($refused_for > $allowed)
		{
			push @viol, [ $served ? $served->[1] : $calls[-1][1],
				sprintf('%s was refused for %.1f s%s, more than the lead in force (%d ms) and how '
					  . 'far the IDs before it led the clock (%d ms) allow', $what, $refused_for,
					$served ? '' : ' (all its ' . scalar(@calls) . ' calls)', $lead, $ahead) ];
		}
		elsif (!$served)
		{
			# Given up before the time allowed had passed: undecided.
			$h->{probes_undecided}++;
		}
	}
	return @viol;
}

# Check the whole history in $dir; return a hash: counts, and the
# violations as [time, text], sorted by time.
sub check_history
{
	my ($dir) = @_;
	my (%h, @faults, @clock, @drift, @bursts, @viol, %notes, %refused, %expected, %probes, %copies);
	open my $fh, '<', "$dir/schedule" or die "$dir/schedule: $!";
	while (<$fh>)
	{
		chomp;
		my ($type, $t, @f) = split /\t/;
		push @faults, [ $t, @f ] if $type eq 'F';
		push @clock, [ $t, $f[0] ] if $type eq 'C';
		push @drift, [ $t, $f[0] ] if $type eq 'D';
		push @bursts, [ $t, @f ] if $type eq 'B';
		$notes{ $f[0] }++ if $type eq 'N';
		if ($type eq 'U')
		{
			# An attempt on a server that must refuse: any ID given is a
			# violation (the IDs are checked with the others too, B events).
			my ($t0, $server, $state, $count, $first) = @f;
			$refused{$state}++;
			push @viol, [ $t, "$server, which must refuse (its node id is not confirmed: it left "
				  . 'recovery without a new timeline, or falls within the span of its original), '
				  . "was given $count IDs (the first $first)" ]
			  if $count > 0;
		}
		if ($type eq 'X')
		{
			# A batch of the scheduler refused while a standby lags behind
			# a raise: expected, if it is a documented refusal.
			my ($t0, $server, $state) = @f;
			$expected{$state}++;
			push @viol, [ $t, "the scheduler's batch on $server under a raise was refused with "
				  . "$state, not one of the documented refusals" ]
			  unless $refusal{$state};
		}
		if ($type eq 'G')
		{
			my ($seq, $server, $what, $lost) = @f;
			$probes{$seq} = { seq => $seq, server => $server, what => $what, lost => $lost, calls => [] };
		}
		if ($type eq 'P')
		{
			my ($t0, $seq, $state) = @f;
			push @{ $probes{$seq}{calls} }, [ $t0, $t, $state ];
		}
		if ($type eq 'W')
		{
			# A copy beside the primary: one inside the span must warn
			# (and refuse, U events), one outside must not warn.
			my ($server, $id, $inside, $warned) = @f;
			$copies{ $inside ? 'inside' : 'outside' }++;
			push @viol, [ $t, "$server, a copy beside the primary with node id $id "
				  . ($inside ? 'inside the span of its original, logged no WARNING at its start'
					: 'outside the span of its original, warned that it falls within it') ]
			  if $inside != $warned;
		}
	}
	close $fh;
	$h{faults} = \@faults;
	$h{notes} = \%notes;
	$h{must_refuse} = \%refused;
	$h{expected} = \%expected;
	$h{copies} = \%copies;
	# %latest: the largest ID time (Unix ms) acknowledged in each 10 ms
	# of the history, for the probes' predecessors.
	my (%acks, %refusals, %latest);
	@h{qw(ids statements connection_errors)} = (0, 0, 0);
	open my $idfile, '>', "$dir/ids" or die "$dir/ids: $!";
	foreach my $file (sort glob("$dir/client-*"))
	{
		my ($client) = $file =~ /client-(\d+)$/;
		open my $in, '<', $file or die "$file: $!";
		while (<$in>)
		{
			chomp;
			my ($type, $term, $server, $life, $t0, $t1, @rest) = split /\t/;
			if ($type eq 'E')
			{
				my ($state, $msg) = @rest;
				$msg //= '';
				if ($refusal{$state}) { $refusals{$state}++ }
				elsif (connection_error($state, $msg)) { $h{connection_errors}++ }
				else
				{
					push @viol, [ $t1, "client $client on $server (life $life): "
						  . "an error outside the documented ones: $state $msg" ];
				}
				next;
			}
			my @ids = split /,/, $rest[0];
			$h{statements}++;
			$h{ids} += @ids;
			print $idfile "$_\n" foreach @ids;
			for my $i (1 .. $#ids)
			{
				next if $ids[$i] > $ids[ $i - 1 ];
				push @viol, [ $t1, "client $client on $server: a batch's IDs are not increasing ($ids[$i-1], $ids[$i])" ];
				last;
			}
			# Bounded lead: the ID's time against the fake clock at any
			# moment between the call and its acknowledgement (50 ms of
			# slack each side for the clock file's and the records' timing)
			# plus the largest max_drift_ms in force then, and 1 ms for
			# rounding.
			my $off = max_in_force(\@clock, $t0 - 0.05, $t1 + 0.05);
			my $bound = int(($t1 + 0.05 + $off) * 1000) + max_in_force(\@drift, $t0, $t1) + 1;
			my $ts = ($ids[-1] >> $shift) + $epoch_ms;
			push @viol, [ $t1, "client $client on $server (life $life): ID $ids[-1] is "
				  . ($ts - $bound + max_in_force(\@drift, $t0, $t1) + 1)
				  . " ms ahead of the clock (offset ${off}s), more than max_drift_ms allows" ]
			  if $ts > $bound;
			push @{ $acks{$term} }, [ $t0, $t1, $ids[0], $ids[-1], $client, $server ];
			my $slot = int($t1 * 100);
			$latest{$slot} = $ts if !defined $latest{$slot} || $ts > $latest{$slot};
		}
		close $in;
	}
	close $idfile;
	$h{refusals} = \%refusals;
	push @viol, check_bursts(\@bursts, \%acks, \@clock, \@drift, "$dir/ids");
	$h{burst_ids} = 0;
	$h{burst_ids} += $_->[6] foreach @bursts;
	foreach my $b (@bursts)
	{
		my $slot = int($b->[0] * 100);
		my $ts = ($b->[5] >> $shift) + $epoch_ms;
		$latest{$slot} = $ts if !defined $latest{$slot} || $ts > $latest{$slot};
	}
	push @viol, check_probes(\%h, \%probes, \%latest, \@clock, \@drift);

	# Uniqueness over every server, life and term.
	my @dups = split /\n/, `sort -n -S 100M '$dir/ids' | uniq -d | head -n 20`;
	foreach my $dup (@dups)
	{
		my @where;
		foreach my $term (sort keys %acks)
		{
			push @where, map { [ $_->[1], "client $_->[4] on $_->[5] (term $term)" ] }
			  grep { $_->[2] <= $dup && $dup <= $_->[3] } @{ $acks{$term} };
		}
		@where = sort { $a->[0] <=> $b->[0] } @where;
		push @viol, [ $where[-1][0], "ID $dup acknowledged twice: "
			  . join(' and ', map { sprintf('%s at %.3f', $_->[1], $_->[0]) } @where) ];
	}

	# Monotonicity on one server (SPEC.md 3.2: every ID above every ID
	# issued before it): within one term, an ID acknowledged before a call
	# started lies below every ID of that call, whichever client.
	foreach my $term (sort keys %acks)
	{
		my @by_ack = sort { $a->[1] <=> $b->[1] } @{ $acks{$term} };
		my ($i, $max, $maxrec) = (0, -1, undef);
		foreach my $r (sort { $a->[0] <=> $b->[0] } @{ $acks{$term} })
		{
			while ($i < @by_ack && $by_ack[$i][1] < $r->[0])
			{
				($max, $maxrec) = ($by_ack[$i][3], $by_ack[$i]) if $by_ack[$i][3] > $max;
				$i++;
			}
			next if $r->[2] > $max;
			push @viol, [ $r->[1], sprintf('term %s: client %s was given ID %s at %.3f, not above ID %s '
				  . 'that client %s was given at %.3f, before the call started',
				  $term, $r->[4], $r->[2], $r->[1], $max, $maxrec->[4], $maxrec->[1]) ];
		}
	}
	$h{violations} = [ sort { $a->[0] <=> $b->[0] } @viol ];
	return \%h;
}

# The report of a campaign $c checked into $h: the summary for
# docs/guarantees.md, then the first violations, each with the seed and the
# fault just before it.
sub summary
{
	my ($c, $h, $minutes) = @_;
	my %kinds = %{ $c->{kinds} };
	my $nfaults = 0;
	$nfaults += $_ foreach values %kinds;
	my %skipped = %{ $c->{skipped} };
	my %notes = %{ $h->{notes} };
	my %must = %{ $h->{must_refuse} };
	my @out = (
		sprintf('snowflake fault campaign: seed %s, %s minutes, PostgreSQL %s%s, snowflake.node_id_span %d',
			$c->{seed}, $minutes, $c->{version},
			$c->{no_preload_run} ? ' without the preload' : '', $c->{span}),
		sprintf('faults injected: %d (%s)', $nfaults,
			join(', ', map { "$_ $kinds{$_}" } sort keys %kinds)),
		sprintf('seconds per fault, on average: %s',
			join(', ', map { sprintf('%s %.1f', $_, $c->{secs}{$_} / $kinds{$_}) } sort keys %kinds)),
		%skipped ? sprintf('skipped: %s (without the preload a start without standby.signal, one '
			  . 'that must be confirmed and a copy\'s cannot be seen, and no lead is raised past 1 s)',
			join(', ', map { "$_ $skipped{$_}" } sort keys %skipped))
		: (),
		%{ $c->{late} } ? sprintf('long faults drawn in the last %d s, passed over: %s', $late,
			join(', ', map { "$_ $c->{late}{$_}" } sort keys %{ $c->{late} })) : (),
		sprintf('notes: %s', join(', ', map { "$_ $notes{$_}" } sort keys %notes) || 'none'),
		sprintf('attempts to mint on servers that must refuse: %d (%s)',
			sum0(values %must), join(', ', map { "$_ $must{$_}" } sort keys %must) || 'none'),
		sprintf('the scheduler\'s batches refused while a standby lagged behind a raise (expected): %s',
			join(', ', map { "$_ $h->{expected}{$_}" } sort keys %{ $h->{expected} }) || 'none'),
		sprintf('starts that must mint at once: %s; refused at first for %s at most%s',
			join(', ', map { "$_ $h->{probes}{$_}" } sort keys %{ $h->{probes} }) || 'none',
			$h->{probe_refused}[0] ? $h->{probe_refused}[1] : '0 s',
			$h->{probes_undecided} ? "; $h->{probes_undecided} given up before the time allowed" : ''),
		sprintf('copies started beside the primary: %d inside the span of its node id, %d outside',
			$h->{copies}{inside} // 0, $h->{copies}{outside} // 0),
		sprintf('IDs acknowledged: %d in %d statements, and %d in the scheduler\'s batches',
			$h->{ids}, $h->{statements}, $h->{burst_ids}),
		sprintf('refusals by SQLSTATE: %s',
			join(', ', map { "$_ $h->{refusals}{$_}" } sort keys %{ $h->{refusals} }) || 'none'),
		sprintf('connection errors (server crashing, restarting, stopped or demoted): %d',
			$h->{connection_errors}),
		sprintf('violations: %d', scalar @{ $h->{violations} }),
		sprintf('server up at the end: %s', $c->{up} ? 'yes' : "no ($c->{up_error})"),
		'reproduce: ' . ($ENV{SNOWFLAKE_CHAOS_REPRODUCE} //
			  sprintf('%stest/chaos.sh --seed %s --minutes %s --major %d%s',
				  $ENV{PG_CONFIG} ? "PG_CONFIG=$ENV{PG_CONFIG} " : '',
				  $c->{seed}, $minutes, $c->{version}->major,
				  $c->{no_preload_run} ? ' --no-preload' : '')));
	my $shown = 0;
	foreach my $v (@{ $h->{violations} })
	{
		last if ++$shown > 10;
		my ($last) = grep { $_->[0] <= $v->[0] } reverse @{ $h->{faults} };
		push @out, sprintf('VIOLATION (seed %s) at %s: %s; the fault just before: %s', $c->{seed},
			POSIX::strftime('%H:%M:%S', localtime $v->[0]), $v->[1],
			$last ? sprintf('#%d %s %s at %s', $last->[1], $last->[2], $last->[3] // '',
				POSIX::strftime('%H:%M:%S', localtime $last->[0])) : 'none yet');
	}
	return @out;
}

1;
