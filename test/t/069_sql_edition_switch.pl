# Copyright: see LICENSE
#
# 069_sql_edition_switch.pl
#	Moving a database from the SQL edition to the C extension, in place
#	with snowflake-switch-to-c.sql and by dump and restore, as
#	docs/deployment/sql-edition.md says (its recipes, read from the page).
#
# First, on a server without the C library, five databases use the
# edition: appdb through the plain script, extform as the extension
# snowflake from files, tledb through pg_tle and dbdevdb through pg_tle as
# database.dev names it ("test@snowflake"; the stand-in for pg_tle of
# EditionTest.pm keeps pg_tle's catalog entries), all with node id 17, and
# node18 (plain) with node id 18.  Each has a table keyed by DEFAULT
# snowflake_nextval(), an index and a generated column that decode the
# keys, a view over snowflake_decode(), a function of the user's that calls
# the edition (its body a SQL-standard one, which depends on it), and a
# generated column and an index of text forms of the keys.  tledb and
# dbdevdb are dumped: the dumps hold pg_tle's entries (the extension
# pg_tle, the schema pgtle and its functions that hold the edition) and
# CREATE EXTENSION of the edition's name.
# Then the same data directory runs on the full installation, the library
# preloaded, snowflake.node_id = 17:
#  - a switch that cannot complete (the C extension's node id not yet set,
#    a role that is not a superuser) changes nothing: the edition goes on;
#  - appdb switches while eight pgbench clients insert through it (single
#    and multi-row inserts through the default, direct calls, a statement
#    of twenty calls, batches): no call fails, no key repeats, every key
#    the C extension issued lies above every key of the edition, also when
#    its last keys led the clock;
#  - every database: the defaults, index, generated column, view and
#    function still refer to the same functions (same OIDs), now the C
#    extension's, whose objects equal those of a fresh CREATE EXTENSION
#    snowflake; the edition's own objects are gone, and pg_tle holds
#    nothing of it any more; the index answers as before; the text forms
#    the edition stored are the C extension's (amcheck finds every row's
#    entry in the index); new keys lie above the edition's;
#  - node18: the switch refuses (the server mints with 17) and names both;
#    with snowflake_switch.node_id = 17 it switches, and keys carry 17;
#  - keyform, whose edition holds keys of public IDs: the switch refuses
#    until the C extension's key file has the same keys (the lines the
#    page's query makes), the same one current; then the public texts the
#    edition made read as before, and the key table is gone;
#  - the dumps of tledb and dbdevdb restore onto the C extension with the
#    page's lists, without an error; the C extension keeps its comment,
#    defaults are its functions, new keys lie above the restored ones.

use strict;
use warnings;

use File::Path qw(remove_tree);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use EditionTest;
use Test::More;

my $dist = edition_root() . '/sql-edition/dist';
my %recipes = page_recipes();
my $download = download_dir();
my $install = edition_installation(edition_build());
install_fake_pgtle($install);
my $edition = start_edition_node('edition_switch', $install);

