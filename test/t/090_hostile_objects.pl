# Copyright: see LICENSE
#
# 090_hostile_objects.pl
#	No role can steer a privileged one through the C extension: a role
#	that plants objects everywhere it may (HostileTest.pm) never has one
#	run by an install, an update, a call of any function, a key's
#	conversion or a claim sent to the nodes of a Citus cluster, whoever
#	runs them, and nothing of the extension is bound to one.
#
# Databases where, as in a database created before PostgreSQL 15, every
# role may create in public, whose default search_path is "public,
# pg_catalog", owned by owner_role (not a superuser).  The planter plants
# in public, generated from the catalogs and from the extension's scripts:
# an operator for every operator and argument type that pg_catalog
# reaches only through an implicit cast, a function for every function the
# scripts call without a schema, and a copy of each with pg_catalog's very
# signature; each logs who ran it and returns the right answer.  Then,
# each in a database of its own:
#  - CREATE EXTENSION snowflake (trusted) by the database owner into
#    public, by a superuser into app, and 1.0 (frozen) by the owner into
#    public; ALTER EXTENSION UPDATE from 1.0, 1.1 and 1.2 (installed before
#    the planting) by the owner and by a superuser;
#  - every function of the extension (and its view) called by an
#    application role, the owner and a superuser, on its normal path and
#    its errors, with a key file of public IDs;
#  - snowflake_convert_column() by a superuser on its own table, which a
#    table of another role references, whose CHECK constraint would make
#    that role a superuser if a superuser ran it: refused, naming it, the
#    role no superuser, nothing changed; by the owner of every table of the
#    chain it converts;
#  - snowflake_claim_node() under a stand-in for Citus (an extension named
#    citus whose run_command_on_all_nodes() runs the command, as Citus
#    does, in a new session of the same role on the node, here through
#    dblink: a superuser's session with the database's default
#    search_path): the command sent qualifies every name and operator, and
#    no planted object runs there; 1.2's claim, sent the same way, runs
#    planted operators as a superuser (the test sees what it is there to
#    see).
# After each: no planted object ran (the server log), and nothing of the
# extension is bound to an object outside pg_catalog and its schema, or to
# one of the planter's (pg_depend).

use strict;
use warnings;

use File::Basename ();
use File::Spec;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use HostileTest;
use Test::More;

# The stand-in for Citus: what snowflake_claim_node() uses of it, its
# catalog of nodes and run_command_on_all_nodes(), which runs the command
# in a session of its own as the calling role (Citus's connection to each
# node), here one node, this server, reached through dblink; what it ran
# and got is kept in citus_stand_in_log.
my $citus = <<'EOT';
SET allow_system_table_mods = on;
CREATE TABLE pg_catalog.pg_dist_node (nodeid integer, nodename text, nodeport integer);
INSERT INTO pg_catalog.pg_dist_node VALUES (1, 'this server', 0);
CREATE TABLE pg_catalog.citus_stand_in_log (command text, success boolean, result text);
CREATE FUNCTION pg_catalog.run_command_on_all_nodes(command text, parallel boolean DEFAULT true,
                                                    give_warning_for_connection_errors boolean DEFAULT false)
RETURNS TABLE (nodeid integer, success boolean, result text)
LANGUAGE plpgsql SET search_path = pg_catalog AS $f$
DECLARE
    dblink_schema name;
BEGIN
    SELECT n.nspname INTO dblink_schema
      FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'dblink';
    nodeid := 1;
    BEGIN
        EXECUTE format('SELECT r FROM %I.dblink($1, $2) AS t(r text)', dblink_schema) INTO result
          USING format('host=%s port=%s dbname=%s user=%s',
                       split_part(current_setting('unix_socket_directories'), ',', 1), current_setting('port'),
                       current_database(), current_user), command;
        success := true;
    EXCEPTION WHEN OTHERS THEN
        success := false;
        result := SQLERRM;
    END;
    INSERT INTO pg_catalog.citus_stand_in_log VALUES (command, success, result);
    RETURN NEXT;
END $f$;
EOT
my $install = installation_with(
	'citus.control' => "comment = 'a stand-in for Citus (test/t/090_hostile_objects.pl)'\n"
	  . "default_version = '0.0'\nrelocatable = false\nschema = pg_catalog\nsuperuser = true\nrequires = 'dblink'\n",
	'citus--0.0.sql' => $citus);
