# Copyright: see LICENSE
#
# 039_text_forms.pl
#	The text forms of IDs (1.2, docs/text-forms.md) under what pg_regress
#	cannot vary: the database's default collation and its encoding.
#	Databases in UTF8 with the default collation C, C.UTF-8, glibc's
#	en_US.UTF-8 and ICU's en-US:
#	- ORDER BY the text without a COLLATE clause: base32 (as written, in
#	  lower case, after a prefix) and hex sort as the IDs under every one
#	  of them; base62 only under C and C.UTF-8 (en_US and ICU compare
#	  letters case-insensitively first: "a" before "B"), so it needs
#	  COLLATE "C".  Checked on every pair of neighbouring digits at every
#	  position of each form, and on random pairs;
#	- every call of the corpus of test/t/TextFormTest.pm (IDs at every edge
#	  and of every length, their texts and those texts changed every way,
#	  characters of two and three bytes among them) gives exactly what that
#	  Perl oracle says, value or whole error, in every database;
#	- sql/textform.sql, run through psql as pg_regress runs it, gives
#	  expected/textform.out in the en_US database too (how another
#	  implementation, the SQL edition's, is checked against that file);
#	- a megabyte of text: its error quotes the first 100 characters, the
#	  position in the detail counts over the whole text, and the server
#	  log stays small.
#	glibc's en_US.UTF-8 is compiled into a directory of the test with
#	localedef (LOCPATH) when the system has not generated it; ICU is asked
#	of the server, and the ICU database is left out, saying so, on a server
#	built without it.

use strict;
use warnings;

use Encode ();
use File::Spec;
use FindBin;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use TextFormTest;
use IPC::Run;
use Test::More;

my $root = "$FindBin::RealBin/../..";

# glibc's en_US.UTF-8: the system's, or compiled here from the locale
# sources the "locales" package ships (a dependency of Debian's
# postgresql-common), found through LOCPATH with the system's own.
my $have_en_us = grep { /^en_US\.utf-?8$/i } split /\n/, `locale -a 2>/dev/null`;
if (!$have_en_us)
{
	my $dir = PostgreSQL::Test::Utils::tempdir('locales');
	my ($ok, $out, $err) = run_in_dir('.', {}, 120,
		[ 'localedef', '-i', 'en_US', '-f', 'UTF-8', "$dir/en_US.UTF-8" ]);
	# localedef exits 1 on warnings about the sources; the locale is there.
	ok(-d "$dir/en_US.UTF-8", 'en_US.UTF-8 compiled with localedef')
	  or BAIL_OUT("cannot compile en_US.UTF-8 with localedef: $err");
	$ENV{LOCPATH} = "$dir:/usr/lib/locale";
}

my $node = start_snowflake_node('textforms', node_id => 39);
my $has_icu = $node->safe_psql('postgres',
	"SELECT count(*) > 0 FROM pg_collation WHERE collprovider = 'i'") eq 't';

# name => (the CREATE DATABASE options, base62 sorts without COLLATE "C")
my @dbs = (
	[ 'tf_c', "LOCALE 'C'", 1 ],
	[ 'tf_c_utf8', "LOCALE 'C.UTF-8'", 1 ],
	[ 'tf_en_us', "LOCALE 'en_US.UTF-8'", 0 ],
);
push @dbs, [ 'tf_icu', "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'", 0 ]
  if $has_icu;
note('this server has no ICU collations: no ICU database') unless $has_icu;

foreach my $db (@dbs)
{
	my ($name, $options) = @$db;
	$node->safe_psql('postgres',
		"CREATE DATABASE $name TEMPLATE template0 ENCODING 'UTF8' $options");
	$node->safe_psql($name, 'CREATE EXTENSION snowflake');
}

# The pairs: for each fixed-width form, each position and each digit but
# the last, an ID with that digit there and one with the next digit (the
# other digits random), as far as IDs go; and random pairs, half of them
# close.
my $pairs_sql = <<'SQL';
SELECT setseed(0.039);
CREATE TABLE pairs AS
SELECT f.form, (d::numeric * f.base ^ k + floor(random() * f.base ^ k))::bigint AS a,
       ((d + 1)::numeric * f.base ^ k + floor(random() * f.base ^ k))::bigint AS b
  FROM (VALUES ('base32', 32, 13), ('base62', 62, 11), ('hex', 16, 16)) f(form, base, width),
       generate_series(0, f.width - 1) k, generate_series(0, f.base - 2) d
 WHERE (d + 2)::numeric * f.base ^ k <= 9223372036854775807
UNION ALL
SELECT 'random', a, CASE WHEN g % 2 = 0 THEN b ELSE least(a::numeric + b % 1000, 9223372036854775807)::bigint END
  FROM (SELECT g, ((floor(random() * 2147483648)::bigint << 32) | floor(random() * 4294967296)::bigint) >> (g % 60) AS a,
               ((floor(random() * 2147483648)::bigint << 32) | floor(random() * 4294967296)::bigint) >> (g % 50) AS b
          FROM generate_series(1, 20000) g) r;
SQL