# The user's objects over the edition in schema app.
my $users_objects = q{
CREATE TABLE app.orders (
	id bigint PRIMARY KEY DEFAULT app.snowflake_nextval(),
	node int GENERATED ALWAYS AS (app.snowflake_node_id(id)) STORED,
	public_id text GENERATED ALWAYS AS (app.snowflake_to_base32(id, 'ord_')) STORED,
	n int);
CREATE INDEX orders_day ON app.orders (app.snowflake_timestamp(id));
CREATE INDEX orders_code ON app.orders (app.snowflake_to_base62(id));
CREATE VIEW app.orders_decoded AS
	SELECT o.n, d.* FROM app.orders o, app.snowflake_decode(o.id) d;
CREATE FUNCTION app.next_order() RETURNS bigint LANGUAGE sql
	RETURN app.snowflake_nextval();
CREATE TABLE app.direct (id bigint PRIMARY KEY);
INSERT INTO app.orders (n) SELECT g FROM generate_series(1, 1000) g;
};
my %node_of = (appdb => 17, extform => 17, tledb => 17, dbdevdb => 17, node18 => 18);
foreach my $db (sort keys %node_of)
{
	$edition->safe_psql('postgres', "CREATE DATABASE $db");
	$edition->safe_psql($db, 'CREATE SCHEMA app');
}
foreach my $db ('appdb', 'node18')
{
	my ($ret, undef, $stderr) = run_script($edition, $db, "$dist/snowflake-plain.sql", undef, ['SET search_path = app']);
	is($ret, 0, "$db: the plain script installs the edition") or diag($stderr);
}
$edition->safe_psql('extform', 'CREATE EXTENSION snowflake SCHEMA app');
foreach my $case ([ 'tledb', 'snowflake' ], [ 'dbdevdb', 'test@snowflake' ])
{
	my ($db, $name) = @$case;
	$edition->safe_psql($db, 'CREATE EXTENSION pg_tle');
	(my $script = slurp_file("$dist/snowflake-pgtle-install.sql")) =~ s/pgtle\.install_extension\('snowflake'/pgtle.install_extension('$name'/;
	my $file = PostgreSQL::Test::Utils::tempdir() . '/install.sql';
	open my $fh, '>', $file or die $!;
	print $fh $script;
	close $fh;
	my ($ret, undef, $stderr) = run_script($edition, $db, $file);
	is($ret, 0, "$db: pg_tle takes the edition as $name") or diag($stderr);
	materialize_pgtle($edition, $db);
	$edition->safe_psql($db, qq{CREATE EXTENSION "$name" SCHEMA app});
}
foreach my $db (sort keys %node_of)
{
	$edition->safe_psql($db, "SELECT app.snowflake_set_node_id($node_of{$db})");
	$edition->safe_psql($db, $users_objects);
}

# The OIDs the user's objects refer to.
my $refs = q{
SELECT string_agg(p.oid::regprocedure::text || '=' || p.oid, ' ' ORDER BY p.oid::regprocedure::text, d.classid)
  FROM pg_depend d JOIN pg_proc p ON d.refclassid = 'pg_proc'::regclass AND p.oid = d.refobjid
 WHERE d.deptype = 'n'
   AND p.proname IN ('snowflake_nextval', 'snowflake_node_id', 'snowflake_timestamp', 'snowflake_decode',
                     'snowflake_to_base32', 'snowflake_to_base62')
   AND d.classid IN ('pg_attrdef'::regclass, 'pg_class'::regclass, 'pg_rewrite'::regclass, 'pg_proc'::regclass)
   AND NOT (d.classid = 'pg_proc'::regclass AND d.objid IN (SELECT oid FROM pg_proc WHERE proname LIKE '%snowflake%'))};
my %before = map { $_ => $edition->safe_psql($_, $refs) } keys %node_of;
like($before{appdb}, qr/snowflake_nextval\(\)=\d+ .*snowflake_timestamp\(bigint\)=\d+/,
	"the user's objects refer to the edition's functions: $before{appdb}");

# The dumps of the extensions of pg_tle: pg_tle's entries, and the
# edition's CREATE EXTENSION.
my %dump;
foreach my $db ('tledb', 'dbdevdb')
{
	$dump{$db} = "$download/$db.dump";
	$edition->command_ok([ 'pg_dump', '-Fc', '-f', $dump{$db}, '-d', $edition->connstr($db) ], "pg_dump of $db");
	my $list = join('', `pg_restore -l $dump{$db}`);
	my $name = $db eq 'tledb' ? 'snowflake' : 'test@snowflake';
	my @entries = map { $list =~ $_ ? 1 : 0 } (
		qr/ SCHEMA - pgtle /, qr/ EXTENSION - pg_tle /, qr/ COMMENT - EXTENSION pg_tle /,
		qr/ FUNCTION pgtle "?\Q$name\E--[0-9.]+\.sql"?\(\) /, qr/ FUNCTION pgtle "?\Q$name\E\.control"?\(\) /,
		qr/ EXTENSION - "?\Q$name\E"? /, qr/ SEQUENCE SET _snowflake _snowflake_id_seq /,
		qr/ TABLE DATA _snowflake _snowflake_public_keys /);
	is("@entries", '1 1 1 1 1 1 1 1',
		"$db: the dump holds pg_tle's schema, extension and its comment, the functions that hold $name, its CREATE EXTENSION, the key sequence's value and the keys of public IDs");
}
my %dumped_max = map { $_ => $edition->safe_psql($_, 'SELECT max(id) FROM app.orders') } ('tledb', 'dbdevdb');

# A database whose edition has keys of public IDs (pgcrypto first), and a
# public text it made.
my $pid_key = '00112233445566778899aabbccddeeff0123456789abcdef0123456789abcdef';
$edition->safe_psql('postgres', 'CREATE DATABASE keyform');
$edition->safe_psql('keyform', 'CREATE SCHEMA app; CREATE EXTENSION pgcrypto');
{
	my ($ret, undef, $stderr) =
	  run_script($edition, 'keyform', "$dist/snowflake-plain.sql", undef, ['SET search_path = app']);
	is($ret, 0, 'keyform: the plain script installs the edition beside pgcrypto') or diag($stderr);
}
my $pid_text = $edition->safe_psql('keyform', qq{
SELECT app.snowflake_set_node_id(17), app.snowflake_set_public_key(1, '\\x00000000000000000000000000000001'),
       app.snowflake_set_public_key(7, '\\x$pid_key', true);
SELECT app.snowflake_to_public_base32(382958333860159488, 'ord_')});
$pid_text = (split /\n/, $pid_text)[-1];
like($pid_text, qr/^ord_7[0-9A-Z]{13}$/, "keyform: the edition makes a public text with key 7 ($pid_text)");
$edition->stop;

# The same data directory on the full installation.
my $node = PostgreSQL::Test::Cluster->new('edition_switch_c');
$node->init;
remove_tree($node->data_dir);
system('cp', '-a', $edition->data_dir, $node->data_dir) == 0 or die 'could not copy the data directory';
$node->append_conf('postgresql.conf',
	"port = " . $node->port . "\nshared_preload_libraries = 'snowflake'\nmax_connections = 40\n");
$node->start;
is($node->safe_psql('extform', 'SELECT app.snowflake_node_id(app.next_order())'), '17',
	'the edition runs on the full installation');

# Run a recipe of the page in database $db (the page's appdb), and file
# names of its own.
sub switch_recipe
{
	my ($name, $db, %more) = @_;
	my $text = $recipes{"sql-edition/$name.sh"} or die "no recipe $name";
	$text =~ s/-d appdb /-d $db /g;
	$text =~ s/\Q$_\E/$more{$_}/g foreach keys %more;
	my ($out, $err) = ('', '');
	local $ENV{PGHOST} = $node->host;
	local $ENV{PGPORT} = $node->port;
	local $ENV{PGOPTIONS};
	IPC::Run::run([ 'bash', '-e', '-o', 'pipefail', '-c', $text ], init => sub { chdir $download or die $! },
		'<', \undef, '>', \$out, '2>', \$err, IPC::Run::timeout(180));
	return ($? == 0, $out, $err);
}

# --- switches that cannot complete change nothing ---

my ($ok, $out, $err) = switch_recipe('switch', 'appdb');
ok(!$ok, 'the switch fails while the C extension has no node id');
like($err, qr/parameter "snowflake\.node_id" is not set/, 'saying so');
$node->safe_psql('postgres', 'CREATE ROLE dbowner LOGIN; ALTER DATABASE extform OWNER TO dbowner');
($ok, $out, $err) = switch_recipe('switch', 'extform', '-U postgres' => '-U dbowner');
like($err, qr/permission denied to switch to the snowflake C extension/, 'the switch needs a superuser');
is( $node->safe_psql(
		'appdb', q{
SELECT (SELECT count(*) FROM pg_extension WHERE extname = 'snowflake'),
       (SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
         WHERE p.oid = 'app.snowflake_nextval()'::regprocedure),
       to_regnamespace('_snowflake_switch') IS NULL,
       coalesce(pg_sequence_last_value('_snowflake._snowflake_state_seq'), 0) >= 0}),
	'0|plpgsql|t|t', 'the failed switch left the edition as it was');
is($node->safe_psql('appdb', 'SELECT app.snowflake_node_id(app.next_order())'), '17',
	'and it goes on issuing keys');

# --- the switch under load ---

$node->append_conf('postgresql.conf', "snowflake.node_id = 17\n");
$node->restart;
# The edition's last keys lead the clock (batches), as far as they may.
my %last = map {
	$_ => $node->safe_psql($_,
		"SELECT max(x) FROM (SELECT app.snowflake_nextval_batch(1000000) FROM generate_series(1, 3)) b(x)")
} ('appdb', 'extform');
my $scripts = PostgreSQL::Test::Utils::tempdir();
my %script = (
	'default' => 'INSERT INTO app.orders (n) VALUES (-1);',
	'default_rows' => 'INSERT INTO app.orders (n) SELECT -2 FROM generate_series(1, 10);',
	'direct' => 'INSERT INTO app.direct SELECT app.snowflake_nextval();',
	'direct_rows' => 'INSERT INTO app.direct SELECT app.snowflake_nextval() FROM generate_series(1, 20);',
	'batch' => 'INSERT INTO app.direct SELECT app.snowflake_nextval_batch(5);',
	'function' => 'INSERT INTO app.direct SELECT app.next_order();');
my %weight = (default => 5, default_rows => 2, direct => 2, direct_rows => 1, batch => 1, function => 1);
my @files;
foreach my $s (sort keys %script)
{
	open my $fh, '>', "$scripts/$s.sql" or die $!;
	print $fh "$script{$s}\n";
	close $fh;
	push @files, '-f', "$scripts/$s.sql\@$weight{$s}";
}
my $load_out = '';
my $load = IPC::Run::start(
	[
		'pgbench', '-n', '-c', 8, '-j', 2, '-T', 12, @files, '-h', $node->host, '-p', $node->port,
		'appdb'
	],
	'>', \$load_out, '2>&1', IPC::Run::timeout(300));
# The switch once the clients insert.
$node->poll_query_until('appdb', q{SELECT count(*) > 200 FROM app.orders WHERE n < 0})
  or die 'the load does not insert';
my $t0 = time();
($ok, $out, $err) = switch_recipe('switch', 'appdb');
my $took = time() - $t0;
ok($ok, 'appdb: the switch completes while eight clients insert') or diag($err);
my ($edition_last, $c_first) =
  $err =~ /NOTICE:  switched to the snowflake C extension: the SQL edition's last key was (\d+), the first of the C extension is (\d+), node id 17/;
like($err, qr/NOTICE:  the switch to the snowflake C extension is finished/, 'and finishes');
$load->finish;
like($load_out, qr/number of failed transactions: 0 /, 'pgbench: no call failed through the switch')
  or diag($load_out);
unlike($load_out, qr/aborted|ERROR/, 'no client aborted, no error');
# A call of the edition that read its state before the switch set it may
# still take a key after the switch read the last one: at most one per
# server process (B, as the switch counts them), so up to the last key
# plus B; the C extension's first key is above that.
my $stale_bound = $node->safe_psql('appdb', qq{
SELECT $edition_last + current_setting('max_connections')::int8 + current_setting('max_worker_processes')::int8
       + current_setting('max_wal_senders')::int8 + coalesce(current_setting('autovacuum_worker_slots', true), current_setting('autovacuum_max_workers'))::int8 + 16});
is( $node->safe_psql(
		'appdb', qq{
WITH k AS (SELECT id FROM app.orders WHERE n < 0 UNION ALL SELECT id FROM app.direct)
SELECT count(*) = count(DISTINCT id), count(*) FILTER (WHERE id > $stale_bound AND id < $c_first),
       count(*) FILTER (WHERE id >= $c_first) > 0, count(*) FILTER (WHERE id <= $edition_last) > 0,
       $c_first > $stale_bound, $stale_bound > $last{appdb}
  FROM k}),
	't|0|t|t|t|t',
	'every key unique; the edition\'s keys (the last one read, or up to B above it for a call under way), then the C extension\'s, above every one of them (also the leading batch)');
my $between = $node->safe_psql('appdb', qq{
SELECT count(*) FROM (SELECT id FROM app.orders WHERE n < 0 UNION ALL SELECT id FROM app.direct) k
 WHERE id > $edition_last AND id <= $stale_bound});
note("keys the edition's calls under way took after the switch read its last key: $between (at most "
	  . ($stale_bound - $edition_last) . ')');
my ($transactions) = $load_out =~ /number of transactions actually processed: (\d+)/;
note(sprintf('the switch took %d s (psql); pgbench: %s transactions, %s keys, none failed',
		$took, $transactions // '?',
		$node->safe_psql('appdb', 'SELECT (SELECT count(*) FROM app.orders WHERE n < 0) + (SELECT count(*) FROM app.direct)')));

# --- the other databases ---

foreach my $db ('extform', 'tledb', 'dbdevdb')
{
	($ok, $out, $err) = switch_recipe('switch', $db);
	ok($ok, "$db: the switch completes") or diag($err);
}
is( $node->safe_psql(
		'tledb', q{
SELECT (SELECT count(*) FROM pg_proc WHERE pronamespace = 'pgtle'::regnamespace AND proname LIKE '%snowflake%'),
       (SELECT count(*) FROM pg_extension WHERE extname = 'pg_tle')})
	  . ' '
	  . $node->safe_psql(
		'dbdevdb', q{
SELECT (SELECT count(*) FROM pg_proc WHERE pronamespace = 'pgtle'::regnamespace AND proname LIKE '%snowflake%'),
       (SELECT count(*) FROM pg_extension WHERE extname IN ('test@snowflake', 'snowflake'))}),
	'0|1 0|1',
	'pg_tle holds nothing of the edition any more (it stays); test@snowflake is gone, snowflake is the C extension');

# --- node ids ---

($ok, $out, $err) = switch_recipe('switch', 'node18');
ok(!$ok, 'node18: the switch refuses');
like($err,
	qr/ERROR:  the snowflake C extension mints with node id 17, the SQL edition with 18\n.*HINT:  To keep node id 18, set snowflake.node_id = 18 in the server's configuration and restart it. To mint with 17 from now on, run the switch with snowflake_switch.node_id = 17/s,
	'naming both node ids, and how to keep either');
is($node->safe_psql('node18', 'SELECT app.snowflake_node_id(app.next_order())'), '18',
	'the edition goes on with node id 18');
my $max18 = $node->safe_psql('node18', 'SELECT max(id) FROM app.orders');
($ok, $out, $err) = switch_recipe('switch-server-node-id', 'node18');
ok($ok, 'told to mint with the server\'s node id 17, it switches') or diag($err);
is( $node->safe_psql(
		'node18', qq{
INSERT INTO app.orders (n) SELECT 5000 + g FROM generate_series(1, 100) g;
SELECT count(*) FILTER (WHERE id > $max18), bool_and(node = 17) FROM app.orders WHERE n > 5000}),
	'100|t', 'node18: new keys above, with node id 17');

# --- every switched database ---

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
 WHERE e.extname = 'snowflake'
UNION ALL
SELECT 'extension ' || extversion || ' ' || coalesce(obj_description(oid, 'pg_extension'), '') FROM pg_extension WHERE extname = 'snowflake'
) s ORDER BY x};
# With the extension's schema in the search_path, its types and support
# function are named unqualified in either.
my $fresh = $node->safe_psql('fresh', "SET search_path = public; $objects");
foreach my $db (sort keys %node_of)
{
	my $switched = $node->safe_psql($db, "SET search_path = app; $objects");
	my %in_fresh = map { $_ => 1 } split /\n/, $fresh;
	my %in_switched = map { $_ => 1 } split /\n/, $switched;
	is($switched, $fresh, "$db: the switched extension's objects are those of a fresh install")
	  or diag(join("\n", (map { "only switched: $_" } grep { !$in_fresh{$_} } split /\n/, $switched),
			(map { "only fresh: $_" } grep { !$in_switched{$_} } split /\n/, $fresh)));
	is($node->safe_psql($db, $refs), $before{$db}, "$db: the user's objects refer to the same functions (same OIDs)");
	is( $node->safe_psql(
			$db, q{
SELECT (SELECT count(*) FROM pg_proc WHERE proname LIKE '\_snowflake\_%'),
       (SELECT count(*) FROM pg_namespace WHERE nspname IN ('_snowflake', '_snowflake_switch')),
       (SELECT count(*) FROM pg_type WHERE typname = '_snowflake_layout')}),
		'0|0|0', "$db: the edition's own objects are gone");
	is( $node->safe_psql(
			$db, q{
SET enable_seqscan = off;
SELECT count(*) FROM app.orders WHERE app.snowflake_timestamp(id) > '2000-01-01' AND n BETWEEN 1 AND 1000;
SET enable_seqscan = on; SET enable_indexscan = off; SET enable_bitmapscan = off;
SELECT count(*) FROM app.orders WHERE app.snowflake_timestamp(id) > '2000-01-01' AND n BETWEEN 1 AND 1000}),
		"1000\n1000", "$db: the index on snowflake_timestamp(id) answers as before");
	# The text forms the edition stored are the C extension's: amcheck
	# recomputes the index's expression for every row and finds each entry.
	is( $node->safe_psql(
			$db, q{
CREATE EXTENSION IF NOT EXISTS amcheck;
SELECT bt_index_check('app.orders_code', true);
SELECT count(*) = count(*) FILTER (WHERE public_id = app.snowflake_to_base32(id, 'ord_')
                                     AND app.snowflake_from_base32(public_id, 'ord_') = id)
  FROM app.orders}),
		"\nt", "$db: the generated text column and the index on snowflake_to_base62(id) hold the C extension's texts");
	my $max = $node->safe_psql($db, 'SELECT max(id) FROM app.orders WHERE n BETWEEN 1 AND 1000');
	$max = $last{$db} if $last{$db} && $last{$db} > $max;
	is( $node->safe_psql(
			$db, qq{
INSERT INTO app.orders (n) SELECT 10000 + g FROM generate_series(1, 1000) g;
SELECT count(*) FILTER (WHERE id > $max), bool_and(node = 17),
       (SELECT count(*) FROM app.orders_decoded WHERE n > 10000 AND node_id = 17), app.next_order() > $max
  FROM app.orders WHERE n > 10000}),
		'1000|t|1000|t',
		"$db: new keys, from the default and the user's function, above the edition's; generated column and view work");
}

