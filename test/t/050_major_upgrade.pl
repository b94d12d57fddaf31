# Copyright: see LICENSE
#
# 050_major_upgrade.pl
#	A server's move to a new cluster, the ways users make it, with the
#	steps read from docs/operations.md ("Upgrading PostgreSQL", the blocks
#	marked <!-- recipe: upgrade/... -->) and run as the page shows them:
#	  - pg_upgrade --check, then pg_upgrade --link and --copy;
#	  - Debian's pg_upgradecluster (postgresql-common), -m link and -m dump,
#	    with the settings it carries checked on the new cluster;
#	  - logical replication (blue/green): live inserts, the switch, inserts
#	    on the new server under a node id of its own;
#	  - pg_dump/pg_restore and pg_dumpall.
#	Each path checks that the extension's version and objects, the tables
#	keyed by DEFAULT snowflake_nextval() (rows and default), a generated
#	column, an index and a view over the decoders and the claims table
#	come through, that the new server's first start logs the floor (no
#	path carries snowflake.state), and that the first ID after the move is
#	above every ID before it, the old server's last IDs having run seconds
#	ahead of its clock just before it stopped (a burst, with
#	snowflake.max_drift_ms = 30 s).  The gap between the old server's last
#	ID and the new one's first is printed ("gap: ...").  And what goes
#	wrong when the new cluster's snowflake.max_drift_ms is lower than the
#	old one's: its first ID comes out below the old server's last.
#
#	Within one major (a new cluster of the same version) everywhere; from
#	an older major to this one where test/check.sh installed it
#	(SNOWFLAKE_OLD_BINDIR, set in the chroot of 19 for 18): then a missing
#	installation fails the file, and without it the file says that the
#	cross-major parts did not run.  pg_upgradecluster runs where both
#	majors are Debian's (/usr/lib/postgresql/N), in a private
#	PG_CLUSTER_CONF_ROOT.

use strict;
use warnings;

use File::Basename qw(dirname);
use File::Path qw(make_path);
use File::Spec;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;
use Time::HiRes;

my $root = File::Spec->rel2abs(dirname(__FILE__) . '/../..');
my %recipes = doc_recipes("$root/docs/operations.md");
my @steps = qw(carry-settings wait-for-clock pg_upgrade reclaim pg_upgradecluster
  logical-start logical-switch dump-restore dumpall);
is( join(' ', sort grep { m{^upgrade/} } keys %recipes),
	join(' ', sort map { "upgrade/$_.sh" } @steps),
	'docs/operations.md has every step of "Upgrading PostgreSQL" this test runs');

# The installations: this major's (PATH), and an older one if given.
sub bindir_of
{
	my ($pg_config) = @_;
	my $dir = `$pg_config --bindir`;
	die "$pg_config --bindir failed" if $? != 0;
	chomp $dir;
	return $dir;
}

sub major_of
{
	my ($bindir) = @_;
	my $v = `"$bindir/pg_config" --version`;
	die "$bindir/pg_config --version failed" unless $v =~ /PostgreSQL (\d+)/;
	return $1;
}
my $new_bin = bindir_of('pg_config');
my $new_major = major_of($new_bin);
my @pairs = ([ $new_bin, $new_bin ]);
if (my $old_bin = $ENV{SNOWFLAKE_OLD_BINDIR})
{
	# Required: a broken installation fails the file instead of skipping.
	die "SNOWFLAKE_OLD_BINDIR=$old_bin has no postgres" unless -x "$old_bin/postgres";
	my $pkglib = `"$old_bin/pg_config" --pkglibdir`;
	chomp $pkglib;
	die "SNOWFLAKE_OLD_BINDIR=$old_bin: snowflake is not installed there ($pkglib)"
	  unless -e "$pkglib/snowflake.so";
	die "SNOWFLAKE_OLD_BINDIR=$old_bin is not older than PostgreSQL $new_major"
	  unless major_of($old_bin) < $new_major;
	unshift @pairs, [ $old_bin, $new_bin ];
}
else
{
	diag("cross-major parts not run: no older PostgreSQL given (SNOWFLAKE_OLD_BINDIR); "
		  . "within PostgreSQL $new_major only. CI runs 18 -> 19 in the chroot of 19.");
}

