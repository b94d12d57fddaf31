# Copyright: see LICENSE
#
# 069_sql_edition_switch.pl
#	Moving a database from the SQL edition to the C extension in place,
#	with sql-edition/build's switch-to-c.sql.
#
# First, on a server without the C library, two databases use the edition,
# one through the plain script and one as the extension snowflake (as
# pg_tle installs it), each with a table keyed by DEFAULT
# snowflake_nextval(), an index and a generated column that decode the
# keys, a view over snowflake_decode(), and a function of the user's that
# calls the edition (its body a SQL-standard one, which depends on it), and
# a generated column and an index of text forms of the keys.
# Then the same data directory runs on the full installation, the library
# preloaded:
#  - a switch that cannot complete (the C extension's node id not yet set,
#    a role that is not a superuser) changes nothing: the edition goes on;
#  - the switch itself: the defaults, index, generated column, view and
#    function still refer to the same functions (same OIDs), now the C
#    extension's, whose objects equal those of a fresh CREATE EXTENSION
#    snowflake; the edition's own objects are gone; the index answers as
#    before; the text forms the edition stored are the C extension's (amcheck
#    finds every row's entry in the index); and every new key lies above
#    every key the edition issued, also when its last keys led the clock;
#  - a database whose edition holds keys of public IDs: the switch refuses
#    until the C extension's key file has the same keys, the same one
#    current; then the public texts the edition made read as before, and
#    the key table is gone.

use strict;
use warnings;

use File::Path qw(remove_tree);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use EditionTest;
use Test::More;

my $build = edition_build();
my $app_build = edition_build('--schema', 'app');
my $install = edition_installation($build);
my $edition = start_edition_node('edition_switch', $install);

# The user's objects over the edition in schema $s of database $db.
my $users_objects = q{
CREATE TABLE %1$s.orders (
	id bigint PRIMARY KEY DEFAULT %1$s.snowflake_nextval(),
	node int GENERATED ALWAYS AS (%1$s.snowflake_node_id(id)) STORED,
	public_id text GENERATED ALWAYS AS (%1$s.snowflake_to_base32(id, 'ord_')) STORED,
	n int);
CREATE INDEX orders_day ON %1$s.orders (%1$s.snowflake_timestamp(id));
CREATE INDEX orders_code ON %1$s.orders (%1$s.snowflake_to_base62(id));
CREATE VIEW %1$s.orders_decoded AS
	SELECT o.n, d.* FROM %1$s.orders o, %1$s.snowflake_decode(o.id) d;
CREATE FUNCTION %1$s.next_order() RETURNS bigint LANGUAGE sql
	RETURN %1$s.snowflake_nextval();
INSERT INTO %1$s.orders (n) SELECT g FROM generate_series(1, 1000) g;
};
$edition->safe_psql('postgres', 'CREATE DATABASE plainform');
$edition->safe_psql('postgres', 'CREATE DATABASE extform');
my ($ret, undef, $stderr) = run_script($edition, 'plainform', "$build/snowflake-plain.sql");
is($ret, 0, 'the plain script installs the edition') or diag($stderr);
$edition->safe_psql('extform', 'CREATE SCHEMA app; CREATE EXTENSION snowflake SCHEMA app');
$edition->safe_psql('plainform', 'SELECT snowflake_set_node_id(5)');
$edition->safe_psql('extform', 'SELECT app.snowflake_set_node_id(5)');
$edition->safe_psql('plainform', sprintf($users_objects, 'public'));
$edition->safe_psql('extform', sprintf($users_objects, 'app'));

# The OIDs the user's objects refer to.
my $refs = q{
SELECT string_agg(p.oid::regprocedure::text || '=' || p.oid, ' ' ORDER BY p.oid::regprocedure::text, d.classid)
  FROM pg_depend d JOIN pg_proc p ON d.refclassid = 'pg_proc'::regclass AND p.oid = d.refobjid
 WHERE d.deptype = 'n'
   AND p.proname IN ('snowflake_nextval', 'snowflake_node_id', 'snowflake_timestamp', 'snowflake_decode',
                     'snowflake_to_base32', 'snowflake_to_base62')
   AND d.classid IN ('pg_attrdef'::regclass, 'pg_class'::regclass, 'pg_rewrite'::regclass, 'pg_proc'::regclass)
   AND NOT (d.classid = 'pg_proc'::regclass AND d.objid IN (SELECT oid FROM pg_proc WHERE proname LIKE '%snowflake%'))};