# --- public IDs: the switch keeps the keys, or refuses ---

($ok, $out, $err) = switch_recipe('switch', 'keyform');
ok(!$ok, 'keyform: the switch fails while the C extension has not the edition\'s keys of public IDs');
like($err, qr/ERROR:  the snowflake C extension does not have the SQL edition's public ID key 1\n/,
	'naming the first key it lacks');
like($err, qr/DETAIL:  The public IDs made with it would no longer read after the switch\.\nHINT:  Write the edition's keys into the key file that snowflake\.public_keys_file names \(docs\/deployment\/sql-edition\.md, "Public IDs"\), then run the switch again\./,
	'saying what to do');
# The key file's lines from the page's query, as a superuser; first with
# the wrong key current.
my ($key_query) = slurp_file(edition_root() . '/docs/deployment/sql-edition.md') =~ /whose lines this query makes, as a superuser: `([^`]+)`/;
die 'no key file query on the page' unless defined $key_query;
$key_query =~ s/\s+/ /g;
my $lines = $node->safe_psql('keyform', $key_query);
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
($ok, $out, $err) = switch_recipe('switch', 'keyform');
ok(!$ok, 'keyform: the switch fails while another key is current');
like($err, qr/ERROR:  the snowflake C extension does not have the SQL edition's public ID key 7 as its current key\n/,
	'naming the key that should be current');
is( $node->safe_psql(
		'keyform', q{
SELECT count(*), (SELECT count(*) FROM pg_extension WHERE extname = 'snowflake'),
       to_regnamespace('_snowflake_switch') IS NULL
  FROM _snowflake._snowflake_public_keys}),
	'2|0|t', 'and the edition keeps its keys, as it was');
write_key_file($lines . "\n");
($ok, $out, $err) = switch_recipe('switch', 'keyform');
ok($ok, 'keyform: with the same keys the switch completes') or diag($err);
is( $node->safe_psql(
		'keyform', qq{
SELECT app.snowflake_from_public_base32('$pid_text', 'ord_'), to_regnamespace('_snowflake') IS NULL,
       (SELECT l.lanname FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
         WHERE p.oid = 'app.snowflake_from_public_base32(text, text)'::regprocedure)}),
	'382958333860159488|t|c',
	'keyform: the public text the edition made reads with the C extension, and the key table is gone');

# --- by dump and restore ---

foreach my $db ('tledb', 'dbdevdb')
{
	my $new = "moved_$db";
	$node->safe_psql('postgres', "CREATE DATABASE $new");
	($ok, $out, $err) = switch_recipe('move-by-dump', $new, 'appdb.dump' => $dump{$db}, ' newdb ' => " $new ",
		'-d newdb' => "-d $new");
	ok($ok, "$db: its dump restores onto the C extension with the page's lists, without an error") or diag($err);
	is( $node->safe_psql(
			$new, qq{
INSERT INTO app.orders (n) SELECT 20000 + g FROM generate_series(1, 100) g;
SELECT count(*) FILTER (WHERE n > 20000 AND id > $dumped_max{$db}), bool_and(node = 17),
       (SELECT count(*) FROM app.orders_decoded),
       (SELECT l.lanname FROM pg_attrdef a JOIN pg_depend d ON d.classid = 'pg_attrdef'::regclass AND d.objid = a.oid
          JOIN pg_proc p ON d.refclassid = 'pg_proc'::regclass AND p.oid = d.refobjid
          JOIN pg_language l ON l.oid = p.prolang
         WHERE a.adrelid = 'app.orders'::regclass AND p.proname = 'snowflake_nextval')
  FROM app.orders}),
		'100|t|1100|c',
		"$db: restored onto the C extension: the default is the C function, new keys above the dumped ones");
	is($node->safe_psql($new, "SELECT obj_description(oid, 'pg_extension') FROM pg_extension WHERE extname = 'snowflake'"),
		$node->safe_psql('fresh', "SELECT obj_description(oid, 'pg_extension') FROM pg_extension WHERE extname = 'snowflake'"),
		"$db: the C extension keeps its own comment");
}

$node->stop;
done_testing();
