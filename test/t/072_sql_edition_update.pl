# Copyright: see LICENSE
#
# 072_sql_edition_update.pl
#	The SQL edition updates from each released version (1.2) to this one
#	through the generated files, on every route, with the page's commands;
#	an updated edition equals a fresh install, object by object.
#
# On a server without the C library, in a database appdb owned by
# app_owner (not a superuser), the released 1.2 is installed as its users
# have it, with objects of theirs over it: a table keyed by the default, a
# generated column of a text form, an index over a decoder, a view over
# snowflake_decode(), a SQL-standard function that calls the generator.
# Then it is updated as docs/deployment/sql-edition.md says:
#  - a plain install (1.2's plain script, into schema app):
#    snowflake-plain-update.sql;
#  - through pg_tle (the stand-in of EditionTest.pm): 1.2 given to
#    pgtle.install_extension() as 1.2's file did, then
#    snowflake-pgtle-update.sql and ALTER EXTENSION snowflake UPDATE; a
#    new CREATE EXTENSION (a restore's) then installs this version;
#  - as an extension from files (database.dev's directory):
#    CREATE EXTENSION snowflake VERSION '1.2', then ALTER EXTENSION UPDATE.
# Each time (pgcrypto installed first): the user's objects refer to the
# same functions (same OIDs) and work; the public IDs 1.3 adds work, bound
# to pgcrypto as a fresh install binds them; new keys lie above the old
# ones, with the node id kept; the edition's objects (functions with
# their definitions, labels, owners, privileges and comments, sequences,
# tables, the type, the schemas, and the extension's members and dumped
# configuration) equal those of a fresh install of this version; a second
# run of the plain update says it has nothing to do.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use EditionTest;
use Test::More;

my $dist = edition_root() . '/sql-edition/dist';
my $released = "$dist/extension/snowflake--1.2.sql";
my %recipes = page_recipes();
my $download = download_dir();
my $install = edition_installation(edition_build());
install_fake_pgtle($install);
my $node = start_edition_node('edition_update', $install);
$node->safe_psql('postgres', 'CREATE ROLE app_owner LOGIN; CREATE ROLE app_user LOGIN');
my %as_owner = (extra_params => [ '-U', 'app_owner' ]);
my $version = $node->safe_psql('postgres', "SELECT default_version FROM pg_available_extensions WHERE name = 'snowflake'");

sub new_db
{
	my ($db) = @_;
	$node->safe_psql('postgres', "DROP DATABASE IF EXISTS $db");
	$node->safe_psql('postgres', "CREATE DATABASE $db OWNER app_owner");
	$node->safe_psql($db, 'CREATE SCHEMA app', %as_owner);
	# pgcrypto before the edition: its public IDs are bound to it, by a
	# fresh install and by an update alike.
	$node->safe_psql($db, 'CREATE EXTENSION pgcrypto');
	return;
}

# The users' objects over the edition, and the OIDs they refer to.
my $users_objects = q{
SELECT app.snowflake_set_node_id(21);
CREATE TABLE app.orders (
	id bigint PRIMARY KEY DEFAULT app.snowflake_nextval(),
	code text GENERATED ALWAYS AS (app.snowflake_to_base32(id, 'ord_')) STORED,
	n int);
CREATE INDEX orders_day ON app.orders (app.snowflake_timestamp(id));
CREATE VIEW app.orders_decoded AS SELECT o.n, d.* FROM app.orders o, app.snowflake_decode(o.id) d;
CREATE FUNCTION app.next_order() RETURNS bigint LANGUAGE sql RETURN app.snowflake_nextval();
INSERT INTO app.orders (n) SELECT g FROM generate_series(1, 1000) g;
};
my $refs = q{
SELECT string_agg(p.oid::regprocedure::text || '=' || p.oid, ' ' ORDER BY p.oid::regprocedure::text, d.classid)
  FROM pg_depend d JOIN pg_proc p ON d.refclassid = 'pg_proc'::regclass AND p.oid = d.refobjid
 WHERE d.deptype = 'n' AND p.proname LIKE 'snowflake%'
   AND NOT (d.classid = 'pg_proc'::regclass AND d.objid IN (SELECT oid FROM pg_proc WHERE proname LIKE '%snowflake%'))};

