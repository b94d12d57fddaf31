# Copyright: see LICENSE
#
# SoakTest.pm
#	The 64-client soak (test/t/077_soak.pl, and its long runs by
#	test/soak.sh): pgbench clients in a mix of single inserts keyed by
#	DEFAULT snowflake_nextval(), snowflake_nextval_batch(), the decoders,
#	the text forms both ways and snowflake_stats, against one real server,
#	for a set time; then the checks over every row and every transaction:
#	 - no ID twice;
#	 - each session's IDs strictly increasing in the order it took them:
#	   every row records its backend's PID and the client's own counter
#	   (a pgbench variable that persists across its transactions), and the
#	   ordinal of an ID in its batch;
#	 - no error: pgbench's exit status and its aborted clients, and every
#	   ERROR line of the server's log while the load ran (a text form that
#	   does not decode to its ID divides by zero, so it is an error too);
#	 - latency per minute: p50, p99, p99.9 of every transaction, from
#	   pgbench's per-transaction log (-l);
#	 - memory, measured twice while the load runs (after a warm-up, and
#	   near the end) on the same processes: each client backend's and the
#	   reservation writer's memory contexts (pg_log_backend_memory_contexts,
#	   read back from the server's log), and the shared memory the
#	   extension holds: the "snowflake" entry of pg_shmem_allocations (with
#	   the preload) and the dynamic shared memory segments the backends map
#	   (/proc/PID/maps: the DSM registry's, without the preload).
#
# Flat means (FLAT_BYTES below): no process's long-lived memory contexts
# (every context but the per-query and per-transaction ones:
# MessageContext, TopTransactionContext and TopPortalContext with what
# they hold, whose size depends on the statement the process is in when it
# is asked) grew by more than 64 kB between the two measurements, and the
# shared memory did not change by one byte.  A palloc of 64 bytes per
# snowflake_nextval() call in TopMemoryContext (the planted leak of
# test/soak.sh --plant-leak) grows each backend by megabytes in ten
# minutes.

package SoakTest;

use strict;
use warnings;

use Exporter 'import';
use File::Copy qw(copy);
use File::Path qw(make_path remove_tree);
use File::Basename qw(dirname);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use IPC::Run;
use Time::HiRes qw(time);

our @EXPORT = qw(run_soak soak_report FLAT_BYTES leaky_installation);

use constant FLAT_BYTES => 65536;

# Contexts whose size depends on the statement running, not on the
# process's history: left out of the long-lived memory, with what they hold.
my %transient = map { $_ => 1 } qw(MessageContext TopTransactionContext TopPortalContext);

# The mix, each script with its weight.  :seq numbers a client's calls;
# an ID's seq is :seq * 1000 plus its ordinal in its batch.
my %scripts = (
	'single@10' => q{
\set seq :seq + 1
INSERT INTO soak_keys (client, pid, seq, via) VALUES (:client_id, pg_backend_pid(), :seq * 1000, 's');
},
	'batch@2' => q{
\set seq :seq + 1
INSERT INTO soak_keys (id, client, pid, seq, via)
  SELECT b.id, :client_id, pg_backend_pid(), :seq * 1000 + b.n, 'b'
    FROM snowflake_nextval_batch(20) WITH ORDINALITY AS b(id, n);
},
	'decode@4' => q{
\set r random(0, 4611686018427387903)
SELECT d.ts, d.node_id, d.sequence, snowflake_timestamp(:r), snowflake_node_id(:r),
       snowflake_sequence(:r), (snowflake_decode(:r, 'twitter')).ts,
       (snowflake_decode(:r, 'sonyflake')).node_id
  FROM snowflake_decode(:r) d;
},
	'textform@4' => q{
\set r random(0, 4611686018427387903) * 2 + random(0, 1)
SELECT 1 / (snowflake_from_base32(snowflake_to_base32(:r, 'ord_'), 'ord_') = :r
        AND snowflake_from_base62(snowflake_to_base62(:r)) = :r
        AND snowflake_from_base58(snowflake_to_base58(:r, 'u-'), 'u-') = :r
        AND snowflake_from_base36(snowflake_to_base36(:r)) = :r
        AND snowflake_from_hex(snowflake_to_hex(:r)) = :r)::int;
},
	'stats@1' => q{
SELECT * FROM snowflake_stats;
},);