my %before = map { $_ => $edition->safe_psql($_, $refs) } ('plainform', 'extform');
like($before{plainform}, qr/snowflake_nextval\(\)=\d+ .*snowflake_timestamp\(bigint\)=\d+/,
	"the user's objects refer to the edition's functions: $before{plainform}");
my $dump = PostgreSQL::Test::Utils::tempdir() . '/extform.dump';
$edition->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $edition->connstr('extform') ],
	'pg_dump of the database with the edition as an extension');
my $dumped_max = $edition->safe_psql('extform', 'SELECT max(id) FROM app.orders');

# A database whose edition has keys of public IDs (pgcrypto first), and a
# public text it made.
my $pid_key = '00112233445566778899aabbccddeeff0123456789abcdef0123456789abcdef';
$edition->safe_psql('postgres', 'CREATE DATABASE keyform');
$edition->safe_psql('keyform', 'CREATE EXTENSION pgcrypto');
($ret, undef, $stderr) = run_script($edition, 'keyform', "$build/snowflake-plain.sql");
is($ret, 0, 'the plain script installs the edition beside pgcrypto') or diag($stderr);
my $pid_text = $edition->safe_psql('keyform', qq{
SELECT snowflake_set_node_id(5), snowflake_set_public_key(1, '\\x00000000000000000000000000000001'),
       snowflake_set_public_key(7, '\\x$pid_key', true);
SELECT snowflake_to_public_base32(382958333860159488, 'ord_')});
$pid_text = (split /\n/, $pid_text)[-1];
like($pid_text, qr/^ord_7[0-9A-Z]{13}$/, "the edition makes a public text with key 7 ($pid_text)");
$edition->stop;

# The same data directory on the full installation.
my $node = PostgreSQL::Test::Cluster->new('edition_switch_c');
$node->init;
remove_tree($node->data_dir);
system('cp', '-a', $edition->data_dir, $node->data_dir) == 0 or die 'could not copy the data directory';
$node->append_conf('postgresql.conf',
	"port = " . $node->port . "\nshared_preload_libraries = 'snowflake'\n");
$node->start;
is($node->safe_psql('extform', 'SELECT app.snowflake_node_id(app.next_order())'), '5',
	'the edition runs on the full installation');

# --- switches that cannot complete change nothing ---

my $switch = "$build/switch-to-c.sql";
my $app_switch = "$app_build/switch-to-c.sql";
($ret, undef, $stderr) = run_script($node, 'plainform', $switch);
isnt($ret, 0, 'the switch fails while the C extension has no node id');
like($stderr, qr/parameter "snowflake\.node_id" is not set/, 'saying so');
$node->safe_psql('postgres', 'CREATE ROLE dbowner LOGIN; ALTER DATABASE extform OWNER TO dbowner');
($ret, undef, $stderr) = run_script($node, 'extform', $app_switch, 'dbowner');
like($stderr, qr/permission denied to switch to the snowflake C extension/,
	'the switch needs a superuser');
is( $node->safe_psql(
		'plainform', q{
SELECT (SELECT count(*) FROM pg_extension WHERE extname = 'snowflake'),
       (SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
         WHERE p.oid = 'snowflake_nextval()'::regprocedure),
       to_regclass('_snowflake_id_seq') IS NOT NULL}),
	'0|plpgsql|t', 'the failed switch left the edition as it was');
is($node->safe_psql('plainform', 'SELECT snowflake_node_id(next_order())'), '5',
	'and it goes on issuing keys');

# --- the switch ---

