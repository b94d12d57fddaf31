# Copyright: see LICENSE
#
# 040_upgrade_dump.pl
#	Release discipline: 1.0, 1.1 and 1.2 updated to the current version (1.3)
#	leave exactly what a fresh install of it creates, object by object and
#	definition by definition (a fresh install runs the same scripts: 1.0's,
#	then the updates); and a database using the extension survives pg_dump
#	and pg_restore, plain and custom formats, with its keys and defaults
#	intact.

use strict;
use warnings;

use FindBin;
use JSON::PP qw(decode_json);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = start_snowflake_node('upgrade', node_id => 12);

# ---------------------------------------------------------------------------
# 1.0, 1.1 and 1.2 + ALTER EXTENSION UPDATE against a fresh 1.3.
# ---------------------------------------------------------------------------
my $default_version = $node->safe_psql('postgres',
	"SELECT default_version FROM pg_available_extensions WHERE name = 'snowflake'");
is($default_version, '1.3', 'the default version is 1.3');

# PGXN's META.json announces the same version.
my $meta = decode_json(slurp_file("$FindBin::RealBin/../../META.json"));
is($meta->{version}, "$default_version.0", 'META.json: the distribution version');
is($meta->{provides}{snowflake}{version}, "$default_version.0",
	'META.json: the extension version');
ok(-f "$FindBin::RealBin/../../$meta->{provides}{snowflake}{file}",
	'META.json: the file it names exists');

# A fresh install runs 1.0's script, then the update scripts: the server's
# installation holds no install script of a later version (one left there by
# an earlier build would take precedence over the chain).
my $sharedir = $node->config_data('--sharedir');
is( join(' ',
		map { s{.*/}{}r } grep { !/--.*--/ } glob("$sharedir/extension/snowflake--*.sql")),
	'snowflake--1.0.sql',
	"the installation's only install script is 1.0's");

$node->safe_psql('postgres', 'CREATE DATABASE updated');
$node->safe_psql('postgres', 'CREATE DATABASE fresh');
$node->safe_psql('postgres', 'CREATE DATABASE updated11');
$node->safe_psql('postgres', 'CREATE DATABASE updated12');
$node->safe_psql('updated', "CREATE EXTENSION snowflake VERSION '1.0'");
is($node->safe_psql('updated',
		"SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"),
	'1.0', 'version 1.0 installs');

# A user's objects over snowflake_stats, made on 1.0: views over the view
# and over the function, a view over a view, SQL-standard function bodies
# (their dependencies are recorded) and a view calling one of them.  An
# update must never drop what they depend on.
my $stats_columns_sql = q{
SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod), ', ' ORDER BY a.attnum)
  FROM pg_attribute a
 WHERE a.attrelid = 'snowflake_stats'::regclass AND a.attnum > 0 AND NOT a.attisdropped};
my $stats_function_sql = q{SELECT pg_get_function_result('snowflake_stats()'::regprocedure)};
my $columns_10 = $node->safe_psql('updated', $stats_columns_sql);
my $function_10 = $node->safe_psql('updated', $stats_function_sql);
is(scalar(split(/, /, $columns_10)), 18, "1.0's snowflake_stats view has 18 columns");
like($columns_10, qr/^status text, .*, stats_reset timestamp with time zone$/,
	'from status to stats_reset');
$node->safe_psql(
	'updated', q{
	CREATE VIEW my_stats AS SELECT node_id, ids_issued, stats_reset FROM snowflake_stats;
	CREATE VIEW my_stats_all AS SELECT * FROM snowflake_stats;
	CREATE VIEW my_stats_fn AS SELECT status, node_id FROM snowflake_stats();
	CREATE FUNCTION my_issued() RETURNS bigint LANGUAGE sql STABLE
	  BEGIN ATOMIC SELECT ids_issued FROM my_stats; END;
	CREATE FUNCTION my_status() RETURNS text LANGUAGE sql STABLE
	  BEGIN ATOMIC SELECT status FROM snowflake_stats; END;
	CREATE VIEW my_chain AS SELECT my_issued() >= 0 AS counted, s.status FROM my_stats_all s;
});
my $users_sql = q{
SELECT (SELECT node_id FROM my_stats), (SELECT count(*) FROM my_stats_all),
       (SELECT status || ' ' || node_id FROM my_stats_fn),
       (SELECT status || ' ' || counted FROM my_chain), my_status()};
