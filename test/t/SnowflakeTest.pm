# Copyright: see LICENSE
#
# SnowflakeTest.pm
#	Helpers shared by the snowflake TAP tests: servers with the library
#	preloaded (or not, in the no-preload pass), error and stats capture, and
#	a steppable clock (libfaketime).

package SnowflakeTest;

use strict;
use warnings;

use Exporter 'import';
use JSON::PP qw(decode_json);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use File::Basename ();
use File::Spec;
use IPC::Run;
use Time::HiRes;

our @EXPORT = qw(new_snowflake_node sql_error stats set_clock start_faked
  faketime_available error_report log_appears no_preload preload_conf
  pg_major show_setting);

# The no-preload pass: test/check.sh runs the TAP files that hold in both
# modes a second time on PostgreSQL 17 and later with SNOWFLAKE_TEST_NO_PRELOAD=1,
# where their servers run without shared_preload_libraries and the shared
# state lives in the DSM registry.  A file run that way must say so in its
# output: the pass counts the files that did.
sub no_preload
{
	return $ENV{SNOWFLAKE_TEST_NO_PRELOAD} ? 1 : 0;
}

# The postgresql.conf line that preloads the library, or nothing in the
# no-preload pass.
sub preload_conf
{
	return no_preload() ? '' : "shared_preload_libraries = 'snowflake'\n";
}

# The major version of the PostgreSQL the tests run against.
sub pg_major
{
	my ($stdout, $stderr);
	IPC::Run::run([ 'pg_config', '--version' ], '>', \$stdout, '2>', \$stderr)
	  or die "pg_config --version failed: $stderr";
	$stdout =~ /PostgreSQL (\d+)/ or die "unexpected pg_config output: $stdout";
	return $1;
}

# In the no-preload pass, a server that preloads the library would prove
# nothing about the other mode: starting one dies, failing the file.
sub refuse_preloaded
{
	my ($node) = @_;
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

if (no_preload())
{
	die 'the no-preload pass needs PostgreSQL 17 or later' if pg_major() < 17;
	no warnings 'redefine';
	foreach my $method ('start', 'restart')
	{
		my $orig = PostgreSQL::Test::Cluster->can($method);
		no strict 'refs';
		*{"PostgreSQL::Test::Cluster::$method"} = sub {
			refuse_preloaded($_[0]);
			return $orig->(@_);
		};
	}
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

# A new, initialised (not started) node with the library preloaded (not in
# the no-preload pass) and the given extra settings (name => value, written
# quoted).
sub new_snowflake_node
{
	my ($name, %settings) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	my $conf = preload_conf();
	$conf .= "$_ = '$settings{$_}'\n" foreach sort keys %settings;
	$node->append_conf('postgresql.conf', $conf);
	return $node;
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

# Whether the server log, from byte $offset on, comes to match $regex
# within the test framework's timeout (a bounded poll).
sub log_appears
{
	my ($node, $regex, $offset) = @_;
	my $deadline = time() + $PostgreSQL::Test::Utils::timeout_default;
	while (1)
	{
		return 1 if $node->log_contains($regex, $offset);
		return 0 if time() > $deadline;
		select(undef, undef, undef, 0.1);
	}
}

# The snowflake_stats row as a hash.
sub stats
{
	my ($node) = @_;
	return decode_json(
		$node->safe_psql('postgres',
			'SELECT row_to_json(s) FROM snowflake_stats s'));
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
	my $file = clock_file($name);
	open my $fh, '>', "$file.new"
	  or die "could not write $file.new: $!";
	print $fh "$offset\n";
	close $fh or die "could not write $file.new: $!";
	rename("$file.new", $file)
	  or die "could not rename to $file: $!";
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

# Start (or with $how = 'restart', restart) the node with libfaketime
# preloaded; the environment is restored afterwards so that no client
# program runs with a fake clock.  clock => $name picks a named clock (see
# set_clock); other extra arguments go to start/restart.
sub start_faked
{
	my ($node, $how, %args) = @_;
	die 'libfaketime is not installed' unless defined $faketime_lib;
	my $clock = delete $args{clock};
	set_clock('+0', $clock) unless -e clock_file($clock);
	local $ENV{LD_PRELOAD} = $faketime_lib;
	local $ENV{FAKETIME_TIMESTAMP_FILE} = clock_file($clock);
	local $ENV{FAKETIME_NO_CACHE} = '1';
	# Only the wall clock moves: PostgreSQL times its sleeps and timeouts
	# with the monotonic clock, which must keep running forwards.
	local $ENV{FAKETIME_DONT_FAKE_MONOTONIC} = '1';
	return ($how // 'start') eq 'restart'
	  ? $node->restart(%args)
	  : $node->start(%args);
}

# --- Fault injection (test/faultshim.c) ---
#
# The shim is a test-only LD_PRELOAD library that makes the state file's
# writes fail, block or slow down on demand (see the file's header for the
# control file's syntax).  It is compiled here, never installed.

push @EXPORT,
  qw(start_with_shim set_fault fault_control fault_marker wait_for_held read_state);

my ($faultshim_lib, $fault_control);

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
	set_fault();
	return $fault_control;
}

# The marker file a held process writes, with its PID.
sub fault_marker
{
	return fault_control() . '.held';
}

# Replace the shim's control file, atomically, with the given lines
# ("fsync EIO", "fsync hold", "fsync sleep=50"); no argument: no fault.
# Returns the control file's path.
sub set_fault
{
	my @lines = @_;
	my $control = $fault_control // PostgreSQL::Test::Utils::tempdir() . '/fault_control';
	$fault_control = $control;
	open my $fh, '>', "$control.new" or die "could not write $control.new: $!";
	print $fh map { "$_\n" } @lines;
	close $fh or die "could not write $control.new: $!";
	rename("$control.new", $control) or die "could not rename to $control: $!";
	return $control;
}

# Start (or with $how = 'restart', restart) the node with the shim
# preloaded; the environment is restored afterwards, so client programs run
# without it.  Extra arguments go to start/restart.
sub start_with_shim
{
	my ($node, $how, %args) = @_;
	local $ENV{LD_PRELOAD} = faultshim_lib();
	local $ENV{SF_FAULT_CONTROL} = fault_control();
	return ($how // 'start') eq 'restart'
	  ? $node->restart(%args)
	  : $node->start(%args);
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
	die "$path: state file version $version is unknown to read_state()";
}

1;
