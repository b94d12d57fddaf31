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
# A term is one server's time as the primary (it changes at a promotion);
# a life is one postmaster start (pg_postmaster_start_time()).

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
use Time::HiRes qw(time sleep);

our @EXPORT = qw(run_campaign check_history summary);

# The layout the campaign runs with (the defaults) and its epoch in ms.
my $shift = 22;
my $epoch_ms = 1704067200000;
my $clients = 4;

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

# Fault kinds and their weights in the seeded draw.
my @kinds = (
	[ kill_backend => 3 ], [ kill_writer => 2 ], [ kill_postmaster => 1 ],
	[ stop_backend => 2 ], [ stop_postmaster => 1 ], [ clock_small => 3 ],
	[ clock_large => 2 ], [ state_file_fault => 3 ], [ drift_reload => 2 ],
	[ promote => 1 ], [ restart_no_preload => 1 ], [ restart => 1 ],
	[ restore_unwritable => 1 ]);
my $total_weight = 0;
$total_weight += $_->[1] foreach @kinds;

sub pick_kind
{
	my $x = rand($total_weight);
	foreach my $k (@kinds)
	{
		return $k->[0] if ($x -= $k->[1]) < 0;
	}
	return $kinds[-1][0];
}

# Run the campaign: seed $seed, $seconds of faults; the history goes to
# directory $dir.  Returns a hash of what was injected.
sub run_campaign
{
	my ($seed, $seconds, $dir) = @_;
	my %c = (dir => $dir, seed => $seed, offset => 0, drift => 1000, term => 1,
		preload => 1, seq => 0, kinds => {});
	open my $sched, '>', "$dir/schedule" or die "$dir/schedule: $!";
	$sched->autoflush(1);
	$c{log} = $sched;

	my %conf = ('snowflake.max_drift_ms' => 1000);
	my $primary = start_snowflake_node('primary', node_id => 1,
		init => { allows_streaming => 1 },
		settings => {
			'snowflake.node_id_span' => 2, restart_after_crash => 'on',
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
	event(\%c, 'C', 0);
	event(\%c, 'D', 1000);
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
		sleep($gap);    # the schedule's pace between faults
		last if time() >= $deadline;
		inject(\%c, $kind);
	}
	waitpid($_, 0) foreach @pids;
	# Heal: no disk fault, and the primary must answer.
	set_fault();
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
	my $log = sub {
		$params = join(' ', @_);
		printf STDERR "# chaos %4d %s %-18s %s\n", $seq,
		  POSIX::strftime('%H:%M:%S', localtime), $kind, $params;
		event($c, 'F', $seq, $kind, $params);
	};
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
		# at even odds, but the offset stays within -30 s .. +120 s.
		my $size = $kind eq 'clock_small' ? 0.02 + 0.88 * $r2 : 2 + 18 * $r2;
		my $sign = $r1 < 0.5 ? -1 : 1;
		$sign = 1 if $c->{offset} - $size < -30;
		$sign = -1 if $c->{offset} + $size > 120;
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
		promote($c, $log);
	}
	elsif ($kind eq 'restore_unwritable')
	{
		restore_in_place($c, $log, $r1 < 0.5 ? 'base backup' : 'volume snapshot',
			sprintf('%.1f', 0.5 + 2.5 * $r2));
	}
	elsif ($kind eq 'restart_no_preload' && $c->{version} >= 17)
	{
		$c->{preload} = !$c->{preload};
		$log->($c->{preload} ? 'preloaded again' : 'without the preload');
		write_conf($c);
		$p->stop('fast', fail_ok => 1);
		start_node($p);
		wait_up($p);
	}
	else
	{
		# A clean restart (also restart_no_preload before 17, which has
		# no mode without the preload).
		$kind = 'restart';
		$log->('fast');
		$p->stop('fast', fail_ok => 1);
		start_node($p);
		wait_up($p);
	}
	$c->{kinds}{$kind}++;
	return;
}

# Write chaos.conf of both servers from the campaign's settings.
sub write_conf
{
	my ($c) = @_;
	my %s = %{ $c->{conf} };
	$s{shared_preload_libraries} = '' unless $c->{preload};
	write_conf_file($_, 'chaos.conf', %s) foreach ($c->{primary}, $c->{standby});
	return;
}