is($node->safe_psql('updated', $users_sql), '12|1|ready 12|ready true|ready',
	"the user's objects over snowflake_stats work on 1.0");

my ($ret, $stdout, $stderr) = $node->psql('updated', 'ALTER EXTENSION snowflake UPDATE');
is($ret, 0, "ALTER EXTENSION snowflake UPDATE succeeds under the user's objects")
  or diag($stderr);
is($node->safe_psql('updated', $users_sql), '12|1|ready 12|ready true|ready',
	"the user's views, functions and their chain survive the update and still return their row");
is($node->safe_psql('updated', $stats_columns_sql),
	"$columns_10, background_writes bigint, caller_writes bigint, caller_wait_ms double precision, "
	  . 'node_id_in_use integer, node_id_span integer, '
	  . 'last_reservation_write timestamp with time zone, node_id_source text',
	"the view keeps 1.0's columns in their order and appends 1.1's and 1.2's");
is($node->safe_psql('updated', $stats_function_sql), $function_10,
	'snowflake_stats() keeps the columns of 1.0');
$node->safe_psql('fresh', 'CREATE EXTENSION snowflake');
is($node->safe_psql('fresh', $stats_columns_sql),
	$node->safe_psql('updated', $stats_columns_sql),
	'a fresh 1.2 has the same view columns');
is( $node->safe_psql(
		'fresh', q{
		SELECT count(*), bool_and(v.x IS NOT DISTINCT FROM a.x)
		  FROM json_each_text((SELECT row_to_json(s) FROM snowflake_stats s)) v(k, x)
		  FULL JOIN json_each_text((SELECT row_to_json(s) FROM snowflake_stats() s)) a(k, x)
		    USING (k)
		 WHERE k NOT IN ('lead_ms', 'last_timestamp', 'reserved_until', 'reservation_writes',
		                 'background_writes', 'caller_writes', 'caller_wait_ms', 'ids_issued',
		                 'node_id_in_use', 'node_id_span', 'last_reservation_write',
		                 'node_id_source')}),
	'13|t',
	"the view (over snowflake_stats_all()) and 1.0's snowflake_stats() agree column by column");

# Every member object of the extension with its full definition: functions
# (pg_get_functiondef: arguments, result, language, volatility, strictness,
# parallel label, cost, rows, settings, body), relations (columns, view
# definition), composite types (columns), their comments and privileges.
my $objects_sql = q{
SELECT pg_describe_object(d.classid, d.objid, d.objsubid) || E'\n' ||
       CASE d.classid
         WHEN 'pg_proc'::regclass THEN
           pg_get_functiondef(d.objid) || E'\nacl: ' ||
           coalesce((SELECT p.proacl::text FROM pg_proc p WHERE p.oid = d.objid), 'default')
         WHEN 'pg_class'::regclass THEN
           (SELECT c.relkind::text || E'\ncolumns: ' ||
                   (SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod),
                                      ', ' ORDER BY a.attnum)
                      FROM pg_attribute a
                     WHERE a.attrelid = c.oid AND a.attnum > 0 AND NOT a.attisdropped) ||
                   E'\ndefinition: ' || coalesce(pg_get_viewdef(c.oid), '') ||
                   E'\nacl: ' || coalesce(c.relacl::text, 'default')
              FROM pg_class c WHERE c.oid = d.objid)
         WHEN 'pg_type'::regclass THEN
           (SELECT t.typtype::text || E'\ncolumns: ' ||
                   coalesce((SELECT string_agg(a.attname || ' ' || format_type(a.atttypid, a.atttypmod),
                                               ', ' ORDER BY a.attnum)
                               FROM pg_attribute a
                              WHERE a.attrelid = t.typrelid AND a.attnum > 0 AND NOT a.attisdropped), '') ||
                   E'\nacl: ' || coalesce(t.typacl::text, 'default')
              FROM pg_type t WHERE t.oid = d.objid)
         ELSE ''
       END || E'\ncomment: ' ||
       coalesce(obj_description(d.objid, (SELECT relname FROM pg_class WHERE oid = d.classid)), 'none')
  FROM pg_depend d
 WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
   AND d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')
 ORDER BY 1};
my $extension_sql = q{
SELECT e.extversion, e.extrelocatable, n.nspname, e.extconfig::pg_catalog.regclass[]::text, e.extcondition
  FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
 WHERE e.extname = 'snowflake'};