my $node = start_snowflake_node('hostile_objects', install_path => $install, node_id => 1);
hostile_roles($node);
# A key file of public IDs, for the calls that use one.
{
	my $path = $node->data_dir . '/public.keys';
	open my $fh, '>', $path or die "$path: $!";
	print $fh "1 000102030405060708090a0b0c0d0e0f current\n";
	close $fh;
	chmod(0600, $path) or die "chmod: $!";
	$node->append_conf('postgresql.conf', "snowflake.public_keys_file = 'public.keys'\n");
	$node->reload;
}
my $root = File::Spec->rel2abs(File::Basename::dirname(__FILE__) . '/../..');
my $names = unqualified_calls(glob("$root/snowflake--*.sql"));
ok(scalar(grep { $_ eq 'format' } @$names), scalar(@$names) . ' names called without a schema in the extension\'s scripts');

hostile_database($node, 'tpl_clean');
hostile_database($node, 'tpl_planted', template => 'tpl_clean');
my ($ops, $fns) = plant($node, 'tpl_planted', 'public', shadows => 1, names => $names);
note("planted in public: $ops operators, $fns functions");
cmp_ok($ops, '>', 2000, 'thousands of operators planted');

# After a step in $db, whose extension is in $schema: nothing planted ran
# since $mark, nothing of the extension is bound outside its schema and
# pg_catalog or to the planter's.
sub clean_after
{
	my ($what, $db, $schema, $mark) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	is(hostile_ran($node, $mark), '', "$what: no planted object ran");
	is(foreign_bindings($node, $db, [$schema]), '', "$what: nothing of the extension is bound outside pg_catalog and its schema");
	return;
}

sub step
{
	my ($what, $db, $schema, $role, $sql) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $mark = hostile_mark($node);
	my ($ok, undef, $err) = victim($node, $db, $role, $sql);
	ok($ok, "$what: it succeeds") or diag($err);
	clean_after($what, $db, $schema, $mark);
	return;
}

