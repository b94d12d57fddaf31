# Copyright: see LICENSE
#
# 026_trusted.pl
#	snowflake is a trusted extension: a database owner without superuser
#	creates it and uses every generator and decoder, but cannot reset the
#	counters, adopt a layout or change a setting.  The install and update
#	scripts run as the bootstrap superuser, so they must not resolve
#	anything through search_path: an unprivileged user plants look-alike
#	functions and operators in the target schema first, each of which would
#	make the user a superuser if the script ever ran it.  Finally updates
#	from 1.0 and from 1.1 must leave the same objects as a fresh 1.3 (and from 1.2).

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# The update scripts name nothing through search_path: every object they
# create, comment on, grant or select from is @extschema@-qualified and
# every type pg_catalog-qualified (comments and string literals aside).
# A fresh install runs them too, after the frozen snowflake--1.0.sql (there
# is no install script of a later version).  That one is unqualified, and safe as it is:
# extension scripts run with search_path = the target schema, pg_temp, so
# its types resolve in pg_catalog, searched first; the planted look-alikes
# below are there for it as well.
my @updates = sort glob(__FILE__ =~ s{test/t/[^/]+$}{snowflake--*--*.sql}r);
ok(scalar(@updates) >= 1, 'there is an update script');
is( join(' ', map { s{.*/}{}r } grep { !/--.*--/ }
			glob(__FILE__ =~ s{test/t/[^/]+$}{snowflake--*.sql}r)),
	'snowflake--1.0.sql',
	'the only install script is 1.0\'s: a fresh install runs it and the updates');
foreach my $file (@updates)
{
	my $script = slurp_file($file);
	# Function bodies set their own search_path (SET search_path = pg_catalog,
	# pg_temp) and run at call time, not at install.
	$script =~ s/\$(\w*)\$.*?\$\1\$//gs;
	$script =~ s/--[^\n]*//g;
	$script =~ s{/\*.*?\*/}{}gs;
	$script =~ s/'(?:[^']|'')*'//g;
	my @unqualified;
	while ($script =~
		/\b(FUNCTION|VIEW|ON|FROM|TABLE|TYPE|RETURNS)\s+(?!pg_catalog\.|\@extschema\@\.)([a-z_]+)/gi)
	{
		push @unqualified, "$1 $2"
		  unless $2 =~ /^(FUNCTION|VIEW|PUBLIC|TABLE|TYPE|SETOF)$/i;
	}
	while ($script =~
		/(?<!pg_catalog\.)\b(bigint|integer|int4|int8|float8|text|timestamptz|boolean|bool|record|void|jsonb)\b/gi)
	{
		push @unqualified, "type $1";
	}
	my $name = $file =~ s{.*/}{}r;
	is(join(', ', @unqualified), '', "$name qualifies every object and type it names");
}

my $node = start_snowflake_node('trusted', node_id => 5);

# alice owns the databases; mallory may create objects in their public
# schemas (as in databases created before PostgreSQL 15).
$node->safe_psql('postgres', q{
CREATE ROLE alice LOGIN;
CREATE ROLE mallory LOGIN;
CREATE DATABASE app OWNER alice;
CREATE DATABASE app10 OWNER alice;
CREATE DATABASE app11 OWNER alice;
});

