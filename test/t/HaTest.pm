# Copyright: see LICENSE
#
# HaTest.pm
#	Helpers shared by the TAP tests of the HA managers beyond Patroni
#	(056_pg_auto_failover.pl, 057_repmgr.pl; test/patroni-check.sh does the
#	same for Patroni in shell): skipping where the manager is not installed,
#	the managers' processes started in process groups of their own and
#	stopped by them, clients that insert rows keyed by snowflake_nextval()
#	on whichever member accepts writes and record every ID returned, and
#	the checks made on what they collected.

package HaTest;

use strict;
use warnings;

use Exporter 'import';
use DBI;
use IPC::Run;
use POSIX ();
use PostgreSQL::Test::Utils;
use Test::More;
use Time::HiRes qw(time sleep);

our @EXPORT = qw(ha_require ha_program ha_start ha_kill_group ha_run
  ha_wait ha_at_end ha_psql start_clients stop_clients client_lines check_ids
  ha_verdict);

# Skip the whole file where the manager is not installed for the server
# under test, saying precisely what is missing: "command NAME not found
# (WHERE)" or "extension NAME is not available on this server (WHY)".
# Each requirement is [kind ('command' or 'extension'), name, whether it
# is there (as the caller found by asking the programs and the server's
# directories), where it was looked for].  test/setup.sh installs the
# manager wherever this major's archive has it for the packaged server,
# and test/check.sh accepts the skip only where it installed no package
# for that name (SF_TEST_PROVIDES): a manager it installed must be found.
# A server built from source has none of the managers' per-major files.
sub ha_require
{
	foreach my $r (@_)
	{
		my ($kind, $name, $present, $where) = @$r;
		next if $present;
		plan skip_all => $kind eq 'command'
		  ? "command $name not found ($where)"
		  : "extension $name is not available on this server ($where)";
	}
	return;
}

# The first executable $name in the directories @dirs (PATH if none).
sub ha_program
{
	my ($name, @dirs) = @_;
	@dirs = split /:/, $ENV{PATH} unless @dirs;
	my ($dir) = grep { -x "$_/$name" } @dirs;
	return defined $dir ? "$dir/$name" : undef;
}

# Every process group started by ha_start, stopped at the end.
my @groups;

# Start @cmd in the background in a process group of its own (setsid),
# its output appended to $log; returns the group's id (the process's PID).
sub ha_start
{
	my ($log, @cmd) = @_;
	my $pid = fork();
	die "fork: $!" unless defined $pid;
	if ($pid == 0)
	{
		POSIX::setsid();
		open STDIN, '<', '/dev/null';
		open STDOUT, '>>', $log or POSIX::_exit(127);
		open STDERR, '>&', \*STDOUT;
		exec @cmd or POSIX::_exit(127);
	}
	push @groups, $pid;
	return $pid;
}

# Send $signal to the whole group $pgid; after SIGKILL, reap its leader
# (a zombie keeps its PID in use: pg_autoctl would take it for a running
# instance).
sub ha_kill_group
{
	my ($pgid, $signal) = @_;
	kill($signal, -$pgid);
	if ($signal eq 'KILL')
	{
		waitpid($pgid, 0);
		@groups = grep { $_ != $pgid } @groups;
	}
	return;
}

# Stop every group still there: SIGTERM (the managers stop their
# PostgreSQL), then, after a bounded wait, SIGKILL.
sub ha_stop_all
{
	my @alive = grep { kill(0, -$_) } @groups;
	kill('TERM', -$_) foreach @alive;
	my $deadline = time() + 30;
	while (time() < $deadline && grep { kill(0, -$_) } @alive)
	{
		waitpid(-1, POSIX::WNOHANG());
		sleep(0.2);
	}
	kill('KILL', -$_) foreach grep { kill(0, -$_) } @alive;
	@groups = ();
	return;
}

# What to do at the end, after the groups are stopped (stop servers that
# no group runs).
my @at_end;

sub ha_at_end
{
	my ($code) = @_;
	push @at_end, $code;
	return;
}

END
{
	my $rc = $?;
	ha_stop_all() if @groups;
	$_->() foreach @at_end;
	$? = $rc;
}

