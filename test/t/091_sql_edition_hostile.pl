# Copyright: see LICENSE
#
# 091_sql_edition_hostile.pl
#	No role can steer a privileged one through the SQL edition: a role
#	that plants objects everywhere it may (HostileTest.pm) never has one
#	run, by any install, update, uninstall, switch or call of the edition,
#	by a superuser or by the edition's owner, and no function of the
#	edition is bound to one.
#
# On a server without the C library (EditionTest.pm), databases where, as
# in a database created before PostgreSQL 15, every role may create in
# public, whose default search_path is "public, pg_catalog" (as a
# database owner may set it), owned by owner_role, with pgcrypto in
# public.  The planter (an ordinary role) plants in public, generated
# from the catalogs and from the scripts of sql-edition/dist: an operator
# for every operator and argument type that pg_catalog reaches only
# through an implicit cast, a function for every function the scripts call
# without a schema, and a copy of each with pg_catalog's very signature
# (which wins where public comes first); each logs who ran it and returns
# the right answer.  It also puts, in a schema of its own, a PL/pgSQL
# snowflake_set_node_id(integer) and what else makes a schema look like
# an edition's, and later, where the edition is in public, functions of
# the edition's names and other snowflake_ ones of its own there.
# Then, each in a database of its own, with the database's search_path
# unless the page says to set one:
#  - the plain install, by the owner into app (with "app, public,
#    pg_catalog") and by a superuser into public; the plain update from
#    1.2, by the owner (app) and by a superuser (public); the plain
#    uninstall by either;
#  - CREATE EXTENSION (the extension's files, as database.dev and pg_tle
#    give them), by the owner into public and by a superuser into app;
#    ALTER EXTENSION UPDATE from 1.2; DROP EXTENSION; through pg_tle's
#    stand-in, snowflake-pgtle-install.sql and snowflake-pgtle-update.sql
#    run with the database's search_path;
#  - every function of the edition's interface, called by an application
#    role, the owner and a superuser, on its normal path and its errors,
#    and the generator's paths that move the sequence and wait;
#  - then, on the full installation, the switch to the C extension of a
#    plain install and of an extension in public, by a superuser, and
#    every C function called again.
# After each: no planted object ran (the server log), and nothing the
# edition or the C extension has in its schemas is bound to an object
# outside pg_catalog, its own schemas and pgcrypto, or to one of the
# planter's (pg_depend); the planter's own objects are as they were, and
# the decoy edition neither stops nor misleads anything.  The released
# 1.2, installed as an extension into public, is bound to planted
# operators: the check sees what it is there to see.

use strict;
use warnings;

use File::Path qw(remove_tree);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use EditionTest;
use HostileTest;
use Test::More;

my $dist = edition_root() . '/sql-edition/dist';
my $released = "$dist/extension/snowflake--1.2.sql";
my $install = edition_installation(edition_build());
install_fake_pgtle($install);
my $node = start_edition_node('edition_hostile', $install);
hostile_roles($node);
my $version = hq($node, 'postgres', "SELECT default_version FROM pg_available_extensions WHERE name = 'snowflake'");

# What the planter plants: operators, and functions of every name the
# scripts call without a schema.
my $names = unqualified_calls(glob("$dist/*.sql"), glob("$dist/extension/*.sql"));
ok(scalar(grep { $_ eq 'format' } @$names), scalar(@$names) . ' names called without a schema in the scripts, format() among them');

# Two templates: tpl_clean (pgcrypto in public, the planter's kit and its
# decoy edition in a schema of its own), tpl_planted (the same, with
# everything planted in public).
hostile_database($node, 'tpl_clean');
hq($node, 'tpl_clean', q{
CREATE EXTENSION pgcrypto SCHEMA public;
CREATE SCHEMA planter_own AUTHORIZATION planter;
SET ROLE planter;
CREATE SEQUENCE planter_own._snowflake_id_seq;
CREATE FUNCTION planter_own._snowflake_edition_version() RETURNS text LANGUAGE sql RETURN '} . $version . q{';
CREATE FUNCTION planter_own.snowflake_set_node_id(node_id integer) RETURNS integer LANGUAGE plpgsql AS $$
BEGIN RAISE LOG 'HOSTILE: decoy snowflake_set_node_id ran as % (session %)', current_user, session_user; RETURN node_id; END $$;
});
hostile_database($node, 'tpl_planted', template => 'tpl_clean');
my ($ops, $fns) = plant($node, 'tpl_planted', 'public', shadows => 1, names => $names);
# And look-alikes of the edition's own functions, for the installs into
# public.
my @edition_functions = script_functions("$dist/extension/snowflake--$version.sql");
my $look = plant_lookalikes($node, 'tpl_planted', 'public', \@edition_functions);
note("planted in public: $ops operators, $fns functions, $look look-alikes of "
	  . scalar(@edition_functions) . ' functions of the edition');