$node->append_conf('postgresql.conf', "snowflake.node_id = 5\n");
$node->restart;
# The edition's last keys lead the clock (batches), as far as they may.
my %last;
foreach my $case ([ 'plainform', 'public', $switch ], [ 'extform', 'app', $app_switch ])
{
	my ($db, $s, $script) = @$case;
	$last{$db} = $node->safe_psql($db,
		"SELECT max(x) FROM (SELECT $s.snowflake_nextval_batch(1000000) FROM generate_series(1, 3)) b(x)");
	my $stdout;
	($ret, $stdout, $stderr) = run_script($node, $db, $script);
	is($ret, 0, "$db: the switch completes") or diag($stderr);
	like($stderr, qr/NOTICE:  switched to the snowflake C extension/, "$db: and says so");
	is($node->safe_psql($db, $refs), $before{$db},
		"$db: the user's objects refer to the same functions (same OIDs)");
	is( $node->safe_psql(
			$db, qq{
SELECT e.extversion, count(*) FILTER (WHERE l.lanname = 'c'),
       (SELECT count(*) FROM pg_class WHERE relname LIKE '\\_snowflake\\_%'),
       (SELECT count(*) FROM pg_proc WHERE proname LIKE '\\_snowflake\\_%')
  FROM pg_extension e JOIN pg_depend d ON d.refobjid = e.oid AND d.deptype = 'e'
  JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
  JOIN pg_language l ON l.oid = p.prolang
 WHERE e.extname = 'snowflake' GROUP BY 1}) =~ s/^([^|]+)\|\d+\|/$1|N|/r,
		$node->safe_psql('postgres', "SELECT default_version FROM pg_available_extensions WHERE name = 'snowflake'") . '|N|0|0',
		"$db: the C extension at its default version, the edition's objects gone");
	is( $node->safe_psql(
			$db, qq{
SET enable_seqscan = off;
SELECT count(*) FROM $s.orders WHERE $s.snowflake_timestamp(id) > '2000-01-01';
SET enable_seqscan = on; SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM $s.orders WHERE $s.snowflake_timestamp(id) > '2000-01-01'}),
		"1000\n1000", "$db: the index on snowflake_timestamp(id) answers as before");
	# The text forms the edition stored are the C extension's: amcheck
	# recomputes the index's expression for every row and finds each entry.
	is( $node->safe_psql(
			$db, qq{
CREATE EXTENSION IF NOT EXISTS amcheck;
SELECT bt_index_check('$s.orders_code', true);
SELECT count(*) FILTER (WHERE public_id = $s.snowflake_to_base32(id, 'ord_')
                          AND $s.snowflake_from_base32(public_id, 'ord_') = id)
  FROM $s.orders}),
		"\n1000", "$db: the generated text column and the index on snowflake_to_base62(id) hold the C extension's texts");
	is( $node->safe_psql(
			$db, qq{
INSERT INTO $s.orders (n) SELECT 1000 + g FROM generate_series(1, 1000) g;
SELECT count(*) FILTER (WHERE id > $last{$db}), bool_and(node = 5),
       (SELECT count(*) FROM $s.orders_decoded WHERE node_id = 5), $s.next_order() > $last{$db}
  FROM $s.orders WHERE n > 1000}),
		'1000|t|2000|t',
		"$db: every new key, from the default and the user's function, is above the edition's last; generated column and view work");
}

# The switched extension equals a fresh one.
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('fresh', 'CREATE EXTENSION snowflake');
my $objects = q{
SELECT x FROM (
SELECT replace(coalesce(pg_get_functiondef(p.oid), i.identity), e.extnamespace::regnamespace::text || '.', 'S.')
       || ' ' || coalesce(obj_description(d.objid, 'pg_proc'), '')
       || ' ' || coalesce(p.proacl::text, '') AS x
  FROM pg_extension e JOIN pg_depend d ON d.refobjid = e.oid AND d.deptype = 'e'
  CROSS JOIN LATERAL pg_identify_object(d.classid, d.objid, d.objsubid) i
  LEFT JOIN pg_proc p ON d.classid = 'pg_proc'::regclass AND p.oid = d.objid
 WHERE e.extname = 'snowflake') s ORDER BY x};
# With the extension's schema in the search_path, its types and support
# function are named unqualified in either.
my $fresh = $node->safe_psql('fresh', "SET search_path = public; $objects");
foreach my $case ([ 'plainform', 'public' ], [ 'extform', 'app' ])
{
	my ($db, $schema) = @$case;
	my $switched = $node->safe_psql($db, "SET search_path = $schema; $objects");
	my %in_fresh = map { $_ => 1 } split /\n/, $fresh;
	my %in_switched = map { $_ => 1 } split /\n/, $switched;
	is($switched, $fresh, "$db: the switched extension's objects are those of a fresh install")
	  or diag(join("\n", (map { "only switched: $_" } grep { !$in_fresh{$_} } split /\n/, $switched),
			(map { "only fresh: $_" } grep { !$in_switched{$_} } split /\n/, $fresh)));
}

# --- public IDs: the switch keeps the keys, or refuses ---

($ret, undef, $stderr) = run_script($node, 'keyform', $switch);
isnt($ret, 0, 'the switch fails while the C extension has not the edition\'s keys of public IDs');
like($stderr, qr/ERROR:  the snowflake C extension does not have the SQL edition's public ID key 1\n/,
	'naming the first key it lacks');
