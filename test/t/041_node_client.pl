# Copyright: see LICENSE
#
# 041_node_client.pl
#	A real client: node-postgres (the npm "pg" package) reads IDs from a
#	server with the default layout and from one with the JavaScript-safe
#	layout.  Default layout: the IDs arrive exactly, as strings or BigInt,
#	never rounded.  JavaScript-safe layout: they arrive as exact numbers and
#	round-trip through JSON.  The client runs the documented snippet
#	(test/node/snippet.js), which must appear in docs/adoption/javascript.md word for word.
#
# Needs node and test/node/node_modules (test/check.sh installs them with
# "npm ci"); fails, not skips, without them.

use strict;
use warnings;

use FindBin;
use IPC::Run;
use JSON::PP qw(decode_json);
use Math::BigInt;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node_dir = "$FindBin::RealBin/../node";
my $two_53 = Math::BigInt->new('9007199254740992');

# node and the pg package are there.
my ($ok, $out, $err);
$ok = eval {
	IPC::Run::run([ 'node', '-e', 'require("pg")' ],
		'>', \$out, '2>', \$err, init => sub { chdir $node_dir or die $! });
};
ok($ok, 'node runs and finds the "pg" package in test/node/node_modules (npm ci)')
  or BAIL_OUT("no node or no node-postgres: $@ $err");

# The JavaScript page shows the snippet the client runs.
my $readme = slurp_file("$FindBin::RealBin/../../docs/adoption/javascript.md");
my $snippet = slurp_file("$node_dir/snippet.js");
ok(index($readme, $snippet) >= 0,
	'docs/adoption/javascript.md contains test/node/snippet.js word for word');

# Run client.js in $mode against $node; its JSON report.
sub run_client
{
	my ($node, $mode) = @_;
	my ($stdout, $stderr) = ('', '');
	local $ENV{PGHOST} = $node->host;
	local $ENV{PGPORT} = $node->port;
	local $ENV{PGDATABASE} = 'postgres';
	local $ENV{PGUSER} = scalar getpwuid($<);
	my $ran = IPC::Run::run([ 'node', "$node_dir/client.js", $mode ],
		'>', \$stdout, '2>', \$stderr);
	ok($ran, "client.js $mode ran") or diag($stderr);
	return ($stdout, decode_json($stdout));
}

# ---------------------------------------------------------------------------
# Default layout 41/10/12: IDs above 2^53.
# ---------------------------------------------------------------------------
my $default = start_snowflake_node('node_default', node_id => 5);
$default->safe_psql('postgres', 'CREATE EXTENSION snowflake');

my (undef, $r) = run_client($default, 'default');
is(scalar @{ $r->{plain} }, 200, 'default layout: 200 IDs read');
is(scalar(grep { Math::BigInt->new($_->{text}) > $two_53 } @{ $r->{plain} }),
	200, 'every one of them above 2^53');
is_deeply([ map { $_->{type} } @{ $r->{plain} } ], [ ('string') x 200 ],
	'by default node-postgres hands them over as strings');
is_deeply([ map { $_->{id} } @{ $r->{plain} } ],
	[ map { $_->{text} } @{ $r->{plain} } ],
	'each string is exactly the server\'s text of the ID');
is_deeply([ map { $_->{type} } @{ $r->{bigint} } ], [ ('bigint') x 200 ],
	'with the snippet\'s BigInt parser they are BigInts');
is_deeply([ map { $_->{id} } @{ $r->{bigint} } ],
	[ map { $_->{text} } @{ $r->{bigint} } ],
	'each BigInt is exactly the ID');
is_deeply($r->{bigint_json}, [ map { $_->{text} } @{ $r->{bigint} } ],
	'through JSON as strings (the snippet\'s replacer) they stay exact');
ok($r->{bigint_json_back_equal}, 'and parse back to equal BigInts');
is($r->{plain_stringify_of_bigint}, 'TypeError',
	'JSON.stringify refuses a BigInt without the replacer');
$default->stop;

# ---------------------------------------------------------------------------
# JavaScript-safe layout 41/7/5: IDs below 2^53, exact numbers.
# ---------------------------------------------------------------------------
my $safe = start_snowflake_node('node_js_safe', node_id => 99,
	layout => '41/7/5');
$safe->safe_psql('postgres', 'CREATE EXTENSION snowflake');

my $raw;
($raw, $r) = run_client($safe, 'js-safe');
my @texts = map { $_->{text} } @{ $r->{number} };
is(scalar @texts, 200, 'JavaScript-safe layout: 200 IDs read');
is(scalar(grep { Math::BigInt->new($_) < $two_53 } @texts),
	200, 'every one of them below 2^53');
is_deeply([ map { "$_->{type} $_->{safe}" } @{ $r->{number} } ],
	[ ('number 1') x 200 ], 'they arrive as safe-integer numbers');
is_deeply([ map { $_->{id} } @{ $r->{number} } ], \@texts,
	'each number is exactly the ID');
# The JSON text itself, digit for digit (not through Perl's numbers).
my ($json_ids) = $r->{json} =~ /^\{"ids":\[([0-9,]*)\]\}$/;
is_deeply([ split /,/, $json_ids // '' ], \@texts,
	'JSON.stringify writes every ID digit for digit');
ok($r->{json_back_equal}, 'and JSON.parse gives back the same numbers');
is($r->{unsafe},
	'RangeError: bigint 9007199254740993 does not fit a JavaScript number',
	'a bigint above 2^53 is refused by the snippet\'s parser, not rounded');
$safe->stop;

done_testing();