# The edition's objects, one line each, as they can be compared between
# two databases.
my $objects = q{
SELECT x FROM (
SELECT 'function ' || replace(pg_get_functiondef(p.oid), 'app.', 'S.') || ' parallel=' || p.proparallel::text
       || ' owner=' || p.proowner::regrole::text || ' acl=' || coalesce(p.proacl::text, '')
       || ' comment=' || coalesce(obj_description(p.oid, 'pg_proc'), '') AS x
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname IN ('app', '_snowflake') AND p.proname LIKE '%snowflake%'
UNION ALL
SELECT 'relation ' || n.nspname || '.' || c.relname || ' ' || c.relkind::text || ' owner=' || c.relowner::regrole::text
       || ' acl=' || coalesce(c.relacl::text, '') || ' comment=' || coalesce(obj_description(c.oid, 'pg_class'), '')
       || ' columns=' || c.relnatts
  FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
 WHERE n.nspname = '_snowflake' OR (n.nspname = 'app' AND c.relname LIKE '\_snowflake%')
UNION ALL
SELECT 'sequence ' || s.seqrelid::regclass::text || ' ' || format_type(s.seqtypid, NULL) || ' ' || s.seqstart || ' '
       || s.seqincrement || ' ' || s.seqmax || ' ' || s.seqmin || ' ' || s.seqcache || ' ' || s.seqcycle
  FROM pg_sequence s JOIN pg_class c ON c.oid = s.seqrelid WHERE c.relnamespace = '_snowflake'::regnamespace
UNION ALL
SELECT 'type ' || t.typname || ' owner=' || t.typowner::regrole::text || ' '
       || (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
             FROM pg_attribute a WHERE a.attrelid = t.typrelid)
  FROM pg_type t WHERE t.typnamespace = 'app'::regnamespace AND t.typname = '_snowflake_layout'
UNION ALL
SELECT 'schema ' || nspname || ' owner=' || nspowner::regrole::text || ' acl=' || coalesce(nspacl::text, '')
       || ' comment=' || coalesce(obj_description(oid, 'pg_namespace'), '')
  FROM pg_namespace WHERE nspname IN ('_snowflake', '_snowflake_switch')
UNION ALL
SELECT 'member ' || i.type || ' ' || replace(i.identity, 'app.', 'S.')
  FROM pg_extension e JOIN pg_depend d ON d.refobjid = e.oid AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e',
       pg_identify_object(d.classid, d.objid, d.objsubid) i
 WHERE e.extname = 'snowflake'
UNION ALL
SELECT 'extension ' || extname || ' ' || extversion || ' owner=' || extowner::regrole::text || ' schema='
       || extnamespace::regnamespace::text || ' config='
       || coalesce((SELECT string_agg(c::regclass::text, ',' ORDER BY c::regclass::text) FROM unnest(extconfig) c), '')
  FROM pg_extension WHERE extname = 'snowflake'
) s ORDER BY x};

# Compare database $db with the fresh install in database $fresh.
sub same_as_fresh
{
	my ($db, $fresh, $what) = @_;
	my @updated = split /\n/, $node->safe_psql($db, $objects);
	my @new = split /\n/, $node->safe_psql($fresh, $objects);
	my %in_new = map { $_ => 1 } @new;
	my %in_updated = map { $_ => 1 } @updated;
	is(scalar(@updated) . ' objects, ' . scalar(grep { !$in_new{$_} } @updated) . ' differ',
		scalar(@new) . ' objects, 0 differ', "$what: the updated edition equals a fresh install, object by object")
	  or diag(join("\n", (map { "only updated: " . substr($_, 0, 300) } grep { !$in_new{$_} } @updated),
			(map { "only fresh: " . substr($_, 0, 300) } grep { !$in_updated{$_} } @new)));
	return;
}