# A test stopped by a signal stops its managers too (END runs on exit).
$SIG{TERM} = $SIG{INT} = sub { exit 1 };

# Run @cmd to completion (at most $secs seconds), its output appended to
# $log; returns whether it succeeded, and shows the output if not.
sub ha_run
{
	my ($log, $secs, @cmd) = @_;
	my $offset = -s $log // 0;
	my $ok = eval {
		IPC::Run::run(\@cmd, '<', \undef, '>>', $log, '2>>', $log,
			IPC::Run::timeout($secs));
	};
	if (!$ok)
	{
		my $out = -e $log ? substr(slurp_file($log), $offset) : '';
		diag("@cmd failed" . ($@ ? ": $@" : '') . "\n$out");
	}
	return $ok ? 1 : 0;
}

# The output of $sql (psql -At, quiet) on the server at 127.0.0.1:$port,
# database $db, as user postgres, with the psql of $bindir; an error is
# noted unless $quiet.
sub ha_psql
{
	my ($bindir, $port, $db, $sql, $quiet) = @_;
	my ($out, $err) = ('', '');
	my $ok = eval {
		IPC::Run::run(
			[
				"$bindir/psql", '-X', '-q', '-At', '-v', 'ON_ERROR_STOP=1',
				'-h', '127.0.0.1', '-p', $port, '-U', 'postgres', '-d', $db,
				'-c', $sql
			],
			'<', \undef, '>', \$out, '2>', \$err, IPC::Run::timeout(30));
	};
	note("psql on port $port: $err") if !$ok && !$quiet;
	chomp $out;
	return $out;
}

# Wait (a bounded poll, the test framework's default timeout) until
# $check returns true; returns whether it did.
sub ha_wait
{
	my ($check) = @_;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while (time() < $deadline)
	{
		return 1 if $check->();
		sleep(0.25);
	}
	return 0;
}

# --- the clients ---------------------------------------------------------

my @clients;

# Start $n clients, each inserting one row keyed by snowflake_nextval() per
# statement on whichever server of $conninfo (a libpq connection string
# with several hosts and target_session_attrs=read-write) accepts writes,
# until $dir/stop exists.  For every ID returned each writes a line to
# $dir/client-N: the times (µs) the request was sent and the answer came,
# the ID and the port of the server that answered.
sub start_clients
{
	my ($n, $conninfo, $dir) = @_;
	unlink "$dir/stop";
	foreach my $c (1 .. $n)
	{
		my $pid = fork();
		die "fork: $!" unless defined $pid;
		if ($pid == 0)
		{
			client_main($conninfo, "$dir/stop", "$dir/client-$c");
			POSIX::_exit(0);    # no END block of the test framework
		}
		push @clients, $pid;
	}
	return;
}

sub client_main
{
	my ($conninfo, $stop, $file) = @_;
	open my $out, '>>', $file or die "$file: $!";
	$out->autoflush(1);
	my $parent = getppid();
	my $dbh;
	while (!-e $stop && getppid() == $parent)
	{
		$dbh //= DBI->connect("dbi:Pg:$conninfo", '', '',
			{ AutoCommit => 1, RaiseError => 0, PrintError => 0, PrintWarn => 0 });
		if (!$dbh)
		{
			sleep(0.05);
			next;
		}
		my $t0 = int(time() * 1e6);
		my $r = $dbh->selectrow_arrayref(
			'INSERT INTO ids (id) VALUES (snowflake_nextval()) RETURNING id, inet_server_port()');
		my $t1 = int(time() * 1e6);
		if ($r)
		{
			print $out "$t0 $t1 $r->[0] $r->[1]\n";
			sleep(0.01);
		}
		else
		{
			$dbh->disconnect;
			undef $dbh;
			sleep(0.05);
		}
	}
	close $out;
	return;
}

# Stop the clients and wait for them.
sub stop_clients
{
	my ($dir) = @_;
	open my $fh, '>', "$dir/stop" or die "$dir/stop: $!";
	close $fh;
	foreach my $pid (@clients)
	{
		my $deadline = time() + 30;
		while (waitpid($pid, POSIX::WNOHANG()) == 0)
		{
			if (time() > $deadline)
			{
				kill('KILL', $pid);
				waitpid($pid, 0);
				last;
			}
			sleep(0.05);
		}
	}
	@clients = ();
	return;
}

