# Copyright: see LICENSE
#
# 065_sql_edition_install.pl
#	The SQL edition installs as pg_tle and a plain script require, on a
#	server without the C library, and keeps its node id where only an
#	administrator can change it.
#
# The server runs from a copy of the PostgreSQL installation without any
# file of the C extension (EditionTest.pm); there, the extension named
# snowflake is the edition, with the control file pgtle.install_extension()
# builds (superuser = false), so that CREATE EXTENSION runs the script as
# the calling role, as pg_tle does (pg_tle itself is in no package archive
# here).
#  - Both ways in run to completion as a role that is not a superuser, is a
#    member of no role, and owns only its schema and CREATE on its
#    database: CREATE EXTENSION snowflake (the pg_tle way), and the plain
#    script with psql into the schema first in its search_path (each in a
#    database of its own: a database has one edition).  Every function is
#    SQL or PL/pgSQL, no object needs a library, the role can read no file.
#    The two ways give the same functions, and the argument of
#    pgtle.install_extension() in snowflake-pgtle-install.sql is the
#    extension script.  The edition's objects are as many as the page says.
#  - Generation refuses while the node id is unset (55000); only the owner
#    (or a superuser) sets it; an application role can neither set it, nor
#    use the schema _snowflake, nor change the sequences by their OIDs, nor
#    call the internals, nor change it with SET; its calls work, and a
#    hostile search_path cannot make the functions that run as the owner
#    call its operators.
#  - Read-only transactions, batch limits, snowflake_lastval(), and
#    PostgreSQL's lastval() as the application role: the key it was handed,
#    after single and multi-row inserts, on both the fast path and the
#    path that moves the key sequence.
#  - pg_dump and pg_restore keep the node id and the keys' order.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use EditionTest;
use Test::More;

my $build = edition_build();
my $install = edition_installation($build);
my $node = start_edition_node('edition_install', $install);

# --- what pg_tle requires ---

$node->safe_psql(
	'postgres', q{
CREATE ROLE ed_admin LOGIN;
CREATE ROLE ed_plain LOGIN;
CREATE ROLE app_user LOGIN;
CREATE SCHEMA app AUTHORIZATION ed_admin;
GRANT USAGE ON SCHEMA app TO app_user;
GRANT CREATE ON DATABASE postgres TO ed_admin;
CREATE DATABASE plaindb;
GRANT CREATE ON DATABASE plaindb TO ed_plain;
});
$node->safe_psql('plaindb', 'CREATE SCHEMA app2 AUTHORIZATION ed_plain; GRANT USAGE ON SCHEMA app2 TO app_user');
is( $node->safe_psql(
		'postgres', q{
SELECT string_agg(rolname || ':' || rolsuper || rolcreatedb || rolcreaterole || rolbypassrls
                  || (SELECT count(*) FROM pg_auth_members m WHERE m.member = r.oid), ' ' ORDER BY rolname)
  FROM pg_roles r WHERE rolname IN ('ed_admin', 'ed_plain')}),
	'ed_admin:falsefalsefalsefalse0 ed_plain:falsefalsefalsefalse0',
	'the installing roles are not superusers, create nothing else, belong to no role');

my ($ret, $stdout, $stderr) = $node->psql('postgres',
	'CREATE EXTENSION snowflake SCHEMA app', extra_params => [ '-U', 'ed_admin' ]);
is($ret, 0, 'CREATE EXTENSION snowflake (as pg_tle runs it) by ed_admin, who owns only schema app')
  or diag($stderr);
($ret, $stdout, $stderr) = run_script($node, 'plaindb', "$build/snowflake-plain.sql", 'ed_plain',
	['SET search_path = app2']);
is($ret, 0, 'the plain script, run by ed_plain, who owns only schema app2, into the first schema of its search_path')
  or diag($stderr);
like($stderr, qr/NOTICE:  snowflake SQL edition [0-9.]+ installed in schema "app2"/, 'it says where');
($ret, $stdout, $stderr) = run_script($node, 'plaindb', "$build/snowflake-plain.sql", 'ed_plain',
	['SET search_path = app2']);
like($stderr, qr/ERROR:  the snowflake SQL edition is installed in this database already/,
	'a second install in the database is refused');