# How many pairs of each kind compare differently as texts under the
# database's default collation and as IDs; the forms' pairs only with the
# random ones.
my $disorder_sql = <<'SQL';
SELECT count(*) FILTER (WHERE form IN ('base32', 'random')) || ' '
    || count(*) FILTER (WHERE form IN ('base32', 'random')
                          AND (snowflake_to_base32(a) < snowflake_to_base32(b)) <> (a < b)) || ' '
    || count(*) FILTER (WHERE form IN ('base32', 'random')
                          AND (lower(snowflake_to_base32(a)) < lower(snowflake_to_base32(b))) <> (a < b)) || ' '
    || count(*) FILTER (WHERE form IN ('base32', 'random')
                          AND (snowflake_to_base32(a, 'ord_') < snowflake_to_base32(b, 'ord_')) <> (a < b)) || ' '
    || count(*) FILTER (WHERE form IN ('hex', 'random')
                          AND (snowflake_to_hex(a) < snowflake_to_hex(b)) <> (a < b)) || ' '
    || count(*) FILTER (WHERE form IN ('hex', 'random')
                          AND (snowflake_to_hex(a, 'cus-') < snowflake_to_hex(b, 'cus-')) <> (a < b)) || ' '
    || count(*) FILTER (WHERE form IN ('base62', 'random')
                          AND (snowflake_to_base62(a) < snowflake_to_base62(b)) <> (a < b)) || ' '
    || count(*) FILTER (WHERE form IN ('base62', 'random')
                          AND (snowflake_to_base62(a) < snowflake_to_base62(b) COLLATE "C") <> (a < b))
  FROM pairs
SQL

foreach my $db (@dbs)
{
	my ($name, $options, $base62_sorts) = @$db;
	$node->safe_psql($name, $pairs_sql);
	my ($pairs, $b32, $b32_lower, $b32_prefix, $hex, $hex_prefix, $b62, $b62_c) =
	  split / /, $node->safe_psql($name, $disorder_sql);
	cmp_ok($pairs, '>', 20000, "$name: enough pairs for base32 ($pairs)");
	is("$b32 $b32_lower $b32_prefix", '0 0 0',
		"$name: base32 texts (as written, in lower case, after a prefix) sort as the IDs under the default collation");
	is("$hex $hex_prefix", '0 0',
		"$name: hex texts (with and without a prefix) sort as the IDs under the default collation");
	is($b62_c, 0, "$name: base62 texts sort as the IDs under COLLATE \"C\"");
	if ($base62_sorts)
	{
		is($b62, 0, "$name: base62 texts sort as the IDs under the default collation");
	}
	else
	{
		cmp_ok($b62, '>', 0,
			"$name: base62 texts do not sort as the IDs under the default collation ($b62 pairs)");
		# The smallest such pair: "a" (36) sorts before "B" (11).
		is($node->safe_psql($name,
				'SELECT snowflake_to_base62(36) < snowflake_to_base62(11), '
				  . 'snowflake_to_base62(36) < snowflake_to_base62(11) COLLATE "C"'),
			"t|f", "$name: 36 (\"0000000000a\") sorts before 11 (\"0000000000B\") unless COLLATE \"C\"");
	}
}

# The corpus against the oracle, in every database.
foreach my $db (@dbs)
{
	check_text_forms($node, $db->[0], 39, 2000, $db->[0]);
}

# sql/textform.sql as pg_regress runs it (psql -X -a -q, the file on
# standard input), in the en_US database: the same output, expected file
# and all.
{
	my $out = '';
	my $expected = slurp_file("$root/expected/textform.out");
	IPC::Run::run(
		[
			'psql', '-X', '-a', '-q', '-d', $node->connstr('tf_en_us'),
			'-v', 'HIDE_TABLEAM=on', '-v', 'HIDE_TOAST_COMPRESSION=on'
		],
		'<', "$root/sql/textform.sql", '>&', \$out);
	is($out, $expected,
		'sql/textform.sql through psql in the en_US.UTF-8 database gives expected/textform.out');
}

# A megabyte of text: the message quotes its first 100 characters and
# "...", the detail's position counts over the whole text, and the server
# log (ERROR, DETAIL and the statement, which builds the text with
# repeat()) grows by a few kilobytes for all of them, not a megabyte each.
# Each error as the oracle words it.
{
	my $mb = 1_000_000;
	my @cases = (
		[ 'base58', qq{repeat('2', $mb - 1) || '0'}, ('2' x ($mb - 1)) . '0' ],
		[ 'base58', qq{repeat('2', $mb)}, '2' x $mb ],
		[ 'base36', qq{repeat(chr(233), $mb)}, "\x{e9}" x $mb ],
		[ 'base32', qq{repeat('0', $mb)}, '0' x $mb ],
		[ 'hex', q{repeat('f', 16)}, 'f' x 16, qq{repeat('p', $mb)}, 'p' x $mb ],
	);
	# The first error of $sql in the database tf_c (UTF8), as error_report()
	# gives it, decoded from UTF-8 as the oracle's strings are.
	my $error_in_c = sub {
		my ($sql) = @_;
		my (undef, undef, $stderr) = $node->psql('tf_c',
			"SET client_encoding = 'UTF8';\n\\set VERBOSITY verbose\n$sql",
			on_error_stop => 0);
		return Encode::decode('UTF-8', stderr_report($stderr));
	};
	my $offset = -s $node->logfile;
	foreach my $c (@cases)
	{
		my ($form, $sql_text, $text, $sql_prefix, $prefix) = @$c;
		my $call = "SELECT snowflake_from_$form($sql_text"
		  . (defined $sql_prefix ? ", $sql_prefix" : '') . ')';
		my $got = $error_in_c->($call);
		is($got, text_form_expected_from($form, $text, $prefix),
			"$form, a megabyte of text: the error as the oracle words it");
		cmp_ok(length($got), '<', 600, "$form, a megabyte of text: the error is "
			  . length($got) . ' characters long');
	}
	is( $error_in_c->(qq{SELECT snowflake_to_hex(1, repeat('p', $mb - 1) || '/')}),
		text_form_expected_to('hex', 1, ('p' x ($mb - 1)) . '/'),
		'a prefix of a megabyte with a character that is not allowed at its end: the error as the oracle words it');
	my $grown = (-s $node->logfile) - $offset;
	cmp_ok($grown, '<', 16384,
		"the server log grew by $grown bytes for six errors about a megabyte of text each");
}

$node->stop;
done_testing();
