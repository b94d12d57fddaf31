# Copyright: see LICENSE
#
# 047_js_orms.pl
#	The ORM recipes of docs/adoption/javascript.md ("ORMs and query
#	builders"), run as the page shows them: Prisma 7, Knex 3, TypeORM 1.
#	The files are read from the page itself: every fenced block of that
#	part whose first line is a comment naming a path ("// src/orders.ts",
#	"-- prisma/migrations/.../migration.sql") is written to that path, less
#	that line, in a project of its framework (the blocks before the first
#	framework's heading in every project).  Then, as the page's commands
#	do: the migration (Prisma: the migration file through psql, see below; Knex: knex
#	migrate:latest; TypeORM: synchronize), prisma generate, tsc, and
#	test/node/orm-run.mjs calls the recipe's placeOrders() and prints what
#	JavaScript holds of each key.
#
#	On a server of the default layout (every key above 2^53), each key the
#	application holds must be the server's text of it digit for digit, of
#	the type the page says (BigInt or string, never a rounded number), the
#	bulk insert must return every key, key order must be creation order,
#	the decoded key must be the server's decoding, and the first key's text
#	form (docs/text-forms.md) the server's, the row found by it the first.
#
#	Prisma's command line wants its native schema engine, which it
#	downloads from Prisma's own server (not npm) and which the tests cannot
#	reach: the Prisma migration file runs through psql, and prisma generate
#	(which only checks that the engine exists) runs with
#	PRISMA_SCHEMA_ENGINE_BINARY pointing at test/node/no-schema-engine,
#	which fails if anything runs it.
#
# Needs node and test/node/node_modules (test/check.sh installs them with
# "npm ci"); fails, not skips, without them.

use strict;
use warnings;

use File::Basename qw(dirname);
use File::Path qw(make_path);
use FindBin;
use IPC::Run;
use JSON::PP qw(decode_json);
use Math::BigInt;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node_dir = "$FindBin::RealBin/../node";
my $page = "$FindBin::RealBin/../../docs/adoption/javascript.md";
my $two_53 = Math::BigInt->new('9007199254740992');
my $timeout = $PostgreSQL::Test::Utils::timeout_default;

# What each framework's recipe is: its heading on the page, its table,
# the type its keys arrive as.
# What each framework's recipe is: its heading on the page, its table,
# the type its keys arrive as, the commands that build it after its .sql
# files (if any) ran through psql, and the module that exports
# placeOrders().  Every recipe but Knex's expects the extension created.
my @tsc = ([ "$node_dir/node_modules/.bin/tsc", '-p', '.' ]);
my %fw = (
	prisma => { heading => 'Prisma 7', table => 'prisma_orders', type => 'bigint',
		steps => [ [ "$node_dir/node_modules/.bin/prisma", 'generate' ], @tsc ] },
	knex => { heading => 'Knex 3', table => 'knex_orders', type => 'string',
		steps => [ [ "$node_dir/node_modules/.bin/knex", 'migrate:latest' ] ],
		module => 'src/orders.js', no_extension => 1 },
	typeorm => { heading => 'TypeORM 1', table => 'typeorm_orders', type => 'string',
		steps => [@tsc] },
	drizzle => { heading => 'Drizzle ORM 0.45', table => 'drizzle_orders', type => 'bigint',
		steps => [@tsc] },
	kysely => { heading => 'Kysely 0.28', table => 'kysely_orders', type => 'string',
		steps => [ @tsc, [ 'node', 'dist/migrate.js' ] ] },
	sequelize => { heading => 'Sequelize 6', table => 'sequelize_orders', type => 'string',
		steps => [], module => 'src/orders.js' },
	mikroorm => { heading => 'MikroORM 6', table => 'mikro_orders', type => 'bigint',
		steps => [@tsc] },
);
my @order = qw(prisma knex typeorm drizzle kysely sequelize mikroorm);

# node and the packages are there.
my ($ok, undef, $err) = run_in_dir($node_dir, {}, $timeout,
	[ 'node', '-e', 'for (const m of ["pg", "knex", "typeorm", "@prisma/client", "@prisma/adapter-pg", "prisma/config", "drizzle-orm", "kysely", "sequelize", "pg-hstore", "@mikro-orm/postgresql"]) require.resolve(m)' ]);
