# Copyright: see LICENSE
#
# SnowflakeTest.pm
#	Helpers shared by the snowflake TAP tests, built on
#	PostgreSQL::Test::Cluster: the one way every test starts its servers
#	(start_snowflake_node: preloaded or not, in the no-preload pass never;
#	a steppable clock with libfaketime, or the fault shim), error and stats
#	capture, the messages several files compare whole, and workloads
#	several files run (bursts ahead of the clock, paced calls, promotion).

package SnowflakeTest;

use strict;
use warnings;

use Exporter 'import';
use JSON::PP qw(decode_json);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Basename ();
use File::Copy ();
use File::Path ();
use File::Spec;
use IPC::Run;
use Time::HiRes;

our @EXPORT = qw(start_snowflake_node write_conf_file sql_error
  error_report stats set_clock start_faked faketime_available log_appears
  no_preload show_setting insert_ids_above promote_and_wait lead_burst
  first_above writer_pid writers_running paced_calls clock_behind_report
  batch_too_wide_report doc_recipes run_in_dir read_raw write_raw set_drift
  volume_snapshot start_after_kill9 crc32c old_state_file pgbench_on_each
  mint_into minted_file keys_in_common start_reason);

# The no-preload pass: test/check.sh runs the TAP files that hold in both
# modes a second time on PostgreSQL 17 and later with SNOWFLAKE_TEST_NO_PRELOAD=1,
# where their servers run without shared_preload_libraries and the shared
# state lives in the DSM registry.  Every file of that pass must report
# "ok": a file that skips fails the pass.
sub no_preload
{
	return $ENV{SNOWFLAKE_TEST_NO_PRELOAD} ? 1 : 0;
}

# In the no-preload pass, a server that preloads the library would prove
# nothing about the other mode: starting one dies, failing the file.  So
# does starting any server older than 17, which has no DSM registry.
sub refuse_preloaded
{
	my ($node) = @_;
	die 'the no-preload pass needs PostgreSQL 17 or later'
	  if $node->pg_version < 17;
	foreach my $file ('postgresql.conf', 'postgresql.auto.conf')
	{
		my $path = $node->data_dir . "/$file";
		next unless -e $path;
		foreach my $line (split /\n/, PostgreSQL::Test::Utils::slurp_file($path))
		{
			die $node->name
			  . ": the no-preload pass started a server that preloads snowflake ($file: $line)"
			  if $line =~ /^\s*shared_preload_libraries\s*=.*snowflake/;
		}
	}
	return;
}

# Every start and restart of a node goes through here: in the no-preload
# pass it refuses a server that preloads the library, and a node given a
# host name of its own (set_hostname) starts in a UTS namespace with it.
{
	no warnings 'redefine';
	foreach my $method ('start', 'restart')
	{
		my $orig = PostgreSQL::Test::Cluster->can($method);
		no strict 'refs';
		*{"PostgreSQL::Test::Cluster::$method"} = sub {
			my ($node) = @_;
			refuse_preloaded($node) if no_preload();
			my $host = $node->{_sf_hostname};
			local $ENV{PATH} = defined $host ? hostns_wrapper_dir() . ":$ENV{PATH}" : $ENV{PATH};
			local $ENV{SF_HOSTNAME} = $host // '';
			return $orig->(@_);
		};
	}
}

# The result of $sql run in the background session $session
# (PostgreSQL::Test::BackgroundPsql's query_safe), as a value: without
# trailing newlines.  Minor releases of the framework differ there: 16.2's
# query() leaves the result's last newline, those of the 15, 17, 18 and 19
# that CI runs remove it.  Every test reads such results through this, so
# that none depends on the framework's minor release.
push @EXPORT, 'query_value';

sub query_value
{
	my ($session, $sql) = @_;
	my $result = $session->query_safe($sql);
	$result =~ s/\n+\z// if defined $result;
	return $result;
}

# Skip the whole file unless the server $node can create the extension
# $name (it is in pg_available_extensions), saying "extension NAME is not
# available on this server", and after it $how in parentheses, if given.
# Asked of the server under test, never of a package archive: the server
# may be built from source, or be one whose archive has no such package.
# test/check.sh accepts this skip only where test/setup.sh installed no
# package for NAME (SF_TEST_PROVIDES in test/setup.sh).
push @EXPORT, 'skip_without_extension';

sub skip_without_extension
{
	my ($node, $name, $how) = @_;
	return
	  if $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_available_extensions WHERE name = '$name'") ne '0';
	plan skip_all => "extension $name is not available on this server"
	  . (defined $how ? " ($how)" : '');
}

# The path of program $name, found in PATH or in /usr/sbin (where Debian
# puts daemons such as pgpool); if there is none, skip the whole file,
# saying "command NAME not found", which test/check.sh accepts only where
# test/setup.sh installed no package for NAME (SF_TEST_PROVIDES).
push @EXPORT, 'skip_without_command';

sub skip_without_command
{
	my ($name) = @_;
	my ($path) = grep { -x $_ }
	  map { "$_/$name" } (File::Spec->path, '/usr/sbin', '/usr/bin');
	return $path if defined $path;
	plan skip_all => "command $name not found";
}

# A query that shows a snowflake setting as the library reads it (SHOW
# would, preloaded).  Without the preload a session loads the library at its
# first snowflake call, and SHOW gives only a placeholder's raw text before
# that (or fails, for a setting not in the configuration): the WHERE clause
# calls a decoder while the query is planned (constant folding), before the
# setting is read.
sub show_setting
{
	my ($name) = @_;
	return "SELECT current_setting('$name') WHERE snowflake_node_id(0) = 0";
}