# Set snowflake.max_drift_ms on both servers.  The checker takes a raised
# value as in force from before the reload, a lowered one from a second
# after every new session sees it (a backend rereads the setting at its
# next statement).
sub set_drift_all
{
	my ($c, $new) = @_;
	my $old = $c->{drift};
	event($c, 'D', $new) if $new > $old;
	$c->{conf}{'snowflake.max_drift_ms'} = $new;
	write_conf($c);
	foreach my $node ($c->{primary}, $c->{standby})
	{
		$node->reload;
	}
	$c->{primary}->poll_query_until('postgres',
		show_setting('snowflake.max_drift_ms'), $new < 1000 ? "${new}ms" : ($new / 1000) . 's')
	  or die "max_drift_ms $new not seen";
	if ($new < $old)
	{
		sleep(1);    # the grace the checker gives backends, see above
		event($c, 'D', $new);
	}
	$c->{drift} = $new;
	return;
}

# The primary crashes (immediate stop), the standby is promoted and the
# clients move to it; the old primary is rewound and rejoins as a standby.
sub promote
{
	my ($c, $log) = @_;
	my ($old, $new) = @{$c}{qw(primary standby)};
	$log->($old->name . ' stops, ' . $new->name . ' is promoted, ' . $old->name . ' rewound');
	$old->stop('immediate', fail_ok => 1);
	promote_and_wait($new);
	# pg_rewind reads the new timeline from the control file, which the
	# end-of-recovery checkpoint writes.
	$new->safe_psql('postgres', 'CHECKPOINT');
	$c->{term}++;
	@{$c}{qw(primary standby)} = ($new, $old);
	set_target($c);
	my $conf = $old->data_dir . '/postgresql.conf';
	my $saved = slurp_file($conf);
	PostgreSQL::Test::Utils::run_log([ 'pg_rewind', '--target-pgdata', $old->data_dir,
		'--source-server', $new->connstr('postgres') ])
	  or die 'pg_rewind failed';
	open my $fh, '>', $conf or die "$conf: $!";
	print $fh $saved;
	close $fh;
	write_conf($c);
	$old->enable_streaming($new);
	start_node($old);
	return;
}

# The primary's data directory is copied (a base backup, or a volume
# snapshot: the whole server stopped with SIGSTOP while it is copied),
# snowflake.max_drift_ms is raised to 10 s (if it is lower) and the
# scheduler issues a burst that runs 9 s ahead of the clock, the clients go
# on for $secs seconds, the primary is lost (immediate stop) and
# the copy takes its place: its first start runs with the state file
# unwritable (the fault shim, "open EACCES"), it is stopped, the fault
# cleared, and it starts again; the clients go on with it, the same term.
# The standby, which has WAL the copy never wrote on the same timeline, is
# stopped with the primary and built anew from the copy.
# The clock is set to +0 first: the floor is the restored server's clock
# plus the lead, and on PostgreSQL 15 libfaketime was seen leaving the
# background writer on the real clock (035_floor_clock_behind.pl), which
# must then be the servers' clock.
sub restore_in_place
{
	my ($c, $log, $how, $secs) = @_;
	my ($p, $s) = @{$c}{qw(primary standby)};
	$log->("$how, $secs s of IDs after it, then the primary is lost and the copy "
		  . 'starts in its place with the state file unwritable');
	if ($c->{offset} != 0)
	{
		set_clock('+0');
		event($c, 'C', 0);
		$c->{offset} = 0;
	}
	my $copy = PostgreSQL::Test::Utils::tempdir() . '/restore';
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
	set_drift_all($c, 10000) if $c->{drift} < 10000;
	burst($c);
	sleep($secs);
	my $pm = postmaster_pid($p);
	$p->stop('immediate', fail_ok => 1);
	# The standby has WAL the copy never wrote: it must not stream from it
	# (a walsender would wait at shutdown for a position it never sent).
	$s->stop('immediate', fail_ok => 1);
	# A snapshot's postmaster.pid names the lost postmaster: wait until it is gone.
	for (my $i = 0; $pm && kill(0, $pm) && $i < 600; $i++)
	{
		sleep(0.1);
	}
	File::Path::rmtree($p->data_dir);
	rename($copy, $p->data_dir) or die "could not move the copy in place: $!";
	# The configuration is the server's, not the copy's (as where it lives
	# outside the data directory): the copy was taken before max_drift_ms
	# was raised, and only a configured max_drift_ms tells the restored
	# server how far the lost one's IDs may have led (docs/guarantees.md).
	write_conf($c);
	set_fault('open EACCES');
	start_node($p);
	wait_up($p);
	sleep(1);    # the clients meet the refusals
	$p->stop('fast', fail_ok => 1);
	set_fault();
	start_node($p);
	wait_up($p);
	rebuild_standby($c);
	return;
}

