# Copyright: see LICENSE
#
# 044_extension_dir.pl
#	PostgreSQL 18 and later: the extension loaded from a directory of its
#	own, laid out as a CloudNativePG extension image (share/extension/ with
#	the control file and scripts, lib/ with the library), with
#	extension_control_path = '<dir>/share:$system' and
#	dynamic_library_path = '<dir>/lib:$libdir'.
#
# The directory is $SNOWFLAKE_EXTENSION_DIR, the unpacked contents of the
# image image/build.sh built (test/check.sh sets it in CI, see
# image/build.sh --unpack); without it, one made here from the files the
# ordinary install put into the server's own directories.
#
# The servers run from a copy of the PostgreSQL installation with every
# snowflake file removed from it, so that nothing can come from the
# server's own directories.  With the preload and without it, the file
# proves: the server finds the extension only through the two settings;
# CREATE EXTENSION of 1.0 and ALTER EXTENSION UPDATE to the default
# version; IDs with the node id, decoded; the background writer, running
# the image's library (/proc/PID/maps); pg_dump and pg_restore into a new
# database, whose defaults go on issuing IDs above the restored ones.

use strict;
use warnings;

use File::Basename qw(dirname);
use File::Copy qw(copy);
use File::Path qw(make_path remove_tree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $probe = PostgreSQL::Test::Cluster->new('probe');
if ($probe->pg_version->major < 18)
{
	# test/check.sh accepts a skip that says "need PostgreSQL N or later".
	plan skip_all =>
	  'extension_control_path appears in 18: need PostgreSQL 18 or later';
}

my $tmp = PostgreSQL::Test::Utils::tempdir();
my $bindir = $probe->config_data('--bindir');
my $sharedir = $probe->config_data('--sharedir');
my $pkglibdir = $probe->config_data('--pkglibdir');

# The extension's directory.
my $ext = $ENV{SNOWFLAKE_EXTENSION_DIR};
if ($ext)
{
	note("the extension directory: $ext (SNOWFLAKE_EXTENSION_DIR)");
}
else
{
	$ext = "$tmp/extension";
	make_path("$ext/share/extension", "$ext/lib");
	copy($_, "$ext/share/extension/") or die "copy $_: $!"
	  foreach glob("$sharedir/extension/snowflake.control $sharedir/extension/snowflake--*.sql");
	copy("$pkglibdir/snowflake.so", "$ext/lib/") or die "copy snowflake.so: $!";
	note("the extension directory: $ext, made from the installed files");
}
ok(-f "$ext/share/extension/snowflake.control" && -f "$ext/lib/snowflake.so",
	'the extension directory has share/extension/snowflake.control and lib/snowflake.so');
my ($default_version) =
  slurp_file("$ext/share/extension/snowflake.control") =~
  /^default_version\s*=\s*'([^']+)'/m;

# A copy of the installation (the directory above bindir, holding bin/ and,
# on Debian, lib/; the share directory; the library directory), at the same
# paths under $tmp/pg, so that the copied server finds its own share and
# library directories where the original finds its.  Then every snowflake
# file is removed from the copy.
my $copy = "$tmp/pg";
foreach my $dir (dirname($bindir), $sharedir, $pkglibdir)
{
	next if -d "$copy$dir";
	make_path(dirname("$copy$dir"));
	system('cp', '-a', $dir, "$copy$dir") == 0 or die "cp -a $dir: $?";
}
remove_tree(glob("$copy$pkglibdir/bitcode/snowflake*"));
unlink(glob("$copy$sharedir/extension/snowflake* $copy$pkglibdir/snowflake*"));
my $install = $copy . dirname($bindir);
ok( !glob("$copy$sharedir/extension/snowflake*")
	  && !glob("$copy$pkglibdir/snowflake*"),
	"the copied installation's share and library directories have no snowflake file");

# Where the library of process $pid was loaded from: the paths of the
# snowflake.so files it maps.
sub mapped_libraries
{
	my ($pid) = @_;
	my %paths = map { (split ' ', $_, 6)[5] => 1 }
	  grep { m{/snowflake\.so$} } split /\n/, slurp_file("/proc/$pid/maps");
	return join ' ', sort keys %paths;
}