# Create, configure and start a node for a test; return it.  Every test
# starts its servers through this (or FleetTest's fleet_node, which calls
# it).  Options:
#   node_id => N         snowflake.node_id
#   layout => 'T/N/S'    snowflake.timestamp_bits, node_bits, sequence_bits
#   settings => {...}    more settings, name => value (written quoted)
#   include => [$file, %settings]
#                        settings in a file of their own in the data
#                        directory, included by postgresql.conf, so that a
#                        test can replace them all at once (write_conf_file);
#                        written now unless %settings is empty
#   preload => 0 or 1    the library in shared_preload_libraries: by
#                        default yes, except in the no-preload pass; 1 for
#                        a file about the preloaded mode itself, 0 for one
#                        about the mode without it
#   init => {...}        options of PostgreSQL::Test::Cluster's init
#                        (allows_streaming, has_archiving)
#   from_backup => [$root, $backup_name, %options of init_from_backup]
#                        a copy of a backup instead of a new data directory;
#                        its configuration is the root's (preload included),
#                        plus node_id, layout, settings and include
#   with => 'faketime'   start with libfaketime preloaded (see start_faked;
#                        clock => $name picks a named clock); a file run
#                        without libfaketime fails here and ends, as it
#                        would prove nothing
#   with => 'shim'       start with the fault shim preloaded, no fault set
#                        (see start_with_shim)
#   start => 0           do not start it (the caller starts it, to see a
#                        refused start, or after a skip check)
#   install_path => $dir a PostgreSQL installation other than the one in
#                        PATH (PostgreSQL::Test::Cluster's install_path)
#   hostname => $name    the server runs in a UTS namespace of its own
#                        with that host name, at this start and every
#                        later one (set_hostname)
sub start_snowflake_node
{
	my ($name, %opts) = @_;
	my %known = map { $_ => 1 }
	  qw(node_id layout settings include preload init from_backup with clock start
	  install_path hostname);
	my @unknown = grep { !$known{$_} } sort keys %opts;
	die "start_snowflake_node: unknown option(s) @unknown" if @unknown;
	my $with = $opts{with} // '';
	die "start_snowflake_node: unknown with => '$with'"
	  unless grep { $_ eq $with } ('', 'faketime', 'shim');
	if ($with eq 'faketime' && !faketime_available())
	{
		done_testing();
		exit;
	}
	my $node = PostgreSQL::Test::Cluster->new($name,
		$opts{install_path} ? (install_path => $opts{install_path}) : ());
	my $conf = '';
	if ($opts{from_backup})
	{
		$node->init_from_backup(@{ $opts{from_backup} });
	}
	else
	{
		$node->init(%{ $opts{init} // {} });
		my $preload = $opts{preload} // !no_preload();
		$conf .= "shared_preload_libraries = 'snowflake'\n" if $preload;
	}
	my %settings = %{ $opts{settings} // {} };
	$settings{'snowflake.node_id'} = $opts{node_id} if defined $opts{node_id};
	if (defined $opts{layout})
	{
		my @bits = split m{/}, $opts{layout};
		die "layout '$opts{layout}' is not T/N/S" unless @bits == 3;
		@settings{ map { "snowflake.${_}_bits" } qw(timestamp node sequence) } = @bits;
	}
	$conf .= "$_ = '$settings{$_}'\n" foreach sort keys %settings;
	if ($opts{include})
	{
		my ($file, %included) = @{ $opts{include} };
		$conf .= "include_if_exists = '$file'\n";
		write_conf_file($node, $file, %included) if %included;
	}
	$node->append_conf('postgresql.conf', $conf) if $conf ne '';
	set_hostname($node, $opts{hostname}) if defined $opts{hostname};
	return $node if defined $opts{start} && !$opts{start};
	if ($with eq 'faketime')
	{
		start_faked($node, clock => $opts{clock});
	}
	elsif ($with eq 'shim')
	{
		start_with_shim($node);
	}
	else
	{
		$node->start;
	}
	return $node;
}

# Copy $node's data directory to $dest as a volume snapshot takes it: an
# atomic, crash-consistent image of a running server.  The postmaster and
# every one of its processes are stopped with SIGSTOP (the postmaster
# first, so that it starts no new one), the directory is copied whole
# (postmaster.pid and pg_wal included), and they continue with SIGCONT.
sub volume_snapshot
{
	my ($node, $dest) = @_;
	open my $fh, '<', $node->data_dir . '/postmaster.pid'
	  or die 'no postmaster.pid: ' . $node->name . ' is not running';
	my $pm = <$fh>;
	close $fh;
	chomp $pm;
	kill('STOP', $pm) or die "could not stop the postmaster $pm: $!";
	my @children;
	foreach my $stat (glob('/proc/[0-9]*/stat'))
	{
		open my $sf, '<', $stat or next;
		my $line = <$sf>;
		close $sf;
		# pid (comm) state ppid ...: comm may hold spaces and parentheses.
		push @children, $1 if defined $line && $line =~ /^(\d+) \(.*\) \S+ (\d+) / && $2 == $pm;
	}
	kill('STOP', @children) if @children;
	my $ok = system('cp', '-a', $node->data_dir, $dest) == 0;
	kill('CONT', @children) if @children;
	kill('CONT', $pm);
	die "could not copy the data directory of " . $node->name . " to $dest" unless $ok;
	return scalar @children;
}

# Start $node after its postmaster was killed with SIGKILL: until the
# orphaned processes have exited, a new postmaster refuses to start; try a
# bounded number of times, clearing the test framework's idea of the node's
# state after each failure.  Dies if it does not start.
sub start_after_kill9
{
	my ($node) = @_;
	for (my $i = 0; $i < 10 * $PostgreSQL::Test::Utils::timeout_default; $i++)
	{
		return if $node->start(fail_ok => 1);
		Time::HiRes::usleep(100_000);
		$node->stop('fast', fail_ok => 1);
	}
	die $node->name . ' did not start again after SIGKILL';
}

# Replace the file $path with @lines, atomically (written aside, then
# renamed), so that a server or the shim reading it never sees half of it.
sub replace_file
{
	my ($path, @lines) = @_;
	open my $fh, '>', "$path.new" or die "could not write $path.new: $!";
	print $fh map { "$_\n" } @lines;
	close $fh or die "could not write $path.new: $!";
	rename("$path.new", $path) or die "could not rename to $path: $!";
	return;
}

# The bytes of the file $path.
sub read_raw
{
	my ($path) = @_;
	open my $fh, '<:raw', $path or die "could not read $path: $!";
	local $/;
	my $data = <$fh>;
	close $fh;
	return $data;
}

# Replace the file $path with the bytes $data, atomically (written aside,
# then renamed).
sub write_raw
{
	my ($path, $data) = @_;
	open my $fh, '>:raw', "$path.new" or die "could not write $path.new: $!";
	print $fh $data;
	close $fh or die "could not write $path.new: $!";
	rename("$path.new", $path) or die "could not rename to $path: $!";
	return;
}

# Set snowflake.max_drift_ms on $node (or reset it, given undef) and wait
# until new sessions see the value ($shown, as SHOW prints it).
sub set_drift
{
	my ($node, $value, $shown) = @_;
	$node->safe_psql('postgres',
		defined $value
		? "ALTER SYSTEM SET snowflake.max_drift_ms = '$value'"
		: 'ALTER SYSTEM RESET snowflake.max_drift_ms');
	$node->reload;
	$node->poll_query_until('postgres', show_setting('snowflake.max_drift_ms'), $shown)
	  or die "timed out waiting for snowflake.max_drift_ms = $shown";
	return;
}

# Replace the file $file of $node's data directory with the settings given
# (name => value, written quoted): one that is left out reverts to its
# default at the next reload or restart.
sub write_conf_file
{
	my ($node, $file, %settings) = @_;
	replace_file($node->data_dir . "/$file",
		map { "$_ = '$settings{$_}'" } sort keys %settings);
	return;
}

# Run $sql (in database postgres) with verbose error reports; return the
# SQLSTATE of the first error, stderr and stdout.  The SQLSTATE is 'none'
# only if psql ran the whole script without an error; a psql failure that
# reports no SQLSTATE (a lost connection, a crashed backend) gives
# 'psql failed'.  Extra arguments go to psql (connstr, extra_params).
sub sql_error
{
	my ($node, $sql, %opts) = @_;
	my ($ret, $stdout, $stderr) =
	  $node->psql('postgres', "\\set VERBOSITY verbose\n$sql",
		on_error_stop => 0, %opts);
	my ($sqlstate) = $stderr =~ /ERROR:\s+([0-9A-Z]{5}):/;
	$sqlstate //= $ret == 0 ? 'none' : 'psql failed';
	return ($sqlstate, $stderr, $stdout);
}

# The first error $sql raises (run as sql_error() runs it), as one string to
# compare whole: "SQLSTATE: message", then its DETAIL and HINT lines, each
# as psql prints it ("DETAIL:  ..."), joined by newlines.  The psql prefix
# and the LOCATION line (source file and line number) are left out.  Gives
# 'none' if $sql raised no error.
sub error_report
{
	my ($node, $sql, %opts) = @_;
	my (undef, $stderr) = sql_error($node, $sql, %opts);
	return stderr_report($stderr);
}

# The first error in psql's standard error $stderr (printed with VERBOSITY
# verbose), as error_report() gives it; 'none' if there is none.  For
# clients run otherwise (through a pooler).
push @EXPORT, 'stderr_report';

sub stderr_report
{
	my ($stderr) = @_;
	my @lines = split /\n/, $stderr;
	my @report;
	foreach my $line (@lines)
	{
		if (!@report)
		{
			push @report, $1 if $line =~ /^(?:psql:\S+ )?ERROR:  (.*)$/;
			next;
		}
		last if $line =~ /^(?:psql:\S+ )?(?:ERROR|WARNING|NOTICE|LOG):  /;
		next if $line =~ /^(?:LOCATION|CONTEXT|STATEMENT):  /;
		push @report, $line if $line =~ /^(?:DETAIL|HINT):  /;
	}
	return @report ? join("\n", @report) : 'none';
}

# The whole error_report() of a call refused because the clock is behind
# the last ID issued, under the default snowflake.max_drift_ms (1 s) and
# with snowflake.max_wait_ms = 100: a regex.
sub clock_behind_report
{
	return qr/\A58000:\ system\ clock\ is\ \d+\ ms\ behind\ the\ last\ issued\ snowflake\ ID\n
	   DETAIL:\ \ IDs\ may\ lead\ the\ clock\ by\ 1000\ ms\ \(snowflake\.max_drift_ms\)\ and\ a\ call\ may\ wait\ 100\ ms\ \(snowflake\.max_wait_ms\);\ no\ ID\ was\ issued\.\n
	   HINT:\ \ Generation\ resumes\ by\ itself\ once\ the\ clock\ catches\ up\.\ Check\ the\ server's\ time\ synchronisation\.\z/x;
}

# The whole error_report() of a batch of $n IDs refused because, with
# snowflake.sequence_bits = $seq_bits, it spans $span_ms milliseconds, more
# than the $drift_ms that snowflake.max_drift_ms lets IDs lead the clock.
sub batch_too_wide_report
{
	my ($n, $seq_bits, $span_ms, $drift_ms) = @_;
	return
	    qq{22023: a batch of $n snowflake IDs cannot be issued within "snowflake.max_drift_ms"\n}
	  . "DETAIL:  With snowflake.sequence_bits = $seq_bits a batch of $n IDs spans $span_ms milliseconds, more than the $drift_ms ms that IDs may lead the clock.\n"
	  . 'HINT:  Ask for fewer IDs per call.';
}

# Whether the server log, from byte $offset on, comes to match $regex
# within the test framework's timeout: PostgreSQL::Test::Cluster's
# wait_for_log, as a truth value for ok() rather than a death.
sub log_appears
{
	my ($node, $regex, $offset) = @_;
	return eval { $node->wait_for_log($regex, $offset); 1 } ? 1 : 0;
}

# Whether $node, crashed after byte $offset of its log (a process killed),
# came back: the postmaster re-initialised shared memory, then said that it
# accepts connections again (a bounded wait, the framework's timeout).
# Wait for this before the first query after a crash, not with
# poll_query_until alone: until crash recovery ends the server refuses
# connections, and a refused psql may exit before poll_query_until has
# written the query to its standard input; the write then fails with a
# broken pipe, which IPC::Run dies of ("Broken pipe: write( N, 'SELECT
# true' )": seen on a loaded machine, where psql ran first).
push @EXPORT, 'crash_restarted';

sub crash_restarted
{
	my ($node, $offset) = @_;
	return log_appears(
		$node,
		qr/all server processes terminated; reinitializing\n(?s:.*)database system is ready to accept connections/,
		$offset);
}

# The snowflake_stats row as a hash.
sub stats
{
	my ($node) = @_;
	return decode_json(
		$node->safe_psql('postgres',
			'SELECT row_to_json(s) FROM snowflake_stats s'));
}

# Insert 1000 new IDs into column id of $table on $node; return
# "inserted|above": '1000|t' when all went in and every one lies above $max.
sub insert_ids_above
{
	my ($node, $table, $max) = @_;
	return $node->safe_psql(
		'postgres', qq{
WITH n AS (
	INSERT INTO $table SELECT snowflake_nextval() FROM generate_series(1, 1000)
	RETURNING id)
SELECT count(*), min(id) > $max FROM n});
}

# Promote $node and wait until it has left recovery (dies on timeout).
sub promote_and_wait
{
	my ($node) = @_;
	$node->promote;
	$node->poll_query_until('postgres', 'SELECT NOT pg_is_in_recovery()')
	  or die 'timed out waiting for the promotion of ' . $node->name;
	return;
}

# Put $node's last ID about $secs seconds ahead of the clock (batches of a
# million IDs span 245 ms each; only the first ID of each is fetched) and
# return an ID issued after them, above every one.
sub lead_burst
{
	my ($node, $secs) = @_;
	my $batches = int($secs * 1000 / 245) + 1;
	return $node->safe_psql(
		'postgres', qq{
DO \$\$
BEGIN
	FOR i IN 1..$batches LOOP
		PERFORM snowflake_nextval_batch(1000000) LIMIT 1;
	END LOOP;
END \$\$;
SELECT snowflake_nextval();});
}

# Why the first write of a start places the first ID past the floor, as
# the log line "snowflake IDs resume at N ms past the clock, because ..."
# says: a start ("restart" for the re-initialisation after a crash).
# Without the preload every start is the generator's first use.
sub start_reason
{
	my ($what) = @_;
	return 'the generator starts (without the preload, at its first use after the server started or restarted after a crash)'
	  if no_preload();
	return ($what // '') eq 'restart'
	  ? 'the server restarted after a crash' : 'the server started';
}

# Mint $count IDs on $node in one batch (waiting for the clock up to
# $wait) into its own table minted_NAME, created if need be (a table of
# one server: rows a standby replayed from its primary are in the
# primary's table), and return the batch's [min, max].  Dies if the call
# fails.
sub mint_into
{
	my ($node, $count, $wait) = @_;
	my $table = 'minted_' . $node->name;
	my ($lo, $hi) = split /\|/, $node->safe_psql(
		'postgres', qq{
CREATE TABLE IF NOT EXISTS $table (id bigint NOT NULL);
SET snowflake.max_wait_ms = '@{[ $wait // '10s' ]}';
WITH n AS (INSERT INTO $table SELECT snowflake_nextval_batch($count) RETURNING id)
SELECT min(id), max(id) FROM n});
	return [ $lo, $hi ];
}

# The IDs of $node's table of mint_into(), copied to a new file: its path.
sub minted_file
{
	my ($node) = @_;
	my $file = PostgreSQL::Test::Utils::tempdir() . '/minted';
	$node->safe_psql('postgres', "COPY minted_@{[ $node->name ]} TO '$file'");
	return $file;
}

# How many IDs the table of mint_into() of $node has in common with that of
# $other: a running server, or the file minted_file() made of one.
sub keys_in_common
{
	my ($node, $other) = @_;
	my $file = ref $other ? minted_file($other) : $other;
	return $node->safe_psql(
		'postgres', qq{
CREATE TEMP TABLE other_ids (id bigint);
COPY other_ids FROM '$file';
SELECT count(*) FROM minted_@{[ $node->name ]} JOIN other_ids USING (id)});
}

# Whether the first ID $node issues, waiting for the clock as long as
# needed (up to a minute), lies above $max: 't' or 'f'.
sub first_above
{
	my ($node, $max) = @_;
	return $node->safe_psql('postgres',
		"SET snowflake.max_wait_ms = '60s'; SELECT snowflake_nextval() > $max");
}

# Issue $count IDs one by one in one session, $pause seconds apart (the
# workload's pace, not a wait for anything); return the largest.
sub paced_calls
{
	my ($node, $count, $pause) = @_;
	my $max = -1;
	my $sess = $node->background_psql('postgres');
	for my $i (1 .. $count)
	{
		my $id = query_value($sess, 'SELECT snowflake_nextval()');
		$max = $id if $id > $max;
		Time::HiRes::sleep($pause) if $i < $count;
	}
	$sess->quit;
	return $max;
}

# Run pgbench on several servers at once, each pair of @$runs a node and
# the text of its script: 2 clients, 200 transactions each, in database
# postgres; one test per server that its pgbench ran without error.
sub pgbench_on_each
{
	my ($runs) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir();
	my @started;
	foreach my $run (@$runs)
	{
		my ($node, $text) = @$run;
		my $script = "$dir/" . $node->name . '.sql';
		open my $fh, '>', $script or die "could not write $script: $!";
		print $fh $text;
		close $fh;
		my ($out, $err) = ('', '');
		my $h = IPC::Run::start(
			[
				'pgbench', '-n', '-c', 2, '-j', 2, '-t', 200, '-f', $script,
				'-h', $node->host, '-p', $node->port, 'postgres'
			],
			'>', \$out, '2>', \$err,
			IPC::Run::timeout($PostgreSQL::Test::Utils::timeout_default));
		push @started, [ $node->name, $h, \$err ];
	}
	foreach my $run (@started)
	{
		my ($name, $h, $err) = @$run;
		ok($h->finish, "pgbench through $name ran without error") or diag($$err);
	}
	return;
}

# The background writer, as pg_stat_activity names it.
my $writer_type = 'snowflake reservation writer';

# How many reservation writers run on $node now (no wait).
sub writers_running
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		"SELECT count(*) FROM pg_stat_activity WHERE backend_type = '$writer_type'");
}

# The PID of $node's reservation writer (other than PID $not, if given),
# once one runs: a bounded poll; undef if none comes to run.
sub writer_pid
{
	my ($node, $not) = @_;
	my $q =
	  "SELECT pid FROM pg_stat_activity WHERE backend_type = '$writer_type'"
	  . (defined $not ? " AND pid <> $not" : '');
	return undef unless $node->poll_query_until('postgres', "SELECT EXISTS ($q)");
	return $node->safe_psql('postgres', $q);
}

# libfaketime, which steps a running server's clock.  Tests that need it
# fail (not skip) without it: they would prove nothing.
my ($faketime_lib) = grep { -e $_ } glob(
	'/usr/lib/*/faketime/libfaketime.so.1 '
	  . '/usr/lib/faketime/libfaketime.so.1 '
	  . '/usr/local/lib/faketime/libfaketime.so.1');
my %clock_files;

sub faketime_available
{
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	return 1 if defined $faketime_lib;
	fail('libfaketime.so.1 is installed (Debian package "libfaketime")');
	return 0;
}

# Set the clock of servers started by start_faked() to the real time plus
# $offset seconds ("+0", "-30", "-0.3").  libfaketime rereads the file at
# every clock call and treats an empty file as "no offset", so the file is
# replaced atomically.  Servers started with start_faked(..., clock => $name)
# follow the clock of that name instead of the default one: set_clock($offset,
# $name) sets it, so that servers of one test can run with different clocks.
sub set_clock
{
	my ($offset, $name) = @_;
	replace_file(clock_file($name), $offset);
	return;
}

# The file behind a named clock (the default one without a name).
sub clock_file
{
	my ($name) = @_;
	$name //= '';
	$clock_files{$name} //=
	  PostgreSQL::Test::Utils::tempdir() . '/clock_offset' . $name;
	return $clock_files{$name};
}

# Start the node with libfaketime preloaded; the environment is restored
# afterwards so that no client program runs with a fake clock.
# clock => $name picks a named clock (see set_clock); shim => 1 preloads
# the fault shim too (see set_fault); fail_ok => 1 returns false instead of
# dying when the server does not start.
sub start_faked
{
	my ($node, %args) = @_;
	die 'libfaketime is not installed' unless defined $faketime_lib;
	my $clock = $args{clock};
	set_clock('+0', $clock) unless -e clock_file($clock);
	local $ENV{LD_PRELOAD} =
	  $args{shim} ? "$faketime_lib:" . faultshim_lib() : $faketime_lib;
	local $ENV{SF_FAULT_CONTROL} = fault_control() if $args{shim};
	local $ENV{FAKETIME_TIMESTAMP_FILE} = clock_file($clock);
	local $ENV{FAKETIME_NO_CACHE} = '1';
	# Only the wall clock moves: PostgreSQL times its sleeps and timeouts
	# with the monotonic clock, which must keep running forwards.
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
	return $node->start($args{fail_ok} ? (fail_ok => 1) : ());
}

# --- Fault injection (test/faultshim.c) ---
#
# The shim is a test-only LD_PRELOAD library that makes the state file's
# writes fail, block or slow down on demand (see the file's header for the
# control file's syntax).  It is compiled here, never installed.

push @EXPORT,
  qw(set_fault fault_marker wait_for_held read_state start_with_shim);

my ($faultshim_lib, $fault_control, $fault_owner);

# Compile the shim once per test file; return the library's path.
sub faultshim_lib
{
	return $faultshim_lib if defined $faultshim_lib;
	my $src = File::Spec->rel2abs(
		File::Spec->catfile(File::Basename::dirname(__FILE__), '..', 'faultshim.c'));
	die "$src not found" unless -e $src;
	my $lib = PostgreSQL::Test::Utils::tempdir() . '/faultshim.so';
	my ($stdout, $stderr);
	IPC::Run::run([ 'cc', '-shared', '-fPIC', '-O2', '-Wall', '-Wextra',
		'-o', $lib, $src, '-ldl' ], '>', \$stdout, '2>', \$stderr)
	  or die "could not compile $src: $stderr";
	$faultshim_lib = $lib;
	return $lib;
}

# The control file the shim reads (created empty: no fault).
sub fault_control
{
	return $fault_control if defined $fault_control;
	$fault_control = PostgreSQL::Test::Utils::tempdir() . '/fault_control';
	replace_file($fault_control);
	return $fault_control;
}

# The marker file a held process writes, with its PID.
sub fault_marker
{
	return fault_control() . '.held';
}

# Replace the shim's control file, atomically, with the given lines
# ("fsync EIO", "fsync hold", "fsync sleep=50"; "fsync hold pid=N" for
# process N alone); no argument: no fault.  Where both a backend and the
# background writer may reach a write, a test that needs one of them there
# gives the fault to that process only, and makes its write certain.
# Returns the control file's path.
sub set_fault
{
	my @lines = @_;
	my $control = fault_control();
	replace_file($control, @lines);
	$fault_owner = $$ if @lines;
	return $control;
}

# A fault the test left set, because it died or failed before it cleared
# it, is cleared when the test ends: a process held by "fsync hold" would
# otherwise keep its server from stopping, and the test from ending.  This
# END block runs before PostgreSQL::Test::Cluster's, which stops the
# servers (END blocks run in the reverse order of their compilation, and
# the framework's was compiled first, by the "use" above).  Only in the
# process that set the fault, not in a child that forked from it.
END
{
	local $?;
	replace_file($fault_control)
	  if defined $fault_owner
	  && $fault_owner == $$
	  && -s $fault_control;
}

# Start the node with the shim preloaded; the environment is restored
# afterwards, so client programs run without it.  fail_ok => 1 returns
# false instead of dying when the server does not start.
sub start_with_shim
{
	my ($node, %args) = @_;
	local $ENV{LD_PRELOAD} = faultshim_lib();
	local $ENV{SF_FAULT_CONTROL} = fault_control();
	return $node->start($args{fail_ok} ? (fail_ok => 1) : ());
}

# Wait (a bounded poll) until a process is held by a "hold" line, and
# return its PID; undef on timeout.  With $gone true, wait instead until no
# process is held any more, and return 1 (undef on timeout).
sub wait_for_held
{
	my ($gone) = @_;
	my $marker = fault_marker();
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while (time() < $deadline)
	{
		if ($gone)
		{
			return 1 unless -e $marker;
		}
		elsif (open my $fh, '<', $marker)
		{
			my $pid = <$fh>;
			close $fh;
			return $1 if defined $pid && $pid =~ /^(\d+)$/;
		}
		Time::HiRes::sleep(0.01);
	}
	return undef;
}

# The node's state file, parsed: a hash with the fields of src/statefile.h's
# SnowflakeStateFile.  The layout depends on the file's version; this is
# the one place to adjust when fields are added.
sub read_state
{
	my ($node) = @_;
	my $path = $node->data_dir . '/snowflake.state';
	open my $fh, '<:raw', $path or die "could not read $path: $!";
	local $/;
	my $data = <$fh>;
	close $fh;
	my ($magic, $version) = unpack('L L', $data);
	die "$path: bad magic" unless defined $magic && $magic == 0x534E464B;
	if ($version == 1)
	{
		# uint32 magic, version; int64 epoch_ms; int32 timestamp_bits,
		# node_bits, sequence_bits, node_id; int64 reserved_ms, last;
		# uint32 flags; pg_crc32c crc (56 bytes, natural alignment).
		die "$path: version 1 file of " . length($data) . ' bytes'
		  unless length($data) == 56;
		my %f;
		@f{qw(magic version epoch_ms timestamp_bits node_bits sequence_bits
			  node_id reserved_ms last flags crc)} =
		  unpack('L L q l l l l q q L L', $data);
		return \%f;
	}
	if ($version == 2)
	{
		# Version 1's fields, then uint32 timeline; uint64 system_id;
		# int64 max_lead_ms, lead_lowered_ms; pg_crc32c crc, padded to 8
		# bytes (88 bytes).
		die "$path: version 2 file of " . length($data) . ' bytes'
		  unless length($data) == 88;
		my %f;
		@f{qw(magic version epoch_ms timestamp_bits node_bits sequence_bits
			  node_id reserved_ms last flags timeline system_id max_lead_ms
			  lead_lowered_ms crc)} =
		  unpack('L L q l l l l q q L L Q q q L', $data);
		return \%f;
	}
	if ($version == 3)
	{
		# Version 2's fields up to lead_lowered_ms, then uint64
		# clean_checkpoint, clean_system_id; int64 life_start; int32
		# life_pid; pg_crc32c crc (112 bytes).
		die "$path: version 3 file of " . length($data) . ' bytes'
		  unless length($data) == 112;
		my %f;
		@f{qw(magic version epoch_ms timestamp_bits node_bits sequence_bits
			  node_id reserved_ms last flags timeline system_id max_lead_ms
			  lead_lowered_ms clean_checkpoint clean_system_id life_start
			  life_pid crc)} =
		  unpack('L L q l l l l q q L L Q q q Q Q q l L', $data);
		return \%f;
	}
	if ($version == 4)
	{
		# Version 2's fields, lead_lowered_ms now horizon_unix_ms, then
		# int64 floor_ms; uint64 place, pos_lsn, request_id; uint32 pos_tli,
		# floor_cause, request_kind; int32 node_base, node_span; pg_crc32c
		# crc (136 bytes).
		die "$path: version 4 file of " . length($data) . ' bytes'
		  unless length($data) == 136;
		my %f;
		@f{qw(magic version epoch_ms timestamp_bits node_bits sequence_bits
			  node_id reserved_ms last flags timeline system_id max_lead_ms
			  horizon_unix_ms floor_ms place pos_lsn request_id pos_tli
			  floor_cause request_kind node_base node_span crc)} =
		  unpack('L L q l l l l q q L L Q q q q Q Q Q L L L l l L', $data);
		return \%f;
	}
	die "$path: state file version $version is unknown to read_state()";
}

# CRC-32C (Castagnoli, reflected), as PostgreSQL's pg_crc32c computes it.
my @crc_table = map {
	my $c = $_;
	$c = ($c & 1) ? (($c >> 1) ^ 0x82F63B78) : ($c >> 1) for 1 .. 8;
	$c;
} 0 .. 255;

sub crc32c
{
	my ($data) = @_;
	my $crc = 0xFFFFFFFF;
	$crc = $crc_table[ ($crc ^ $_) & 0xFF ] ^ ($crc >> 8) foreach unpack('C*', $data);
	return $crc ^ 0xFFFFFFFF;
}

# The bytes of a state file of an earlier format (version 1, written by
# snowflake 1.0, 2, by 1.1, or 3, by 1.2) holding the values of %$f (a
# read_state() hash; fields the format lacks are left out, those it has
# and %$f lacks are 0).
sub old_state_file
{
	my ($f, $version) = @_;
	my @v1 = qw(magic version epoch_ms timestamp_bits node_bits sequence_bits
	  node_id reserved_ms last flags);
	my $data;
	if ($version == 1)
	{
		$data = pack('L L q l l l l q q L', $f->{magic}, 1, @{$f}{ @v1[ 2 .. $#v1 ] });
		return $data . pack('L', crc32c($data));
	}
	die "no state file version $version" unless $version == 2 || $version == 3;
	$data = pack('L L q l l l l q q L L Q q q', $f->{magic}, $version,
		@{$f}{ @v1[ 2 .. $#v1 ] }, (map { $f->{$_} // 0 } qw(timeline system_id max_lead_ms)),
		$f->{lead_lowered_ms} // 0);
	return $data . pack('L L', crc32c($data), 0) if $version == 2;
	$data .= pack('Q Q q l', map { $f->{$_} // 0 } qw(clean_checkpoint clean_system_id life_start life_pid));
	return $data . pack('L', crc32c($data));
}

# The recipes of a Markdown page: every fenced block right after a
# "<!-- recipe: PATH -->" line (the marker of CONTRIBUTING.md's "Writing
# documentation"), or a "<!-- not run: REASON; recipe: PATH -->" line (a
# sql block that test/t/043_docs.pl cannot run, which another test does),
# as a hash from PATH to the block's content.  The tests
# that run a page's application code write each block to PATH under a
# directory of their own and run it there, so that what runs is what the
# page shows.  Dies on a path named twice or a marker not followed by a
# fence.
sub doc_recipes
{
	my ($file) = @_;
	open my $fh, '<', $file or die "cannot read $file: $!";
	my @lines = <$fh>;
	close $fh;
	chomp @lines;
	my %recipes;
	for (my $i = 0; $i < @lines; $i++)
	{
		next
		  unless $lines[$i] =~ /^\s*<!--\s*(?:not run:[^;]*;\s*)?recipe:\s*(\S+)\s*-->\s*$/;
		my $path = $1;
		die "$file:" . ($i + 1) . ": recipe $path named twice"
		  if exists $recipes{$path};
		die "$file:" . ($i + 1) . ": recipe $path is not right before a fence"
		  unless $i < $#lines && $lines[ $i + 1 ] =~ /^(\s*)(`{3,}|~{3,})/;
		my ($indent, $fence) = (length $1, $2);
		my @content;
		for ($i += 2; $i < @lines && $lines[$i] !~ /^\s*\Q$fence\E\s*$/; $i++)
		{
			my $c = $lines[$i];
			$c =~ s/^ {1,$indent}// if $indent;
			push @content, $c;
		}
		$recipes{$path} = join("\n", @content) . "\n";
	}
	return %recipes;
}

# Run the command @$cmd in directory $dir with the variables of %$env added
# to the environment, no input, bounded by $secs seconds: (ok, its standard
# output, its standard error with the reason it failed).
sub run_in_dir
{
	my ($dir, $env, $secs, $cmd) = @_;
	my ($out, $err) = ('', '');
	local @ENV{ keys %$env } = values %$env;
	my $ok = eval {
		IPC::Run::run($cmd, init => sub { chdir $dir or die $! },
			'<', \undef, '>', \$out, '2>', \$err, IPC::Run::timeout($secs));
	};
	$err .= $@ if $@;
	return ($ok, $out, $err);
}

# --- Installations of a host's own ---
#
# A rolling upgrade or a removal changes the extension's files on one host
# at a time: each server runs from an installation of its own, a copy of
# the PostgreSQL under test (hard links where the file system allows; a
# file is always removed before one of that name is written, so the
# original is never written through a link), into which a version of
# snowflake's files is installed, or from which they are removed.

push @EXPORT, qw(installation_copy install_snowflake remove_snowflake snowflake_files);

# Each copy's share and library directories, by its install_path.
my %copy_dirs;

# A copy of the PostgreSQL installation that PATH's pg_config describes
# (bindir's parent, sharedir and pkglibdir at the same paths under a new
# temporary directory, so that the copied server finds its own), with no
# file of snowflake in it.  Returns the install_path to give
# start_snowflake_node.
sub installation_copy
{
	my $probe = PostgreSQL::Test::Cluster->new('installation_probe_' . int(rand(1e9)));
	my $bindir = $probe->config_data('--bindir');
	my $sharedir = $probe->config_data('--sharedir');
	my $pkglibdir = $probe->config_data('--pkglibdir');
	my $copy = PostgreSQL::Test::Utils::tempdir() . '/pg';
	foreach my $dir (File::Basename::dirname($bindir), $sharedir, $pkglibdir)
	{
		next if -d "$copy$dir";
		File::Path::make_path(File::Basename::dirname("$copy$dir"));
		next if system('cp', '-al', $dir, "$copy$dir") == 0;
		File::Path::remove_tree("$copy$dir");
		system('cp', '-a', $dir, "$copy$dir") == 0 or die "could not copy $dir";
	}
	my $install = $copy . File::Basename::dirname($bindir);
	$copy_dirs{$install} = { share => "$copy$sharedir", lib => "$copy$pkglibdir" };
	remove_snowflake($install);
	return $install;
}

# The directory of a version's files, laid out as lib/snowflake.so and
# extension/ (the control file and scripts): 'current' for the files of
# the installation under test (what test/check.sh built from this tree),
# or a released version that test/setup.sh built
# (SNOWFLAKE_RELEASE_DIR/VERSION, SNOWFLAKE_OLD_RELEASE=1); dies if that
# is missing.
my %files_dir;

sub snowflake_files
{
	my ($version) = @_;
	return $files_dir{$version} if $files_dir{$version};
	my $dir;
	if ($version eq 'current')
	{
		my $probe = PostgreSQL::Test::Cluster->new('files_probe_' . int(rand(1e9)));
		my $sharedir = $probe->config_data('--sharedir');
		$dir = PostgreSQL::Test::Utils::tempdir() . '/current';
		File::Path::make_path("$dir/lib", "$dir/extension");
		File::Copy::copy($probe->config_data('--pkglibdir') . '/snowflake.so', "$dir/lib/")
		  or die "could not copy snowflake.so: $!";
		File::Copy::copy($_, "$dir/extension/") or die "could not copy $_: $!"
		  foreach glob("$sharedir/extension/snowflake.control $sharedir/extension/snowflake--*.sql");
	}
	else
	{
		die "snowflake $version is not built: test/check.sh builds it (SNOWFLAKE_OLD_RELEASE=1, "
		  . 'test/setup.sh) and names its directory in SNOWFLAKE_RELEASE_DIR'
		  unless $ENV{SNOWFLAKE_RELEASE_DIR} && -d "$ENV{SNOWFLAKE_RELEASE_DIR}/$version";
		$dir = "$ENV{SNOWFLAKE_RELEASE_DIR}/$version";
	}
	my ($control) = PostgreSQL::Test::Utils::slurp_file("$dir/extension/snowflake.control") =~
	  /^default_version\s*=\s*'([^']+)'/m;
	die "$dir holds snowflake $control, not $version"
	  unless $version eq 'current' || $control eq $version;
	$files_dir{$version} = $dir;
	return $dir;
}

# Remove every file of snowflake (library, bitcode, control file, scripts)
# from the installation copy $install, as removing its package does.
sub remove_snowflake
{
	my ($install) = @_;
	my $d = $copy_dirs{$install} or die "$install is not an installation_copy()";
	File::Path::remove_tree(glob("$d->{lib}/bitcode/snowflake*"));
	unlink(glob("$d->{share}/extension/snowflake* $d->{lib}/snowflake*"));
	die "$install still has a snowflake file"
	  if glob("$d->{share}/extension/snowflake* $d->{lib}/snowflake*");
	return;
}

# Install snowflake $version's files (snowflake_files) into the
# installation copy $install, in place of those it has, as installing its
# package does: a running server keeps the library it loaded, and loads
# the new one at its next start.
sub install_snowflake
{
	my ($install, $version) = @_;
	my $from = snowflake_files($version);
	my $d = $copy_dirs{$install} or die "$install is not an installation_copy()";
	remove_snowflake($install);
	File::Copy::copy("$from/lib/snowflake.so", "$d->{lib}/snowflake.so")
	  or die "could not install snowflake.so: $!";
	File::Copy::copy($_, "$d->{share}/extension/") or die "could not install $_: $!"
	  foreach glob("$from/extension/snowflake*");
	return;
}

# --- A host name of a server's own (test/hostns.c) ---
#
# snowflake.node_id_from = 'hostname' derives the node id from the host
# name: servers on one machine need one each.  test/hostns.c runs a command
# in a UTS namespace of its own with a chosen host name, as the caller:
# test/check.sh, as root, installs it setuid root and names it in
# SNOWFLAKE_HOSTNS (the tests run as "postgres", in chroots too, where
# unprivileged user namespaces are not allowed); otherwise it is compiled
# here and uses a user namespace, which fails where the kernel does not
# allow one (the file fails then: it would prove nothing).

push @EXPORT, qw(set_hostname hostns_command);

my ($hostns_program, $hostns_wrapper_dir);

# The program, compiled once per test file unless test/check.sh gave one.
sub hostns_program
{
	return $hostns_program if defined $hostns_program;
	if ($ENV{SNOWFLAKE_HOSTNS})
	{
		$hostns_program = $ENV{SNOWFLAKE_HOSTNS};
		return $hostns_program;
	}
	my $src = File::Spec->rel2abs(
		File::Spec->catfile(File::Basename::dirname(__FILE__), '..', 'hostns.c'));
	die "$src not found" unless -e $src;
	my $prog = PostgreSQL::Test::Utils::tempdir() . '/hostns';
	my ($stdout, $stderr);
	IPC::Run::run([ 'cc', '-O2', '-Wall', '-Wextra', '-o', $prog, $src ],
		'>', \$stdout, '2>', \$stderr)
	  or die "could not compile $src: $stderr";
	$hostns_program = $prog;
	return $prog;
}

# The command that runs @cmd under host name $host.
sub hostns_command
{
	my ($host, @cmd) = @_;
	return (hostns_program(), $host, @cmd);
}

# A directory holding a pg_ctl that runs the real one (from PATH) through
# test/hostns.c under the host name in SF_HOSTNAME; PostgreSQL::Test::Cluster
# starts servers with the pg_ctl it finds in PATH, which start and restart
# above put this directory at the head of, for a node with a host name.
sub hostns_wrapper_dir
{
	return $hostns_wrapper_dir if defined $hostns_wrapper_dir;
	my ($pg_ctl) = grep { -x "$_/pg_ctl" } split /:/, $ENV{PATH};
	die 'pg_ctl not found in PATH' unless defined $pg_ctl;
	my $dir = PostgreSQL::Test::Utils::tempdir() . '/hostns_bin';
	mkdir $dir or die "could not create $dir: $!";
	open my $fh, '>', "$dir/pg_ctl" or die "could not write $dir/pg_ctl: $!";
	print $fh "#!/bin/sh\nexec '" . hostns_program() . "' \"\$SF_HOSTNAME\" '$pg_ctl/pg_ctl' \"\$@\"\n";
	close $fh;
	chmod 0755, "$dir/pg_ctl" or die "could not chmod $dir/pg_ctl: $!";
	$hostns_wrapper_dir = $dir;
	return $dir;
}

# Start $node (and restart it) under host name $host from now on; undef:
# under the machine's own again.
sub set_hostname
{
	my ($node, $host) = @_;
	die 'a host name of its own needs the PostgreSQL in PATH, not install_path'
	  if defined $host && $node->{_install_path};
	$node->{_sf_hostname} = $host;
	return;
}

1;