# A burst on the primary: batches of a million IDs, one after the other,
# that run up to 90% of snowflake.max_drift_ms ahead of the clock (a copy's
# state file knows nothing of them), each recorded as a "B" event.  Only
# the first ID of a batch is fetched (the batch is issued whole, count
# consecutive IDs of one node, as 038_floor_obligation.pl checks), so the
# burst outruns the clock however slow the machine.  A batch refused (the
# clock, a fault) ends the burst.
sub burst
{
	my ($c) = @_;
	my $p = $c->{primary};
	my $dbh = dbh_of($p) or return;
	for (1 .. int($c->{drift} * 0.9 / 245))
	{
		my $t0 = time();
		my ($first) = $dbh->selectrow_array(
			'SELECT snowflake_nextval_batch(1000000) LIMIT 1');
		last unless defined $first;
		event($c, 'B', $t0, $c->{term}, $p->name, $first, 1000000);
	}
	$dbh->disconnect;
	return;
}

# Build the standby anew from the primary (pg_basebackup), keeping its own
# configuration, and start it streaming.
sub rebuild_standby
{
	my ($c) = @_;
	my ($p, $s) = @{$c}{qw(primary standby)};
	my $conf = $s->data_dir . '/postgresql.conf';
	my $saved = slurp_file($conf);
	File::Path::rmtree($s->data_dir);
	PostgreSQL::Test::Utils::run_log([ 'pg_basebackup', '-D', $s->data_dir, '-X', 'stream',
		'-c', 'fast', '--no-sync', '-h', $p->host, '-p', $p->port ])
	  or die 'pg_basebackup of the standby failed';
	chmod(0700, $s->data_dir);
	open my $fh, '>', $conf or die "$conf: $!";
	print $fh $saved;
	close $fh;
	write_conf($c);
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

# Check the whole history in $dir; return a hash: counts, and the
# violations as [time, text], sorted by time.
sub check_history
{
	my ($dir) = @_;
	my (%h, @faults, @clock, @drift, @bursts, @viol);
	open my $fh, '<', "$dir/schedule" or die "$dir/schedule: $!";
	while (<$fh>)
	{
		chomp;
		my ($type, $t, @f) = split /\t/;
		push @faults, [ $t, @f ] if $type eq 'F';
		push @clock, [ $t, $f[0] ] if $type eq 'C';
		push @drift, [ $t, $f[0] ] if $type eq 'D';
		push @bursts, [ $t, @f ] if $type eq 'B';
	}
	close $fh;
	$h{faults} = \@faults;
	my (%acks, %refusals);
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
		}
		close $in;
	}
	close $idfile;
	$h{refusals} = \%refusals;
	push @viol, check_bursts(\@bursts, \%acks, \@clock, \@drift, "$dir/ids");
	$h{burst_ids} = 0;
	$h{burst_ids} += $_->[6] foreach @bursts;

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
			push @viol, [ $r->[1], sprintf('term %d: client %s was given ID %s at %.3f, not above ID %s '
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
	my @out = (
		sprintf('snowflake fault campaign: seed %s, %s minutes, PostgreSQL %s',
			$c->{seed}, $minutes, $c->{version}),
		sprintf('faults injected: %d (%s)', $nfaults,
			join(', ', map { "$_ $kinds{$_}" } sort keys %kinds)),
		sprintf('IDs acknowledged: %d in %d statements, and %d in the scheduler\'s batches',
			$h->{ids}, $h->{statements}, $h->{burst_ids}),
		sprintf('refusals by SQLSTATE: %s',
			join(', ', map { "$_ $h->{refusals}{$_}" } sort keys %{ $h->{refusals} }) || 'none'),
		sprintf('connection errors (server crashing, restarting, stopped or demoted): %d',
			$h->{connection_errors}),
		sprintf('violations: %d', scalar @{ $h->{violations} }),
		sprintf('server up at the end: %s', $c->{up} ? 'yes' : "no ($c->{up_error})"),
		'reproduce: ' . ($ENV{SNOWFLAKE_CHAOS_REPRODUCE} //
			  sprintf('%stest/chaos.sh --seed %s --minutes %s --major %d',
				  $ENV{PG_CONFIG} ? "PG_CONFIG=$ENV{PG_CONFIG} " : '',
				  $c->{seed}, $minutes, $c->{version}->major)));
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