# Look-alikes of what an install script might call: built-in functions,
# operators on the types the script uses, casts' function names and our own
# names with other argument types.  Each one, run by a superuser, makes
# mallory a superuser and records the call.
my $plant = q{
CREATE TABLE public.trap_log (fn text, caller text);
GRANT INSERT ON public.trap_log TO PUBLIC;
CREATE FUNCTION public.trap(fn text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO public.trap_log VALUES (fn, current_user);
	IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
		EXECUTE 'ALTER ROLE mallory SUPERUSER';
	END IF;
END $$;
CREATE FUNCTION public.now() RETURNS timestamptz LANGUAGE plpgsql
	AS $$ BEGIN PERFORM public.trap('now'); RETURN pg_catalog.now(); END $$;
CREATE FUNCTION public.int8(integer) RETURNS bigint LANGUAGE plpgsql
	AS $$ BEGIN PERFORM public.trap('int8'); RETURN $1; END $$;
CREATE FUNCTION public.bool(integer) RETURNS boolean LANGUAGE plpgsql
	AS $$ BEGIN PERFORM public.trap('bool'); RETURN $1 <> 0; END $$;
CREATE FUNCTION public.snowflake_stats(integer) RETURNS record LANGUAGE plpgsql
	AS $$ BEGIN PERFORM public.trap('snowflake_stats'); RETURN NULL; END $$;
CREATE FUNCTION public.snowflake_stats_all(integer) RETURNS record LANGUAGE plpgsql
	AS $$ BEGIN PERFORM public.trap('snowflake_stats_all'); RETURN NULL; END $$;
CREATE FUNCTION public.snowflake_nextval(integer) RETURNS bigint LANGUAGE plpgsql
	AS $$ BEGIN PERFORM public.trap('snowflake_nextval'); RETURN 0; END $$;
CREATE FUNCTION public.trap_eq(bigint, integer) RETURNS boolean LANGUAGE plpgsql
	AS $$ BEGIN PERFORM public.trap('='); RETURN $1 = $2; END $$;
CREATE OPERATOR public.= (LEFTARG = bigint, RIGHTARG = integer, FUNCTION = public.trap_eq);
CREATE FUNCTION public.trap_cat(text, text) RETURNS text LANGUAGE plpgsql
	AS $$ BEGIN PERFORM public.trap('||'); RETURN $1 || $2; END $$;
CREATE OPERATOR public.|| (LEFTARG = text, RIGHTARG = text, FUNCTION = public.trap_cat);
};
foreach my $db ('app', 'app10', 'app11')
{
	$node->safe_psql($db, 'GRANT CREATE ON SCHEMA public TO mallory');
	$node->safe_psql($db, $plant, extra_params => [ '-U', 'mallory' ]);
}

# A fresh 1.3, created by alice with the planted schema first in her path.
my ($ret, $stdout, $stderr) = $node->psql(
	'app', 'SET search_path = public, pg_catalog; CREATE EXTENSION snowflake',
	extra_params => [ '-U', 'alice' ]);
is($ret, 0, 'a database owner without superuser creates the extension')
  or diag($stderr);
is( $node->safe_psql(
		'app', q{SELECT extversion, extrelocatable,
			pg_catalog.pg_get_userbyid(extowner)
			FROM pg_catalog.pg_extension WHERE extname = 'snowflake'}),
	"1.3|f|alice",
	'the extension is 1.3, owned by alice');

# 1.0, created by alice as well (the control file is trusted for every
# version), then updated to 1.1, 1.2 and 1.3 by her; and 1.1 updated to 1.2 and 1.3.
($ret, $stdout, $stderr) = $node->psql(
	'app10',
	"SET search_path = public, pg_catalog; CREATE EXTENSION snowflake VERSION '1.0'; "
	  . "ALTER EXTENSION snowflake UPDATE TO '1.1'; ALTER EXTENSION snowflake UPDATE TO '1.2'; "
	  . "ALTER EXTENSION snowflake UPDATE TO '1.3'",
	extra_params => [ '-U', 'alice' ]);
is($ret, 0, 'a database owner creates 1.0 and updates it to 1.1, 1.2, then 1.3')
  or diag($stderr);
($ret, $stdout, $stderr) = $node->psql(
	'app11',
	"SET search_path = public, pg_catalog; CREATE EXTENSION snowflake VERSION '1.1'; "
	  . "ALTER EXTENSION snowflake UPDATE TO '1.2'; ALTER EXTENSION snowflake UPDATE TO '1.3'",
	extra_params => [ '-U', 'alice' ]);
is($ret, 0, 'a database owner creates 1.1 and updates it to 1.2, then 1.3')
  or diag($stderr);

foreach my $db ('app', 'app10', 'app11')
{
	is($node->safe_psql($db, 'SELECT count(*) FROM public.trap_log'),
		'0', "$db: no planted look-alike ran during install or update");
}
is($node->safe_psql('postgres',
		"SELECT rolsuper FROM pg_roles WHERE rolname = 'mallory'"),
	'f', 'mallory is still not a superuser');

# The objects of an updated 1.0 or 1.1 and of a fresh 1.2 are the same: every
# member's description and definition, ownership and privileges.
my $objects = q{
SELECT pg_catalog.pg_describe_object(d.classid, d.objid, 0)
	|| ' ' || coalesce(pg_catalog.pg_get_functiondef(p.oid), '')
	|| coalesce(pg_catalog.pg_get_viewdef(c.oid), '')
	|| ' owner=' || pg_catalog.pg_get_userbyid(coalesce(p.proowner, c.relowner))
	|| ' acl=' || coalesce(coalesce(p.proacl, c.relacl)::text, 'default')
	|| ' comment=' || coalesce(pg_catalog.obj_description(d.objid, d.classid::regclass::text), '')
FROM pg_catalog.pg_depend d
LEFT JOIN pg_catalog.pg_proc p ON d.classid = 'pg_catalog.pg_proc'::regclass AND p.oid = d.objid
LEFT JOIN pg_catalog.pg_class c ON d.classid = 'pg_catalog.pg_class'::regclass AND c.oid = d.objid
WHERE d.refclassid = 'pg_catalog.pg_extension'::regclass AND d.deptype = 'e'
  AND d.refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = 'snowflake')
ORDER BY 1};
my $fresh = $node->safe_psql('app', $objects);
foreach my $from ([ 'app10', '1.0' ], [ 'app11', '1.1' ])
{
	my ($db, $version) = @$from;
	is($node->safe_psql($db, $objects), $fresh,
		"an update from $version leaves the objects of a fresh 1.3");
	is($node->safe_psql($db, q{SELECT extversion, extrelocatable
			FROM pg_catalog.pg_extension WHERE extname = 'snowflake'}),
		'1.3|f', "the extension updated from $version is 1.3 and not relocatable");
}
like($fresh, qr/snowflake_nextval_batch/, 'the object list is not empty');
like($fresh, qr/snowflake_lastval/, 'and holds snowflake_lastval');

