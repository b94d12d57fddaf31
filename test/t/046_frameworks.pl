# Copyright: see LICENSE
#
# 046_frameworks.pl
#	The framework recipes of docs/adoption/ (python.md, ruby.md, java.md,
#	go.md) run as the pages show them: every block marked
#	<!-- recipe: PATH --> is written to PATH in a directory of this test and
#	run there, against a real server, the way the page says: SQLAlchemy
#	(ORM and Core) and Django with psycopg2, Active Record with pg, JDBC
#	with pgjdbc and JPA with Hibernate, Go's database/sql with lib/pq.
#	Each prints the key of one object read from the framework's object,
#	the keys of each bulk insert, every key in key order, one key decoded
#	in SQL, its text form (docs/text-forms.md) and the row found again by
#	that text, its public text (docs/public-ids.md, under the key file this
#	test writes) and the row found again by that; the test checks them
#	against what the server stored:
#	exact 64-bit values (all above 2^53, compared as text with the
#	server's), distinct, key order being the order of creation, each bulk
#	insert's keys in the order of its rows, the decoding, the text form and
#	the row found by it.
#
# Needs python3 with SQLAlchemy, Django and psycopg2, ruby with Active
# Record and pg, a JDK with pgjdbc, Hibernate 3.6 and javassist, and Go
# with lib/pq, from Debian's packages (test/setup.sh installs them); fails,
# not skips, without them.

use strict;
use warnings;

use File::Path qw(make_path);
use File::Spec;
use FindBin;
use IPC::Run;
use Math::BigInt;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $docs = "$FindBin::RealBin/../../docs/adoption";
my $two_53 = Math::BigInt->new('9007199254740992');
my $node_id = 1000;

# pgjdbc connects over TCP only: listen on the loopback address too.
my $node = start_snowflake_node('frameworks', node_id => $node_id,
	settings => { listen_addresses => '127.0.0.1', 'snowflake.public_keys_file' => 'public.keys' },
	start => 0);
# The key file of public IDs (docs/public-ids.md): one key, current.
{
	my $path = $node->data_dir . '/public.keys';
	open my $fh, '>', $path or die "$path: $!";
	print $fh "4 0f0e0d0c0b0a09080706050403020100f0e1d2c3b4a5968778695a4b3c2d1e0f current\n";
	close $fh or die "$path: $!";
	chmod(0600, $path) or die "chmod $path: $!";
}
$node->start;
my $user = scalar getpwuid($<);

# Write the recipes of docs/adoption/$page whose path starts with $prefix/
# under a new directory; that directory.
sub write_recipes
{
	my ($page, $prefix) = @_;
	my %recipes = doc_recipes("$docs/$page");
	my @mine = grep { m{^\Q$prefix\E/} } sort keys %recipes;
	ok(scalar @mine, "$page shows the $prefix recipe") or return;
	# Absolute: Go refuses a relative GOCACHE.
	my $dir = File::Spec->rel2abs(PostgreSQL::Test::Utils::tempdir("recipe_$prefix"));
	foreach my $path (@mine)
	{
		(my $rel = $path) =~ s{^\Q$prefix\E/}{};
		my $file = "$dir/$rel";
		(my $parent = $file) =~ s{/[^/]*$}{};
		make_path($parent);
		open my $fh, '>', $file or die "cannot write $file: $!";
		print $fh $recipes{$path};
		close $fh;
	}
	return ($dir, %recipes);
}

# A database of its own with the extension, and the environment a recipe
# connects with.
sub database_for
{
	my ($db) = @_;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	$node->safe_psql($db, 'CREATE EXTENSION snowflake');
	return (
		PGHOST => $node->host,
		PGPORT => $node->port,
		PGUSER => $user,
		PGDATABASE => $db,
		PGSSLMODE => 'disable',
		JDBC_URL => 'jdbc:postgresql://127.0.0.1:' . $node->port . "/$db?user=$user");
}

