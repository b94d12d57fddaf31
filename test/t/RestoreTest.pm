# Copyright: see LICENSE
#
# RestoreTest.pm
#	What the backup and restore tests share (060_restore_pitr.pl,
#	061_pgbackrest.pl, 062_barman.pl): a primary under insert load whose
#	clients record every key they were given, snowflake's and a bigserial
#	column's side by side, and the checks after each restore, which count
#	every key a client ever held: no snowflake ID handed out twice, the
#	bigserial values handed out again, the time from the restored server's
#	start to its first ID and the gap between the last ID before the
#	restore and the first after it.
#
# The clients are forked processes on DBD::Pg.  They insert into the
# server named by the file "target" of the history directory (host and
# port; no file: they wait), reconnecting when it changes, and append each
# acknowledged row to their file "client-N" ("id serial_id"), after the
# statement returned; an error goes to "errors-N" with its SQLSTATE.
# Whatever a client was given counts as held, whichever server gave it.

package RestoreTest;

use strict;
use warnings;

use Exporter 'import';
use DBI;
use POSIX ();
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time sleep);

our @EXPORT = qw(restore_primary_settings restore_schema start_load set_target
  wait_for_rows burst stop_load check_restore final_check doc_config run_tool);

# ID time in ms is id >> 22 in the default layout, which the tests use.
my $shift = 22;
my $clients = 3;

# Settings of a primary of these tests (start_snowflake_node adds the
# preload and the node id): room for the clients and a backup tool's
# connections, and IDs allowed to lead the clock by up to 10 s, so that a
# burst (below) can put the last IDs before a restore further ahead of the
# clock than the restore takes.
sub restore_primary_settings
{
	return (max_connections => 30, 'snowflake.max_drift_ms' => '10s');
}

# The table every client inserts into: a snowflake key and a bigserial.
sub restore_schema
{
	return q{CREATE EXTENSION snowflake;
CREATE TABLE ids (
	id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
	serial_id bigserial NOT NULL,
	client integer NOT NULL)};
}

# --- the clients ---------------------------------------------------------

# The target clients use now: "host port", or undef (none: wait).
sub read_target
{
	my ($file) = @_;
	open my $fh, '<', $file or return undef;
	my $line = <$fh>;
	close $fh;
	return undef unless defined $line && $line =~ /^(\S+ \d+)$/;
	return $1;
}