# The memory of the processes $pids (an array of PIDs) of $node: each one
# asked to log its memory contexts, which are then read from the log (a
# bounded poll); with the shared memory the extension holds.  Returns
# { pids => { PID => { total, long, rss } }, shmem => bytes or undef,
# dsm => bytes, dsm_count => n }.
sub measure
{
	my ($node, $pids) = @_;
	my $log = $node->logfile;
	my $offset = -s $log;
	my %m = (pids => {});

	# The mappings first: dynamic shared memory as the processes see it
	# (64-bit addresses).
	no warnings 'portable';
	my $segment = dsm_pattern($node);
	my %segments;
	foreach my $pid (@$pids)
	{
		open my $maps, '<', "/proc/$pid/maps" or next;
		while (my $line = <$maps>)
		{
			next unless $line =~ m{^([0-9a-f]+)-([0-9a-f]+) \S+ \S+ \S+ \S+\s+(\S+)};
			my ($from, $to, $path) = ($1, $2, $3);
			$segments{$path} = hex($to) - hex($from) if $path =~ $segment;
		}
		close $maps;
		if (open my $status, '<', "/proc/$pid/status")
		{
			while (<$status>)
			{
				$m{pids}{$pid}{rss} = $1 * 1024 if /^RssAnon:\s+(\d+) kB/;
			}
			close $status;
		}
	}
	$m{dsm} = 0;
	$m{dsm} += $_ foreach values %segments;
	$m{dsm_count} = scalar keys %segments;
	my $shmem = $node->safe_psql('postgres',
		"SELECT allocated_size FROM pg_shmem_allocations WHERE name = 'snowflake'");
	$m{shmem} = $shmem eq '' ? undef : $shmem;

	# Those that still run are asked; the others are left out.
	my %want = map { $_ => 1 } split /\n/,
	  $node->safe_psql('postgres',
		'SELECT pid FROM unnest(ARRAY[' . join(',', @$pids)
		  . ']) pid WHERE pg_log_backend_memory_contexts(pid)');
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while (1)
	{
		my $text = PostgreSQL::Test::Utils::slurp_file($log, $offset);
		my %seen = parse_contexts($text);
		foreach my $pid (keys %seen)
		{
			next unless $want{$pid} && defined $seen{$pid}{total};
			$m{pids}{$pid}{total} = $seen{$pid}{total};
			$m{pids}{$pid}{long} = $seen{$pid}{long};
		}
		last unless grep { !defined $m{pids}{$_}{total} } keys %want;
		die "the memory contexts of some processes never reached the log" if time() > $deadline;
		Time::HiRes::sleep(0.2);
	}
	return \%m;
}

# How the mappings of $node's dynamic shared memory segments are named in
# /proc/PID/maps, by dynamic_shared_memory_type: files in /dev/shm (posix),
# in the data directory's pg_dynshmem (mmap), or System V segments other
# than the main one, whose key postmaster.pid gives (sysv: where /dev/shm
# is not writable, as in a chroot).
sub dsm_pattern
{
	my ($node) = @_;
	my $type = $node->safe_psql('postgres', 'SHOW dynamic_shared_memory_type');
	return qr{^/dev/shm/PostgreSQL\.\d+$} if $type eq 'posix';
	return qr{/pg_dynshmem/mmap\.\d+$} if $type eq 'mmap';
	die "dynamic_shared_memory_type $type is not measured" unless $type eq 'sysv';
	my @pidfile = split /\n/, PostgreSQL::Test::Utils::slurp_file($node->data_dir . '/postmaster.pid');
	my ($key) = $pidfile[6] =~ /^\s*(\d+)/;
	my $main = sprintf('%08x', $key);
	return qr{^/SYSV(?!$main$)[0-9a-f]{8}$};
}