# The checks after an update of database $db.
sub after_update
{
	my ($db, $before, $what) = @_;
	is($node->safe_psql($db, $refs), $before, "$what: the user's objects refer to the same functions (same OIDs)");
	my $max = $node->safe_psql($db, 'SELECT max(id) FROM app.orders');
	is( $node->safe_psql(
			$db, qq{
INSERT INTO app.orders (n) SELECT 1000 + g FROM generate_series(1, 1000) g;
SELECT count(*) FILTER (WHERE id > $max), bool_and(app.snowflake_node_id(id) = 21),
       bool_and(code = app.snowflake_to_base32(id, 'ord_')),
       (SELECT count(*) FROM app.orders_decoded WHERE node_id = 21), app.next_order() > $max
  FROM app.orders WHERE n > 1000}, %as_owner),
		'1000|t|t|2000|t',
		"$what: new keys above the old, the node id kept; the generated column, view and function work");
	is( $node->safe_psql(
			$db, q{
SELECT app.snowflake_set_public_key(3, '\x000102030405060708090a0b0c0d0e0f', true);
SELECT app.snowflake_from_public_base32(app.snowflake_to_public_base32(4242424242)) = 4242424242,
       app.snowflake_to_public(4242424242, 3) = app.snowflake_encrypt_id(4242424242, '\x000102030405060708090a0b0c0d0e0f'),
       (SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
         WHERE p.oid = 'app._snowflake_aes(bytea, bytea)'::regprocedure)}, %as_owner),
		"3\nt|t|sql",
		"$what: the public IDs the update added work, with a key the owner sets, bound to pgcrypto");
	is( $node->safe_psql(
			$db, q{
SET enable_seqscan = off;
SELECT count(*) FROM app.orders WHERE app.snowflake_timestamp(id) > '2000-01-01'}),
		'2000', "$what: the index over snowflake_timestamp() answers");
	return;
}

# A fresh install of this version, for the comparisons.
new_db('fresh_plain');
my ($ret, undef, $stderr) = run_script($node, 'fresh_plain', "$dist/snowflake-plain.sql", 'app_owner',
	['SET search_path = app']);
is($ret, 0, 'a fresh plain install of this version') or diag($stderr);
new_db('fresh_ext');
$node->safe_psql('fresh_ext', 'CREATE EXTENSION snowflake SCHEMA app', %as_owner);

# --- a plain install ---

new_db('appdb');
($ret, undef, $stderr) = run_script($node, 'appdb', plain_from_extension_script($released, 'app'), 'app_owner');
is($ret, 0, '1.2\'s plain script installs') or diag($stderr);
$node->safe_psql('appdb', $users_objects, %as_owner);
my $before = $node->safe_psql('appdb', $refs);
like($before, qr/snowflake_nextval\(\)=\d+ .*snowflake_to_base32\(bigint,text\)=\d+/, "the user's objects refer to 1.2's functions");
run_recipe($node, $download, $recipes{'sql-edition/plain-update.sh'}, 'plain-update');
is($node->safe_psql('appdb', 'SELECT app._snowflake_edition_version()'), $version, "the plain install is at $version");
after_update('appdb', $before, 'plain route');
same_as_fresh('appdb', 'fresh_plain', 'plain route');
($ret, undef, $stderr) = run_script($node, 'appdb', "$dist/snowflake-plain-update.sql", 'app_owner');
like($stderr, qr/NOTICE:  the snowflake SQL edition in schema "app" is at version \Q$version\E already/,
	'run again, the plain update has nothing to do');

# --- pg_tle ---

