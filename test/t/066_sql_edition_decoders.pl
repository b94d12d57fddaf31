# Copyright: see LICENSE
#
# 066_sql_edition_decoders.pl
#	The SQL edition has the C extension's interface and reads keys as it
#	does: both on one server, the C extension in one database, the
#	edition (its plain script, generated from sql-edition/src) in another.
#
#  - Interface: every function of the C extension that an application or
#    a schema calls exists in the edition with the same name, arguments,
#    result and volatility; what the edition leaves out is exactly the list
#    of docs/deployment/sql-edition.md.
#  - Every function's PARALLEL label is true of its body: a PARALLEL SAFE
#    or RESTRICTED one starts no subtransaction (no EXCEPTION block) and
#    calls no function less safe than itself (what a SQL-standard body was
#    bound to, what a PL/pgSQL body names); the same check finds the
#    mislabels of the released 1.2, and a query over the IDs that a
#    parallel plan runs fails on 1.2 (on 15 and 16; 17 allows a
#    subtransaction in parallel mode) and works now.
#  - A million random 63-bit IDs decoded by the scalar decoders in the
#    server's layout, and the first 200,000 of them in every preset and a
#    set of spelled-out layouts (a digest of every row), and by
#    snowflake_decode() (every row's text):
#    equal in both databases; likewise random times through
#    snowflake_min_id(), snowflake_max_id() and snowflake_compose().  The
#    queries over the million IDs run twice, with the server's default
#    parallel settings (the planner picks parallel scans of the table) and
#    with parallel plans forced (debug_parallel_query, force_parallel_mode
#    on 15, no cost for a worker): nothing turns parallelism off.
#  - The edges, each call compared whole, result or error (SQLSTATE,
#    message, detail and hint): IDs 0, the largest, NULL, negative, the
#    last one a timestamptz can hold and the first past it; times at and
#    beyond each end of each layout's field, infinite, NULL; fields out of
#    range; and a corpus of layouts the parser must accept or refuse with
#    the same detail.
#  - The text forms (docs/text-forms.md): 200,000 random IDs of every
#    length through every form's encoder and decoder, with and without a
#    prefix, a digest of every text and ID equal in both databases; every
#    error path and the texts around it, each call compared whole, with
#    constants and with columns; sql/textform.sql through psql gives
#    expected/textform.out in the edition (fewer random IDs), as 039
#    checks the C extension; and the Perl oracle of
#    test/t/TextFormTest.pm agrees with the edition.
#  - Public IDs (docs/public-ids.md), pgcrypto's AES in the edition against
#    libcrypto's in the C extension: sql/publicid.sql through psql gives
#    expected/publicid.out in the edition (fewer random IDs); random IDs
#    under keys of the three lengths, as arguments and configured (a key
#    file for the C extension, snowflake_set_public_key() for the edition),
#    and their public texts, a digest equal in both; every error, each call
#    compared whole, the hints that say where keys are configured aside;
#    the edition's key table out of reach of other roles; the edition
#    installed before pgcrypto.
#  - An edition generated for another layout and epoch (--layout,
#    --epoch) against a server configured with them.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use EditionTest;
use Encode qw(encode);
use IPC::Run;
use TextFormTest;
use Test::More;

my $node = start_snowflake_node('edition_decoders', node_id => 1);
my $build = edition_build();
my $server_version = $node->safe_psql('postgres', 'SHOW server_version_num');
# Parallel plans wherever a query allows one.
my $forced = ($server_version >= 160000 ? 'SET debug_parallel_query = on;' : 'SET force_parallel_mode = on;')
  . ' SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;'
  . ' SET max_parallel_workers_per_gather = 4;';
my @modes = ([ 'default settings', '' ], [ 'parallel plans forced', $forced ]);
# UTF8, so that the text forms count characters of more than one byte.
$node->safe_psql('postgres', "CREATE DATABASE c TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'");
$node->safe_psql('postgres', "CREATE DATABASE sqled TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'");
$node->safe_psql('c', 'CREATE EXTENSION snowflake');
# Public IDs encrypt with pgcrypto's AES, bound when the edition is
# installed after it (the other order is tested below).
$node->safe_psql('sqled', 'CREATE EXTENSION pgcrypto');
my ($ret, undef, $stderr) = run_script($node, 'sqled', "$build/snowflake-plain.sql");
is($ret, 0, 'the plain script installs the edition') or diag($stderr);

# --- the interface ---

my $signatures = q{
SELECT p.proname || '(' || pg_get_function_identity_arguments(p.oid) || ') '
       || pg_get_function_result(p.oid) || ' ' || p.provolatile::text
  FROM pg_proc p
 WHERE p.pronamespace = 'public'::regnamespace AND p.proname LIKE 'snowflake\_%'
 ORDER BY 1};
my %c_functions = map { $_ => 1 } split /\n/, $node->safe_psql('c', $signatures);
my %sql_functions = map { $_ => 1 } split /\n/, $node->safe_psql('sqled', $signatures);
# What the edition leaves out (docs/deployment/sql-edition.md): statistics,
# the layout adoption, the fleet's node claims, the key conversion, and the
# adoption or confirmation of a node id (the edition's node id is set by
# snowflake_set_node_id(), not derived or restored; its keys of public IDs
# by snowflake_set_public_key(), not read from a file).
my @absent = grep { /^snowflake_(?:stats|stats_all|stats_reset|adopt_layout|adopt_node_id|confirm_restore|claim_node|unclaim_node|node_claims_guard|convert_column)\(/ }
  sort keys %c_functions;
is(scalar(@absent), 10, 'the C extension has the 10 functions the edition leaves out');
my @missing = grep { !$sql_functions{$_} } grep { my $f = $_; !grep { $_ eq $f } @absent } sort keys %c_functions;
is_deeply(\@missing, [],
	'every other function of the C extension is in the edition, with its arguments, result and volatility');
is_deeply([ grep { !$c_functions{$_} } sort keys %sql_functions ],
	[
		'snowflake_set_node_id(node_id integer) integer v',
		'snowflake_set_public_key(key_id integer, key bytea, current boolean) integer v'
	],
	'the edition adds only snowflake_set_node_id() and snowflake_set_public_key()');

# --- parallel labels ---

# Every function of the edition whose PARALLEL label its body belies: a
# SAFE or RESTRICTED PL/pgSQL function with an EXCEPTION block (it starts a
# subtransaction, which no query in parallel mode may), or one that calls
# a function less safe than itself: what a SQL-standard body was bound to
# (pg_depend), what a PL/pgSQL body names, with as many arguments (every
# function of that name and number of arguments in pg_catalog or the
# edition's schema counts, the least safe deciding; every function of the
# name where none takes that many).
sub mislabelled
{
	my ($node, $db) = @_;
	my %rank = (s => 0, r => 1, u => 2);
	my %by_name;
	foreach my $row (split /\n/, $node->safe_psql(
			$db, q{
SELECT p.proname, p.pronargs, p.pronargdefaults, p.proparallel
  FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
 WHERE n.nspname IN ('pg_catalog', 'public')}))
	{
		my ($name, $nargs, $defaults, $label) = split /\|/, $row;
		push @{ $by_name{$name} }, [ $nargs - $defaults, $nargs, $label ];
	}
	my @problems = grep { length } split /\n/, $node->safe_psql(
		$db, q{
SELECT f.oid::regprocedure::text || ' (' || f.proparallel::text || ') calls ' || c.oid::regprocedure::text
       || ' (' || c.proparallel::text || ')'
  FROM pg_proc f JOIN pg_depend d ON d.classid = 'pg_proc'::regclass AND d.objid = f.oid
                                  AND d.refclassid = 'pg_proc'::regclass
  JOIN pg_proc c ON c.oid = d.refobjid
 WHERE f.pronamespace = 'public'::regnamespace AND f.proname ~ '^_?snowflake_'
   AND (f.proparallel = 's' AND c.proparallel <> 's' OR f.proparallel = 'r' AND c.proparallel = 'u')});
	foreach my $row (split /\n/, $node->safe_psql(
			$db, q{
SELECT p.oid::regprocedure::text || '|' || p.proparallel::text || '|' || encode(convert_to(p.prosrc, 'UTF8'), 'hex')
  FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
 WHERE p.pronamespace = 'public'::regnamespace AND p.proname ~ '^_?snowflake_'
   AND l.lanname = 'plpgsql' AND p.proparallel <> 'u'}))
	{
		my ($sig, $label, $hex) = split /\|/, $row;
		my $src = pack('H*', $hex);
		push @problems, "$sig ($label) has an EXCEPTION block" if $src =~ /\bEXCEPTION\s+WHEN\b/i;
		(my $code = $src) =~ s/--[^\n]*//g;
		$code =~ s/'(?:[^']|'')*'/''/g;
		while ($code =~ /\b([A-Za-z_][A-Za-z0-9_]*)\s*\(/g)
		{
			my ($name, $at) = ($1, pos($code));
			next unless $by_name{$name};
			my ($depth, $args, $i, $empty) = (1, 0, $at, 1);
			for (; $i < length $code && $depth > 0; $i++)
			{
				my $c = substr($code, $i, 1);
				$depth++ if $c eq '(';
				$depth-- if $c eq ')';
				$args++ if $c eq ',' && $depth == 1;
				$empty = 0 if $depth > 0 && $c =~ /\S/;
			}
			my $n = $empty ? 0 : $args + 1;
			my @fit = grep { $_->[0] <= $n && $n <= $_->[1] } @{ $by_name{$name} };
			@fit = @{ $by_name{$name} } unless @fit;
			my ($worst) = sort { $rank{$b} <=> $rank{$a} } map { $_->[2] } @fit;
			push @problems, "$sig ($label) calls $name with $n arguments ($worst)" if $rank{$worst} > $rank{$label};
		}
	}
	my %seen;
	return join("\n", sort grep { !$seen{$_}++ } @problems);
}
is(mislabelled($node, 'sqled'), '', 'every function\'s PARALLEL label is true of its body');