# The memory context dumps in a piece of the server log, per PID: the
# grand total, and the long-lived contexts' total (every context's own
# blocks, but for the subtrees of %transient).
sub parse_contexts
{
	my ($text) = @_;
	my (%r, %skip_below);
	foreach my $line (split /\n/, $text)
	{
		next unless $line =~ /\[(\d+)\] .*?LOG:  (.*)$/;
		my ($pid, $msg) = ($1, $2);
		if ($msg =~ /^Grand total: (\d+) bytes/)
		{
			$r{$pid}{total} = $1;
			next;
		}
		next unless $msg =~ /^level: (\d+); (.*?): (\d+) total in/
		  || $msg =~ /^level: (\d+); (\d+ more child contexts) containing (\d+) total in/;
		my ($level, $name, $bytes) = ($1, $2, $3);
		$r{$pid}{long} //= 0;
		if (defined $skip_below{$pid})
		{
			next if $level > $skip_below{$pid};
			delete $skip_below{$pid};
		}
		if ($transient{$name})
		{
			$skip_below{$pid} = $level;
			next;
		}
		$r{$pid}{long} += $bytes;
	}
	return %r;
}

# Percentiles of a histogram (latency in microseconds => count).
sub percentiles
{
	my ($hist, @p) = @_;
	my $n = 0;
	$n += $_ foreach values %$hist;
	my @keys = sort { $a <=> $b } keys %$hist;
	my @out;
	foreach my $p (@p)
	{
		my $rank = $p * $n;
		my $seen = 0;
		foreach my $k (@keys)
		{
			$seen += $hist->{$k};
			if ($seen >= $rank)
			{
				push @out, $k;
				last;
			}
		}
	}
	return @out;
}

# Latency per minute of the run from pgbench's per-transaction logs (files
# $prefix.*): [ [ minute, transactions, p50, p99, p99.9 (microseconds) ] ].
sub latency_per_minute
{
	my ($prefix, $start, $seconds) = @_;
	# pgbench starts its clock after the connections: the last
	# transactions end a little past the run's last minute, and count in it.
	my $last = int(($seconds - 1) / 60);
	my %hist;
	foreach my $file (glob("$prefix.*"))
	{
		open my $fh, '<', $file or die "could not read $file: $!";
		while (<$fh>)
		{
			my ($client, $tx, $us, $script, $epoch, $epoch_us) = split;
			next unless defined $epoch_us;
			my $minute = int(($epoch + $epoch_us / 1e6 - $start) / 60);
			$minute = $last if $minute > $last;
			$hist{$minute}{$us}++;
		}
		close $fh;
	}
	my @rows;
	foreach my $minute (sort { $a <=> $b } keys %hist)
	{
		my $n = 0;
		$n += $_ foreach values %{ $hist{$minute} };
		push @rows, [ $minute, $n, percentiles($hist{$minute}, 0.5, 0.99, 0.999) ];
	}
	return \@rows;
}

# The processes measured: the pgbench clients' backends and the
# reservation writer, if one runs, as PID => backend type.
sub soak_pids
{
	my ($node) = @_;
	my %type = map { split /\|/ } split /\n/,
	  $node->safe_psql(
		'postgres', q{
		SELECT pid, backend_type FROM pg_stat_activity
		 WHERE (backend_type = 'client backend' AND application_name = 'soak')
		    OR backend_type = 'snowflake reservation writer'});
	return \%type;
}

# Wait until $when (a time() value).  The soak's schedule is in seconds of
# load, not a guess at a condition: nothing is waited for but the clock.
sub wait_until
{
	my ($when) = @_;
	my $left = $when - time();
	Time::HiRes::sleep($left) if $left > 0;
	return;
}