$node->safe_psql('postgres', 'CREATE DATABASE emptydb');
$node->safe_psql('emptydb', 'CREATE SCHEMA app; GRANT USAGE ON SCHEMA app TO ed_plain');
($ret, $stdout, $stderr) = run_script($node, 'emptydb', "$build/snowflake-plain.sql", 'ed_plain',
	['SET search_path = app']);
like($stderr, qr/ERROR:  permission denied to install the snowflake SQL edition in schema "app"/,
	'into a schema the role may not create in: refused before anything is created');

is( $node->safe_psql(
		'postgres', q{
SELECT e.extowner::regrole, count(*) FILTER (WHERE coalesce(i.schema, i.name) NOT IN ('app', '_snowflake'))
  FROM pg_extension e JOIN pg_depend d ON d.refobjid = e.oid AND d.deptype = 'e',
       pg_identify_object(d.classid, d.objid, d.objsubid) i
 WHERE e.extname = 'snowflake' GROUP BY 1}),
	'ed_admin|0',
	'the extension is ed_admin\'s, and all its objects are in schema app and its own schema _snowflake');
my $owned_elsewhere = q{
SELECT count(*) FROM (
    SELECT pronamespace AS nsp, proowner AS owner FROM pg_proc
    UNION ALL SELECT relnamespace, relowner FROM pg_class
    UNION ALL SELECT typnamespace, typowner FROM pg_type) o
 WHERE o.owner IN ('ed_admin'::regrole, 'ed_plain'::regrole)
   AND o.nsp::regnamespace::text NOT IN ('app', 'app2', '_snowflake')};
is($node->safe_psql('postgres', $owned_elsewhere) . $node->safe_psql('plaindb', $owned_elsewhere), '00',
	'neither role owns anything outside its schema and _snowflake');
my $languages = q{
SELECT n.nspname, string_agg(DISTINCT l.lanname || ':' || l.lanpltrusted, ','),
       count(*) FILTER (WHERE p.probin IS NOT NULL)
  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname IN ('app', 'app2', '_snowflake') GROUP BY 1 ORDER BY 1};
is($node->safe_psql('postgres', $languages) . "\n" . $node->safe_psql('plaindb', $languages),
	"app|plpgsql:true,sql:true|0\napp2|plpgsql:true,sql:true|0",
	'every function is SQL or PL/pgSQL (trusted languages), none names a library');

# As many objects as the page says.
# (17 and later make the array type of a member type, and the row type of a
# member table and its array, members too: they are not counted.)
my $objects = q{
SELECT count(*), count(*) FILTER (WHERE i.type = 'function'),
       string_agg(DISTINCT i.type, ',' ORDER BY i.type) FILTER (WHERE i.type <> 'function')
  FROM pg_depend d, pg_identify_object(d.classid, d.objid, d.objsubid) i
 WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake') AND d.deptype = 'e'
   AND NOT (d.classid = 'pg_type'::regclass
            AND EXISTS (SELECT FROM pg_type t WHERE t.oid = d.objid
                           AND (t.typcategory = 'A'
                                OR t.typrelid IN (SELECT oid FROM pg_class WHERE relkind <> 'c'))))};