# Every function of the extension in $schema of $db, and its view, called
# by each role (errors and refusals included), after a table to convert
# (a dry run) was made: no planted object ran; the calls an application
# role may make succeed for it.
sub call_everything
{
	my ($what, $db, $schema) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	hq($node, $db, "CREATE TABLE $schema.hostile_keyed (id serial PRIMARY KEY); INSERT INTO $schema.hostile_keyed DEFAULT VALUES");
	my ($good, $bad) = interface_calls($node, $db, $schema);
	my $admin = qr/snowflake_(?:stats_reset|adopt_layout|adopt_node_id|confirm_restore|claim_node|unclaim_node|convert_column)\(/;
	my @open = ((grep { !/$admin/ } @$good), "SELECT * FROM $schema.snowflake_stats;");
	my $mark = hostile_mark($node);
	my ($ok, undef, $err) = victim($node, $db, 'app_user', join("\n", @open));
	ok($ok, "$what: every call an application role may make succeeds for it") or diag($err);
	foreach my $role (undef, 'owner_role', 'app_user')
	{
		$node->psql($db, join("\n", @$good, @$bad, "SELECT * FROM $schema.snowflake_stats;"), on_error_stop => 0,
			defined $role ? (extra_params => [ '-U', $role ]) : ());
	}
	is(hostile_ran($node, $mark), '', "$what: no planted object ran in " . (3 * (@$good + @$bad + 1)) . ' calls');
	return;
}

# --- installs ---

hostile_database($node, 'by_owner', template => 'tpl_planted');
step('CREATE EXTENSION by the database owner into public', 'by_owner', 'public', 'owner_role', 'CREATE EXTENSION snowflake');
hq($node, 'by_owner', 'GRANT SELECT ON public.snowflake_node_claims TO app_user');
call_everything('installed by the owner in public', 'by_owner', 'public');

hostile_database($node, 'by_super', template => 'tpl_planted');
hq($node, 'by_super', 'CREATE SCHEMA app AUTHORIZATION owner_role; GRANT USAGE ON SCHEMA app TO app_user');
step('CREATE EXTENSION by a superuser into app', 'by_super', 'app', undef, 'CREATE EXTENSION snowflake SCHEMA app');
call_everything('installed by a superuser in app', 'by_super', 'app');

hostile_database($node, 'frozen', template => 'tpl_planted');
step('CREATE EXTENSION VERSION 1.0 (frozen) by the database owner into public', 'frozen', 'public', 'owner_role',
	"CREATE EXTENSION snowflake VERSION '1.0'");

# --- updates, from versions installed before the planting ---

foreach my $from ('1.0', '1.1', '1.2')
{
	foreach my $role ('owner_role', undef)
	{
		my $db = 'update_' . ($from =~ s/\.//r) . '_' . ($role // 'super');
		hostile_database($node, $db, template => 'tpl_clean');
		hq($node, $db, "CREATE EXTENSION snowflake VERSION '$from' SCHEMA public", defined $role ? (extra_params => [ '-U', $role ]) : ());
		plant($node, $db, 'public', shadows => 1, names => $names);
		step("ALTER EXTENSION UPDATE from $from by " . ($role // 'a superuser'), $db, 'public', $role,
			'ALTER EXTENSION snowflake UPDATE');
	}
}
call_everything('updated from 1.0 by the owner', 'update_10_owner_role', 'public');

# --- a key's conversion: a table of another role in the chain ---

hostile_database($node, 'convert', template => 'tpl_planted');
hq($node, 'convert', q{
CREATE EXTENSION snowflake SCHEMA public;
CREATE ROLE other LOGIN;
CREATE SCHEMA other AUTHORIZATION other;
CREATE TABLE public.parent (id serial PRIMARY KEY);
INSERT INTO public.parent SELECT FROM pg_catalog.generate_series(1, 3);
GRANT REFERENCES ON public.parent TO other;
SET ROLE other;
CREATE FUNCTION other.sneaky(v bigint) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        EXECUTE 'ALTER ROLE other SUPERUSER';
    END IF;
    RETURN true;
END $$;
CREATE TABLE other.child (parent_id integer REFERENCES public.parent, CHECK (other.sneaky(parent_id)));
INSERT INTO other.child VALUES (1), (2);
});
my $convert_mark = hostile_mark($node);
is( error_report($node, q{SELECT * FROM public.snowflake_convert_column('public.parent', 'id')}, connstr => $node->connstr('convert')),
	qq{42501: permission denied to convert column "id" of table "parent"\n}
	  . qq{DETAIL:  Table other.child belongs to role other.\n}
	  . q{HINT:  Converting rewrites and checks each table of the chain as the role that runs it, running what its owner wrote into it. Convert it as the role that owns every table named (SET ROLE), or give them one owner first.},
	'a superuser converting its own table that another role\'s table references: refused, naming it');
is( hq($node, 'convert', q{
SELECT (SELECT rolsuper FROM pg_roles WHERE rolname = 'other'),
       (SELECT string_agg(format_type(atttypid, NULL), ',' ORDER BY attrelid::regclass::text) FROM pg_attribute
         WHERE (attrelid, attname) IN (('public.parent'::regclass, 'id'), ('other.child'::regclass, 'parent_id')))}),
	'f|integer,integer', 'the other role is no superuser, and nothing was converted');
hq($node, 'convert', 'ALTER TABLE public.parent OWNER TO other; ALTER TABLE other.child OWNER TO other');
my ($conv_ok, undef, $conv_err) = victim($node, 'convert', 'other', q{SELECT * FROM public.snowflake_convert_column('public.parent', 'id')});
ok($conv_ok, 'the owner of every table of the chain converts it') or diag($conv_err);
is(hq($node, 'convert', q{SELECT rolsuper FROM pg_roles WHERE rolname = 'other'}), 'f', 'and stays what it is');
is(hostile_ran($node, $convert_mark), '', 'the conversions ran no planted object');

# --- a node id claim under Citus ---

foreach my $case ([ 'claim', undef ], [ 'claim_12', '1.2' ])
{
	my ($db, $version) = @$case;
	hostile_database($node, $db, template => 'tpl_planted');
	hq($node, $db, 'CREATE SCHEMA dblink_s; CREATE EXTENSION dblink SCHEMA dblink_s; CREATE EXTENSION citus;'
		  . 'CREATE EXTENSION snowflake SCHEMA public' . ($version ? " VERSION '$version'" : ''));
	my $mark = hostile_mark($node);
	my ($ok, undef, $err) = victim($node, $db, undef, q{SELECT public.snowflake_claim_node('hostile-test')});
	ok($ok, "$db: snowflake_claim_node() under the stand-in for Citus succeeds") or diag($err);
	my $command = hq($node, $db, q{SELECT replace(command, E'\n', ' ') FROM pg_catalog.citus_stand_in_log});
	my $success = hq($node, $db, q{SELECT success FROM pg_catalog.citus_stand_in_log});
	my $result = hq($node, $db, q{SELECT result FROM pg_catalog.citus_stand_in_log});
	is($success, 't', "$db: the command ran on the node, in a session of its own") or diag($result);
	like($result, qr/"sysid" : "\d+"/, "$db: and answered");
	if (!$version)
	{
		is(hostile_ran($node, $mark), '', 'claim: no planted object ran, here or in the node\'s session');
		unlike($command =~ s/OPERATOR\(pg_catalog\.[^)]+\)//gr =~ s/'(?:[^']|'')*'//gr,
			qr/(?:[-+*\/<>=~!@#%^&|`?]|\bBETWEEN\b|\bNULLIF\b)/i,
			'claim: the command sent qualifies every operator (OPERATOR(pg_catalog....))');
	}
	else
	{
		like(hostile_ran($node, $mark), qr/HOSTILE: operator \S+ in schema public ran as \S+ \(session \S+\)/,
			'claim_12: 1.2\'s command, unqualified, runs planted operators in the node\'s session (the test sees it)');
	}
}

$node->stop;
done_testing();