# How many IDs the clients have recorded, in all or from server port $port.
sub client_lines
{
	my ($dir, $port) = @_;
	my $count = 0;
	foreach my $file (glob "$dir/client-*")
	{
		open my $fh, '<', $file or next;
		while (my $line = <$fh>)
		{
			$count++ if !defined $port || $line =~ / \Q$port\E\n\z/;
		}
		close $fh;
	}
	return $count;
}

# The checks on what the clients collected: no ID twice; each ID above
# every ID whose answer came before its request was sent.  Returns a hash:
# ids, duplicates, out_of_order, terms (the ports in the order the
# answers came, one entry per run of one port) and node_ids ({port}{node
# id} => count), with $node_shift = sequence bits.
sub check_ids
{
	my ($dir, $node_shift, $node_mask) = @_;
	my @r;
	foreach my $file (glob "$dir/client-*")
	{
		open my $fh, '<', $file or die "$file: $!";
		while (my $line = <$fh>)
		{
			$line =~ /^(\d+) (\d+) (\d+) (\d+)$/ or die "unexpected client output: $line";
			push @r, [ $1, $2, $3, $4 ];
		}
		close $fh;
	}
	my %seen;
	my $dups = grep { $seen{ $_->[2] }++ == 1 } @r;
	my @by_sent = sort { $a->[0] <=> $b->[0] } @r;
	my @by_recv = sort { $a->[1] <=> $b->[1] } @r;
	my ($j, $max, $bad) = (0, -1, 0);
	foreach my $x (@by_sent)
	{
		while ($j < @by_recv && $by_recv[$j][1] < $x->[0])
		{
			$max = $by_recv[$j][2] if $by_recv[$j][2] > $max;
			$j++;
		}
		if ($x->[2] <= $max)
		{
			$bad++;
			diag("ID $x->[2] from port $x->[3] is not above $max, returned before it")
			  if $bad <= 5;
		}
	}
	my @terms;
	foreach my $x (@by_recv)
	{
		push @terms, $x->[3] if !@terms || $terms[-1] ne $x->[3];
	}
	my %nodes;
	$nodes{ $_->[3] }{ ($_->[2] >> $node_shift) & $node_mask }++ foreach @r;
	return {
		ids => scalar(@r),
		duplicates => $dups,
		out_of_order => $bad,
		terms => \@terms,
		node_ids => \%nodes
	};
}

# The verdict on what the clients collected in $dir (default layout: 12
# sequence bits, 10 node bits), for manager $manager whose members' ports
# %$name names: printed as one line (diag: it shows in every run), then
# asserted: at least $min_ids IDs, none twice, none out of order, the
# terms $want_terms ("n1 > n2 > n1"), and each member's node ids
# $want_minted ("n1: node id 21, n2: node id 22").
sub ha_verdict
{
	my ($dir, $manager, $name, $min_ids, $want_terms, $want_minted) = @_;
	my $r = check_ids($dir, 12, 1023);
	my @ports = sort { $name->{$a} cmp $name->{$b} } keys %{ $r->{node_ids} };
	my $minted = join(', ',
		map {
			my $p = $_;
			"$name->{$p}: "
			  . join(' ',
				map { "node id $_: $r->{node_ids}{$p}{$_} IDs" }
				sort keys %{ $r->{node_ids}{$p} })
		} @ports);
	my $terms = join(' > ', map { $name->{$_} // $_ } @{ $r->{terms} });
	diag("$manager: $r->{ids} IDs, $r->{duplicates} returned twice, "
		  . "$r->{out_of_order} out of order; terms $terms; $minted");
	cmp_ok($r->{ids}, '>=', $min_ids, "the clients got $r->{ids} IDs");
	is($r->{duplicates}, 0, 'no ID was returned twice');
	is($r->{out_of_order}, 0,
		'every ID is above every ID returned before its request was sent');
	is($terms, $want_terms, "the clients saw the terms $want_terms");
	is($minted =~ s/: \d+ IDs//gr, $want_minted,
		"each member minted with its own node id ($want_minted)");
	return $r;
}

1;