my ($count, $functions, $kinds) = split /\|/, $node->safe_psql('postgres', $objects);
my $page = slurp_file(edition_root() . '/docs/deployment/sql-edition.md');
my ($page_count, $page_functions) = $page =~ /Behind the interface it creates\s+(\d+)\s+objects: (\d+) functions/;
is("$count $functions $kinds", ($page_count // '?') . ' ' . ($page_functions // '?') . ' schema,sequence,table,type',
	"the edition creates $count objects, $functions of them functions, a type, a schema, sequences and a table: as the page says");
is( $node->safe_psql(
		'postgres', q{
SELECT count(*) FROM pg_auth_members m
 WHERE m.member IN ('ed_admin'::regrole, 'ed_plain'::regrole)}),
	'0',
	'the installing roles can read, write or run no server file (they are members of no role)');

# The same functions both ways.
my $definitions = q{
SELECT string_agg(replace(pg_get_functiondef(p.oid), n.nspname || '.', 'S.') || ' ' || p.proparallel::text,
                  E'\n' ORDER BY p.proname, p.oid::regprocedure::text)
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = '%s'};
is($node->safe_psql('plaindb', sprintf($definitions, 'app2')),
	$node->safe_psql('postgres', sprintf($definitions, 'app')),
	'the plain script and the extension define the same functions');

# snowflake-pgtle-install.sql hands pg_tle the extension script.
my $version = $node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'snowflake'");
my $pgtle = slurp_file("$build/snowflake-pgtle-install.sql");
my ($argument) = $pgtle =~ /^SELECT pgtle\.install_extension\('snowflake', '\Q$version\E', '[^']*',\n\$_pgtle_\$\n(.*)\$_pgtle_\$\);\n\z/ms;
(my $script = slurp_file("$build/extension/snowflake--$version.sql")) =~ s/\A.*?\\quit\n//s;
ok(defined $argument && $argument eq $script,
	'pgtle-install.sql passes the extension script to pgtle.install_extension()');
unlike($script, qr/\$_pgtle_/, 'the script holds no pg_tle string delimiter');

# --- the node id ---

$node->safe_psql('postgres', 'GRANT CREATE ON DATABASE postgres TO app_user');
my %as_app = (extra_params => [ '-U', 'app_user' ]);
is( report_in($node, 'postgres', 'SELECT app.snowflake_nextval()', %as_app),
	"55000: snowflake node id is not set\n"
	  . 'HINT:  The owner of the snowflake objects sets it once for this database with SELECT snowflake_set_node_id(N), N between 0 and 1023 and used by no other database or server that mints IDs.',
	'generation refuses while the node id is unset');
is(report_in($node, 'postgres', 'SELECT app.snowflake_nextval_batch(10)', %as_app),
	report_in($node, 'postgres', 'SELECT app.snowflake_nextval()', %as_app),
	'batches too');
is( report_in($node, 'postgres', 'SELECT app.snowflake_set_node_id(3)', %as_app),
	'42501: permission denied for function snowflake_set_node_id',
	'an application role cannot call snowflake_set_node_id()');
$node->safe_psql('postgres',
	'GRANT EXECUTE ON FUNCTION app.snowflake_set_node_id(integer) TO app_user', extra_params => [ '-U', 'ed_admin' ]);
is( report_in($node, 'postgres', 'SELECT app.snowflake_set_node_id(3)', %as_app),
	"42501: permission denied to set the snowflake node id\n"
	  . 'DETAIL:  Only the owner of the snowflake objects (the role that installed them) and superusers may set it.',
	'nor, granted it, use it: the node id is its owner\'s');
is(report_in($node, 'postgres', q{SELECT setval('_snowflake._snowflake_node_seq', 3)}, %as_app),
	'42501: permission denied for schema _snowflake',
	'nor name the sequence that holds it');
like( report_in(
		$node, 'postgres',
		q{SELECT setval(c.oid, 3) FROM pg_class c WHERE c.relname = '_snowflake_node_seq'}, %as_app),
	qr/^42501: permission denied for sequence _snowflake_node_seq/,
	'nor set it by its OID');
is( report_in($node, 'postgres', 'SELECT app.snowflake_set_node_id(1024)', extra_params => [ '-U', 'ed_admin' ]),
	"22023: snowflake node id 1024 is out of range\nDETAIL:  A node id is between 0 and 1023.",
	'a node id out of range is refused');
is($node->safe_psql('postgres', 'SELECT app.snowflake_set_node_id(42)', extra_params => [ '-U', 'ed_admin' ]),
	'42', 'the owner sets it');
is( $node->safe_psql(
		'postgres', q{
SET snowflake.node_id = 7;
SET snowflake_edition.node_id = 7;
SELECT app.snowflake_node_id(app.snowflake_nextval())}, %as_app),
	'42',
	'a session\'s SET changes nothing: IDs carry the owner\'s node id');
my (undef, undef, $notice) = $node->psql('postgres', 'SELECT app.snowflake_set_node_id(43)');
like($notice, qr/NOTICE:  snowflake node id changed from 42 to 43/, 'a superuser may change it, with a notice');
$node->safe_psql('postgres', 'SELECT app.snowflake_set_node_id(42)');
like( report_in(
		$node, 'postgres',
		q{SELECT nextval(c.oid) FROM pg_class c WHERE c.relname = '_snowflake_id_seq'}, %as_app),
	qr/^42501: permission denied for sequence _snowflake_id_seq/,
	'an application role cannot take keys past the generator');
is( report_in(
		$node, 'postgres', q{
BEGIN;
PREPARE p AS SELECT * FROM _snowflake._snowflake_lock}, %as_app),
	'42501: permission denied for schema _snowflake',
	'nor name the generator\'s lock');
like(report_in($node, 'postgres', 'SELECT app._snowflake_next(NULL, NULL, 1)', %as_app),
	qr/^42501: permission denied for function _snowflake_next/,
	'nor call its internals');

# A hostile search_path: operators of the caller's own, in a schema every
# role may use, that would run as the owner, were the functions that run as
# the owner to use them.
$node->safe_psql(
	'postgres', q{
CREATE SCHEMA evil;
GRANT USAGE ON SCHEMA evil TO PUBLIC;
CREATE FUNCTION evil.trap(a int8, b int8) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'trapped as %', current_user; END $$;
CREATE FUNCTION evil.traptext(a text, b text) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'trapped as %', current_user; END $$;
CREATE FUNCTION evil.trap8(a int8, b int8) RETURNS int8 LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'trapped as %', current_user; END $$;
CREATE FUNCTION evil.trap84(a int8, b int4) RETURNS int8 LANGUAGE plpgsql AS $$
BEGIN RAISE EXCEPTION 'trapped as %', current_user; END $$;
DO $$
DECLARE
    op text;
BEGIN
    FOREACH op IN ARRAY ARRAY['=', '<>', '<', '>', '<=', '>='] LOOP
        EXECUTE format('CREATE OPERATOR evil.%s (leftarg = int8, rightarg = int8, function = evil.trap)', op);
        EXECUTE format('CREATE OPERATOR evil.%s (leftarg = text, rightarg = text, function = evil.traptext)', op);
    END LOOP;
    FOREACH op IN ARRAY ARRAY['+', '-', '&', '|', '#'] LOOP
        EXECUTE format('CREATE OPERATOR evil.%s (leftarg = int8, rightarg = int8, function = evil.trap8)', op);
    END LOOP;
    FOREACH op IN ARRAY ARRAY['>>', '<<', '+', '-'] LOOP
        EXECUTE format('CREATE OPERATOR evil.%s (leftarg = int8, rightarg = int4, function = evil.trap84)', op);
    END LOOP;
END $$;
}, %as_app);
like(report_in($node, 'postgres', 'SET search_path = evil, pg_catalog; SELECT 1::int8 >> 1', %as_app),
	qr/^P0001: trapped as app_user/, 'the traps are set: with search_path = evil, pg_catalog they catch');
is( report_in(
		$node, 'postgres', q{
SET search_path = evil, pg_catalog, app;
SELECT snowflake_nextval();
SELECT snowflake_nextval(), snowflake_lastval();
SELECT count(*) FROM snowflake_nextval_batch(5);
SELECT snowflake_timestamp(x), snowflake_node_id(x), snowflake_sequence(x), snowflake_decode(x),
       snowflake_decode(x, 'twitter'), snowflake_timestamp(x, 'epoch=2015-01-01; fields=timestamp:42,w:10,sequence:12'),
       snowflake_min_id(now()), snowflake_max_id(now(), 'sonyflake'), snowflake_compose(now(), 1, 2),
       snowflake_from_base32(snowflake_to_base32(x, 'ord_'), 'ord_'), snowflake_from_base62(snowflake_to_base62(x)),
       snowflake_from_base58(snowflake_to_base58(x)), snowflake_from_base36(upper(snowflake_to_base36(x))),
       snowflake_from_hex(snowflake_to_hex(x)), snowflake_from_base32('0-0-0-0-0-0-0-0-0-0-0-0-1')
  FROM snowflake_nextval() x;
}, %as_app),
	'none',
	'with search_path = evil, pg_catalog the functions work and use none of its operators');

# --- calls ---

is( report_in($node, 'postgres', 'BEGIN READ ONLY; SELECT app.snowflake_nextval()', %as_app),
	"25006: cannot generate snowflake IDs in a read-only transaction\n"
	  . 'DETAIL:  The SQL edition of snowflake takes its IDs from a sequence, which a read-only transaction cannot advance.',
	'a read-only transaction cannot generate (25006)');
is( report_in($node, 'postgres', 'SELECT app.snowflake_nextval_batch(1000001)', %as_app),
	"22023: batch size must be between 1 and 1000000\nDETAIL:  The requested batch size was 1000001.",
	'a batch out of range (22023)');
is( report_in($node, 'postgres', 'SELECT app.snowflake_lastval()', %as_app),
	"55000: snowflake_lastval is not yet defined in this session\n"
	  . 'HINT:  Call it in the session that called snowflake_nextval() or snowflake_nextval_batch(), and behind a transaction pooler in the same transaction.',
	'snowflake_lastval() before any call (55000)');
my $lastval = q{
SELECT app.snowflake_nextval() = app.snowflake_lastval();
SELECT max(x) = app.snowflake_lastval() FROM app.snowflake_nextval_batch(1000) x;
DISCARD ALL;
SELECT app.snowflake_lastval()};
(undef, $stdout) = $node->psql('postgres', $lastval, %as_app);
is($stdout . ' ' . report_in($node, 'postgres', $lastval, %as_app) =~ s/\n.*//sr,
	"t\nt 55000: snowflake_lastval is not yet defined in this session",
	'snowflake_lastval(): the last ID, of a batch its largest; DISCARD ALL forgets it');

# PostgreSQL's lastval(), as the application role (PDO's lastInsertId()
# asks it): the key just handed out.  A new session's first call, and a
# call after the clock passed the last key, move the key sequence; the
# calls of a multi-row insert mostly do not.
$node->safe_psql('postgres',
	'CREATE TABLE app.lv (id bigint PRIMARY KEY DEFAULT app.snowflake_nextval(), n int);'
	  . 'GRANT SELECT, INSERT ON app.lv TO app_user',
	extra_params => [ '-U', 'ed_admin' ]);
is( $node->safe_psql(
		'postgres', q{
INSERT INTO app.lv (n) VALUES (1) RETURNING id = lastval();
SELECT pg_sleep(0.01);
INSERT INTO app.lv (n) VALUES (2) RETURNING id = lastval();
INSERT INTO app.lv (n) SELECT g FROM generate_series(3, 5002) g;
SELECT lastval() = max(id), count(*) FROM app.lv;
SELECT max(x) = lastval() FROM app.snowflake_nextval_batch(10) x;
SELECT lastval() = app.snowflake_lastval()}, %as_app),
	"t\n\nt\nt|5002\nt\nt",
	'lastval() as the application role: the key of a single-row insert (moving the sequence or not), the last of a multi-row insert, the largest of a batch');
is(report_in($node, 'postgres', 'SELECT app.snowflake_stats()', %as_app) =~ s/\n.*//sr,
	'42883: function app.snowflake_stats() does not exist',
	'what the edition leaves out is absent');

# --- pg_dump and pg_restore ---

$node->safe_psql('postgres',
	'CREATE TABLE app.orders (id bigint PRIMARY KEY DEFAULT app.snowflake_nextval(), n int);'
	  . 'INSERT INTO app.orders (n) SELECT g FROM generate_series(1, 1000) g');
$node->safe_psql('plaindb',
	'CREATE TABLE app2.orders (id bigint PRIMARY KEY DEFAULT app2.snowflake_nextval(), n int);'
	  . 'SELECT app2.snowflake_set_node_id(44);'
	  . 'INSERT INTO app2.orders (n) SELECT g FROM generate_series(1, 1000) g');
my $restored = '';
foreach my $case ([ 'postgres', 'app', 42 ], [ 'plaindb', 'app2', 44 ])
{
	my ($db, $s, $id) = @$case;
	my $dump = PostgreSQL::Test::Utils::tempdir() . "/$db.dump";
	$node->command_ok([ 'pg_dump', '-Fc', '-f', $dump, '-d', $node->connstr($db) ], "pg_dump of $db");
	$node->safe_psql('postgres', "CREATE DATABASE restored_$db");
	$node->command_ok([ 'pg_restore', '--exit-on-error', '-d', $node->connstr("restored_$db"), $dump ],
		"pg_restore of $db");
	my $max = $node->safe_psql($db, "SELECT max(id) FROM $s.orders");
	$restored .= $node->safe_psql(
		"restored_$db", qq{
INSERT INTO $s.orders (n) SELECT g FROM generate_series(1001, 1100) g;
SELECT count(*) FILTER (WHERE n > 1000 AND id > $max), bool_and($s.snowflake_node_id(id) = $id)
  FROM $s.orders}) . "\n";
}
is($restored, "100|t\n100|t\n",
	'restored (extension and plain script): the node ids kept, new keys above the dumped ones');

$node->stop;
done_testing();