# Run the soak on $node for $opts{seconds} seconds with $opts{clients}
# clients; return the results (see soak_report).
sub run_soak
{
	my ($node, %opts) = @_;
	my ($seconds, $clients) = @opts{qw(seconds clients)};
	my $warmup = $opts{warmup} // ($seconds >= 300 ? 60 : int($seconds / 5) || 1);
	# The end's measurement takes seconds on a busy machine: every process
	# must still run when it is asked.
	my $end_at = $seconds >= 300 ? $seconds - 15 : int($seconds * 0.7);
	my $dir = PostgreSQL::Test::Utils::tempdir();

	$node->safe_psql(
		'postgres', q{
		CREATE EXTENSION snowflake;
		-- Not a primary key: a duplicate must be counted, not refused.
		CREATE TABLE soak_keys (
			id bigint NOT NULL DEFAULT snowflake_nextval(),
			client int NOT NULL,
			pid int NOT NULL,
			seq bigint NOT NULL,
			via "char" NOT NULL
		);
		CREATE INDEX ON soak_keys (id);
	});
	my @files;
	foreach my $name (sort keys %scripts)
	{
		(my $file = "$dir/$name") =~ s/@/-/;
		open my $fh, '>', "$file.sql" or die "could not write $file.sql: $!";
		print $fh $scripts{$name};
		close $fh;
		push @files, '-f', "$file.sql" . ($name =~ /(@\d+)$/)[0];
	}
	my $log_offset = -s $node->logfile;
	my ($out, $err) = ('', '');
	my $start = time();
	# The clients' sessions, by name (the TAP framework names every
	# session after the test file otherwise).
	my $h = IPC::Run::start(
		[
			'env', 'PGAPPNAME=soak', 'pgbench', '-n', '-c', $clients, '-j', 4, '-T', $seconds, '-D', 'seq=0',
			'-l', "--log-prefix=$dir/tx", @files,
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$out, '2>', \$err,
		IPC::Run::timeout($seconds + $PostgreSQL::Test::Utils::timeout_default));

	# Every client connected (while pgbench runs), then the two
	# measurements.
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while ($node->safe_psql('postgres',
			"SELECT count(*) FROM pg_stat_activity WHERE application_name = 'soak'") < $clients)
	{
		$h->pump_nb;
		die "pgbench ended before its clients all connected: $err" unless $h->pumpable;
		die "pgbench's clients did not all connect" if time() > $deadline;
		Time::HiRes::sleep(0.1);
	}
	wait_until($start + $warmup);
	my $types = soak_pids($node);
	my $pids = [ sort keys %$types ];
	my $at = time() - $start;
	my $first = measure($node, $pids);
	$first->{at} = $at;
	wait_until($start + $end_at);
	$at = time() - $start;
	my $last = measure($node, $pids);
	$last->{at} = $at;
	my $ok = $h->finish;

	my %r = (
		seconds => $seconds, clients => $clients, first => $first, last => $last,
		types => $types,
		pgbench_ok => $ok && $err !~ /aborted|error/i, pgbench_out => $out,
		pgbench_err => $err);
	($r{tps}) = $out =~ /^tps = ([0-9.]+)/m;
	($r{transactions}) = $out =~ /number of transactions actually processed: (\d+)/;
	my $log = PostgreSQL::Test::Utils::slurp_file($node->logfile, $log_offset);
	$r{errors} = () = $log =~ /^.*\bERROR:  /mg;
	($r{first_error}) = $log =~ /^(.*\bERROR:  .*)$/m;
	my $check = $node->safe_psql(
		'postgres', q{
		SELECT count(*), count(DISTINCT id), count(*) - count(DISTINCT id),
		       count(DISTINCT pid), count(*) FILTER (WHERE via = 'b'),
		       count(*) FILTER (WHERE snowflake_node_id(id) <> 1)
		  FROM soak_keys;
		SELECT count(*) FROM (
		  SELECT id, lag(id) OVER (PARTITION BY client, pid ORDER BY seq) AS prev
		    FROM soak_keys) s
		 WHERE prev >= id;
	});
	my ($counts, $order) = split /\n/, $check;
	@r{qw(rows ids duplicates sessions batched other_node)} = split /\|/, $counts;
	$r{order_violations} = $order;
	$r{latency} = latency_per_minute("$dir/tx", $start, $seconds);
	growth(\%r);
	return \%r;
}

# Each process's growth between the measurements, in bytes.
sub growth
{
	my ($r) = @_;
	my ($p0, $p1) = ($r->{first}{pids}, $r->{last}{pids});
	my @both = grep { defined $p1->{$_}{total} } sort keys %$p0;
	$r->{measured} = scalar @both;
	my @long = map { $p1->{$_}{long} - $p0->{$_}{long} } @both;
	my @total = map { $p1->{$_}{total} - $p0->{$_}{total} } @both;
	my @rss = map { ($p1->{$_}{rss} // 0) - ($p0->{$_}{rss} // 0) } @both;
	my @clients = map { $p1->{$_}{long} - $p0->{$_}{long} }
	  grep { $r->{types}{$_} eq 'client backend' } @both;
	$r->{growth_long_max} = (sort { $b <=> $a } @long)[0];
	$r->{growth_long_min} = (sort { $a <=> $b } @clients)[0];
	$r->{growth_long_mean} = mean(@long);
	$r->{growth_total_mean} = mean(@total);
	$r->{growth_rss_mean} = mean(@rss);
	$r->{shmem_change} =
	  defined $r->{first}{shmem} ? $r->{last}{shmem} - $r->{first}{shmem} : 0;
	$r->{dsm_change} = $r->{last}{dsm} - $r->{first}{dsm};
	return;
}

sub mean
{
	my @v = @_;
	return 0 unless @v;
	my $s = 0;
	$s += $_ foreach @v;
	return $s / @v;
}

sub kb { return sprintf('%.1f kB', $_[0] / 1024); }

# A measurement's line of the memory table.
sub memory_row
{
	my ($label, $m) = @_;
	my @p = grep { defined $m->{pids}{$_}{total} } keys %{ $m->{pids} };
	my @long = map { $m->{pids}{$_}{long} } @p;
	my @total = map { $m->{pids}{$_}{total} } @p;
	my @rss = map { $m->{pids}{$_}{rss} // 0 } @p;
	return sprintf("| %s, at %d s | %d | %s (%s) | %s (%s) | %s | %s | %d, %d bytes |\n",
		$label, $m->{at}, scalar @p,
		kb(mean(@total)), kb((sort { $b <=> $a } @total)[0]),
		kb(mean(@long)), kb((sort { $b <=> $a } @long)[0]),
		kb(mean(@rss)),
		defined $m->{shmem} ? "$m->{shmem} bytes" : 'none (no preload)',
		$m->{dsm_count}, $m->{dsm});
}

# The results as Markdown: the checks, the latency per minute, the memory.
sub soak_report
{
	my ($r, $title) = @_;
	my $md = "### $title\n\n";
	$md .= sprintf(
		"%d clients, %d s: %s transactions (%.0f per second); %d IDs in %d sessions (%d from batches); "
		  . "**%d duplicates, %d out of order in their session, %d errors**%s.\n\n",
		$r->{clients}, $r->{seconds}, $r->{transactions} // '?', $r->{tps} // 0, $r->{rows},
		$r->{sessions}, $r->{batched}, $r->{duplicates}, $r->{order_violations},
		$r->{errors} + ($r->{pgbench_ok} ? 0 : 1),
		$r->{other_node} ? ", $r->{other_node} with another node id" : '');
	$md .= "| minute | transactions | p50 | p99 | p99.9 |\n|---:|---:|---:|---:|---:|\n";
	foreach my $row (@{ $r->{latency} })
	{
		my ($m, $n, @p) = @$row;
		$md .= sprintf("| %d | %d | %s |\n", $m + 1, $n,
			join(' | ', map { sprintf('%.2f ms', $_ / 1000) } @p));
	}
	$md .= "\n| memory | processes | contexts, mean (max) | long-lived contexts, mean (max) "
	  . "| RssAnon, mean | \"snowflake\" in pg_shmem_allocations | DSM segments mapped |\n"
	  . "|---|---:|---:|---:|---:|---:|---:|\n";
	$md .= memory_row('start', $r->{first});
	$md .= memory_row('end', $r->{last});
	$md .= sprintf(
		"\nGrowth from start to end, per process (%d measured both times): long-lived contexts "
		  . "mean %s, largest %s, smallest of a client backend %s (flat: at most %s each); all contexts mean %s; "
		  . "RssAnon mean %s. Shared memory: \"snowflake\" allocation %+d bytes, DSM segments "
		  . "%+d bytes (flat: 0). %s\n",
		$r->{measured}, kb($r->{growth_long_mean}), kb($r->{growth_long_max}),
		kb($r->{growth_long_min}), kb(FLAT_BYTES), kb($r->{growth_total_mean}),
		kb($r->{growth_rss_mean}), $r->{shmem_change}, $r->{dsm_change},
		is_flat($r) ? '**Flat.**' : '**Not flat.**');
	return $md;
}

# Whether the memory stayed flat (see the head of this file).
sub is_flat
{
	my ($r) = @_;
	return $r->{growth_long_max} <= FLAT_BYTES && $r->{shmem_change} == 0
	  && $r->{dsm_change} == 0;
}
push @EXPORT, 'is_flat';

# An installation like the one in PATH in which the library is a build of
# the tree at $root with a leak planted: every snowflake_nextval() call
# pallocs 64 bytes in TopMemoryContext and never frees them.  Built in a
# copy of the tree; the tree itself is untouched.  Returns its bindir, for
# start_snowflake_node's install_path.
sub leaky_installation
{
	my ($root) = @_;
	my $tmp = PostgreSQL::Test::Utils::tempdir();
	my $tree = "$tmp/tree";
	mkdir $tree or die "could not create $tree: $!";
	system('cp', '-a', "$root/Makefile", "$root/snowflake.control", "$root/src", $tree) == 0
	  or die "could not copy the sources of $root";
	unlink(glob("$tree/src/*.o $tree/src/*.bc"));
	my $file = "$tree/src/functions.c";
	my $c = PostgreSQL::Test::Utils::slurp_file($file);
	# In snowflake_nextval(), after the ID is made.
	$c =~ s/^(\tsf_lastval = id;\n)(\tPG_RETURN_INT64\(id\);\n\}\n)/$1\t(void) MemoryContextAlloc(TopMemoryContext, 64);\n$2/m
	  or die 'could not plant the leak in snowflake_nextval()';
	$c =~ s/^(#include "utils\/guc.h"\n)/$1#include "utils\/memutils.h"\n/m
	  or die 'could not include utils/memutils.h';
	open my $fh, '>', $file or die "could not write $file: $!";
	print $fh $c;
	close $fh;
	system('make', '-s', '-C', $tree) == 0 or die 'the leaky build failed';

	my $probe = PostgreSQL::Test::Cluster->new('probe_' . int(rand(1e9)));
	my $bindir = $probe->config_data('--bindir');
	my $sharedir = $probe->config_data('--sharedir');
	my $pkglibdir = $probe->config_data('--pkglibdir');
	my $copy = "$tmp/pg";
	foreach my $dir (dirname($bindir), $sharedir, $pkglibdir)
	{
		next if -d "$copy$dir";
		make_path(dirname("$copy$dir"));
		next if system('cp', '-al', $dir, "$copy$dir") == 0;
		remove_tree("$copy$dir");
		system('cp', '-a', $dir, "$copy$dir") == 0 or die "could not copy $dir";
	}
	unlink("$copy$pkglibdir/snowflake.so");
	copy("$tree/snowflake.so", "$copy$pkglibdir/snowflake.so") or die "copy: $!";
	return $copy . dirname($bindir);
}

1;