cmp_ok($look, '>', 500, 'look-alikes of the edition\'s functions planted');
cmp_ok($ops, '>', 2000, 'thousands of operators planted');
cmp_ok($fns, '>', 100, 'and functions for the names the scripts call');

# A database made from a template, owned by owner_role.
sub new_db
{
	my ($db, $template) = @_;
	hostile_database($node, $db, template => $template);
	return $db;
}

# Plant everything in public of database $db after the fact (the released
# version was installed there before; look-alikes of the edition's
# functions that 1.2 has already are not made, those of the functions the
# update will create are).
sub plant_now
{
	my ($db) = @_;
	plant($node, $db, 'public', shadows => 1, names => $names);
	my %have = map { $_ => 1 } split /\n/, hq($node, $db, q{
SELECT p.proname || '(' || coalesce((SELECT string_agg(format_type(t, NULL), ',' ORDER BY o)
                                       FROM unnest(p.proargtypes::oid[]) WITH ORDINALITY u(t, o)), '') || ')'
  FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace AND p.proname LIKE '%snowflake%'});
	plant_lookalikes($node, $db, 'public', [ grep { my ($n) = /^(\w+)\|/; !grep { /^\Q$n\E\(/ } keys %have } @edition_functions ]);
	return;
}

# After a step of database $db whose edition lives in $schema: nothing
# planted ran since $mark, nothing of the edition is bound to the
# planter's objects or outside its schemas.
sub clean_after
{
	my ($what, $db, $schema, $mark) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	is(hostile_ran($node, $mark), '', "$what: no planted object ran");
	is(foreign_bindings($node, $db, [ $schema, '_snowflake' ], ['pgcrypto']), '',
		"$what: nothing of the edition is bound outside pg_catalog, its schemas and pgcrypto");
	return;
}

# Run $sql (or a file, with -f) as $role; ok() and the log checked.
sub step
{
	my ($what, $db, $schema, $role, $sql, %opts) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	my $mark = hostile_mark($node);
	my ($ok, $out, $err) = $opts{file}
	  ? run_victim_file($node, $db, $role, $opts{file}, $opts{before})
	  : victim($node, $db, $role, $sql);
	ok($ok, "$what: it succeeds") or diag($err);
	clean_after($what, $db, $schema, $mark);
	return $err;
}

# --- the interface's calls ---

# Every function of the interface in $schema of $db, called by each role:
# the calls that succeed for any role succeed (the administrator's for the
# edition's owner $owner and a superuser), and the calls of the errors
# run; no planted object ran.  Then the generator's other paths: moves in
# a new session, a batch that leads the clock by more than a second (the
# next call waits).
sub call_everything
{
	my ($what, $db, $schema, $owner) = @_;
	local $Test::Builder::Level = $Test::Builder::Level + 1;
	# In public, look-alikes of every function of the edition now, its
	# type's included: a PL/pgSQL body resolves its calls when it runs.
	plant_lookalikes($node, $db, 'public', [ script_functions("$dist/extension/snowflake--$version.sql", 'public') ])
	  if $schema eq 'public';
	my ($good, $bad) = interface_calls($node, $db, $schema);
	my @admin = grep { /snowflake_set_/ } @$good;
	my @open = grep { !/snowflake_set_/ } @$good;
	my $mark = hostile_mark($node);
	foreach my $role (undef, $owner // (), 'app_user')
	{
		my $may = !defined $role || (defined $owner && $role eq $owner);
		my ($ok, undef, $err) = victim($node, $db, $role, join("\n", $may ? @admin : (), @open));
		ok($ok, "$what: every call " . ($may ? '' : 'but the administrator\'s ') . 'succeeds as ' . ($role // 'a superuser'))
		  or diag($err);
		$node->psql($db, join("\n", @admin, @$bad), on_error_stop => 0,
			defined $role ? (extra_params => [ '-U', $role ]) : ());
	}
	my ($ok, undef, $err) = victim($node, $db, $owner,
		"SELECT pg_catalog.max(x) FROM (SELECT $schema.snowflake_nextval_batch(1000000) FROM pg_catalog.generate_series(1, 5)) b(x);"
		  . "SELECT $schema.snowflake_nextval();");
	ok($ok, "$what: batches that lead the clock, then a call that waits for it") or diag($err);
	is(hostile_ran($node, $mark), '', "$what: no planted object ran in " . (3 * (scalar(@$good) + scalar(@$bad))) . ' calls');
	# The look-alikes of the type's functions depend on the edition's type:
	# they would stop its removal (which names them, and drops no role's
	# object), so the planter drops them.
	my $typed = hq($node, $db, q{
SELECT string_agg(DISTINCT p.oid::regprocedure::text, ', ')
  FROM pg_proc p JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = p.oid
 WHERE p.proowner = 'planter'::regrole AND d.refclassid = 'pg_type'::regclass
   AND d.refobjid = to_regtype('public._snowflake_layout')});
	hq($node, $db, "DROP FUNCTION $typed", extra_params => [ '-U', 'planter' ]) if $typed ne '';
	return;
}

# The planter's objects in public, which nothing may touch: functions of
# its own named snowflake_..., one an overload of the edition's generator.
sub planter_snowflakes
{
	my ($db) = @_;
	return hq($node, $db, q{
SELECT string_agg(p.oid::regprocedure::text || ' ' || p.proowner::regrole::text, ', ' ORDER BY p.oid::regprocedure::text)
  FROM pg_proc p WHERE p.proname LIKE 'snowflake%' AND p.proowner = 'planter'::regrole});
}
my $planter_functions = q{
SET ROLE planter;
CREATE FUNCTION public.snowflake_report() RETURNS text LANGUAGE plpgsql AS $$ BEGIN RETURN 'mine'; END $$;
CREATE FUNCTION public.snowflake_nextval(step integer) RETURNS bigint LANGUAGE sql RETURN step;
};

# --- the check sees what it is there to see ---

new_db('released', 'tpl_planted');
{
	my $mark = hostile_mark($node);
	my ($ok, undef, $err) = victim($node, 'released', 'owner_role', "CREATE EXTENSION snowflake VERSION '1.2'");
	ok($ok, 'the released 1.2 installs as an extension into public') or diag($err);
	like(foreign_bindings($node, 'released', [ 'public', '_snowflake' ], ['pgcrypto']),
		qr/function public\._snowflake_\w+\(.*\) -> operator public\./,
		'1.2 is bound to planted operators behind snowflake_nextval() (the check finds them)');
	victim($node, 'released', 'owner_role', 'SELECT public.snowflake_set_node_id(3); SELECT public.snowflake_nextval()');
	like(hostile_ran($node, $mark), qr/HOSTILE: operator \S+ in schema public ran as owner_role/,
		'and a call of 1.2\'s generator runs one as the owner (the log shows it)');
}

# --- the plain scripts ---

new_db('plain_owner', 'tpl_planted');
hq($node, 'plain_owner', 'CREATE SCHEMA app AUTHORIZATION owner_role; GRANT USAGE ON SCHEMA app TO app_user');
step('plain install by the owner into app', 'plain_owner', 'app', 'owner_role', undef,
	file => "$dist/snowflake-plain.sql", before => ['SET search_path = app, public, pg_catalog']);
call_everything('plain install in app', 'plain_owner', 'app', 'owner_role');
step('plain update (nothing to do) by the owner', 'plain_owner', 'app', 'owner_role', undef,
	file => "$dist/snowflake-plain-update.sql");
step('plain uninstall by the owner', 'plain_owner', 'app', 'owner_role', undef,
	file => "$dist/snowflake-plain-uninstall.sql");
is(hq($node, 'plain_owner', q{SELECT to_regnamespace('_snowflake') IS NULL, count(*) FROM pg_proc WHERE pronamespace = 'app'::regnamespace}),
	't|0', 'the plain uninstall removed the edition, and only it');

new_db('plain_super', 'tpl_planted');
step('plain install by a superuser into public, the database\'s search_path', 'plain_super', 'public', undef, undef,
	file => "$dist/snowflake-plain.sql");
hq($node, 'plain_super', $planter_functions);
my $mine = planter_snowflakes('plain_super');
call_everything('plain install in public', 'plain_super', 'public', undef);
step('plain uninstall by a superuser', 'plain_super', 'public', undef, undef,
	file => "$dist/snowflake-plain-uninstall.sql");
is(planter_snowflakes('plain_super'), $mine, 'the planter\'s own snowflake_ functions in public are untouched');

# A schema _snowflake of another role (one with CREATE on the database)
# stops the plain install before it changes anything, naming its owner.
new_db('precreated', 'tpl_planted');
hq($node, 'precreated', 'GRANT CREATE ON DATABASE precreated TO planter');
hq($node, 'precreated', 'CREATE SCHEMA _snowflake', extra_params => [ '-U', 'planter' ]);
{
	my $mark = hostile_mark($node);
	my ($ok, undef, $err) = run_victim_file($node, 'precreated', 'owner_role', "$dist/snowflake-plain.sql");
	ok(!$ok, 'a schema _snowflake of another role: the plain install refuses');
	like($err, qr/ERROR:  schema "_snowflake" already exists and is not the snowflake SQL edition's\nDETAIL:  It belongs to role planter; the edition keeps its state in a schema of that name, which only its owner may use\.\nHINT:  Drop or rename that schema first \(its owner or a superuser\), then install the edition\./,
		'naming its owner, and what to do');
	is(hostile_ran($node, $mark), '', 'and ran no planted object');
	is(hq($node, 'precreated', q{SELECT count(*) FROM pg_proc WHERE proname LIKE '%snowflake%' AND proowner = 'owner_role'::regrole}),
		'0', 'nothing was created');
}

# The plain update from 1.2, installed before anything was planted.
foreach my $case ([ 'owner_role', 'app' ], [ undef, 'public' ])
{
	my ($role, $schema) = @$case;
	my $db = new_db('plain_update_' . ($role // 'super'), 'tpl_clean');
	hq($node, $db, "CREATE SCHEMA $schema AUTHORIZATION owner_role; GRANT USAGE ON SCHEMA $schema TO app_user")
	  if $schema ne 'public';
	my ($ok, undef, $err) = run_victim_file($node, $db, $role // undef, plain_from_extension_script($released, $schema));
	ok($ok, "$db: 1.2's plain script installs into $schema") or diag($err);
	hq($node, $db, "SELECT $schema.snowflake_set_node_id(17)");
	plant_now($db);
	step("plain update from 1.2 by " . ($role // 'a superuser'), $db, $schema, $role, undef,
		file => "$dist/snowflake-plain-update.sql");
	is(hq($node, $db, "SELECT $schema._snowflake_edition_version()"), $version, "$db: at $version");
	call_everything("plain update in $schema", $db, $schema, $role);
}

# --- the extension (files, as database.dev and pg_tle hand them over) ---

new_db('ext_owner', 'tpl_planted');
step('CREATE EXTENSION by the owner into public', 'ext_owner', 'public', 'owner_role', 'CREATE EXTENSION snowflake');
hq($node, 'ext_owner', $planter_functions);
$mine = planter_snowflakes('ext_owner');
call_everything('extension in public', 'ext_owner', 'public', 'owner_role');
step('DROP EXTENSION by the owner', 'ext_owner', 'public', 'owner_role', 'DROP EXTENSION snowflake');
is(planter_snowflakes('ext_owner'), $mine, 'the planter\'s own snowflake_ functions in public are untouched');

new_db('ext_super', 'tpl_planted');
hq($node, 'ext_super', 'CREATE SCHEMA app AUTHORIZATION owner_role; GRANT USAGE ON SCHEMA app TO app_user');
step('CREATE EXTENSION by a superuser into app', 'ext_super', 'app', undef, 'CREATE EXTENSION snowflake SCHEMA app');
call_everything('extension in app', 'ext_super', 'app', undef);

foreach my $role ('owner_role', undef)
{
	my $db = new_db('ext_update_' . ($role // 'super'), 'tpl_clean');
	my ($ok, undef, $err) = victim($node, $db, $role, "CREATE EXTENSION snowflake VERSION '1.2'");
	ok($ok, "$db: 1.2 created in public") or diag($err);
	hq($node, $db, 'SELECT public.snowflake_set_node_id(17)');
	plant_now($db);
	step('ALTER EXTENSION UPDATE from 1.2 by ' . ($role // 'a superuser'), $db, 'public', $role,
		'ALTER EXTENSION snowflake UPDATE');
	call_everything('extension updated in public', $db, 'public', $role);
}

# --- pg_tle's files, run with the database's search_path ---

new_db('tle', 'tpl_planted');
hq($node, 'tle', 'CREATE EXTENSION pg_tle; GRANT pgtle_admin TO owner_role');
step('snowflake-pgtle-install.sql by the owner', 'tle', 'public', 'owner_role', undef,
	file => "$dist/snowflake-pgtle-install.sql");
materialize_pgtle($node, 'tle');
step('CREATE EXTENSION through pg_tle by the owner', 'tle', 'public', 'owner_role', 'CREATE EXTENSION snowflake');
step('DROP EXTENSION and pgtle.uninstall_extension() by the owner', 'tle', 'public', 'owner_role',
	q{DROP EXTENSION snowflake; SELECT pgtle.uninstall_extension('snowflake')});

new_db('tle_update', 'tpl_clean');
hq($node, 'tle_update', 'CREATE EXTENSION pg_tle; GRANT pgtle_admin TO owner_role');
{
	(my $script12 = slurp_file($released)) =~ s/\A.*?^\\echo [^\n]*\\quit\n//ms;
	my ($ok, undef, $err) = victim($node, 'tle_update', 'owner_role',
		"SELECT pgtle.install_extension('snowflake', '1.2', 'SQL edition of snowflake', \$_pgtle_\$\n$script12\$_pgtle_\$)");
	ok($ok, 'pg_tle is given 1.2') or diag($err);
	materialize_pgtle($node, 'tle_update');
	($ok, undef, $err) = victim($node, 'tle_update', 'owner_role', 'CREATE EXTENSION snowflake');
	ok($ok, '1.2 created through pg_tle in public') or diag($err);
}
plant_now('tle_update');
step('snowflake-pgtle-update.sql by a superuser', 'tle_update', 'public', undef, undef,
	file => "$dist/snowflake-pgtle-update.sql");
materialize_pgtle($node, 'tle_update');
step('ALTER EXTENSION UPDATE through pg_tle by a superuser', 'tle_update', 'public', undef,
	'ALTER EXTENSION snowflake UPDATE');

# --- the switch to the C extension ---

# A plain install in app and an extension in public, both the owner's,
# node id 17, with a table keyed by the edition.
new_db('sw_plain', 'tpl_planted');
hq($node, 'sw_plain', 'CREATE SCHEMA app AUTHORIZATION owner_role; GRANT USAGE ON SCHEMA app TO app_user');
step('plain install by the owner into app, for the switch', 'sw_plain', 'app', 'owner_role', undef,
	file => "$dist/snowflake-plain.sql", before => ['SET search_path = app, public, pg_catalog']);
# A plain install with node id 18, whose database owner would set
# snowflake_switch.node_id = 17 as the database's default, to decide the
# switch for the superuser: it may not (a setting no library defines, set
# per database or role, is a superuser's from PostgreSQL 15 on).
new_db('sw_node', 'tpl_planted');
hq($node, 'sw_node', 'CREATE SCHEMA app AUTHORIZATION owner_role');
step('plain install by the owner into app, node id 18', 'sw_node', 'app', 'owner_role', undef,
	file => "$dist/snowflake-plain.sql", before => ['SET search_path = app, public, pg_catalog']);
hq($node, 'sw_node', 'SELECT app.snowflake_set_node_id(18)');
{
	my ($ok, undef, $err) = victim($node, 'sw_node', 'owner_role',
		q{ALTER DATABASE sw_node SET snowflake_switch.node_id = '17'});
	like($err, qr/ERROR:  permission denied to set parameter "snowflake_switch\.node_id"/,
		'the database owner cannot set snowflake_switch.node_id as the database\'s default');
	($ok, undef, $err) = victim($node, 'sw_node', 'owner_role',
		q{ALTER DATABASE sw_node SET snowflake_edition.life = 'x'});
	like($err, qr/ERROR:  permission denied to set parameter "snowflake_edition\.life"/,
		'nor snowflake_edition.life');
}
new_db('sw_ext', 'tpl_planted');
step('CREATE EXTENSION by the owner into public, for the switch', 'sw_ext', 'public', 'owner_role',
	'CREATE EXTENSION snowflake');
hq($node, 'sw_ext', $planter_functions);
my %mine_before = (sw_ext => planter_snowflakes('sw_ext'));
my %calls;
foreach my $case ([ 'sw_plain', 'app' ], [ 'sw_ext', 'public' ])
{
	my ($db, $schema) = @$case;
	hq($node, $db, "SELECT $schema.snowflake_set_node_id(17)", extra_params => [ '-U', 'owner_role' ]);
	hq($node, $db, "CREATE TABLE $schema.orders (id bigint PRIMARY KEY DEFAULT $schema.snowflake_nextval(), n int);"
		  . "INSERT INTO $schema.orders (n) SELECT g FROM pg_catalog.generate_series(1, 100) g;"
		  . "GRANT SELECT, INSERT ON $schema.orders TO app_user",
		extra_params => [ '-U', 'owner_role' ]);
	# The calls of the interface, which the C extension then answers.
	my ($good) = interface_calls($node, $db, $schema);
	$calls{$db} = [ grep { !/snowflake_set_/ } @$good ];
}
$node->stop;

my $c = PostgreSQL::Test::Cluster->new('edition_hostile_c');
$c->init;
remove_tree($c->data_dir);
system('cp', '-a', $node->data_dir, $c->data_dir) == 0 or die 'could not copy the data directory';
$c->append_conf('postgresql.conf',
	"port = " . $c->port . "\nshared_preload_libraries = 'snowflake'\nsnowflake.node_id = 17\n");
$c->start;
$node = $c;
foreach my $case ([ 'sw_plain', 'app' ], [ 'sw_ext', 'public' ])
{
	my ($db, $schema) = @$case;
	my $err = step("the switch of $db by a superuser", $db, $schema, undef, undef,
		file => "$dist/snowflake-switch-to-c.sql");
	like($err, qr/NOTICE:  the switch to the snowflake C extension is finished/, "$db: the switch finished");
	is(foreign_bindings($node, $db, [$schema], []), '',
		"$db: nothing of the C extension is bound outside pg_catalog and its schema");
	my $mark = hostile_mark($node);
	foreach my $role (undef, 'app_user')
	{
		my ($ok, undef, $e) = victim($node, $db, $role,
			join("\n", "INSERT INTO $schema.orders (n) VALUES (101);", grep { !/_public/ } @{ $calls{$db} }));
		ok($ok, "$db: the interface's calls succeed through the C extension as " . ($role // 'a superuser'))
		  or diag($e);
	}
	is(hostile_ran($node, $mark), '', "$db: no planted object ran in the C extension's calls");
}
{
	my $mark = hostile_mark($node);
	my ($ok, undef, $err) = run_victim_file($node, 'sw_node', undef, "$dist/snowflake-switch-to-c.sql");
	ok(!$ok, 'sw_node: told nothing, the switch refuses another node id');
	like($err, qr/ERROR:  the snowflake C extension mints with node id 17, the SQL edition with 18\n/, 'sw_node: naming both');
	is(hostile_ran($node, $mark), '', 'sw_node: no planted object ran');
	is(hq($node, 'sw_node', q{SELECT count(*) FROM pg_extension WHERE extname = 'snowflake'}), '0', 'sw_node: and changed nothing');
	($ok, undef, $err) = run_victim_file($node, 'sw_node', undef, "$dist/snowflake-switch-to-c.sql",
		['SET snowflake_switch.node_id = 17']);
	ok($ok, 'sw_node: told in its session, it switches') or diag($err);
}
is(planter_snowflakes('sw_ext'), $mine_before{sw_ext},
	'sw_ext: the planter\'s own snowflake_ functions in the edition\'s schema are untouched by the switch');

$node->stop;
done_testing();