like($stderr, qr/DETAIL:  The public IDs made with it would no longer read after the switch\.\nHINT:  Write the edition's keys into the key file that snowflake\.public_keys_file names \(docs\/deployment\/sql-edition\.md, "Public IDs"\), then run the switch again\./,
	'saying what to do');
# The key file the page's query writes, as a superuser; first with the
# wrong key current.
my $lines = $node->safe_psql('keyform', q{
SELECT key_id || ' ' || key || CASE WHEN current THEN ' current' ELSE '' END
  FROM _snowflake_public_keys ORDER BY key_id});
is($lines, "1 00000000000000000000000000000001\n7 $pid_key current", 'the page\'s query gives the key file\'s lines');
sub write_key_file
{
	my ($text) = @_;
	my $path = $node->data_dir . '/public.keys';
	open my $fh, '>', "$path.new" or die "$path.new: $!";
	print $fh $text;
	close $fh or die "$path.new: $!";
	chmod(0600, "$path.new") or die "chmod: $!";
	rename("$path.new", $path) or die "rename: $!";
	return;
}
write_key_file("1 00000000000000000000000000000001 current\n7 $pid_key\n");
$node->safe_psql('postgres', q{ALTER SYSTEM SET snowflake.public_keys_file = 'public.keys'});
$node->reload;
$node->poll_query_until('postgres', q{SELECT current_setting('snowflake.public_keys_file') = 'public.keys'})
  or die 'the reload did not take';
($ret, undef, $stderr) = run_script($node, 'keyform', $switch);
like($stderr, qr/ERROR:  the snowflake C extension does not have the SQL edition's public ID key 7 as its current key\n/,
	'the switch fails while another key is current');
is($node->safe_psql('keyform', q{SELECT count(*) FROM _snowflake_public_keys}), '2',
	'and the edition keeps its keys');
write_key_file($lines . "\n");
($ret, undef, $stderr) = run_script($node, 'keyform', $switch);
is($ret, 0, 'with the same keys the switch completes') or diag($stderr);
is( $node->safe_psql(
		'keyform', qq{
SELECT snowflake_from_public_base32('$pid_text', 'ord_'), to_regclass('_snowflake_public_keys') IS NULL,
       (SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
         WHERE p.oid = 'snowflake_from_public_base32(text, text)'::regprocedure)}),
	'382958333860159488|t|c',
	'the public text the edition made reads with the C extension, and the key table is gone');

# --- the other way: pg_dump and pg_restore onto the C extension ---

# The dump says CREATE EXTENSION snowflake, which the C extension answers
# here; the edition's sequences it then sets do not exist: the two errors
# pg_restore reports and goes on past.  The defaults and other expressions
# name the functions, which resolve to the C extension's.
$node->safe_psql('postgres', 'CREATE DATABASE moved');
my ($stdout, $restore_err);
($ret, $stdout, $restore_err) = (0, '', '');
IPC::Run::run([ 'pg_restore', '-d', $node->connstr('moved'), $dump ], '>', \$stdout, '2>', \$restore_err);
my @errors = $restore_err =~ /ERROR:  (.*)/g;
is_deeply(
	\@errors,
	[
		'relation "app._snowflake_public_keys" does not exist',
		'relation "app._snowflake_id_seq" does not exist',
		'relation "app._snowflake_node_seq" does not exist'
	],
	'pg_restore onto the C extension: the only errors are the edition\'s two sequences and its table of public-ID keys'
);
is( $node->safe_psql(
		'moved', qq{
INSERT INTO app.orders (n) SELECT 1000 + g FROM generate_series(1, 100) g;
SELECT count(*) FILTER (WHERE n > 1000 AND id > $dumped_max), bool_and(node = 5),
       (SELECT count(*) FROM app.orders_decoded),
       (SELECT l.lanname FROM pg_attrdef a JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = a.oid
          JOIN pg_proc p ON d.refclassid = 'pg_proc'::regclass AND p.oid = d.refobjid
          JOIN pg_language l ON l.oid = p.prolang
         WHERE a.adrelid = 'app.orders'::regclass AND p.proname = 'snowflake_nextval')
  FROM app.orders}),
	'100|t|1100|c',
	'restored onto the C extension: the default is the C function, new keys above the dumped ones');

$node->stop;
done_testing();