my $recipe_dir = PostgreSQL::Test::Utils::tempdir();
# pg_upgrade makes its sockets in the directory it runs in: a short one.
my $work = PostgreSQL::Test::Utils::tempdir_short();

# Run the page's step $name (a file of the recipe, by bash -e -o pipefail)
# with the variables %env, in $work; check that it succeeded and return
# its standard output (and its standard error).
sub run_step
{
	my ($label, $name, %env) = @_;
	my $file = "$recipe_dir/" . ($name =~ s{/}{_}gr);
	open my $fh, '>', $file or die "could not write $file: $!";
	print $fh $recipes{$name};
	close $fh;
	my ($ok, $out, $err) = run_in_dir($work, { DB => 'shop', %env }, 300,
		[ 'bash', '-e', '-o', 'pipefail', $file ]);
	ok($ok, "$label: the page's $name runs")
	  or diag("stdout:\n$out\nstderr:\n$err");
	# A failed step ends its path: what follows would fail for that reason.
	die "step $name failed\n" unless $ok;
	return wantarray ? ($out, $err) : $out;
}

# The variables of the steps for servers $old and $new.
sub step_env
{
	my ($old, $new, $old_bin, $new_bin) = @_;
	return (
		PGHOST => $old->host,
		OLD_BIN => $old_bin,
		NEW_BIN => $new_bin,
		OLD_PORT => $old->port,
		NEW_PORT => $new->port,
		OLD_DATA => $old->data_dir,
		NEW_DATA => $new->data_dir);
}

# The old server of a path: preloaded, node id 7, IDs may lead its clock by
# 30 s; database "shop" with the extension, a claim, a table keyed by the
# default with a generated column and an index over a decoder, a view over
# the decoders, and 1000 rows.
my $schema = q{
CREATE EXTENSION snowflake;
SELECT snowflake_claim_node('old server');
CREATE TABLE orders (
	id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
	item text NOT NULL,
	created timestamptz GENERATED ALWAYS AS (snowflake_timestamp(id)) STORED);
CREATE INDEX orders_ts ON orders (snowflake_timestamp(id));
CREATE VIEW order_origins AS
	SELECT id, (snowflake_decode(id)).node_id AS node, (snowflake_decode(id)).ts FROM orders;
INSERT INTO orders (item) SELECT 'item ' || i FROM generate_series(1, 1000) i;
};

sub old_server
{
	my ($name, $bin, %opts) = @_;
	my $node = start_snowflake_node($name,
		install_path => dirname($bin),
		preload => 1,
		node_id => 7,
		%opts);
	# The burst (lead_burst) and the stats are read in database postgres.
	$node->safe_psql('postgres', 'CREATE EXTENSION snowflake; CREATE DATABASE shop');
	$node->safe_psql('shop', $schema);
	allow_lead($node);
	return $node;
}

# Let IDs lead $node's clock by $lead (default 30s, as SHOW prints it), by
# ALTER SYSTEM and a reload, once the floor of its own first start (1 s)
# has passed: its IDs then run ahead only by what a burst adds.  The stats
# are read in database $db (default postgres), which has the extension.
sub allow_lead
{
	my ($node, $db, $lead) = @_;
	$db //= 'postgres';
	$lead //= '30s';
	$node->safe_psql($db, "ALTER SYSTEM SET snowflake.max_drift_ms = '$lead'");
	$node->reload;
	$node->poll_query_until($db,
		"SELECT current_setting('snowflake.max_drift_ms') = '$lead'"
		  . ' AND (SELECT coalesce(last_timestamp < clock_timestamp(), true) FROM snowflake_stats)')
	  or die 'timed out waiting for the reload of ' . $node->name;
	return;
}