foreach my $preload (1, 0)
{
	my $mode = $preload ? 'preloaded' : 'not preloaded';
	my $node_id = 40 + $preload;
	my $node = start_snowflake_node(
		"extdir_" . ($preload ? 'preload' : 'nopreload'),
		install_path => $install,
		preload => $preload,
		node_id => $node_id,
		settings => {
			extension_control_path => "$ext/share:\$system",
			dynamic_library_path => "$ext/lib:\$libdir",
		});
	is($node->config_data('--sharedir'), "$copy$sharedir",
		"$mode: the server runs from the copied installation");

	# Found only through the settings.
	is( $node->safe_psql(
			'postgres',
			"SELECT default_version FROM pg_available_extensions WHERE name = 'snowflake'"),
		$default_version,
		"$mode: pg_available_extensions lists snowflake $default_version");
	is( $node->safe_psql(
			'postgres', q{SET extension_control_path = '$system';
SELECT count(*) FROM pg_available_extensions WHERE name = 'snowflake'}),
		'0',
		"$mode: with extension_control_path = '\$system' it is not available");
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		q{SET dynamic_library_path = '$libdir'; LOAD 'snowflake'});
	isnt($ret, 0,
		"$mode: with dynamic_library_path = '\$libdir' the library is not found");

	# Installed at 1.0 and updated.
	$node->safe_psql('postgres', "CREATE EXTENSION snowflake VERSION '1.0'");
	is($node->safe_psql('postgres', 'SELECT snowflake_node_id(snowflake_nextval())'),
		$node_id, "$mode: 1.0 issues IDs with the node id");
	$node->safe_psql('postgres', 'ALTER EXTENSION snowflake UPDATE');
	is( $node->safe_psql(
			'postgres',
			q{SELECT extversion FROM pg_extension WHERE extname = 'snowflake'}),
		$default_version,
		"$mode: ALTER EXTENSION UPDATE reaches $default_version");

	# IDs and decoding.
	$node->safe_psql(
		'postgres', q{
CREATE TABLE ids (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), n int);
INSERT INTO ids (n) SELECT g FROM generate_series(1, 1000) g;
});
	is( $node->safe_psql(
			'postgres', qq{
SELECT count(DISTINCT s.id), bool_and(snowflake_node_id(s.id) = $node_id),
	bool_and(d.node_id = $node_id),
	bool_and(snowflake_compose(d.ts, d.node_id, d.sequence) = s.id),
	bool_and(s.id > s.prev) FILTER (WHERE s.prev IS NOT NULL)
FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM ids) s,
	LATERAL snowflake_decode(s.id) d}),
		'1000|t|t|t|t',
		"$mode: 1000 distinct IDs in order, decoded to the node id and composed back"
	);

	# The background writer, running the image's library.
	my $writer = writer_pid($node);
	ok(defined $writer, "$mode: the background writer runs");
	ok( $node->poll_query_until(
			'postgres', 'SELECT background_writes >= 1 FROM snowflake_stats'),
		"$mode: the background writer writes the reservation");
	is(mapped_libraries($writer), "$ext/lib/snowflake.so",
		"$mode: the writer runs lib/snowflake.so of the extension directory");
	my $session = $node->background_psql('postgres');
	my $backend = query_value($session,
		'SELECT pg_backend_pid() FROM (SELECT snowflake_nextval()) s');
	is(mapped_libraries($backend), "$ext/lib/snowflake.so",
		"$mode: a backend runs lib/snowflake.so of the extension directory");
	$session->quit;
	my ($postmaster) = split /\n/, slurp_file($node->data_dir . '/postmaster.pid');
	is(mapped_libraries($postmaster),
		$preload ? "$ext/lib/snowflake.so" : '',
		"$mode: the postmaster " . ($preload ? 'preloaded it' : 'did not load it'));

	# pg_dump and pg_restore into a new database of the same server.
	my $dump = "$tmp/dump_$preload";
	$node->command_ok(
		[ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr('postgres') ],
		"$mode: pg_dump");
	$node->safe_psql('postgres', 'CREATE DATABASE restored');
	$node->command_ok(
		[ 'pg_restore', '--exit-on-error', '-d', $node->connstr('restored'), $dump ],
		"$mode: pg_restore");
	my $max = $node->safe_psql('postgres', 'SELECT max(id) FROM ids');
	is( $node->safe_psql(
			'restored', qq{
INSERT INTO ids (n) SELECT 1000 + g FROM generate_series(1, 100) g;
SELECT (SELECT extversion FROM pg_extension WHERE extname = 'snowflake'),
	count(*), count(*) FILTER (WHERE n > 1000 AND id > $max) FROM ids}),
		"$default_version|1100|100",
		"$mode: the restored database has the extension and its rows, and new IDs lie above them"
	);
	$node->stop;
}

done_testing();