ok($ok, 'node runs and finds the recipes\' packages in test/node/node_modules (npm ci)')
  or BAIL_OUT("no node or no packages: $err");

# ---------------------------------------------------------------------------
# The recipes, from the page.
# ---------------------------------------------------------------------------
my (%files, $part, $in_orms);
{
	my @lines = split /\n/, slurp_file($page), -1;
	for (my $i = 0; $i < @lines; $i++)
	{
		my $line = $lines[$i];
		if ($line =~ /^## (.*?)\s*$/)
		{
			$in_orms = $1 eq 'ORMs and query builders';
			$part = 'shared';
			next;
		}
		next unless $in_orms;
		if ($line =~ /^### (.*?)\s*$/)
		{
			my ($name) = grep { $fw{$_}{heading} eq $1 } keys %fw;
			$part = $name // "unknown: $1";
			next;
		}
		next unless $line =~ /^(`{3,})/;
		my $fence = $1;
		my @content;
		for ($i++; $i < @lines && $lines[$i] !~ /^\Q$fence\E\s*$/; $i++)
		{
			push @content, $lines[$i];
		}
		next unless @content && $content[0] =~ m{^(?://|--) ([\w./-]+)$};
		my $path = $1;
		shift @content;
		push @{ $files{$part} }, [ $path, join("\n", @content) . "\n" ];
	}
}
is_deeply([ sort keys %files ], [ sort(@order, 'shared') ],
	'the page has the shared project files and a recipe for each framework');

# The versions the page names are the ones installed here.
my ($package_json) = map { $_->[1] } grep { $_->[0] eq 'package.json' } @{ $files{shared} };
my $deps = decode_json($package_json // '{}')->{dependencies} // {};
my @wrong;
foreach my $pkg (sort keys %$deps)
{
	my $installed = eval {
		decode_json(slurp_file("$node_dir/node_modules/$pkg/package.json"))->{version};
	} // 'none';
	push @wrong, "$pkg: page $deps->{$pkg}, installed $installed"
	  if $installed ne $deps->{$pkg};
}
ok(scalar(keys %$deps) >= 8, 'the page\'s package.json names the packages');
is(join('; ', @wrong), '', 'each at the version test/node/package-lock.json installs');

# ---------------------------------------------------------------------------
# A server of the default layout 41/10/12: every key above 2^53.
# ---------------------------------------------------------------------------
# On loopback too: Sequelize takes host and port from the URL's authority only.
my $node = start_snowflake_node('js_orms', node_id => 5,
	settings => { listen_addresses => '127.0.0.1' });
my $user = scalar getpwuid($<);
my $base = PostgreSQL::Test::Utils::tempdir('js_orms');

foreach my $name (@order)
{
	my $f = $fw{$name};
	my $dir = "$base/$name";
	make_path($dir);
	foreach my $file (@{ $files{shared} }, @{ $files{$name} })
	{
		my ($path, $content) = @$file;
		make_path(dirname("$dir/$path"));
		open my $fh, '>', "$dir/$path" or die "could not write $dir/$path: $!";
		print $fh $content;
		close $fh;
	}
	symlink("$node_dir/node_modules", "$dir/node_modules") or die "symlink: $!";

	$node->safe_psql('postgres', "CREATE DATABASE $name");
	my %env = (
		DATABASE_URL => "postgresql://$user\@127.0.0.1:" . $node->port . "/$name",
		# No update check or telemetry: Prisma's servers are out of reach.
		CHECKPOINT_DISABLE => '1',
		PRISMA_HIDE_UPDATE_MESSAGE => '1',
		PRISMA_SCHEMA_ENGINE_BINARY => "$node_dir/no-schema-engine");

	# The migration, then the build, as the page's commands do.  What
	# "prisma migrate deploy" would run, and Drizzle's migration: the
	# page's .sql files, as they are.
	$node->safe_psql($name, 'CREATE EXTENSION snowflake') unless $f->{no_extension};
	$node->safe_psql($name, $_->[1]) foreach grep { $_->[0] =~ /\.sql$/ } @{ $files{$name} };
	my @steps = @{ $f->{steps} };
	my $built = 1;
	foreach my $step (@steps)
	{
		my ($sok, $sout, $serr) = run_in_dir($dir, \%env, $timeout, $step);
		ok($sok, "$name: " . join(" ", map { s{.*/}{}r } @$step)) or diag("$sout\n$serr"), $built = 0;
	}
	next unless $built;

	my $module = $f->{module} // 'dist/orders.js';
	my ($rok, $out, $rerr) = run_in_dir($dir, \%env, $timeout, [ 'node', "$node_dir/orm-run.mjs", $module ]);
	ok($rok, "$name: the recipe ran") or diag($rerr), next;
	my $r = decode_json($out);

	# The server's own text of the keys, in key order.
	my @rows = map { [ split /\|/ ] } split /\n/,
	  $node->safe_psql($name, "SELECT id::text, customer FROM $f->{table} ORDER BY id");
	is(scalar @rows, 4, "$name: four rows in $f->{table}");
	is(scalar(grep { Math::BigInt->new($_->[0]) > $two_53 } @rows), 4,
		"$name: every key above 2^53");

	my @all = @{ $r->{all} };
	is_deeply([ map { $_->{type} } $r->{first}, @{ $r->{more} }, @all ],
		[ ($f->{type}) x 8 ], "$name: every key is a $f->{type}");
	is_deeply([ map { [ $_->{id}, $_->{customer} ] } @all ], \@rows,
		"$name: read in key order, each key is the server's text of it, digit for digit");
	is_deeply([ map { $_->{customer} } @all ], [qw(ada grace edsger barbara)],
		"$name: key order is creation order");
	is($r->{first}{id}, $rows[0][0], "$name: the created object holds its key");
	is_deeply([ map { [ $_->{id}, $_->{customer} ] } @{ $r->{more} } ],
		[ @rows[ 1 .. 3 ] ], "$name: the bulk insert returns every key, in the order given");

	my $decoded = $node->safe_psql($name,
		"SELECT to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS\"Z\"') || ' ' || node_id
		   FROM snowflake_decode($rows[0][0])");
	is("$r->{made}{ts} $r->{made}{node_id}", $decoded,
		"$name: the key decoded through the framework is the server's decoding");
	is($r->{made}{node_id}, 5, "$name: made on node 5");

	# The text form (docs/text-forms.md) through the framework, and the row
	# found again by it through the primary key.
	is($r->{text}{publicId},
		$node->safe_psql($name, "SELECT snowflake_to_base32($rows[0][0], 'ord_')"),
		"$name: the first key's text form is the server's");
	is_deeply([ @{ $r->{text}{found} }{qw(type id customer)} ], [ $f->{type}, $rows[0][0], 'ada' ],
		"$name: the row found by that text is the first, its key a $f->{type}");
}

# ---------------------------------------------------------------------------
# What the page warns of (test/node/orm-pitfalls.mjs), each in the database
# of its framework.
# ---------------------------------------------------------------------------
sub pitfall
{
	my ($db, $what) = @_;
	my %env = (DATABASE_URL => "postgresql://$user\@127.0.0.1:" . $node->port . "/$db");
	my ($pok, $out, $perr) = run_in_dir($base, \%env, $timeout,
		[ 'node', "$node_dir/orm-pitfalls.mjs", $what ]);
	ok($pok, "$what ran") or diag($perr);
	return $pok ? decode_json($out) : {};
}

# Drizzle's mode 'number' rounds: 1,000 keys, all distinct on the server,
# made in one statement (within a few milliseconds), become far fewer
# numbers; keys less than 2^(bits above 53) apart meet.
my $r = pitfall('drizzle', 'drizzle-number');
is("$r->{keys} $r->{rows}", '1000 1000', 'drizzle, mode number: 1000 distinct keys, 1000 rows read');
cmp_ok($r->{numbers}, '<', 500,
	"drizzle, mode number: JavaScript holds fewer distinct numbers ($r->{numbers})");

# Sequelize, a bigint primary key without defaultValue: NULL goes to the
# server, which refuses it.
is(pitfall('sequelize', 'sequelize-no-default')->{code}, '23502',
	'sequelize, no defaultValue: create() sends NULL for the key, 23502');

# MikroORM, no autoincrement: false: the key becomes a bigserial, its
# defaultRaw ignored.
like(pitfall('mikroorm', 'mikroorm-autoincrement')->{column},
	qr/^bigint nextval\('mikro_plain_id_seq'::regclass\)$/,
	'mikroorm, no autoincrement: false: the key becomes a bigserial');

$node->stop;
done_testing();