# alice uses every generator and decoder, and reads the counters.
my $use = $node->safe_psql(
	'app', q{
CREATE TABLE t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v text);
INSERT INTO t (v) SELECT 'x' FROM generate_series(1, 10);
SELECT count(*) FROM t;
SELECT count(DISTINCT b) FROM snowflake_nextval_batch(100) b;
WITH i AS (SELECT snowflake_nextval() AS id)
SELECT snowflake_node_id(id), (snowflake_decode(id)).node_id,
	snowflake_sequence(id) >= 0,
	abs(extract(epoch FROM snowflake_timestamp(id) - clock_timestamp())) < 60,
	snowflake_compose(snowflake_timestamp(id), snowflake_node_id(id), snowflake_sequence(id)) = id,
	id BETWEEN snowflake_min_id(snowflake_timestamp(id)) AND snowflake_max_id(snowflake_timestamp(id))
FROM i;
SELECT status, ids_issued >= 111 FROM snowflake_stats;
SELECT snowflake_nextval() = snowflake_lastval();
}, extra_params => [ '-U', 'alice' ]);
is($use, "10\n100\n5|5|t|t|t|t\nready|t\nt",
	'alice uses the generators, snowflake_lastval, the decoders and the stats view');

# The stats, every column, through the view and both functions, on the
# fresh and the updated install alike.
foreach my $db ('app', 'app10', 'app11')
{
	is( $node->safe_psql(
			$db, q{
			SELECT v.status, v.node_id, f.node_id, a.node_id, v.stats_reset = a.stats_reset AND a.background_writes >= 0
			  FROM snowflake_stats v, snowflake_stats() f, snowflake_stats_all() a},
			extra_params => [ '-U', 'alice' ]),
		'ready|5|5|5|t',
		"$db: alice reads snowflake_stats, snowflake_stats() and snowflake_stats_all()");
}

# What stays with superusers.
my $sqlstate;
($sqlstate, $stderr) = sql_error($node, 'SELECT snowflake_stats_reset()',
	connstr => $node->connstr('app') . ' user=alice');
is($sqlstate, '42501', 'alice cannot reset the counters');
like($stderr, qr/ERROR:  42501: permission denied for function snowflake_stats_reset\n/,
	'with the permission error');
($sqlstate, $stderr) = sql_error($node, 'SELECT snowflake_adopt_layout(true)',
	connstr => $node->connstr('app') . ' user=alice');
is($sqlstate, '42501', 'alice cannot adopt a layout');
like($stderr, qr/ERROR:  42501: permission denied for function snowflake_adopt_layout\n/,
	'with the permission error');
# The objects belong to the bootstrap superuser, so alice cannot grant
# herself what was revoked.
($ret, $stdout, $stderr) = $node->psql('app',
	'GRANT EXECUTE ON FUNCTION snowflake_stats_reset() TO alice; '
	  . 'SELECT has_function_privilege(\'alice\', \'snowflake_stats_reset()\', \'EXECUTE\')',
	on_error_stop => 0,
	extra_params => [ '-U', 'alice' ]);
is($stdout, 'f', 'alice cannot grant herself snowflake_stats_reset()');

# Settings: the ones that decide uniqueness are postmaster-only, the drift
# bound is the operator's; none of them can be changed by alice.
my @refused = (
	[ 'SET snowflake.node_id = 6', '55P02',
		'parameter "snowflake.node_id" cannot be changed without restarting the server' ],
	[ 'SET snowflake.node_bits = 12', '55P02',
		'parameter "snowflake.node_bits" cannot be changed without restarting the server' ],
	[ 'SET snowflake.max_drift_ms = 10', '55P02',
		'parameter "snowflake.max_drift_ms" cannot be changed now' ],
	[ 'ALTER DATABASE app SET snowflake.node_id = 6', '55P02',
		'parameter "snowflake.node_id" cannot be changed without restarting the server' ],
	[ 'ALTER ROLE alice SET snowflake.epoch = \'2020-01-01\'', '55P02',
		'parameter "snowflake.epoch" cannot be changed without restarting the server' ],
	[ 'ALTER DATABASE app SET snowflake.max_drift_ms = 10', '55P02',
		'parameter "snowflake.max_drift_ms" cannot be changed now' ],
	[ 'ALTER SYSTEM SET snowflake.node_id = 6', '42501', undef ],
	[ 'ALTER SYSTEM SET snowflake.max_drift_ms = 10', '42501', undef ],);
foreach my $case (@refused)
{
	my ($sql, $code, $message) = @$case;
	($sqlstate, $stderr) = sql_error($node, $sql,
		connstr => $node->connstr('app') . ' user=alice');
	is($sqlstate, $code, "alice is refused: $sql");
	like($stderr, qr/ERROR:  $code: \Q$message\E\n/, "  with: $message")
	  if defined $message;
}
is($node->safe_psql('app', 'SHOW snowflake.node_id', extra_params => [ '-U', 'alice' ]),
	'5', 'the node id is unchanged');

$node->stop;
done_testing();
