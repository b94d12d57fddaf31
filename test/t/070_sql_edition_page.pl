# Copyright: see LICENSE
#
# 070_sql_edition_page.pl
#	The SQL edition's page, followed as written: the shell blocks of
#	docs/deployment/sql-edition.md marked as recipes
#	(<!-- recipe: sql-edition/... -->), read from the page and run with
#	bash and psql only, on a server without the C library, with the
#	committed files of sql-edition/dist copied into the directory they run
#	in (the download).
#
# As a managed service has them: a database appdb owned by app_owner, who
# is not a superuser, an application role app_user, and a superuser
# postgres (the service's master user); pg_tle is the stand-in of
# test/t/EditionTest.pm, whose functions are turned into files after each
# command that gives it an extension (what pg_tle does in the server).
#  - plain-install, plain-use: the plain script into the schema app as
#    app_owner, the node id, the grants and search_path, a table keyed by
#    the default, an insert as app_user that shows the key, its node id and
#    lastval();
#  - uses, plain-uninstall: what uses the edition is listed (the default);
#    with a view of the user's still over snowflake_decode(), the recipe
#    refuses and leaves everything as it was, the default too (one
#    transaction); without it, the edition is removed, the table and its
#    keys kept;
#  - pgtle-install, plain-use: the same through pg_tle, in a new appdb;
#    DROP EXTENSION refuses while the default uses it, naming it;
#    pgtle-uninstall removes it, from pg_tle too.

use strict;
use warnings;

use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use EditionTest;
use Test::More;

my %recipes = page_recipes();
my $install = edition_installation(undef);
install_fake_pgtle($install);
my $node = start_edition_node('edition_page', $install);

my $download = download_dir();

sub new_appdb
{
	$node->safe_psql('postgres', 'DROP DATABASE IF EXISTS appdb');
	$node->safe_psql('postgres', 'CREATE DATABASE appdb OWNER app_owner');
	return;
}
$node->safe_psql('postgres', 'CREATE ROLE app_owner LOGIN; CREATE ROLE app_user LOGIN');
new_appdb();

sub recipe
{
	my ($name) = @_;
	return run_recipe($node, $download, $recipes{"sql-edition/$name.sh"}, $name);
}

# --- the plain script ---

recipe('plain-install');
my $out = recipe('plain-use');
like($out, qr/^\s*(\d+) \|\s+17 \| t$/m, 'the insert as app_user shows the key, its node id 17, and lastval() equal to it');
is( $node->safe_psql(
		'appdb', q{
SELECT e.owner, e.super, (SELECT count(*) FROM app.orders), (SELECT bool_and(app.snowflake_node_id(id) = 17) FROM app.orders)
  FROM (SELECT p.proowner::regrole::text AS owner, r.rolsuper AS super
          FROM pg_proc p JOIN pg_roles r ON r.oid = p.proowner
         WHERE p.oid = 'app.snowflake_nextval()'::regprocedure) e}),
	'app_owner|f|1|t',
	'installed by app_owner, not a superuser, in schema app; the key carries node id 17');
like(recipe('uses'), qr/default value for column id of table (app\.)?orders\n/,
	'what uses the edition: the default of app.orders');
$node->safe_psql('appdb', 'CREATE VIEW app.orders_decoded AS SELECT o.id, d.* FROM app.orders o, app.snowflake_decode(o.id) d',
	extra_params => [ '-U', 'app_owner' ]);
{
	my ($out, $err) = ('', '');
	local $ENV{PGHOST} = $node->host;
	local $ENV{PGPORT} = $node->port;
	my $ok = IPC::Run::run([ 'bash', '-e', '-o', 'pipefail', '-c', $recipes{'sql-edition/plain-uninstall.sh'} ],
		init => sub { chdir $download or die $! }, '<', \undef, '>', \$out, '2>', \$err, IPC::Run::timeout(180));
	ok(!$ok, 'plain-uninstall with a view still over the edition: it refuses');
	like($err, qr/ERROR:  cannot remove the snowflake SQL edition because other objects use its functions\nDETAIL:  [^\n]*view app\.orders_decoded/,
		'naming the view');
	is( $node->safe_psql(
			'appdb', q{
SET search_path = pg_catalog;
SELECT pg_get_expr(adbin, adrelid), to_regnamespace('_snowflake') IS NOT NULL
  FROM pg_attrdef WHERE adrelid = 'app.orders'::regclass}),
		'app.snowflake_nextval()|t', 'and changes nothing: the default it dropped first is back (one transaction), the edition is there');
}
$node->safe_psql('appdb', 'DROP VIEW app.orders_decoded', extra_params => [ '-U', 'app_owner' ]);
recipe('plain-uninstall');
is( $node->safe_psql(
		'appdb', q{
SELECT (SELECT count(*) FROM pg_proc WHERE proname ~ 'snowflake'), to_regnamespace('_snowflake') IS NULL,
       (SELECT count(*) FROM app.orders)}),
	'0|t|1', 'uninstalled: no function of the edition, no schema _snowflake; the table and its key kept');

# --- pg_tle ---

new_appdb();
recipe('pgtle-install');
$out = recipe('plain-use');
like($out, qr/^\s*(\d+) \|\s+17 \| t$/m, 'through pg_tle: the insert as app_user shows the key, node id 17, lastval()');
is( $node->safe_psql(
		'appdb', q{
SELECT e.extname, e.extowner::regrole, e.extnamespace::regnamespace,
       (SELECT count(*) FROM pg_proc WHERE pronamespace = 'pgtle'::regnamespace AND proname LIKE 'snowflake%')
  FROM pg_extension e WHERE e.extname = 'snowflake'}),
	'snowflake|app_owner|app|2',
	'the extension snowflake, app_owner\'s, in schema app; pg_tle holds its control and script');
is( report_in(
		$node, 'appdb', 'SET search_path = public; DROP EXTENSION snowflake',
		extra_params => [ '-U', 'app_owner' ]),
	"2BP01: cannot drop extension snowflake because other objects depend on it\n"
	  . "DETAIL:  default value for column id of table app.orders depends on function app.snowflake_nextval()\n"
	  . 'HINT:  Use DROP ... CASCADE to drop the dependent objects too.',
	'DROP EXTENSION without CASCADE refuses while the default uses it, naming it');
recipe('pgtle-uninstall');
is( $node->safe_psql(
		'appdb', q{
SELECT (SELECT count(*) FROM pg_extension WHERE extname = 'snowflake'),
       (SELECT count(*) FROM pg_proc WHERE pronamespace = 'pgtle'::regnamespace AND proname LIKE 'snowflake%'),
       to_regnamespace('_snowflake') IS NULL, (SELECT count(*) FROM app.orders)}),
	'0|0|t|1', 'uninstalled through pg_tle: no extension, nothing of it in pg_tle, the table kept');

$node->stop;
done_testing();