# Start the new server of a path that keeps the old one running (logical
# replication, a dump), with the carried settings and %more, as one that
# has run for a while: the floor of its first start (1 s here) has passed
# when writes come to it, as after a long initial copy, and IDs may lead
# its clock by 30 s as on the old server.  Its database "aging" has the
# extension for that.
sub start_new
{
	my ($node, %more) = @_;
	add_settings($node, %more, 'snowflake.max_drift_ms' => 1000);
	$node->start;
	$node->safe_psql('postgres', 'CREATE DATABASE aging');
	$node->safe_psql('aging', 'CREATE EXTENSION snowflake');
	allow_lead($node, 'aging');
	return;
}

# Add the settings the step upgrade/carry-settings.sh saved to $node's
# configuration, as the page says, and %more after them.
sub add_settings
{
	my ($node, %more) = @_;
	$node->append_conf('postgresql.conf',
		slurp_file("$work/snowflake-settings.conf")
		  . join('', map { "$_ = '$more{$_}'\n" } sort keys %more));
	return;
}

# A new, empty cluster of $bin's major, not started, without settings of
# its own: the steps carry them.
sub new_cluster
{
	my ($name, $bin) = @_;
	return start_snowflake_node($name,
		install_path => dirname($bin),
		preload => 0,
		start => 0);
}

