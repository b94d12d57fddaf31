# Copyright: see LICENSE
#
# SnowflakeTest.pm
#	Helpers shared by the snowflake TAP tests: servers with the library
#	preloaded, error and stats capture, and a steppable clock (libfaketime).

package SnowflakeTest;

use strict;
use warnings;

use Exporter 'import';
use JSON::PP qw(decode_json);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

our @EXPORT = qw(new_snowflake_node sql_error stats set_clock start_faked
  faketime_available);

# A new, initialised (not started) node with the library preloaded and the
# given extra settings (name => value, written quoted).
sub new_snowflake_node
{
	my ($name, %settings) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	$node->init;
	my $conf = "shared_preload_libraries = 'snowflake'\n";
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

1;