# One client: until the file "stop" appears (or 600 s have passed, or the
# test is gone), insert one row or a batch of 2 to 50 on the target.
sub client_main
{
	my ($n, $dir) = @_;
	srand($n);    # the workload's choices only
	my $deadline = time() + 600;
	my $parent = getppid();
	open my $out, '>>', "$dir/client-$n" or die "$dir/client-$n: $!";
	open my $err, '>>', "$dir/errors-$n" or die "$dir/errors-$n: $!";
	$out->autoflush(1);
	$err->autoflush(1);
	my ($dbh, $conn);
	while (time() < $deadline && !-e "$dir/stop" && getppid() == $parent)
	{
		my $target = read_target("$dir/target");
		if ($dbh && (!defined $target || $target ne $conn))
		{
			$dbh->disconnect;
			undef $dbh;
		}
		if (!defined $target)
		{
			sleep(0.02);    # the pace of looking for a target
			next;
		}
		if (!$dbh)
		{
			my ($host, $port) = split / /, $target;
			$dbh = DBI->connect(
				"dbi:Pg:dbname=postgres;host=$host;port=$port;connect_timeout=2;"
				  . 'options=-cstatement_timeout=10s;application_name=restore_client',
				'', '', { AutoCommit => 1, RaiseError => 0, PrintError => 0 });
			if (!$dbh)
			{
				sleep(0.05);    # the pace of reconnection attempts
				next;
			}
			$conn = $target;
		}
		my $count = rand() < 0.7 ? 1 : 2 + int(rand(49));
		my $rows = $dbh->selectall_arrayref(
			'INSERT INTO ids (client) SELECT ? FROM generate_series(1, ?) RETURNING id, serial_id',
			undef, $n, $count);
		if ($rows)
		{
			print $out join('', map { "$_->[0] $_->[1]\n" } @$rows);
		}
		else
		{
			my ($state, $msg) = ($dbh->state // '', $dbh->errstr // '');
			$msg =~ s/\s+/ /g;
			print $err "$state\t$msg\n";
			undef $dbh unless $dbh->ping;
		}
		sleep(0.005);    # the workload's pace
	}
	$dbh->disconnect if $dbh;
	close $out;
	close $err;
	POSIX::_exit(0);    # no END block of the parent's test framework
}

# Start the clients, writing their history to directory $dir (no target
# yet); return the load's handle.
sub start_load
{
	my ($dir) = @_;
	my $load = { dir => $dir, pids => [], minted => [], rows_seen => 0, offsets => {} };
	for my $n (1 .. $clients)
	{
		my $pid = fork() // die "fork: $!";
		client_main($n, $dir) if $pid == 0;
		push @{ $load->{pids} }, $pid;
	}
	return $load;
}

# Point the clients at $node (undef: no server; they disconnect and wait).
sub set_target
{
	my ($load, $node) = @_;
	my $file = "$load->{dir}/target";
	if (!defined $node)
	{
		unlink $file;
		return;
	}
	open my $fh, '>', "$file.new" or die "$file.new: $!";
	print $fh $node->host . ' ' . $node->port . "\n";
	close $fh;
	rename("$file.new", $file) or die "rename to $file: $!";
	return;
}

# How many rows the clients have recorded so far (counted incrementally).
sub rows_recorded
{
	my ($load) = @_;
	foreach my $file (glob("$load->{dir}/client-*"))
	{
		open my $fh, '<', $file or next;
		seek($fh, $load->{offsets}{$file} // 0, 0);
		while (my $line = <$fh>)
		{
			last unless $line =~ /\n\z/;    # a line still being written
			$load->{rows_seen}++;
			$load->{offsets}{$file} = tell($fh);
		}
		close $fh;
	}
	return $load->{rows_seen};
}

# Wait (a bounded poll, 120 s) until the clients have recorded $n more
# rows than when this was called; die otherwise.
sub wait_for_rows
{
	my ($load, $n) = @_;
	my $goal = rows_recorded($load) + $n;
	my $deadline = time() + 120;
	while (time() < $deadline)
	{
		return if rows_recorded($load) >= $goal;
		sleep(0.02);
	}
	die "the clients did not record $n more rows within 120 s";
}

# A burst on $node while the clients go on, as a bulk job that asks for
# IDs faster than the clock runs: batches of a million IDs (245 ms of ID
# time each) until the last IDs lead the clock by about $secs seconds (at
# least one batch; with the lead a restore left, fewer), and an ID after
# them.  Every ID from the first batch's first to that last one was handed
# out, to the burst or to a client, since the generator ran ahead of the
# clock all along: the range is recorded as handed out.  A restore that
# resumed at the clock, without the floor, would issue IDs inside it again.
sub burst
{
	my ($load, $node, $secs) = @_;
	my $lead = $node->safe_psql('postgres', 'SELECT lead_ms FROM snowflake_stats');
	my $batches = int(($secs * 1000 - $lead) / 245) + 1;
	$batches = 1 if $batches < 1;
	my ($lo, $hi) = split /\n/, $node->safe_psql(
		'postgres', qq{
SET snowflake.max_wait_ms = '5s';
SELECT snowflake_nextval_batch(1000000) LIMIT 1;
DO \$\$
BEGIN
	FOR i IN 2..$batches LOOP
		PERFORM snowflake_nextval_batch(1000000) LIMIT 1;
	END LOOP;
END \$\$;
SELECT snowflake_nextval();});
	$load->{last_lead} = $node->safe_psql('postgres', 'SELECT lead_ms FROM snowflake_stats');
	push @{ $load->{ranges} }, [ $lo, $hi ];
	push @{ $load->{minted} }, [ $lo, 0 ], [ $hi, 0 ];
	return;
}

# Stop the clients: they end at their next statement; each that has not
# ended after 60 s is killed by its PID.
sub stop_load
{
	my ($load) = @_;
	open my $fh, '>', "$load->{dir}/stop" or die "$load->{dir}/stop: $!";
	close $fh;
	my $deadline = time() + 60;
	foreach my $pid (@{ $load->{pids} })
	{
		while (waitpid($pid, POSIX::WNOHANG()) == 0)
		{
			if (time() > $deadline)
			{
				kill 'KILL', $pid;
				waitpid($pid, 0);
				last;
			}
			sleep(0.02);
		}
	}
	$load->{pids} = [];
	return;
}

# Every (id, serial_id) pair held so far: the clients' records and what
# the test was given itself (serial_id 0: no bigserial value).
sub held_pairs
{
	my ($load) = @_;
	my @pairs;
	foreach my $file (sort glob("$load->{dir}/client-*"))
	{
		open my $fh, '<', $file or die "$file: $!";
		while (my $line = <$fh>)
		{
			push @pairs, [ $1, $2 ] if $line =~ /^(\d+) (\d+)\n\z/;
		}
		close $fh;
	}
	return (@pairs, @{ $load->{minted} });
}

# --- after a restore ------------------------------------------------------

# The first ID of $node, asked for until it is given (a server still
# starting or in recovery refuses), polled every 10 ms for at most 180 s:
# (the ID, the time it came).  With $promoted (the page's wait for the
# promotion ran), a refusal for being in recovery is an error.
sub first_id
{
	my ($node, $promoted) = @_;
	my $deadline = time() + 180;
	my $last_error = 'no connection';
	while (time() < $deadline)
	{
		my $dbh = DBI->connect(
			'dbi:Pg:dbname=postgres;host=' . $node->host . ';port=' . $node->port
			  . ';connect_timeout=2', '', '',
			{ AutoCommit => 1, RaiseError => 0, PrintError => 0 });
		while ($dbh)
		{
			my ($id) = $dbh->selectrow_array('SELECT snowflake_nextval()');
			if (defined $id)
			{
				my $t = time();
				$dbh->disconnect;
				return ($id, $t);
			}
			my $state = $dbh->state // '';
			$last_error = "$state " . ($dbh->errstr // '');
			last unless $dbh->ping;    # the connection was lost: connect again
			die "the restored server refused an ID, not for being in recovery: $last_error"
			  unless $state eq '25006';
			die "the restored server refused an ID for being in recovery after the wait for its promotion: $last_error"
			  if $promoted;
			sleep(0.01);
		}
		sleep(0.01);
	}
	die "the restored server gave no ID within 180 s (last: $last_error)";
}

# The checks after a restore of $node, whose start (the command that
# started it) began at time $t_start, its log then being $log_offset bytes
# long; $label names the restore; $promoted: the wait for its promotion ran
# (the first call must not be refused for recovery).  The clients are
# pointed at no server (set_target undef) before the restore: the first ID
# asked for is the server's first.  Then:
#  - the server logs that it placed its first ID past its clock plus a lead
#    (the floor of a start from a backup or in recovery);
#  - its first ID lies above every ID handed out before (held by a client,
#    or in a burst's range);
#  - the rows of the restored table are compared with the held ones: those
#    held but not in the table are the keys "held from after the recovery
#    target" ($k); there must be some, or the restore went back to no
#    point before keys clients hold;
#  - the server then mints $k rows more in one statement: none of their
#    snowflake IDs, nor its first ID, is one a client holds or one of a
#    burst's range (0 handed out again), while bigserial hands out again
#    $n values that clients hold.
# Returns the figures (a hash) and prints them.
sub check_restore
{
	my ($load, $label, $node, $t_start, $log_offset, $promoted) = @_;
	my ($first, $t_first) = first_id($node, $promoted);
	my @held = held_pairs($load);
	my (%held_id, %held_serial);
	my $max = 0;
	$max = $_->[1] > $max ? $_->[1] : $max foreach @{ $load->{ranges} // [] };
	foreach my $p (@held)
	{
		$held_id{ $p->[0] } = 1;
		$held_serial{ $p->[1] } = 1;
		$max = $p->[0] if $p->[0] > $max;
	}
	my %f = (label => $label, held => scalar(@held), first => $first,
		start_to_first_s => $t_first - $t_start,
		gap_ms => ($first >> $shift) - ($max >> $shift));
	ok( $node->log_contains(
			qr/LOG:  snowflake IDs resume at \d+ ms past the clock, because (?:\Q@{[ start_reason() ]}\E|the server started from a restore|the server was promoted \(the state file records another timeline\))\n/,
			$log_offset),
		"$label: the restored server places its first ID past its clock plus a lead (log)");
	cmp_ok($first, '>', $max, "$label: the first ID lies above every ID handed out before");

	my %restored = map { $_ => 1 } split /\n/,
	  $node->safe_psql('postgres', 'SELECT id FROM ids');
	$f{after_target} = scalar grep { !$restored{ $_->[0] } } @held;
	cmp_ok($f{after_target}, '>', 0,
		"$label: clients hold keys from after the recovery target");

	my @new = map { [ split /\|/ ] } split /\n/,
	  $node->safe_psql('postgres',
		"INSERT INTO ids (client) SELECT 0 FROM generate_series(1, $f{after_target}) RETURNING id, serial_id"
	  );
	is(scalar(@new), $f{after_target}, "$label: the restored server minted $f{after_target} rows");
	my @ranges = @{ $load->{ranges} // [] };
	$f{snowflake_again} = scalar grep {
		my $id = $_;
		$held_id{$id} || grep { $_->[0] <= $id && $id <= $_->[1] } @ranges
	} ($first, map { $_->[0] } @new);
	$f{bigserial_again} = scalar grep { $held_serial{ $_->[1] } } @new;
	is($f{snowflake_again}, 0,
		"$label: snowflake_nextval() hands out again no ID handed out before");
	cmp_ok($f{bigserial_again}, '>', 0,
		"$label: bigserial hands out again values clients hold (the comparison)");
	push @{ $load->{minted} }, [ $first, 0 ], @new;
	$f{burst} = 0;
	$f{burst} += (($_->[1] >> $shift) - ($_->[0] >> $shift)) * 4096
	  + ($_->[1] & 4095) - ($_->[0] & 4095) + 1
	  foreach @ranges;

	diag(sprintf(
		'%s: IDs held %d (%d from after the target) and %d handed out in bursts; '
		  . 'snowflake IDs handed out again %d, bigserial values handed out again %d of %d; '
		  . 'start to first ID %.2f s; gap from the last ID before to the first after %d ms '
		  . '(the last burst led the clock by %d ms)',
		$label, $f{held}, $f{after_target}, $f{burst}, $f{snowflake_again},
		$f{bigserial_again}, $f{after_target}, $f{start_to_first_s}, $f{gap_ms},
		$load->{last_lead} // 0));
	push @{ $load->{figures} }, \%f;
	return \%f;
}

# After the clients have stopped: no ID held twice over everything any
# client or check was ever given, and no client error but a lost
# connection (a server stopped or killed under it).
sub final_check
{
	my ($load) = @_;
	my @held = held_pairs($load);
	my %seen;
	my $dups = scalar grep { $seen{ $_->[0] }++ } @held;
	is($dups, 0, 'no snowflake ID was ever handed out twice, over ' . scalar(@held) . ' IDs held');
	my @bad;
	foreach my $file (glob("$load->{dir}/errors-*"))
	{
		open my $fh, '<', $file or die "$file: $!";
		while (my $line = <$fh>)
		{
			chomp $line;
			my ($state, $msg) = split /\t/, $line, 2;
			$msg //= '';
			next if $state =~ /^(08|57P0)/;
			next if $state =~ /^(|S8006|S1000|22000)$/
			  && $msg =~ /connection|terminat|server closed|could not (connect|send|receive)|no such file/i;
			push @bad, $line;
		}
		close $fh;
	}
	is(join("\n", @bad[ 0 .. ($#bad < 4 ? $#bad : 4) ]), '',
		'the clients met no error but a lost connection');
	return;
}

# --- the documentation's configurations -----------------------------------

# The block $text of a page with its example values replaced by this
# test's: %$subst maps each example value to the test's.  With $every set
# (a configuration file), dies if an example value is not in the block: the
# page changed under the test.
sub doc_config
{
	my ($text, $subst, $every) = @_;
	foreach my $from (sort { length($b) <=> length($a) } keys %$subst)
	{
		my $found = $text =~ s/\Q$from\E/$subst->{$from}/g;
		die "the page's configuration has no \"$from\":\n$text" if $every && !$found;
	}
	return $text;
}

# Run the shell recipe $script (text) with bash -e -o pipefail, the
# variables %$env added, for at most $secs seconds, through the command
# @prefix if given (test/hostns.c, to run it under a host name); ok() it
# under $label and return its standard output.  A failed step ends the
# file.
sub run_tool
{
	my ($label, $script, $env, $secs, @prefix) = @_;
	my ($out, $err) = ('', '');
	local @ENV{ keys %$env } = values %$env;
	my $t = time();
	my $ok = eval {
		IPC::Run::run([ @prefix, 'bash', '-e', '-o', 'pipefail', '-c', $script ],
			'<', \undef, '>', \$out, '2>', \$err, IPC::Run::timeout($secs));
	};
	$err .= $@ if $@;
	note(sprintf('%s: %.1f s', $label, time() - $t));
	ok($ok, $label) or diag("script:\n$script\nstdout:\n$out\nstderr:\n$err");
	die "$label: failed\n" unless $ok;
	return $out;
}

1;