new_db('appdb');
$node->safe_psql('appdb', 'CREATE EXTENSION pg_tle; GRANT pgtle_admin TO app_owner');
(my $script12 = slurp_file($released)) =~ s/\A.*?^\\echo [^\n]*\\quit\n//ms;
my $pgtle12 = PostgreSQL::Test::Utils::tempdir() . '/pgtle-install-1.2.sql';
{
	open my $fh, '>', $pgtle12 or die $!;
	print $fh "SELECT pgtle.install_extension('snowflake', '1.2', 'SQL edition of snowflake', \$_pgtle_\$\n"
	  . $script12 . "\$_pgtle_\$);\n";
	close $fh;
}
($ret, undef, $stderr) = run_script($node, 'appdb', $pgtle12, 'app_owner');
is($ret, 0, 'pg_tle is given 1.2 as 1.2\'s file gave it') or diag($stderr);
materialize_pgtle($node, 'appdb');
$node->safe_psql('appdb', 'CREATE EXTENSION snowflake SCHEMA app', %as_owner);
is($node->safe_psql('appdb', "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"), '1.2',
	'through pg_tle: 1.2 created');
$node->safe_psql('appdb', $users_objects, %as_owner);
$before = $node->safe_psql('appdb', $refs);
run_recipe($node, $download, $recipes{'sql-edition/pgtle-update.sh'}, 'pgtle-update');
is($node->safe_psql('appdb', "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"), $version,
	"through pg_tle: updated to $version");
after_update('appdb', $before, 'pg_tle');
new_db('fresh_pgtle');
$node->safe_psql('fresh_pgtle', 'CREATE EXTENSION pg_tle; GRANT pgtle_admin TO app_owner');
($ret, undef, $stderr) = run_script($node, 'fresh_pgtle', "$dist/snowflake-pgtle-install.sql", 'app_owner');
is($ret, 0, 'a fresh pg_tle install of this version') or diag($stderr);
materialize_pgtle($node, 'fresh_pgtle');
$node->safe_psql('fresh_pgtle', 'CREATE EXTENSION snowflake SCHEMA app', %as_owner);
same_as_fresh('appdb', 'fresh_pgtle', 'pg_tle');
# A restore's CREATE EXTENSION, which names no version: this one, from
# pg_tle's copy of its script (materialized from appdb's pgtle functions).
materialize_pgtle($node, 'appdb');
new_db('restore_pgtle');
$node->safe_psql('restore_pgtle', 'CREATE EXTENSION snowflake SCHEMA app', %as_owner);
is($node->safe_psql('restore_pgtle', "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"), $version,
	"through pg_tle: a new CREATE EXTENSION installs $version, the default");
same_as_fresh('restore_pgtle', 'fresh_pgtle', 'pg_tle, created at the new default');

# --- the extension from files (database.dev's directory) ---

# The edition's files in the installation again, in place of those
# materialize_pgtle wrote.
my $extdir = $node->config_data('--sharedir') . '/extension';
foreach my $file (glob("$dist/extension/snowflake*"))
{
	(my $name = $file) =~ s{.*/}{};
	unlink("$extdir/$name");
	open my $fh, '>', "$extdir/$name" or die "$extdir/$name: $!";
	print $fh slurp_file($file);
	close $fh;
}
new_db('appdb');
$node->safe_psql('appdb', "CREATE EXTENSION snowflake VERSION '1.2' SCHEMA app", %as_owner);
$node->safe_psql('appdb', $users_objects, %as_owner);
$before = $node->safe_psql('appdb', $refs);
$node->safe_psql('appdb', 'ALTER EXTENSION snowflake UPDATE', %as_owner);
is($node->safe_psql('appdb', "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"), $version,
	"from the extension's files: updated to $version");
after_update('appdb', $before, 'extension files');
same_as_fresh('appdb', 'fresh_ext', 'extension files');

$node->stop;
done_testing();
