# Copyright: see LICENSE
#
# EditionTest.pm
#	Helpers of the SQL edition's TAP tests (065 to 069): its scripts,
#	generated from sql-edition/src by sql-edition/build.pl into a temporary
#	directory; a copy of the PostgreSQL installation without any file of
#	the C extension, where the edition is the extension named snowflake
#	with the control file pg_tle builds (superuser = false: CREATE
#	EXTENSION runs the script as the calling role, as pg_tle does);
#	servers started from that copy, with proof that no backend can load
#	the C library; errors compared whole in any database.

package EditionTest;

use strict;
use warnings;

use Exporter 'import';
use File::Basename qw(dirname);
use File::Copy qw(copy);
use File::Path qw(make_path remove_tree);
use File::Spec;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

our @EXPORT = qw(edition_build edition_installation start_edition_node
  report_in outcome_in run_script assert_library_absent edition_root);

# The top of the source tree.
sub edition_root
{
	return File::Spec->rel2abs(dirname(__FILE__) . '/../..');
}

# The edition's scripts, generated into a new temporary directory with
# build.pl's options @args (--schema NAME ...); returns the directory.
sub edition_build
{
	my (@args) = @_;
	my $dir = PostgreSQL::Test::Utils::tempdir();
	my $root = edition_root();
	my ($stdout, $stderr);
	IPC::Run::run([ 'perl', "$root/sql-edition/build.pl", '--out', $dir, @args ],
		'>', \$stdout, '2>', \$stderr)
	  or die "sql-edition/build.pl @args failed: $stderr";
	return $dir;
}

# A copy of the PostgreSQL installation that PATH's pg_config describes
# (bindir's parent, sharedir, pkglibdir at the same paths under a temporary
# directory, so that the copied server finds its own), with every file of
# the C extension removed (its library, bitcode, control file and scripts),
# and the SQL edition's extension script and control file ($build, from
# edition_build) in their place.  Hard links where the file system allows,
# copies otherwise.  Returns the install_path for start_edition_node.
sub edition_installation
{
	my ($build) = @_;
	my $probe = PostgreSQL::Test::Cluster->new('probe_' . int(rand(1e9)));
	my $bindir = $probe->config_data('--bindir');
	my $sharedir = $probe->config_data('--sharedir');
	my $pkglibdir = $probe->config_data('--pkglibdir');
	my $copy = PostgreSQL::Test::Utils::tempdir() . '/pg';
	foreach my $dir (dirname($bindir), $sharedir, $pkglibdir)
	{
		next if -d "$copy$dir";
		make_path(dirname("$copy$dir"));
		next if system('cp', '-al', $dir, "$copy$dir") == 0;
		remove_tree("$copy$dir");
		system('cp', '-a', $dir, "$copy$dir") == 0 or die "could not copy $dir";
	}
	remove_tree(glob("$copy$pkglibdir/bitcode/snowflake*"));
	unlink(glob("$copy$sharedir/extension/snowflake* $copy$pkglibdir/snowflake*"));
	die "the copied installation still has a snowflake file"
	  if glob("$copy$sharedir/extension/snowflake* $copy$pkglibdir/snowflake*");
	copy("$build/$_", "$copy$sharedir/extension/$_") or die "copy $_: $!"
	  foreach map { s{.*/}{}r } glob("$build/snowflake.control $build/snowflake--*.sql");
	return $copy . dirname($bindir);
}

# Start a node from an installation made by edition_installation(), with no
# library preloaded (%opts go to start_snowflake_node), and prove that no
# backend of it can load the C extension's library.
sub start_edition_node
{
	my ($name, $install, %opts) = @_;
	my $node = start_snowflake_node($name, install_path => $install, preload => 0, %opts);
	assert_library_absent($node);
	return $node;
}

# The C library cannot be loaded by any backend of $node: LOAD finds it
# neither through dynamic_library_path nor in the server's own library
# directory, and nothing in that directory is named snowflake.
sub assert_library_absent
{
	my ($node) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $pkglibdir = $node->config_data('--pkglibdir');
	my @failures;
	foreach my $lib ('snowflake', '$libdir/snowflake')
	{
		my ($ret, undef, $stderr) = $node->psql('postgres', "LOAD '$lib'");
		push @failures, $lib if $ret == 0 || $stderr !~ /could not access file/;
	}
	ok(!@failures && !glob("$pkglibdir/snowflake*") && !glob("$pkglibdir/bitcode/snowflake*"),
		$node->name . ': the C library is absent (LOAD fails, no snowflake file in ' . $pkglibdir . ')');
	return;
}

# The first error $sql raises in database $db, as error_report() gives it
# ("SQLSTATE: message", then DETAIL and HINT lines), or 'none'.  %opts go
# to psql (extra_params, connstr).
sub report_in
{
	my ($node, $db, $sql, %opts) = @_;
	my (undef, undef, $stderr) =
	  $node->psql($db, "\\set VERBOSITY verbose\n$sql", on_error_stop => 0, %opts);
	my @report;
	foreach my $line (split /\n/, $stderr)
	{
		if (!@report)
		{
			push @report, $1 if $line =~ /^(?:psql:\S+ )?ERROR:  (.*)$/;
			next;
		}
		last if $line =~ /^(?:psql:\S+ )?(?:ERROR|WARNING|NOTICE|LOG):  /;
		push @report, $line if $line =~ /^(?:DETAIL|HINT):  /;
	}
	return @report ? join("\n", @report) : 'none';
}

# What $sql gives in database $db: its output when it succeeds, else its
# first error as report_in() writes it, after "ERROR ".
sub outcome_in
{
	my ($node, $db, $sql) = @_;
	my ($ret, $stdout) = $node->psql($db, $sql, on_error_stop => 1);
	return $ret == 0 ? $stdout : 'ERROR ' . report_in($node, $db, $sql);
}

# Run the script file $file with psql in $db as $role (a superuser when
# undef), stopping at the first error; returns (exit code, stdout, stderr).
sub run_script
{
	my ($node, $db, $file, $role) = @_;
	my ($stdout, $stderr) = ('', '');
	my $ret = IPC::Run::run(
		[
			'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-d',
			$node->connstr($db) . (defined $role ? " user=$role" : ''),
			'-f', $file
		],
		'>', \$stdout, '2>', \$stderr);
	return ($ret ? 0 : 1, $stdout, $stderr);
}

1;