# Run @cmd in $dir with %env added, bounded in time; its standard output,
# or undef (and a failed test) if it failed.
sub run_in
{
	my ($what, $dir, $env, @cmd) = @_;
	my ($ok, $out, $err) = run_in_dir($dir, $env, 300, \@cmd);
	ok($ok, "$what: @cmd")
	  or diag("exit " . ($? >> 8) . "\nstdout:\n$out\nstderr:\n$err");
	return $ok ? $out : undef;
}

# "2026-11-25T21:18:03.151000+00:00", "...03.151Z", "...03Z": the time in
# UTC to the millisecond, as "2026-11-25T21:18:03.151".
sub to_ms
{
	my ($ts) = @_;
	return "unparsed: $ts"
	  unless $ts =~ /^(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d)(?:\.(\d+))?(?:Z|\+00:00)$/;
	return "$1." . substr(($2 // '') . '000', 0, 3);
}

# Check a recipe's report (its standard output) against table $table of
# database $db: the lines "one ID", "many ID ..." (one per bulk insert, its
# rows' notes ending in " 0", " 1" ...), "ordered ID ..." and
# "decoded ID NODE TIME", then "text ID TEXT" (the first key in base32 with
# the prefix "ord_") and "found TEXT ID NOTE" (the row found by it).
sub check_keys
{
	my ($what, $db, $table, $out, $bulks) = @_;
	return unless defined $out;
	note("$what printed:\n$out");
	my ($one) = $out =~ /^one (\d+)$/m;
	my @many = map { [ split / / ] } $out =~ /^many ([\d ]+)$/mg;
	my ($ordered) = $out =~ /^ordered ([\d ]+)$/m;
	my ($dec_id, $dec_node, $dec_ts) = $out =~ /^decoded (\d+) (\d+) (\S+)$/m;
	ok(defined $one && defined $ordered && defined $dec_id,
		"$what: reports one key, the keys in order and a decoding")
	  or diag($out), return;
	is(scalar @many, $bulks, "$what: $bulks bulk insert(s) reported");

	my @stored = map { [ split /\|/ ] }
	  split /\n/, $node->safe_psql($db, "SELECT id, note FROM $table ORDER BY id");
	my %note = map { $_->[0] => $_->[1] } @stored;
	my @created = ($one, map { @$_ } @many);
	is($ordered, join(' ', map { $_->[0] } @stored),
		"$what: the keys read in key order are exactly the server's");
	is($ordered, join(' ', @created),
		"$what: key order is the order of creation");
	is(scalar(grep { Math::BigInt->new($_) > $two_53 } @created),
		scalar @created, "$what: every key is above 2^53");
	my %seen = map { $_ => 1 } @created;
	is(scalar keys %seen, 1 + 3 * $bulks, "$what: the keys are distinct");
	is($note{$one}, 'first', "$what: the single object's key is its row's");
	foreach my $i (0 .. $#many)
	{
		is(join(',', map { ($note{$_} // 'none') =~ / (\d+)$/ ? $1 : 'none' } @{ $many[$i] }),
			'0,1,2', "$what: bulk insert " . ($i + 1) . " returns its rows' keys in order");
	}
	is("$dec_id $dec_node " . to_ms($dec_ts),
		$node->safe_psql($db,
			"SELECT id, node_id, to_char(ts AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS') "
			  . "FROM (SELECT $one AS id) i, snowflake_decode(i.id)") =~ s/\|/ /gr,
		"$what: the decoding is the server's");
	is($dec_node, $node_id, "$what: decoded node id is the server's");

	# The text form, read through the framework, is the server's; the row
	# found again by it is the first one.
	my ($text_id, $public) = $out =~ /^text (\d+) (\S+)$/m;
	my ($found_public, $found_id, $found_note) = $out =~ /^found (\S+) (\d+) (.*)$/m;
	is($text_id // 'none', $one, "$what: reports the text form of the first key");
	is($public // 'none',
		$node->safe_psql($db, "SELECT snowflake_to_base32($one, 'ord_')"),
		"$what: the text form read through the framework is the server's");
	is(join(' ', map { $_ // 'none' } $found_public, $found_id, $found_note),
		join(' ', $public // 'none', $one, 'first'),
		"$what: the row found again by its text form is the first one");

	# The public text likewise: the server's, naming key 4, and it finds
	# the first row again.
	my ($ptext_id, $ptext) = $out =~ /^public (\d+) (\S+)$/m;
	my ($pfound_text, $pfound_id, $pfound_note) = $out =~ /^public_found (\S+) (\d+) (.*)$/m;
	is($ptext_id // 'none', $one, "$what: reports the public text of the first key");
	is($ptext // 'none',
		$node->safe_psql($db, "SELECT snowflake_to_public_base32($one, 'ord_')"),
		"$what: the public text read through the framework is the server's");
	like($ptext // '', qr/^ord_4[0-9A-HJKMNP-TV-Z]{13}$/, "$what: the public text names key 4");
	is(join(' ', map { $_ // 'none' } $pfound_text, $pfound_id, $pfound_note),
		join(' ', $ptext // 'none', $one, 'first'),
		"$what: the row found again by its public text is the first one");
}

my $python = '/usr/bin/python3';    # Debian's, with Debian's modules

# ---------------------------------------------------------------------------
# Python: SQLAlchemy (ORM and Core)
# ---------------------------------------------------------------------------
{
	my %env = database_for('sqlalchemy');
	my ($dir) = write_recipes('python.md', 'sqlalchemy');
	(run_in('SQLAlchemy version', $dir, {}, $python, '-c',
		'import sqlalchemy, psycopg2; print(sqlalchemy.__version__, psycopg2.__version__)') // '')
	  =~ /^(\S+) (\S+)/ and note("SQLAlchemy $1, psycopg2 $2");
	my $out = run_in('SQLAlchemy', $dir, \%env, $python, 'shop.py');
	check_keys('SQLAlchemy', 'sqlalchemy', 'sqla_orders', $out, 2);
}

# ---------------------------------------------------------------------------
# Python: Django, its migrations made as the page says
# ---------------------------------------------------------------------------
{
	my %env = (database_for('django'), DJANGO_SETTINGS_MODULE => 'settings',
		PYTHONPATH => '.');
	my ($dir, %recipes) = write_recipes('python.md', 'django');
	# What "django-admin startapp shop" leaves, besides the model.
	foreach my $f ('shop/__init__.py', 'shop/migrations/__init__.py')
	{
		open my $fh, '>', "$dir/$f" or die $!;
		close $fh;
	}
	# 0002 depends on 0001, which makemigrations writes from the model.
	my $second = 'shop/migrations/0002_snowflake_key.py';
	rename "$dir/$second", "$dir/$second.later" or die $!;
	(run_in('Django', $dir, \%env, $python, '-m', 'django', 'version') // '')
	  =~ /^(\S+)/ and note("Django $1");
	run_in('Django', $dir, \%env, $python, '-m', 'django', 'makemigrations', 'shop');
	rename "$dir/$second.later", "$dir/$second" or die $!;
	run_in('Django', $dir, \%env, $python, '-m', 'django', 'migrate');
	is($node->safe_psql('django',
			"SELECT pg_get_expr(adbin, adrelid) FROM pg_attrdef "
			  . "WHERE adrelid = 'shop_order'::regclass"),
		'snowflake_nextval()', 'Django: after the migrations the key\'s default is snowflake_nextval()');
	my $out = run_in('Django', $dir, \%env, $python, 'demo.py');
	check_keys('Django', 'django', 'shop_order', $out, 1);
}

# ---------------------------------------------------------------------------
# Python: psycopg 3 and asyncpg directly, SQLAlchemy's asyncio extension on
# asyncpg
# ---------------------------------------------------------------------------
(run_in('psycopg 3 and asyncpg versions', '.', {}, $python, '-c',
	'import psycopg, asyncpg, greenlet; print(psycopg.__version__, asyncpg.__version__, greenlet.__version__)') // '')
  =~ /^(\S+) (\S+) (\S+)/ and note("psycopg $1, asyncpg $2, greenlet $3");
foreach my $r (['psycopg', 'psycopg 3', 'psycopg_orders', 1],
	['asyncpg', 'asyncpg', 'asyncpg_orders', 1],
	['sqlalchemy_async', 'SQLAlchemy on asyncpg', 'sqla_async_orders', 1])
{
	my ($prefix, $what, $table, $bulks) = @$r;
	my %env = database_for($prefix);
	my ($dir) = write_recipes('python.md', $prefix);
	my $out = run_in($what, $dir, \%env, $python, 'shop.py');
	check_keys($what, $prefix, $table, $out, $bulks);
}

# ---------------------------------------------------------------------------
# Ruby: Active Record
# ---------------------------------------------------------------------------
{
	my %env = database_for('activerecord');
	my ($dir) = write_recipes('ruby.md', 'activerecord');
	(run_in('Active Record version', $dir, {}, 'ruby', '-ractive_record', '-rpg', '-e',
		'puts "#{ActiveRecord.version} #{PG::VERSION}"') // '') =~ /^(\S+) (\S+)/
	  and note("Active Record $1, pg $2");
	my $out = run_in('Active Record', $dir, \%env, 'ruby', 'shop.rb');
	check_keys('Active Record', 'activerecord', 'orders', $out, 1);
}

# ---------------------------------------------------------------------------
# Java: JDBC with pgjdbc, run as a single source file
# ---------------------------------------------------------------------------
my $jars = '/usr/share/java';
{
	my %env = database_for('jdbc');
	my ($dir) = write_recipes('java.md', 'jdbc');
	my $out = run_in('JDBC', $dir, \%env, 'java', '-cp', "$jars/postgresql.jar",
		'JdbcShop.java');
	check_keys('JDBC', 'jdbc', 'jdbc_orders', $out, 1);
}

# ---------------------------------------------------------------------------
# Java: JPA with Hibernate, on the schema the page shows
# ---------------------------------------------------------------------------
{
	my %env = database_for('jpa');
	my ($dir, %recipes) = write_recipes('java.md', 'jpa');
	$node->safe_psql('jpa', $recipes{'jpa/schema.sql'});
	# The class path the page shows.
	my @jars = qw(hibernate-core hibernate-entitymanager hibernate-commons-annotations
	  geronimo-jpa_2.0_spec geronimo-jta-1.2-spec antlr commons-collections3
	  dom4j slf4j-api slf4j-nop javassist postgresql);
	my $page = slurp_file("$docs/java.md");
	is(join(' ', grep { $page !~ /\Q$_\E\b/ } @jars), '',
		'java.md names every jar of the class path');
	my $cp = join ':', '.', map { "$jars/$_.jar" } @jars;
	run_in('JPA', $dir, \%env, 'javac', '-cp', $cp, 'Order.java', 'Shop.java');
	my $out = run_in('JPA', $dir, \%env, 'java', '-cp', $cp, 'Shop');
	check_keys('JPA (Hibernate)', 'jpa', 'jpa_orders', $out, 1);
}

# ---------------------------------------------------------------------------
# Go: database/sql with lib/pq, built offline against Debian's sources
# ---------------------------------------------------------------------------
{
	my %env = database_for('go');
	my ($dir) = write_recipes('go.md', 'go');
	my %goenv = (GO111MODULE => 'off', GOPATH => '/usr/share/gocode',
		GOFLAGS => '', GOTOOLCHAIN => 'local', GOCACHE => "$dir/.cache");
	(run_in('Go version', $dir, \%goenv, 'go', 'version') // '') =~ /(go\d\S*)/
	  and note("Go $1");
	my $out = run_in('Go', $dir, { %env, %goenv }, 'go', 'run', 'main.go');
	check_keys('Go', 'go', 'go_orders', $out, 1);
}

$node->stop;
done_testing();