# The released 1.2 beside it.
$node->safe_psql('postgres', 'CREATE DATABASE ed12');
($ret, undef, $stderr) = run_script($node, 'ed12',
	plain_from_extension_script(edition_root() . '/sql-edition/dist/extension/snowflake--1.2.sql', 'public'));
is($ret, 0, 'the released 1.2 installs beside it') or diag($stderr);
like(mislabelled($node, 'ed12'),
	qr/^_snowflake_layout_parse\(text\) \(s\) has an EXCEPTION block$/m,
	'the check finds what 1.2 labels wrong (a subtransaction in a PARALLEL SAFE function)');

# --- a million random IDs ---

my $ids = q{
SET TimeZone = 'UTC';
SELECT setseed(0.38);
CREATE TABLE ids AS
SELECT i, floor(random() * 2147483648)::int8 << 32 | floor(random() * 4294967296)::int8 AS id
  FROM generate_series(1, 1000000) i;
SELECT count(DISTINCT id) FROM ids};
is($node->safe_psql('c', $ids), $node->safe_psql('sqled', $ids),
	'the same million random IDs in both databases');
$node->safe_psql('ed12', $ids =~ s/1000000/2000/r);

# Parallel plans: the planner picks one for a query over the million IDs
# with its default settings, and everywhere it can when they are forced.
foreach my $mode (@modes)
{
	my ($how, $set) = @$mode;
	like( $node->safe_psql(
			'sqled', "$set EXPLAIN (COSTS OFF)
SELECT count(*) FROM ids
 WHERE snowflake_sequence(id) > 100 AND snowflake_from_base32(snowflake_to_base32(id)) = id"),
		qr/Gather/, "$how: the plan of a query over the million IDs is a parallel one");
}
# The query of issue 45: it fails in the released 1.2, whose layout
# parser is PARALLEL SAFE and starts a subtransaction, when it runs in a
# parallel plan (the costs of one set to nothing are enough); it works
# now, with either settings.  (Over 2,000 of them: the edition parses a
# spelled-out layout on every call of snowflake_decode(), and on 15 no
# parallel plan shares the work.)
my $costs = $forced =~ s/SET (?:debug_parallel_query|force_parallel_mode) = on;//r;
my $issue = q{
SELECT count(*) FROM ids, snowflake_decode(id, 'epoch=0; fields=timestamp:40,x:3,sequence:20') d
 WHERE d.sequence >= 0 AND i <= 2000};
if ($server_version < 170000)
{
	like(report_in($node, 'ed12', "$costs $issue"),
		qr/^25000: cannot start subtransactions during a parallel operation/,
		'1.2 fails over the IDs in a parallel plan');
}
else
{
	# 17 allows a subtransaction in parallel mode (0075d78): 1.2's
	# mislabel fails no query there.
	is(report_in($node, 'ed12', "$costs $issue"), 'none',
		'1.2 does not fail over the IDs in a parallel plan on 17 and later, which allow subtransactions in parallel mode');
}
is($node->safe_psql('sqled', "$costs $issue") . ' ' . $node->safe_psql('sqled', $issue),
	'2000 2000', 'the edition does not, parallel plans forced or not');

# Each layout: every preset, the server's own split, spelled-out layouts
# (units, the sequence above the node field, four parts, an epoch before
# 1970 and one of year 0, a 64-bit spelling), and a layout whose times pass
# the end of timestamptz (both must fail on the same row with the same
# error).
my @layouts = (
	undef, 'twitter', 'discord', 'instagram', 'sonyflake', 'mastodon', 'pgedge', 'server',
	'server; fields=timestamp:41,region:3,host:7,sequence:12',
	'epoch=2015-01-01; fields=timestamp:42,worker:5,process:5,sequence:12',
	'sonyflake; epoch=2020-01-01',
	'Discord ; fields = timestamp:42, process:5, worker:5, sequence:12',
	'epoch=1969-07-20 20:17:40+00; unit=1000ms; fields=timestamp:33,a:2,b:3,c:4,d:5,sequence:16',
	'epoch=-62167219200000; unit=7; fields=timestamp:44,sequence:9,node:10',
	'epoch=0; fields=timestamp:64',
	'epoch=2030-01-01 12:00:00+05:30; fields=timestamp:32,sequence:31');
foreach my $layout (@layouts)
{
	my $arg = defined $layout ? ", '$layout'" : '';
	my $name = $layout // 'the server layout';
	# The server's layout over the million IDs, every other over the first
	# 200,000 (the million through the 15 others took four minutes of a
	# CI stage, in four stages at once).
	my $n = defined $layout ? 200000 : 1000000;
	my $digest = qq{
SELECT bit_xor(hashint8extended(
	timestamp_hash(snowflake_timestamp(id$arg) AT TIME ZONE 'UTC')::int8 * 1000003
	+ snowflake_node_id(id$arg) * 4099 + snowflake_sequence(id$arg), i))
  FROM ids WHERE i <= $n};
	my $rows = defined $layout ? 5000 : 200000;
	my $decoded = qq{
SET TimeZone = 'UTC';
SELECT md5(string_agg(d::text, ',' ORDER BY i))
  FROM (SELECT * FROM ids WHERE i <= $rows) s, snowflake_decode(id$arg) d};
	foreach my $mode (@modes)
	{
		my ($how, $set) = @$mode;
		# A layout whose times pass the end of timestamptz fails in both:
		# with a parallel scan on whichever row a worker meets first, so
		# the error is compared without its detail here (the edge calls
		# below compare it whole, row by row).
		my $c_outcome = outcome_in($node, 'c', $set . $digest);
		my $sql_outcome = outcome_in($node, 'sqled', $set . $digest);
		s/\n.*//s foreach grep { /^ERROR/ } ($c_outcome, $sql_outcome);
		is($sql_outcome, $c_outcome,
			"$name, $how: the scalar decoders agree on $n IDs"
			  . ($c_outcome =~ /^ERROR/ ? ' (the same error)' : ''));
		# snowflake_decode() with a spelled-out layout parses it on every
		# call, in PL/pgSQL: debug_parallel_query (force_parallel_mode on
		# 15) would plan each statement of the parser as a parallel query
		# too, starting a worker for each (hours on 15, where PERFORM of the
		# time input's check is one); the costs of a parallel plan set to
		# nothing are enough to make the outer query a parallel one.
		my $set_decoded = defined $layout ? $set =~ s/SET (?:debug_parallel_query|force_parallel_mode) = on;//r : $set;
		$c_outcome = outcome_in($node, 'c', $set_decoded . $decoded);
		$sql_outcome = outcome_in($node, 'sqled', $set_decoded . $decoded);
		s/\n.*//s foreach grep { /^ERROR/ } ($c_outcome, $sql_outcome);
		is($sql_outcome, $c_outcome, "$name, $how: snowflake_decode() agrees on $rows IDs");
	}
}

# A layout that is not a constant (a column): parsed per row.
my $column = q{
SET TimeZone = 'UTC';
SELECT md5(string_agg(snowflake_timestamp(id, l)::text || snowflake_node_id(id, l)
                      || snowflake_sequence(id, l), ',' ORDER BY i, l))
  FROM (SELECT * FROM ids WHERE i <= 2000) s,
       (VALUES ('twitter'), ('instagram'), ('epoch=0; fields=timestamp:40,x:3,sequence:20')) v(l)};
is($node->safe_psql('sqled', $column), $node->safe_psql('c', $column),
	'a layout given as a column: the same results');

# Random times through the bounds and compose, for each layout within its
# field (fields at random within their widths).
foreach my $layout (grep { defined && !/timestamp:64/ } @layouts)
{
	# The layout a constant, as it usually is: parsed once.
	my $bounds = qq{
SELECT setseed(0.5);
SELECT bit_xor(hashint8extended(snowflake_min_id(t, '$layout') # snowflake_max_id(t, '$layout')
                                # snowflake_compose(t, n, s, '$layout'), g))
  FROM (SELECT g,
               snowflake_timestamp(0, '$layout') + random() * least(interval '60 years',
                   snowflake_timestamp(9223372036854775807, '$layout') - snowflake_timestamp(0, '$layout')) AS t,
               floor(random() * (snowflake_node_id(9223372036854775807, '$layout')::int8 + 1))::int AS n,
               floor(random() * (snowflake_sequence(9223372036854775807, '$layout')::int8 + 1))::int AS s
          FROM generate_series(1, 20000) g) r};
	is($node->safe_psql('sqled', $bounds), $node->safe_psql('c', $bounds),
		"$layout: snowflake_min_id(), snowflake_max_id() and snowflake_compose() agree on 20000 times");
}
my $server_bounds = q{
SELECT setseed(0.5);
SELECT bit_xor(hashint8extended(snowflake_min_id(t) # snowflake_max_id(t)
                                # snowflake_compose(t, n, s), g))
  FROM (SELECT g, timestamptz '2024-01-01 00:00:00+00' + (random() * 69 * 365.25) * interval '1 day' AS t,
               floor(random() * 1024)::int AS n, floor(random() * 4096)::int AS s
          FROM generate_series(1, 200000) g) r};
is($node->safe_psql('sqled', $server_bounds), $node->safe_psql('c', $server_bounds),
	'the server layout: the bounds and compose agree on 200000 times');

# --- the edges, each call compared whole ---

my $try = q{
CREATE FUNCTION try(q text) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    r text;
    st text;
    m text;
    d text;
    h text;
BEGIN
    EXECUTE 'SELECT (' || q || ')::text' INTO r;
    RETURN coalesce(r, 'NULL');
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS st = RETURNED_SQLSTATE, m = MESSAGE_TEXT,
        d = PG_EXCEPTION_DETAIL, h = PG_EXCEPTION_HINT;
    RETURN 'ERROR ' || st || ': ' || m || ' | ' || coalesce(d, '') || ' | ' || coalesce(h, '');
END
$$};
$node->safe_psql($_, $try) foreach ('c', 'sqled');

my @edge_ids = ('0', '1', '4095', '4096', '4194303', '4194304', '1099511627775',
	'4611686018427387904', '9223372036854775807', '9224318015999999', '9224318016000000',
	'-1', '-9223372036854775808', 'NULL::int8');
my @edge_times = (
	q{'-infinity'}, q{'infinity'}, q{'4713-01-01 00:00:00+00 BC'}, q{'1970-01-01 00:00:00+00'},
	q{'1969-12-31 23:59:59.999999+00'}, q{'2000-01-01 00:00:00+00'},
	q{'2023-12-31 23:59:59.999999+00'}, q{'2024-01-01 00:00:00+00'},
	q{'2024-01-01 00:00:00.000999+00'}, q{'2093-09-06 15:47:35.551+00'},
	q{'2093-09-06 15:47:35.551999+00'}, q{'2093-09-06 15:47:35.552+00'},
	q{'6429-10-17 02:45:55.327+00'}, q{'294276-12-31 23:59:59.999999+00'}, 'NULL::timestamptz');
my @calls;
foreach my $layout (@layouts, 'NULL')
{
	my $arg = !defined $layout ? '' : $layout eq 'NULL' ? ', NULL::text' : ", '$layout'";
	foreach my $id (@edge_ids)
	{
		# A negative ID with a layout the parser refuses fails in both, with
		# a different error (the edition parses a constant layout first).
		push @calls, "snowflake_$_($id$arg)" foreach ('timestamp', 'node_id', 'sequence', 'decode');
	}
	foreach my $t (@edge_times)
	{
		push @calls, "snowflake_min_id($t$arg)", "snowflake_max_id($t$arg)",
		  "snowflake_compose($t, 0, 0$arg)",
		  "snowflake_compose($t, 2147483647, 0$arg)",
		  "snowflake_compose($t, 0, 2147483647$arg)";
	}
	foreach my $fields ('-1, 0', '0, -1', '1023, 4095', '1024, 0', '0, 4096', '65535, 255',
		'65536, 0', '0, 256', '8191, 1023', '8192, 1023', 'NULL, 0', '0, NULL')
	{
		push @calls, "snowflake_compose('2024-06-01 12:00:00.5+00', $fields$arg)";
	}
}
# Layouts the parser must refuse (or accept) with the same detail.
foreach my $layout (
	'', ' ', ';', ' ; ;', 'x' x 401, ' twitter' . (' ' x 400), 'unknown', 'twitter; discord',
	'epoch=5; twitter', 'twitter; epoch=5; epoch=6', 'twitter; fields=timestamp:41',
	'twitter;unit=10;unit=10', 'epoch=0', 'fields=timestamp:41', 'bogus=1', '=1',
	'EPOCH=0; FIELDS=timestamp:41', 'epoch=0; fields=Timestamp:41',
	'epoch=0; fields=timestamp', 'epoch=0; fields=timestamp:0', 'epoch=0; fields=timestamp:65',
	'epoch=0; fields=timestamp:64', 'epoch=0; fields=timestamp:41,sequence:32',
	'epoch=0; fields=timestamp:41,sequence:0', 'epoch=0; fields=timestamp:41,sequence:-3',
	'epoch=0; fields=timestamp:41,sequence:+3', 'epoch=0; fields=timestamp:41,sequence:03',
	'epoch=0; fields=timestamp:41,sequence: 3 ', 'epoch=0; fields=timestamp:41,sequence:3x',
	'epoch=0; fields=timestamp:41,,sequence:3', 'epoch=0; fields=', 'epoch=0; fields=,',
	'epoch=0; fields=sequence:3,timestamp:41', 'epoch=0; fields=timestamp:41,timestamp:3',
	'epoch=0; fields=timestamp:41,sequence:3,sequence:3', 'epoch=0; fields=timestamp:41,a:3,a:4',
	'epoch=0; fields=timestamp:30,a:1,b:1,c:1,d:1,e:1', 'epoch=0; fields=timestamp:30,a:16,b:16',
	'epoch=0; fields=timestamp:30,a:1,sequence:3,b:1', 'epoch=0; fields=timestamp:40,Node:3',
	'epoch=0; fields=timestamp:40,9node:3', 'epoch=0; fields=timestamp:40,_n9:3',
	'epoch=0; fields=timestamp:40,' . ('n' x 31) . ':3', 'epoch=0; fields=timestamp:40,' . ('n' x 32) . ':3',
	'epoch=0; fields=timestamp:40,node 3', 'epoch=0; fields=timestamp:40, node : 3 ',
	'epoch=0; fields=timestamp:33,a:31,sequence:1', 'epoch=0; fields=timestamp:2,a:31,sequence:31',
	'epoch=0; fields=timestamp:3,a:31,sequence:31', 'epoch=253402300799999; fields=timestamp:41',
	'epoch=253402300800000; fields=timestamp:41', 'epoch=-62167219200000; fields=timestamp:41',
	'epoch=-62167219200001; fields=timestamp:41', 'epoch=99999999999999999999; fields=timestamp:41',
	'epoch=-; fields=timestamp:41', 'epoch=+5; fields=timestamp:41', 'epoch=now; fields=timestamp:41',
	'epoch=Today; fields=timestamp:41', 'epoch=2020-01-01 now; fields=timestamp:41',
	'epoch=knowledge; fields=timestamp:41', 'epoch=tomorrowland; fields=timestamp:41',
	'epoch=yesterday 10:00; fields=timestamp:41', 'epoch=infinity; fields=timestamp:41',
	'epoch=2020-01-01 00:00:00.0005; fields=timestamp:41', 'epoch=2020-13-01; fields=timestamp:41',
	'epoch=2020-01-01 00:00:00 Mars/Olympus; fields=timestamp:41', 'epoch=epoch; fields=timestamp:41',
	'epoch=2020-01-01 America/New_York; fields=timestamp:41', 'epoch=J2451545; fields=timestamp:41',
	'epoch=0; unit=0; fields=timestamp:41', 'epoch=0; unit=86400001; fields=timestamp:41',
	'epoch=0; unit=86400000ms; fields=timestamp:41', 'epoch=0; unit=10 ms; fields=timestamp:41',
	'epoch=0; unit=10MS; fields=timestamp:41', 'epoch=0; unit=000000000010; fields=timestamp:41',
	'epoch=0; unit=-1; fields=timestamp:41', 'epoch=0; unit=1.5; fields=timestamp:41',
	'server; epoch=0', 'server; unit=10', 'server; fields=timestamp:41,sequence:12,node:10',
	'server; fields=timestamp:41,node:10,sequence:12', 'server; fields=timestamp:40,node:10,sequence:12',
	'server; fields=timestamp:41,a:5,b:6,sequence:12', 'SERVER', 'server ;', 'server;server',
	"twitter\t;\n", 'twitter;;;', 'serverx')
{
	(my $quoted = $layout) =~ s/'/''/g;
	push @calls, "snowflake_timestamp(4194304, E'" . ($quoted =~ s/\t/\\t/gr =~ s/\n/\\n/gr) . "')";
}
my $corpus = join(",\n", map { my $q = $_ =~ s/'/''/gr; "('$q')" } @calls);
my $edges = qq{
SET TimeZone = 'UTC';
SELECT replace(c || ' => ' || try(c), E'\n', '\\n') FROM (VALUES $corpus) v(c)};
my @c_edges = split /\n/, $node->safe_psql('c', $edges);
my @sql_edges = split /\n/, $node->safe_psql('sqled', $edges);
is(scalar(@sql_edges), scalar(@calls), scalar(@calls) . ' edge calls made in the edition');
my @differ = grep { $c_edges[$_] ne $sql_edges[$_] } 0 .. $#c_edges;
is(scalar(@differ), 0, 'every edge call: the same result or the same error, whole')
  or diag(join("\n", map { "C:   $c_edges[$_]\nSQL: $sql_edges[$_]" } @differ[ 0 .. ($#differ < 19 ? $#differ : 19) ]));
cmp_ok(scalar(grep { / => ERROR / } @c_edges), '>', 200,
	'the corpus reaches the errors (' . scalar(grep { / => ERROR / } @c_edges) . ' calls fail)');

# --- the text forms ---

my @forms = qw(base32 base62 base58 base36 hex);
my $largest = '9223372036854775807';

# The text forms have the C functions' attributes (docs/deployment/sql-edition.md
# names no difference): IMMUTABLE, STRICT, PARALLEL SAFE.
my $attributes = q{
SELECT string_agg(p.oid::regprocedure::text || ' ' || p.provolatile::text || ' ' || p.proisstrict::text
                  || ' ' || p.proparallel::text, ', ' ORDER BY p.oid::regprocedure::text)
  FROM pg_proc p
 WHERE p.pronamespace = 'public'::regnamespace AND p.proname ~ '^snowflake_(to|from)_(base32|base62|base58|base36|hex)$'};
my $c_attributes = $node->safe_psql('c', $attributes);
is(scalar(() = $c_attributes =~ / i true s(?:, |$)/g), 20, 'the C extension has 20 text-form functions, IMMUTABLE STRICT PARALLEL SAFE');
is($node->safe_psql('sqled', $attributes), $c_attributes, 'the edition\'s text forms have the same attributes');

# 200,000 random IDs of every length (63 random bits shifted right by 0
# to 63 bits), through every form's encoder and decoder; every fourth also
# with the prefix 'ord_', every fourth decoded in the other case where the
# form reads either.  A digest of every text and every decoded ID, which
# must be equal in both databases, and the rows whose decoding is not the
# ID, none.
foreach my $form (@forms)
{
	my $other_case = { base32 => 'lower(e)', base36 => 'upper(e)', hex => 'upper(e)' }->{$form} // 'e';
	my $round_trips = qq{
SELECT count(*) FILTER (WHERE d <> x) || ' ' || count(*) FILTER (WHERE dp <> x) || ' '
       || count(*) FILTER (WHERE dc <> x) || ' ' || count(p) || ' ' || count(dc) || ' '
       || bit_xor(hashtextextended(e, i) # coalesce(hashtextextended(p, i), 0)
                  # hashint8extended(d, i) # coalesce(hashint8extended(dp, -i), 0)
                  # coalesce(hashint8extended(dc, i + 1), 0))
  FROM (SELECT i, x, e, p, snowflake_from_$form(e) AS d, snowflake_from_$form(p, 'ord_') AS dp,
               CASE WHEN i % 4 = 1 THEN snowflake_from_$form($other_case) END AS dc
          FROM (SELECT i, x, snowflake_to_$form(x) AS e,
                       CASE WHEN i % 4 = 0 THEN snowflake_to_$form(x, 'ord_') END AS p
                  FROM (SELECT i, id >> (i % 64)::int AS x FROM ids WHERE i <= 200000) s OFFSET 0) t OFFSET 0) u};
	foreach my $mode (@modes)
	{
		my ($how, $set) = @$mode;
		my $c_outcome = $node->safe_psql('c', $set . $round_trips);
		like($c_outcome, qr/^0 0 0 50000 50000 -?\d+$/, "$form, $how: 200,000 IDs round trip in the C extension");
		is($node->safe_psql('sqled', $set . $round_trips), $c_outcome,
			"$form, $how: the same texts and IDs in the edition, 200,000 round trips");
	}
}

# Every error path and the texts around them, each call compared whole
# (result or SQLSTATE, message, detail and hint): per form, the largest ID's
# text and its changes (another case, a digit more or less, the largest
# digit throughout, a leading zero, spaces, a sign, "0x", characters of two
# and three bytes, hyphens and Crockford's aliases), without a prefix, with
# 'ord_' and with the empty one; texts that miss the prefix or end inside
# it; prefixes that are not allowed; the encoders' IDs at the edges with
# the same prefixes; NULL everywhere.  Each call with constants (decoded
# while planning), with columns, and with a constant text and a column
# prefix and the other way round.
sub sql_literal
{
	my ($s) = @_;
	return 'NULL' unless defined $s;
	return "'" . ($s =~ s/'/''/gr) . "'";
}
my %alphabet = (
	base32 => '0123456789ABCDEFGHJKMNPQRSTVWXYZ',
	base62 => '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
	base58 => '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz',
	base36 => '0123456789abcdefghijklmnopqrstuvwxyz',
	hex => '0123456789abcdef');
# [form, 'to' or 'from', ID or text, prefix]: a prefix of undef is none,
# and a NULL argument is \'NULL'.
my $null = \'NULL';
my @args;
foreach my $form (@forms)
{
	my $alpha = $alphabet{$form};
	my ($zero, $one, $last) = (substr($alpha, 0, 1), substr($alpha, 1, 1), substr($alpha, -1));
	my $top = text_form_encode($form, $largest);
	my @texts = (
		$top, lc $top, uc $top, map({ text_form_encode($form, $_) } 0, 1, 4095, '291226324712820778'),
		'', ' ', " $top", "$top ", "$top\t", "$top$zero", "$top$one", $one . $top, substr($top, 1),
		substr($top, 0, -1), $last x length($top), $last x 20, $one x 40, $zero . $one, $zero x 2,
		$zero, $one, "\x{e9}$top", "$top\x{65e5}", substr($top, 0, 3) . "\x{df}" . substr($top, 4),
		"-$top", substr($top, 0, 5) . '-' . substr($top, 5), '-' x 13, '--' . $top . '-',
		qw(I i l L O o U u +1 -1 1.5 ' \\ % _ *), "a\nb", "0x$top", '0000000XoIlZ5',
		'0000000X01-1Z5', '7ZZ-ZZZ-ZZZ-ZZZ-Z', '8000000000000', '800000000000U', 'X8000000000000U');
	foreach my $t (@texts)
	{
		push @args, [ $form, 'from', $t, undef ], [ $form, 'from', $t, '' ],
		  [ $form, 'from', "ord_$t", 'ord_' ];
	}
	foreach my $prefix ('ord_', 'ord/', "\x{e9}", 'p' x 63, 'p' x 64, 'ORD_', 'a b', 'azAZ09_-.~', $null)
	{
		push @args, map { [ $form, 'from', $_, $prefix ] }
		  ("ord_$top", $top, ('p' x 63) . $top, 'or', 'ord', '', "Ord_$top", "azAZ09_-.~$top", $null);
	}
	foreach my $id (0, 1, 4095, '291226324712820778', $largest, -1, '-9223372036854775808', $null)
	{
		push @args, map { [ $form, 'to', $id, $_ ] }
		  (undef, '', 'ord_', 'azAZ09_-.~', 'p' x 63, 'p' x 64, 'ord/', "\x{e9}", 'a b', "ord\t", $null);
	}
	push @args, [ $form, 'from', $null, undef ];
}
# A constant argument, and its column of tf_args.
sub tf_const
{
	my ($v, $type) = @_;
	return "NULL::$type" if ref $v;
	return $type eq 'int8' ? "($v)::int8" : sql_literal($v) . '::text';
}
# (n, id, t, p): the arguments of call n as columns.
my $rows = join(",\n", map {
	my ($form, $dir, $x, $p) = @{ $args[$_] };
	my $v = ref $x ? 'NULL' : $dir eq 'to' ? $x : sql_literal($x);
	"($_, " . ($dir eq 'to' ? "$v, NULL" : "NULL, $v") . ', ' . (ref $p ? 'NULL' : sql_literal($p)) . ')'
} 0 .. $#args);
my @tf_calls;
foreach my $n (0 .. $#args)
{
	my ($form, $dir, $x, $p) = @{ $args[$n] };
	my $fn = "snowflake_${dir}_$form";
	my ($const, $col) = $dir eq 'to' ? (tf_const($x, 'int8'), 'id') : (tf_const($x, 'text'), 't');
	if (!defined $p)
	{
		push @tf_calls, "$fn($const)", "(SELECT $fn($col) FROM tf_args WHERE n = $n)";
		next;
	}
	my $pc = tf_const($p, 'text');
	push @tf_calls, "$fn($const, $pc)", "(SELECT $fn($col, p) FROM tf_args WHERE n = $n)",
	  "(SELECT $fn($const, p) FROM tf_args WHERE n = $n)",
	  "(SELECT $fn($col, $pc) FROM tf_args WHERE n = $n)";
}
my $tf_corpus = join(",\n", map { '(' . sql_literal($_) . ')' } @tf_calls);
my $tf_edges = encode('UTF-8', qq{
CREATE TABLE tf_args (n int PRIMARY KEY, id int8, t text, p text);
INSERT INTO tf_args VALUES $rows;
SELECT replace(c || ' => ' || try(c), E'\n', '\\n') FROM (VALUES $tf_corpus) v(c);
DROP TABLE tf_args});
my @c_tf = split /\n/, $node->safe_psql('c', $tf_edges);
my @sql_tf = split /\n/, $node->safe_psql('sqled', $tf_edges);
is(scalar(@sql_tf), scalar(@tf_calls), scalar(@tf_calls) . ' text-form calls made in the edition');
my @tf_differ = grep { $c_tf[$_] ne $sql_tf[$_] } 0 .. $#c_tf;
is(scalar(@tf_differ), 0, 'every text-form call: the same result or the same error, whole')
  or diag(join("\n", map { "C:   $c_tf[$_]\nSQL: $sql_tf[$_]" } @tf_differ[ 0 .. ($#tf_differ < 19 ? $#tf_differ : 19) ]));
# Every error the C extension raises, each detail's kind at least once.
my @kinds = (
	'22003 value .* is out of range' => qr/^22003: value .* \| Snowflake IDs are between/,
	'22003 the largest snowflake ID' => qr/^22003: \w+ value .* \| The largest snowflake ID is/,
	'22023 a character not allowed' => qr/^22023: .* \| Character ".*" at position \d+ is not allowed in a prefix/,
	'22023 the prefix too long' => qr/^22023: .* \| A prefix has at most 63 characters; this one has 64\./,
	'22P02 the prefix not matched' => qr/^22P02: .* \| Character ".*" at position \d+ does not match the prefix/,
	'22P02 the text ends in the prefix' => qr/^22P02: .* \| The text ends after \d+ characters, inside the prefix/,
	'22P02 not a digit' => qr/^22P02: .* \| Character ".*" at position \d+ is not a [\w ]+ digit\./,
	'22P02 one digit too many' => qr/^22P02: .* \| Character ".*" at position \d+ is one digit too many/,
	'22P02 too few digits' => qr/^22P02: .* \| The text has \d+ digits; a \w+ snowflake ID has \d+\./,
	'22P02 no digits' => qr/^22P02: .* \| The text has no digits/,
	'22P02 a leading zero' => qr/^22P02: .* \| Character ".*" at position \d+ is a leading zero/);
my @unreached;
while (my ($kind, $re) = splice(@kinds, 0, 2))
{
	push @unreached, $kind unless grep { / => ERROR (.*)$/ && $1 =~ $re } @c_tf;
}
is_deeply(\@unreached, [],
	'the corpus reaches every error ('
	  . scalar(grep { / => ERROR / } @c_tf) . ' of ' . scalar(@c_tf) . ' calls fail)');

# sql/textform.sql as pg_regress runs it (psql -X -a -q), in the edition's
# database: expected/textform.out, as test/t/039_text_forms.pl checks the
# C extension; with 200,000 random IDs and 40,000 random pairs (a million
# and 200,000 took two minutes of the file, and the round trips above
# compare the edition's texts with the C extension's).
{
	my $out = '';
	IPC::Run::run(
		[
			'psql', '-X', '-a', '-q', '-d', $node->connstr('sqled'),
			'-v', 'HIDE_TABLEAM=on', '-v', 'HIDE_TOAST_COMPRESSION=on',
			'-v', 'rows=200000', '-v', 'pairs=40000'
		],
		'<', edition_root() . '/sql/textform.sql', '>&', \$out);
	is($out, slurp_file(edition_root() . '/expected/textform.out'),
		'sql/textform.sql in the edition gives expected/textform.out');
}

# The Perl oracle of the rules (test/t/TextFormTest.pm), as 039 runs it
# against the C extension.
check_text_forms($node, 'sqled', 66, 2000, 'the edition');

# --- public IDs ---

# The C extension's public IDs read their keys from a key file; the
# edition's from its table, set by snowflake_set_public_key(): the same
# keys in both, key 2 current.
my %pid_key = (
	1 => '000102030405060708090a0b0c0d0e0f',
	2 => 'f0e1d2c3b4a5968778695a4b3c2d1e0f00112233445566778899aabbccddeeff',
	9 => '9f8e7d6c5b4a39281706f5e4d3c2b1a00102030405060708');
{
	my $path = $node->data_dir . '/public.keys';
	open my $fh, '>', $path or die "$path: $!";
	print $fh "1 $pid_key{1}\n2 $pid_key{2} current\n9 $pid_key{9}\n";
	close $fh or die "$path: $!";
	chmod(0600, $path) or die "chmod $path: $!";
}
$node->safe_psql('postgres', q{ALTER SYSTEM SET snowflake.public_keys_file = 'public.keys'});
$node->reload;
$node->poll_query_until('postgres', q{SELECT current_setting('snowflake.public_keys_file') = 'public.keys'})
  or die 'the reload did not take';
$node->safe_psql('sqled',
	"SELECT snowflake_set_public_key(1, '\\x$pid_key{1}'), snowflake_set_public_key(2, '\\x$pid_key{2}', true), "
	  . "snowflake_set_public_key(9, '\\x$pid_key{9}')");

# sql/publicid.sql as pg_regress runs it, with fewer random IDs (the
# edition's call costs about a tenth of a millisecond): the output does not
# depend on how many.
{
	my $out = '';
	IPC::Run::run(
		[
			'psql', '-X', '-a', '-q', '-d', $node->connstr('sqled'),
			'-v', 'HIDE_TABLEAM=on', '-v', 'HIDE_TOAST_COMPRESSION=on',
			'-v', 'rows=2000', '-v', 'some=300'
		],
		'<', edition_root() . '/sql/publicid.sql', '>&', \$out);
	is($out, slurp_file(edition_root() . '/expected/publicid.out'),
		'sql/publicid.sql in the edition gives expected/publicid.out');
}

# Random IDs of every length under keys given as arguments, and under the
# configured keys with their texts (also read back in lower case): a digest
# equal in both.
my $pid_args = qq{
SELECT setseed(0.61);
SELECT count(*) || ' ' || bit_xor(hashint8extended(snowflake_encrypt_id(x, k), i)
                                  # hashint8extended(snowflake_decrypt_id(x, k), -i))
  FROM (SELECT i, (floor(random() * 2147483648)::int8 << 32 | floor(random() * 4294967296)::int8) >> (i % 64)::int AS x
          FROM generate_series(1, 3000) i) r,
       (VALUES ('\\x$pid_key{1}'::bytea), ('\\x$pid_key{2}'), ('\\x$pid_key{9}')) v(k)};
# (The last line: setseed() prints an empty one.)
my $c_args = (split /\n/, $node->safe_psql('c', $pid_args))[-1];
like($c_args, qr/^9000 -?\d+$/, '9000 public IDs under keys given as arguments in the C extension');
is((split /\n/, $node->safe_psql('sqled', $pid_args))[-1], $c_args,
	'the same public IDs both ways in the edition (pgcrypto\'s AES)');
my $pid_configured = q{
SELECT setseed(0.62);
SELECT count(*) || ' ' || bit_xor(hashint8extended(snowflake_to_public(x, 1), i)
               # hashint8extended(snowflake_to_public(x, 9), i + 1)
               # hashint8extended(snowflake_from_public(x, 2), i + 2)
               # hashtextextended(t, i) # hashtextextended(tp, i)
               # hashint8extended(snowflake_from_public_base32(t), i + 3)
               # hashint8extended(snowflake_from_public_base32(lower(tp), 'ord_'), i + 4))
  FROM (SELECT i, x, snowflake_to_public_base32(x) AS t, snowflake_to_public_base32(x, 'ord_') AS tp
          FROM (SELECT i, (floor(random() * 2147483648)::int8 << 32 | floor(random() * 4294967296)::int8) >> (i % 64)::int AS x
                  FROM generate_series(1, 2000) i) r) s};
my $c_configured = (split /\n/, $node->safe_psql('c', $pid_configured))[-1];
like($c_configured, qr/^2000 -?\d+$/, '2000 IDs through the configured keys and the texts in the C extension');
is((split /\n/, $node->safe_psql('sqled', $pid_configured))[-1], $c_configured,
	'the same public IDs and texts in the edition, and the texts read back');

# Every error, each call compared whole (with constants; every argument
# NULL once), with key 2 current and then with none.  The hints that say
# where the keys are configured differ, each as expected.
my %config_hint = (
	'HINT:  The keys are read from the file that snowflake.public_keys_file names.' => 'c',
	q{HINT:  The SQL edition's keys are set with snowflake_set_public_key().} => 'sqled',
	'HINT:  Mark the key that new public IDs are made with "current" in the file that snowflake.public_keys_file names.' => 'c',
	'HINT:  Mark the key that new public IDs are made with current: snowflake_set_public_key(key_id, key, true).' => 'sqled');
my @pid_calls;
my @pid_ids = ('0', '1', '4294967296', '9223372036854775807', '-1', '-9223372036854775808', 'NULL');
foreach my $id (@pid_ids)
{
	foreach my $k ("'\\x$pid_key{1}'", "'\\x$pid_key{2}'", "'\\x$pid_key{9}'", q{'\x'}, q{'\x00'},
		"'\\x$pid_key{1}00'", "'\\x" . substr($pid_key{1}, 2) . "'", "'\\x$pid_key{2}00'", 'NULL')
	{
		push @pid_calls, "snowflake_encrypt_id($id, ${k}::bytea)", "snowflake_decrypt_id($id, ${k}::bytea)";
	}
	foreach my $key_id ('0', '1', '2', '5', '9', '31', '32', '-1', '2147483647', 'NULL')
	{
		push @pid_calls, "snowflake_to_public($id, $key_id)", "snowflake_from_public($id, $key_id)";
	}
	foreach my $prefix (undef, q{''}, q{'ord_'}, q{'ord/'}, q{'} . ('p' x 64) . q{'}, 'NULL')
	{
		push @pid_calls, 'snowflake_to_public_base32(' . $id . (defined $prefix ? ", $prefix" : '') . ')';
	}
}
my @pid_texts = (
	'', '-', '2', '20000000000000', '200000000000000', '2000000000000', '2-0000-0000-0000-0',
	'20000000000000-', '2OIOLoiol-az-oi-k', '27ZZZZZZZZZZZZ', '28000000000000', '2ZZZZZZZZZZZZZ',
	'50000000000001', 'Z0000000000001', 'U0000000000000', '2000000000000U', '2 0000000000000',
	"20000000000000\x{e9}", "\x{e9}0000000000000", '10000000000000', '90000000000000',
	# (Messages quote at most 100 characters, then "...".)
	'2' . ('0' x 150), '28' . ('0' x 12) . ('-' x 120), ("\x{e9}" x 101));
foreach my $t (@pid_texts)
{
	push @pid_calls, 'snowflake_from_public_base32(' . sql_literal($t) . ')';
	foreach my $prefix (q{''}, q{'ord_'}, q{'ord/'}, 'NULL')
	{
		push @pid_calls, 'snowflake_from_public_base32(' . sql_literal("ord_$t") . ", $prefix)",
		  'snowflake_from_public_base32(' . sql_literal($t) . ", $prefix)";
	}
}
push @pid_calls, "snowflake_from_public_base32('or', 'ord_')", "snowflake_from_public_base32('Ord_20000000000000', 'ord_')",
  'snowflake_from_public_base32(NULL)', 'snowflake_from_public_base32(NULL, NULL)';
my $pid_corpus = join(",\n", map { '(' . sql_literal($_) . ')' } @pid_calls);
my $pid_edges = encode('UTF-8', qq{
SELECT replace(c || ' => ' || try(c), E'\\n', '\\\\n') FROM (VALUES $pid_corpus) v(c)});
sub pid_compare
{
	my ($state) = @_;
	my @c_pid = split /\n/, $node->safe_psql('c', $pid_edges);
	my @sql_pid = split /\n/, $node->safe_psql('sqled', $pid_edges);
	is(scalar(@sql_pid), scalar(@pid_calls), scalar(@pid_calls) . " public-ID calls made in the edition, $state");
	my %hints_seen;
	foreach my $list ([ 'c', \@c_pid ], [ 'sqled', \@sql_pid ])
	{
		foreach (@{ $list->[1] })
		{
			foreach my $hint (keys %config_hint)
			{
				my $flat = $hint =~ s/^HINT:  //r;
				next unless s/ \| \Q$flat\E$/ | (where keys are configured)/;
				$hints_seen{$hint} = 1;
				$hints_seen{"$hint in $list->[0]"} = 1 if $config_hint{$hint} eq $list->[0];
			}
		}
	}
	my @differ = grep { $c_pid[$_] ne $sql_pid[$_] } 0 .. $#c_pid;
	is(scalar(@differ), 0, "every public-ID call, $state: the same result or the same error, whole")
	  or diag(join("\n", map { "C:   $c_pid[$_]\nSQL: $sql_pid[$_]" } @differ[ 0 .. ($#differ < 19 ? $#differ : 19) ]));
	return (\@c_pid, \%hints_seen);
}
my ($c_pid, $hints) = pid_compare('key 2 current');
my @pid_kinds = (
	'22003 an ID' => qr/^22003: value -\d+ is out of range for a snowflake ID \| Snowflake IDs are between/,
	'22003 a public ID' => qr/^22003: value -\d+ is out of range for a public snowflake ID \| Public snowflake IDs/,
	'22003 a public text' => qr/^22003: value ".*" is out of range for a public snowflake ID \| After the key id/,
	'22023 the key length' => qr/^22023: invalid AES key length \| An AES key has 16, 24 or 32 bytes; this one has \d+\./,
	'22023 the key id' => qr/^22023: public ID key -?\d+ is out of range \| Key ids are between 0 and 31\./,
	'22023 a key not configured' => qr/^22023: public ID key 5 is not configured \| The configured keys are 1, 2 and 9\./,
	'22023 the prefix' => qr/^22023: invalid snowflake ID prefix/,
	'22P02 the prefix not matched' => qr/^22P02: .* \| Character ".*" at position \d+ does not match the prefix/,
	'22P02 the text ends in the prefix' => qr/^22P02: .* \| The text ends after \d+ characters, inside the prefix/,
	'22P02 not a digit' => qr/^22P02: .* \| Character ".*" at position \d+ is not a Crockford base32 digit\./,
	'22P02 one digit too many' => qr/^22P02: .* \| Character ".*" at position \d+ is one digit too many: a public snowflake ID has 14 digits\./,
	'22P02 too few digits' => qr/^22P02: .* \| The text has \d+ digits; a public snowflake ID has 14\./);
my @pid_unreached;
while (my ($kind, $re) = splice(@pid_kinds, 0, 2))
{
	push @pid_unreached, $kind unless grep { / => ERROR (.*)$/ && $1 =~ $re } @$c_pid;
}
is_deeply(\@pid_unreached, [], 'the public-ID corpus reaches every error ('
	  . scalar(grep { / => ERROR / } @$c_pid) . ' of ' . scalar(@$c_pid) . ' calls fail)');

# No key current: the C extension's file without the word, the edition's
# key 2 set again without it.
{
	my $path = $node->data_dir . '/public.keys';
	open my $fh, '>', "$path.new" or die "$path.new: $!";
	print $fh "1 $pid_key{1}\n2 $pid_key{2}\n9 $pid_key{9}\n";
	close $fh or die "$path.new: $!";
	chmod(0600, "$path.new") or die "chmod: $!";
	rename("$path.new", $path) or die "rename: $!";
}
$node->safe_psql('sqled', "SELECT snowflake_set_public_key(2, '\\x$pid_key{2}')");
my (undef, $none_hints) = pid_compare('no key current');
%$hints = (%$hints, %$none_hints);
is_deeply([ grep { !$hints->{"$_ in $config_hint{$_}"} } sort keys %config_hint ], [],
	'each edition gives its own hint on where keys are configured, and nothing else differs');

# The edition's keys are its owner's: another role cannot read them, set
# them or call what reads them, and uses them through the functions.
$node->safe_psql('sqled', q{CREATE ROLE pid_app LOGIN; SELECT snowflake_set_public_key(2, key, true) FROM (SELECT '\x} . $pid_key{2} . q{'::bytea AS key) k});
my @app = (extra_params => [ '-U', 'pid_app' ]);
is($node->safe_psql('sqled', 'SELECT snowflake_from_public_base32(snowflake_to_public_base32(77)) = 77 AND '
	  . 'snowflake_to_public(77, 9) = ' . $node->safe_psql('c', 'SELECT snowflake_to_public(77, 9)'), @app),
	't', 'another role uses the edition\'s keys through the functions');
my $app_seen = '';
foreach my $probe ('SELECT * FROM _snowflake._snowflake_public_keys', 'SELECT _snowflake_public_key(1)',
	'SELECT _snowflake_public_key_list()', q{SELECT _snowflake_to_public_base32(1, '')},
	q{SELECT snowflake_set_public_key(3, '\x000102030405060708090a0b0c0d0e0f')})
{
	my ($probe_ret, $probe_out, $probe_err) = $node->psql('sqled', $probe, @app);
	$app_seen .= "$probe_out\n$probe_err\n";
	like($probe_err, qr/ERROR:  permission denied for (?:schema _snowflake|function)/, "another role is refused: $probe");
}
my @pid_leaked = grep { $app_seen =~ /\Q@{[substr($_, 0, 12)]}\E/i } values %pid_key;
is_deeply(\@pid_leaked, [], 'and sees no key');
is(report_in($node, 'sqled', q{SELECT snowflake_set_public_key(32, '\x00')}),
	"22023: public ID key 32 is out of range\nDETAIL:  Key ids are between 0 and 31.",
	'snowflake_set_public_key() refuses a key id out of range');
is(report_in($node, 'sqled', q{SELECT snowflake_set_public_key(3, '\x00')}),
	"22023: invalid AES key length\nDETAIL:  An AES key has 16, 24 or 32 bytes; this one has 1.",
	'snowflake_set_public_key() refuses a key of another length');
$node->safe_psql('sqled', 'GRANT EXECUTE ON FUNCTION snowflake_set_public_key(int4, bytea, bool) TO pid_app');
is(report_in($node, 'sqled', q{SELECT snowflake_set_public_key(3, '\x000102030405060708090a0b0c0d0e0f')}, @app),
	"42501: permission denied to set a public ID key\n"
	  . 'DETAIL:  Only the owner of the snowflake objects (the role that installed them) and superusers may set them.',
	'a role granted EXECUTE on snowflake_set_public_key() still cannot set a key');
$node->safe_psql('sqled', 'SELECT snowflake_set_public_key(9, NULL)');
is(report_in($node, 'sqled', 'SELECT snowflake_to_public(1, 9)'),
	"22023: public ID key 9 is not configured\nDETAIL:  The configured keys are 1 and 2.\n"
	  . q{HINT:  The SQL edition's keys are set with snowflake_set_public_key().},
	'a NULL key removes the key id');

# The edition installed before pgcrypto: public IDs fail (55000) until
# pgcrypto is installed, then give the same public IDs, looking pgcrypto
# up at each call.
$node->safe_psql('postgres', "CREATE DATABASE sqled_late TEMPLATE template0 ENCODING 'UTF8' LOCALE 'C'");
($ret, undef, $stderr) = run_script($node, 'sqled_late', "$build/snowflake-plain.sql");
is($ret, 0, 'the plain script installs the edition where pgcrypto is not installed') or diag($stderr);
is(report_in($node, 'sqled_late', q{SELECT snowflake_encrypt_id(1, '\x000102030405060708090a0b0c0d0e0f')}),
	"55000: public IDs in the SQL edition of snowflake need the pgcrypto extension\n"
	  . 'HINT:  Install it in this database: CREATE EXTENSION pgcrypto.',
	'without pgcrypto public IDs fail, saying what to install');
$node->safe_psql('sqled_late', 'CREATE SCHEMA crypto; CREATE EXTENSION pgcrypto SCHEMA crypto');
(my $pid_few = $pid_args) =~ s/generate_series\(1, 3000\)/generate_series(1, 100)/;
is($node->safe_psql('sqled_late', $pid_few), $node->safe_psql('c', $pid_few),
	'pgcrypto installed afterwards, in a schema of its own: the same public IDs');

# --- an edition generated for another layout and epoch ---

$node->stop;
my $js = start_snowflake_node('edition_decoders_js', node_id => 2, layout => '41/7/5',
	settings => { 'snowflake.epoch' => '2020-01-01 00:00:00+00' });
my $js_build = edition_build('--layout', '41/7/5', '--epoch', '2020-01-01 00:00:00+00');
$js->safe_psql('postgres', 'CREATE DATABASE c');
$js->safe_psql('postgres', 'CREATE DATABASE sqled');
$js->safe_psql('c', 'CREATE EXTENSION snowflake');
($ret, undef, $stderr) = run_script($js, 'sqled', "$js_build/snowflake-plain.sql");
is($ret, 0, '41/7/5 from 2020: the plain script installs') or diag($stderr);
my $js_digest = q{
SELECT setseed(0.7);
SELECT bit_xor(hashint8extended(
	timestamp_hash(snowflake_timestamp(id) AT TIME ZONE 'UTC')::int8 * 1000003
	+ snowflake_node_id(id) * 4099 + snowflake_sequence(id)
	+ snowflake_min_id(snowflake_timestamp(id)) + snowflake_max_id(snowflake_timestamp(id))
	+ snowflake_compose(snowflake_timestamp(id), snowflake_node_id(id), snowflake_sequence(id)), i))
  FROM (SELECT i, floor(random() * 9007199254740992)::int8 AS id
          FROM generate_series(1, 100000) i) s};
is($js->safe_psql('sqled', $js_digest), $js->safe_psql('c', $js_digest),
	'41/7/5 from 2020: decoders, bounds and compose agree on 100000 IDs below 2^53');
$js->safe_psql('sqled', 'SELECT snowflake_set_node_id(127)');
is( $js->safe_psql(
		'sqled', q{
SELECT snowflake_node_id(x) = 127 AND x < 9007199254740992
       AND abs(extract(epoch FROM snowflake_timestamp(x) - clock_timestamp())) < 5
  FROM snowflake_nextval() x}),
	't',
	'41/7/5 from 2020: the edition mints in that layout, below 2^53');
$js->stop;

done_testing();