my $fresh_objects = $node->safe_psql('fresh', $objects_sql);
my $count_sql = q{
SELECT count(*) FROM pg_depend
 WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
   AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')};
my $fresh_count = $node->safe_psql('fresh', $count_sql);
cmp_ok($fresh_count, '>=', 14, "a fresh 1.3 has all its objects ($fresh_count)");
like($fresh_objects, qr/function snowflake_convert_column\(regclass,name,boolean\)/,
	'a fresh 1.3 has snowflake_convert_column (1.1)');
like($fresh_objects, qr/^function snowflake_lastval\(\)$/m,
	'and snowflake_lastval (1.2)');
is($node->safe_psql('fresh', q{SELECT provolatile, proparallel FROM pg_proc WHERE proname = 'snowflake_lastval'}),
	'v|u', "snowflake_lastval's labels are lastval()'s");
is($node->safe_psql('fresh', q{SELECT provolatile, proparallel FROM pg_proc WHERE oid = 'pg_catalog.lastval'::regproc}),
	'v|u', 'which are these');
my (undef, $dx_fresh) = $node->psql('fresh', '\dx+ snowflake');

# 1.1, as it was released: a user's view over its stats, then the update.
$node->safe_psql('updated11', "CREATE EXTENSION snowflake VERSION '1.1'");
is($node->safe_psql('updated11',
		"SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"),
	'1.1', 'version 1.1 installs');
unlike($node->safe_psql('updated11', $objects_sql), qr/snowflake_lastval/,
	'1.1 has no snowflake_lastval');
$node->safe_psql('updated11',
	'CREATE VIEW my_stats AS SELECT node_id, ids_issued, caller_writes FROM snowflake_stats');
($ret, $stdout, $stderr) = $node->psql('updated11', 'ALTER EXTENSION snowflake UPDATE');
is($ret, 0, 'ALTER EXTENSION snowflake UPDATE from 1.1 succeeds under a user\'s view')
  or diag($stderr);
is($node->safe_psql('updated11', 'SELECT node_id, caller_writes >= 0 FROM my_stats'),
	'12|t', "the user's view survives the update from 1.1");

# 1.2, as it was released, with a user's view over its stats, then the update.
$node->safe_psql('updated12', "CREATE EXTENSION snowflake VERSION '1.2'");
is($node->safe_psql('updated12',
		"SELECT extversion FROM pg_extension WHERE extname = 'snowflake'"),
	'1.2', 'version 1.2 installs');
$node->safe_psql('updated12',
	'CREATE VIEW my_stats AS SELECT node_id, ids_issued, node_id_source FROM snowflake_stats');
($ret, $stdout, $stderr) = $node->psql('updated12', 'ALTER EXTENSION snowflake UPDATE');
is($ret, 0, 'ALTER EXTENSION snowflake UPDATE from 1.2 succeeds under a user\'s view')
  or diag($stderr);
is($node->safe_psql('updated12', 'SELECT node_id, node_id_source FROM my_stats'),
	'12|snowflake.node_id', "the user's view survives the update from 1.2");

foreach my $from ([ 'updated', '1.0' ], [ 'updated11', '1.1' ], [ 'updated12', '1.2' ])
{
	my ($db, $version) = @$from;
	is($node->safe_psql($db, $objects_sql), $fresh_objects,
		"$version updated to 1.3 has the same objects and definitions as a fresh 1.3");
	is($node->safe_psql($db, $extension_sql),
		$node->safe_psql('fresh', $extension_sql),
		"$version: and the same extension entry (version, schema, configuration tables)");
	is($node->safe_psql($db, $count_sql), $fresh_count,
		"$version: and the same number of member objects");

	# psql's own description of the extension agrees too.
	my (undef, $dx_updated) = $node->psql($db, '\dx+ snowflake');
	is($dx_updated, $dx_fresh, "$version: \\dx+ lists the same objects");

	# The new function works in the updated database.
	is( $node->safe_psql(
			$db, 'SELECT snowflake_nextval() = snowflake_lastval()'),
		't', "$version: snowflake_lastval() works after the update");
}

# ---------------------------------------------------------------------------
# pg_dump and pg_restore, plain and custom.
# ---------------------------------------------------------------------------
$node->safe_psql('postgres', 'CREATE DATABASE app');
$node->safe_psql(
	'app', q{
	CREATE EXTENSION snowflake;
	CREATE TABLE customers (id serial PRIMARY KEY, name text NOT NULL);
	CREATE TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
	                     customer_id integer NOT NULL REFERENCES customers,
	                     placed timestamptz GENERATED ALWAYS AS (snowflake_timestamp(id)) STORED);
	CREATE INDEX orders_day ON orders ((snowflake_timestamp(id)));
	INSERT INTO customers (name) VALUES ('ann'), ('bob');
	SELECT count(*) FROM snowflake_convert_column('customers', 'id');
	INSERT INTO customers (name) VALUES ('cy');
	INSERT INTO orders (customer_id) SELECT id FROM customers, generate_series(1, 3);
});