# Everything of database shop that must come through, as one text: the
# extension's version and member objects, the table's default, generated
# column, index and rows, the view's definition and rows, the claims.
my $fingerprint_sql = q{
SELECT (SELECT extversion FROM pg_extension WHERE extname = 'snowflake'),
       (SELECT string_agg(o, '; ' ORDER BY o)
          FROM pg_depend, pg_describe_object(classid, objid, objsubid) o
         WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
           AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')),
       (SELECT string_agg(a.attname || ' ' || coalesce(pg_get_expr(d.adbin, d.adrelid), '')
                          || ' ' || a.attgenerated::text, '; ' ORDER BY a.attnum)
          FROM pg_attribute a LEFT JOIN pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
         WHERE a.attrelid = 'orders'::regclass AND a.attnum > 0),
       pg_get_indexdef('orders_ts'::regclass),
       pg_get_viewdef('order_origins'),
       (SELECT count(*) || ' ' || md5(string_agg(id || ' ' || item || ' '
                                      || extract(epoch FROM created), ',' ORDER BY id)) FROM orders),
       (SELECT count(*) || ' ' || md5(string_agg(id || ' ' || node || ' ' || extract(epoch FROM ts),
                                                 ',' ORDER BY id)) FROM order_origins),
       (SELECT string_agg(node_id || ' ' || system_identifier || ' ' || server_name, '; '
                          ORDER BY node_id, system_identifier) FROM snowflake_node_claims)};

sub fingerprint
{
	my ($node) = @_;
	return join("\n", split /\|/, $node->safe_psql('shop', $fingerprint_sql));
}

# The old server's last IDs run about 5 s ahead of its clock; the last one
# is stored in the table.  Returns it.
sub burst
{
	my ($node) = @_;
	my $last = lead_burst($node, 5);
	$node->safe_psql('shop', "INSERT INTO orders (id, item) VALUES ($last, 'last')");
	my $lead = stats($node)->{lead_ms};
	ok($lead > 4000 && $lead < 10000,
		$node->name . ": the last IDs lead the clock by seconds ($lead ms)");
	return $last;
}

# The gap in ms between the ID times of $last and $first, decoded by $node.
sub gap_ms
{
	my ($node, $last, $first) = @_;
	return $node->safe_psql('shop',
		"SELECT ((extract(epoch FROM snowflake_timestamp($first))"
		  . " - extract(epoch FROM snowflake_timestamp($last))) * 1000)::bigint");
}

# The first ID the new server mints, through the table's default; checks
# that it is above $last and reports the gap.
sub first_after
{
	my ($label, $node, $last) = @_;
	my $first = $node->safe_psql('shop',
		"INSERT INTO orders (item) VALUES ('first after') RETURNING id");
	cmp_ok($first, '>', $last,
		"$label: the first ID after the move, by the default, is above every ID before it");
	diag("gap: $label: " . gap_ms($node, $last, $first) . ' ms');
	return $first;
}

# The log line of the floor of a first start (without a state file: it
# needs none, as every start applies the floor), in the server log $file,
# with the new cluster's lead in it.
sub floor_logged
{
	my ($label, $file, $lead_ms) = @_;
	like(slurp_file($file),
		qr/LOG:  snowflake IDs resume at $lead_ms ms past the clock, because \Q@{[ start_reason() ]}\E\n/,
		"$label: the new server's first start logs the floor (no state file came through)");
	return;
}

# ---------------------------------------------------------------------------
# pg_upgrade, --link and --copy
# ---------------------------------------------------------------------------
sub path_pg_upgrade
{
	my ($old_bin, $new_bin, $mode, $tag) = @_;
	my $label = "pg_upgrade $mode " . major_of($old_bin) . " -> $new_major";
	my $old = old_server("pgu_${mode}_${tag}_old", $old_bin);
	my $new = new_cluster("pgu_${mode}_${tag}_new", $new_bin);
	# --copy is the default, and the option exists from 16 on.
	my %env = (step_env($old, $new, $old_bin, $new_bin),
		MODE => ($mode eq 'copy' && $new_major < 16) ? '' : "--$mode");
	my $last = burst($old);
	my $before = fingerprint($old);
	run_step($label, 'upgrade/carry-settings.sh', %env);
	my $out = run_step($label, 'upgrade/pg_upgrade.sh', %env);
	$old->_update_pid(0);
	$new->_update_pid(1);
	like($out, qr/^1\.\d+\|ready$/m, "$label: the step prints the extension's version and ready");
	floor_logged($label, $new->data_dir . '/server.log', 30000);
	is($new->safe_psql('postgres',
			"SELECT current_setting('shared_preload_libraries') || ' '"
			  . " || current_setting('snowflake.node_id') || ' '"
			  . " || current_setting('snowflake.max_drift_ms')"),
		'snowflake 7 30s', "$label: the preload, node id and lead were carried");
	is(fingerprint($new), $before,
		"$label: the extension's version and objects, rows, default, generated column, index, view and claims came through");
	first_after($label, $new, $last);
	my $claims = run_step($label, 'upgrade/reclaim.sh', %env);
	like($claims, qr/\A7\|old server\n7\n?\z/, "$label: the old server's claim is replaced");
	is($new->safe_psql('shop',
			'SELECT count(*) FROM snowflake_node_claims c, pg_control_system() s'
			  . ' WHERE c.system_identifier = s.system_identifier AND c.node_id = 7'),
		'1', "$label: the new server holds the claim of node id 7");
	$new->stop;
	return;
}

# ---------------------------------------------------------------------------
# The new cluster's snowflake.max_drift_ms lower than the old one's
# ---------------------------------------------------------------------------
sub path_lower_drift
{
	my ($old_bin, $new_bin, $tag) = @_;
	my $label = 'max_drift_ms not carried (' . major_of($old_bin) . " -> $new_major)";
	my $old = old_server("lower_${tag}_old", $old_bin);
	my $new = new_cluster("lower_${tag}_new", $new_bin);
	my %env = (step_env($old, $new, $old_bin, $new_bin), MODE => '--link');
	# IDs led by 115 s (of 120 s allowed here): the upgrade has some 110 s
	# to show them going back, which a busy machine needs (with a lead of
	# 28 s, pg_upgrade beside three other suites once took 26 s, and at
	# 16 s 14.6 s left too little).
	allow_lead($old, 'postgres', '2min');
	my $last = lead_burst($old, 115);
	my $t0 = Time::HiRes::time();
	my $lead = stats($old)->{lead_ms};
	cmp_ok($lead, '>', 112000, "$label: the old server's last IDs lead its clock by ${lead} ms");
	run_step($label, 'upgrade/carry-settings.sh', %env);
	# The new cluster's own, lower value, after the carried ones.
	open my $fh, '>>', "$work/snowflake-settings.conf" or die $!;
	print $fh "snowflake.max_drift_ms = 1000\n";
	close $fh;
	run_step($label, 'upgrade/pg_upgrade.sh', %env);
	$old->_update_pid(0);
	$new->_update_pid(1);
	floor_logged($label, $new->data_dir . '/server.log', 1000);
	my $first = $new->safe_psql('shop', 'SELECT snowflake_nextval()');
	my $took = int((Time::HiRes::time() - $t0) * 1000);
	note("$label: from the old server's last ID to the new one's first: $took ms");
	# The floor is the new clock plus 1 s; the old IDs ran $lead ms ahead.
	if ($took + 1000 < $lead - 2000)
	{
		cmp_ok($first, '<', $last,
			"$label: the new server's first ID is BELOW the old server's last: IDs went back");
		diag("gap: $label: " . gap_ms($new, $last, $first) . " ms ($took ms after the old server's last ID)");
	}
	else
	{
		fail("$label: the new server's first ID came $took ms after the old server's last, too late to show the old lead of $lead ms");
	}
	$new->stop;
	return;
}

# ---------------------------------------------------------------------------
# Debian's pg_upgradecluster, -m link and -m dump
# ---------------------------------------------------------------------------
sub path_pg_upgradecluster
{
	my ($old_bin, $new_bin, $method, $tag) = @_;
	my ($old_major) = major_of($old_bin);
	my $label = "pg_upgradecluster -m $method $old_major -> $new_major";
	# Clusters of a private configuration root, data in this test's
	# directory, sockets where the framework's servers have theirs.
	my $confroot = PostgreSQL::Test::Utils::tempdir();
	my $cluster = "sf${tag}$method$$";
	local $ENV{PG_CLUSTER_CONF_ROOT} = $confroot;
	# A socket directory of its own: pg_dropcluster removes a cluster's
	# socket directory when it is left empty, and the framework's servers
	# share theirs.
	my $h = PostgreSQL::Test::Cluster->new("puc_${method}_$tag",
		install_path => dirname($old_bin), own_host => 1);
	my ($ok, $out, $err) = run_in_dir($work, {}, 120,
		[ 'pg_createcluster', '-d', $h->data_dir, '-s', $h->host, '-p', $h->port,
		  '-l', $h->logfile, $old_major, $cluster ]);
	ok($ok, "$label: pg_createcluster") or diag("$out\n$err");
	my $confd = "$confroot/$old_major/$cluster/conf.d";
	make_path($confd);
	open my $fh, '>', "$confd/snowflake.conf" or die $!;
	print $fh "shared_preload_libraries = 'snowflake'\nsnowflake.node_id = 9\n";
	close $fh;
	($ok, $out, $err) = run_in_dir($work, {}, 120,
		[ 'pg_ctlcluster', $old_major, $cluster, 'start' ]);
	ok($ok, "$label: the old cluster starts") or diag("$out\n$err");
	$h->_update_pid(1);
	$h->safe_psql('postgres', 'CREATE EXTENSION snowflake; CREATE DATABASE shop');
	$h->safe_psql('shop', $schema);
	# postgresql.auto.conf: pg_upgradecluster carries it too.
	allow_lead($h);
	my $last = burst($h);
	my $before = fingerprint($h);
	my $new_log = "/var/log/postgresql/postgresql-$new_major-$cluster.log";
	# What pg_upgradecluster leaves outside this test's directories is
	# removed however the path ends.
	my $cleanup = sub {
		run_in_dir($work, {}, 120, [ 'pg_dropcluster', '--stop', $new_major, $cluster ])
		  if -d "$confroot/$new_major/$cluster";
		unlink $new_log;
		File::Path::rmtree($_)
		  foreach glob("/var/log/postgresql/pg_upgradecluster-$old_major-$new_major-$cluster.*");
		$h->_update_pid(-e $h->data_dir . '/postmaster.pid' ? 1 : 0);
	};
	my $done = eval {
		# psql --cluster is Debian's pg_wrapper (/usr/bin), not the psql of
		# the major under test, which comes first in PATH here.
		my $step = run_step($label, 'upgrade/pg_upgradecluster.sh',
			PATH => "/usr/bin:$ENV{PATH}",
			PGHOST => $h->host,
			OLD_MAJOR => $old_major,
			NEW_MAJOR => $new_major,
			CLUSTER => $cluster,
			METHOD => $method);
		$h->_update_pid(0);
		like($step, qr/^snowflake\|9\|30s\|ready$/m,
			"$label: the preload, node id and lead are carried, the generator is ready");
		ok(!-d $h->data_dir, "$label: the step dropped the old cluster");
		# The new cluster: its port and data directory as pg_upgradecluster set them.
		my $port = `pg_conftool -s $new_major $cluster show port`;
		chomp $port;
		my $n = PostgreSQL::Test::Cluster->new("puc_${method}_${tag}_new",
			port => $port, install_path => dirname($new_bin));
		# pg_upgradecluster gives the new cluster the old one's socket
		# directory.
		$n->{_host} = $h->host;
		is(fingerprint($n), $before,
			"$label: the extension's version and objects, rows, default, generated column, index, view and claims came through");
		# The preload comes with conf.d, after pg_upgrade or the restore: the
		# start by the step is the first with the library.
		floor_logged($label, $new_log, 30000);
		first_after($label, $n, $last);
		1;
	};
	my $why = $@;
	$cleanup->();
	die $why unless $done;
	return;
}

# ---------------------------------------------------------------------------
# Logical replication, blue/green
# ---------------------------------------------------------------------------
sub path_logical
{
	my ($old_bin, $new_bin, $tag) = @_;
	my $label = 'logical replication ' . major_of($old_bin) . " -> $new_major";
	my $old = old_server("logical_${tag}_old", $old_bin,
		init => { allows_streaming => 'logical' });
	my $new = new_cluster("logical_${tag}_new", $new_bin);
	my %env = (step_env($old, $new, $old_bin, $new_bin),
		OLD_CONNINFO => 'host=' . $old->host . ' port=' . $old->port . ' dbname=shop');
	run_step($label, 'upgrade/carry-settings.sh', %env);
	# A node id of its own, as the page says.
	start_new($new, 'snowflake.node_id' => 8);
	my $before_max = $old->safe_psql('shop', 'SELECT max(id) FROM orders');

	# Live inserts on the old server while the new one copies and follows.
	my $script = "$recipe_dir/insert_$tag.sql";
	open my $fh, '>', $script or die $!;
	print $fh "INSERT INTO orders (item) VALUES ('live');\n";
	close $fh;
	my ($pb_out, $pb_err) = ('', '');
	my $pgbench = IPC::Run::start(
		[ 'pgbench', '-n', '-c', '2', '-T', '8', '-R', '200', '-f', $script,
		  '-h', $old->host, '-p', $old->port, 'shop' ],
		'>', \$pb_out, '2>', \$pb_err);
	run_step($label, 'upgrade/logical-start.sh', %env);
	$pgbench->finish;
	is($?, 0, "$label: the live inserts ran") or diag($pb_err);
	cmp_ok($old->safe_psql('shop', "SELECT count(*) FROM orders WHERE item = 'live' AND id > $before_max"),
		'>', 100, "$label: live inserts went on during the copy");
	# The last writes to the old server: a burst seconds ahead of its clock.
	my $last = burst($old);
	run_step($label, 'upgrade/logical-switch.sh', %env);
	run_step($label, 'upgrade/wait-for-clock.sh', %env);
	$old->safe_psql('shop', 'DROP PUBLICATION upgrade');
	is(fingerprint($new), fingerprint($old),
		"$label: every row of the old server, the claims among them, is on the new one");
	floor_logged($label, $new->logfile, 1000);
	# Writes go to the new server.
	my $minted = $new->safe_psql('shop', q{
		WITH n AS (INSERT INTO orders (item) SELECT 'on new' FROM generate_series(1, 1000) RETURNING id)
		SELECT min(id) || ' ' || count(*) FROM n});
	my ($first, $count) = split / /, $minted;
	is($count, 1000, "$label: inserts on the new server after the switch");
	cmp_ok($first, '>', $last,
		"$label: every key minted on the new server is above every key the old one minted");
	diag("gap: $label: " . gap_ms($new, $last, $first) . ' ms');
	my $old_count = $old->safe_psql('shop', 'SELECT count(*) FROM orders');
	is($new->safe_psql('shop', q{
		SELECT count(*) FILTER (WHERE snowflake_node_id(id) = 8) || ' '
		    || count(*) FILTER (WHERE snowflake_node_id(id) = 7) || ' '
		    || count(DISTINCT id) || ' ' || count(*)
		  FROM orders}),
		"1000 $old_count " . ($old_count + 1000) . ' ' . ($old_count + 1000),
		"$label: no key twice: the old server's keys carry node 7, the new one's node 8");
	$new->stop;
	$old->stop;
	return;
}

# ---------------------------------------------------------------------------
# pg_dump/pg_restore and pg_dumpall
# ---------------------------------------------------------------------------
sub path_dump
{
	my ($old_bin, $new_bin, $tag) = @_;
	my $label = 'pg_dump/pg_restore ' . major_of($old_bin) . " -> $new_major";
	my $old = old_server("dump_${tag}_old", $old_bin);
	my $last = burst($old);
	my $before = fingerprint($old);
	foreach my $how ('dump-restore', 'dumpall')
	{
		my $l = $how eq 'dumpall' ? $label =~ s{^\S+}{pg_dumpall}r : $label;
		my $new = new_cluster("${how}_${tag}_new", $new_bin);
		my %env = step_env($old, $new, $old_bin, $new_bin);
		run_step($l, 'upgrade/carry-settings.sh', %env);
		start_new($new);
		floor_logged($l, $new->logfile, 1000);
		my ($out, $err) = run_step($l, "upgrade/$how.sh", %env);
		if ($how eq 'dumpall')
		{
			my @errors = grep { /ERROR/ && !/role "[^"]+" already exists/ } split /\n/, $err;
			is(join("\n", @errors), '', "$l: no error but the role that exists");
		}
		is(fingerprint($new), $before,
			"$l: the extension's version and objects, rows, default, generated column, index, view and claims came back");
		run_step($l, 'upgrade/wait-for-clock.sh', %env);
		first_after($l, $new, $last);
		$new->stop;
	}
	$old->stop;
	return;
}

# Run one path; a step that failed (reported already) ends only that path.
sub path
{
	my ($code, @args) = @_;
	eval { $code->(@args); 1 } or do
	{
		my $err = $@;
		die $err unless $err =~ /^step \S+ failed$/;
	};
	return;
}

foreach my $pair (@pairs)
{
	my ($old_bin, $new_bin) = @$pair;
	my $tag = major_of($old_bin) . 'to' . $new_major;
	path(\&path_pg_upgrade, $old_bin, $new_bin, 'link', $tag);
	path(\&path_pg_upgrade, $old_bin, $new_bin, 'copy', $tag);
	path(\&path_logical, $old_bin, $new_bin, $tag);
	path(\&path_dump, $old_bin, $new_bin, $tag);
	if ( -x '/usr/bin/pg_upgradecluster'
		&& major_of($old_bin) < $new_major
		&& $old_bin eq '/usr/lib/postgresql/' . major_of($old_bin) . '/bin'
		&& $new_bin eq "/usr/lib/postgresql/$new_major/bin")
	{
		path(\&path_pg_upgradecluster, $old_bin, $new_bin, 'link', $tag);
		path(\&path_pg_upgradecluster, $old_bin, $new_bin, 'dump', $tag);
	}
	else
	{
		diag("pg_upgradecluster not run for $tag: it upgrades to a later major, "
			  . "of Debian's packages (/usr/lib/postgresql/N)");
	}
}
# What goes wrong when the setting is not carried, once.
path(\&path_lower_drift, @{ $pairs[-1] }, 'lower');

done_testing();