my $state_sql = q{
SELECT string_agg(x, E'\n' ORDER BY x) FROM (
  SELECT 'customer ' || id || ' ' || name AS x FROM customers
  UNION ALL
  SELECT 'order ' || id || ' ' || customer_id || ' ' || placed FROM orders
  UNION ALL
  SELECT 'default ' || c.relname || '.' || a.attname || ' ' || format_type(a.atttypid, a.atttypmod)
         || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '-')
    FROM pg_class c
    JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
    LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
   WHERE c.relname IN ('customers', 'orders')
  UNION ALL
  SELECT 'constraint ' || conname || ' ' || pg_get_constraintdef(oid)
    FROM pg_constraint WHERE conrelid IN ('customers'::regclass, 'orders'::regclass)
  UNION ALL
  SELECT 'index ' || indexdef FROM pg_indexes WHERE tablename IN ('customers', 'orders')
  UNION ALL
  SELECT 'extension ' || extversion FROM pg_extension WHERE extname = 'snowflake'
) s};
my $before = $node->safe_psql('app', $state_sql);
like($before, qr/^default customers\.id bigint snowflake_nextval\(\)$/m,
	'the converted key has the snowflake default');
like($before, qr/^default orders\.customer_id bigint -$/m,
	'and the referencing column is bigint');
is(scalar(() = $before =~ /^order /mg), 9, 'nine orders to dump');

my $tmp = PostgreSQL::Test::Utils::tempdir();

# A plain dump without the random key of the \restrict lines that recent
# minor releases write around it.
sub dump_text
{
	my ($file) = @_;
	my $text = slurp_file($file);
	$text =~ s/^\\(?:un)?restrict .*$//mg;
	return $text;
}

my $connstr = $node->connstr('app');
$node->command_ok([ 'pg_dump', '-Fp', '-f', "$tmp/app.sql", '-d', $connstr ],
	'pg_dump, plain format');
$node->command_ok([ 'pg_dump', '-Fc', '-f', "$tmp/app.dump", '-d', $connstr ],
	'pg_dump, custom format');

$node->safe_psql('postgres', 'CREATE DATABASE from_plain');
$node->safe_psql('postgres', 'CREATE DATABASE from_custom');
$node->command_ok(
	[
		'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1', '-f', "$tmp/app.sql",
		'-d', $node->connstr('from_plain')
	],
	'the plain dump restores with psql, without an error');
$node->command_ok(
	[
		'pg_restore', '--exit-on-error', '-d', $node->connstr('from_custom'),
		"$tmp/app.dump"
	],
	'the custom dump restores with pg_restore, without an error');

foreach my $db ('from_plain', 'from_custom')
{
	is($node->safe_psql($db, $state_sql), $before,
		"$db: same rows, keys, defaults, constraints, indexes and extension version");

	# Dumping the restored database again gives the same dump.
	$node->command_ok([ 'pg_dump', '-Fp', '-f', "$tmp/$db.sql", '-d', $node->connstr($db) ],
		"$db: dumps again");
	is(dump_text("$tmp/$db.sql"), dump_text("$tmp/app.sql"),
		"$db: its dump is identical to the original one");

	# New rows get new IDs above the restored ones.
	is( $node->safe_psql(
			$db, q{
			WITH c AS (INSERT INTO customers (name) VALUES ('dee') RETURNING id),
			     o AS (INSERT INTO orders (customer_id) SELECT id FROM c RETURNING id, customer_id)
			SELECT (SELECT id FROM c) > (SELECT max(id) FROM customers WHERE name <> 'dee')
			   AND o.id > (SELECT max(id) FROM orders WHERE customer_id <> o.customer_id)
			   AND snowflake_node_id(o.id) = 12
			  FROM o}),
		't',
		"$db: inserts after the restore get larger IDs from this node");
}

$node->stop;
done_testing();
