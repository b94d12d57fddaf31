# Copyright: see LICENSE
#
# 078_public_ids.pl
#	Public IDs with configured keys (docs/public-ids.md): the key file
#	named by snowflake.public_keys_file, on real servers, with and without
#	the preload.
#
#  - The configured functions give what the key-argument ones give with
#    the same key bytes; the public text is the prefix, the current key's
#    id and the base32 text of the public ID, and reads back in either
#    case, with hyphens and Crockford's aliases.
#  - Rotation: a new key marked current takes effect at the next statement
#    of every session, without a reload; texts of the old key still read;
#    a key removed no longer reads (22023, naming the keys there are).
#  - Every error of the key file, whole (SQLSTATE, message, detail, hint):
#    none configured, missing, unreachable, a directory, group or world
#    access, too large, unreadable, each kind of bad line; a broken file
#    leaves no key in use, and the server log (not the client) names the
#    file.
#  - Secrets: a role that is not a superuser can neither read nor set the
#    setting, nor read the file (pg_read_file, COPY, lo_import, pg_stat_file),
#    and no view, setting, function or error it can reach shows a key; a
#    member of pg_read_all_settings sees the path only, a member of
#    pg_read_server_files can read the file (as docs/public-ids.md says);
#    no key is in the server log after reloads and errors.
#  - A database of its own key file (ALTER DATABASE ... SET), parallel
#    workers, and a server without the preload (where a role that is not a
#    superuser cannot point the placeholder at another file).
#
# About 10 s (2 CPUs shared with other work): two servers.

use strict;
use warnings;

use Fcntl qw(:mode);
use POSIX ();
use File::Path qw(make_path);
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# Test keys (made up for this file; never use a published key).
my %key = (
	1 => '0f1e2d3c4b5a69788796a5b4c3d2e1f0',
	2 => 'c0ffee00deadbeef0123456789abcdef00112233445566778899aabbccddeeff',
	3 => '5a5a5a5a000000001111111122222222333333334444444a',
	7 => '7777777777777777777777777777777a');

# Write a key file of lines into the data directory (mode 0600 unless
# told), replacing any file atomically (a new file renamed over the old).
sub write_keys
{
	my ($node, $name, $text, $mode) = @_;
	my $path = $node->data_dir . "/$name";
	open my $fh, '>', "$path.new" or die "$path.new: $!";
	print $fh $text;
	close $fh or die "$path.new: $!";
	chmod($mode // 0600, "$path.new") or die "chmod $path.new: $!";
	rename("$path.new", $path) or die "rename to $path: $!";
	return $path;
}

# The test keys as a table, for comparisons with the key-argument
# functions: loaded with COPY FROM STDIN, whose data no log line shows, so
# that no statement of this file writes a key into the server log (a key
# written into a statement is logged with it: docs/public-ids.md).
sub load_test_keys
{
	my ($node, $db, @opts) = @_;
	$node->safe_psql($db,
		"CREATE TABLE test_keys (kid int, key bytea);\nCOPY test_keys FROM STDIN;\n"
		  . join('', map { "$_\t\\\\x$key{$_}\n" } sort keys %key) . "\\.\n"
		  . 'GRANT SELECT ON test_keys TO PUBLIC', @opts);
	return;
}

sub key_line
{
	my ($id, $current) = @_;
	return "$id $key{$id}" . ($current ? ' current' : '') . "\n";
}

my $node = start_snowflake_node('public_ids', node_id => 1);
my $log_start = -s $node->logfile;
write_keys($node, 'public.keys',
	"# public ID keys\n" . key_line(1) . "\n" . key_line(2, 1) . "  # the current one\n");
$node->append_conf('postgresql.conf', "snowflake.public_keys_file = 'public.keys'\n");
$node->reload;
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
load_test_keys($node, 'postgres');
$node->poll_query_until('postgres', q{SELECT current_setting('snowflake.public_keys_file') = 'public.keys'})
  or die 'the reload did not take';

# --- the configured functions are FF1 under the file's keys ---

my $ids = q{
SELECT setseed(0.7);
CREATE TABLE ids AS
SELECT i, floor(random() * 2147483648)::int8 << 32 | floor(random() * 4294967296)::int8 AS id
  FROM generate_series(1, 10000) i
UNION ALL VALUES (10001, 0), (10002, 9223372036854775807)};
$node->safe_psql('postgres', $ids);
my $same = qq{
SELECT count(*) FILTER (WHERE snowflake_to_public(id, 1) <> snowflake_encrypt_id(id, (SELECT key FROM test_keys WHERE kid = 1)))
     + count(*) FILTER (WHERE snowflake_to_public(id, 2) <> snowflake_encrypt_id(id, (SELECT key FROM test_keys WHERE kid = 2)))
     + count(*) FILTER (WHERE snowflake_from_public(id, 1) <> snowflake_decrypt_id(id, (SELECT key FROM test_keys WHERE kid = 1)))
     + count(*) FILTER (WHERE snowflake_to_public_base32(id, 'ord_')
                              <> 'ord_2' || snowflake_to_base32(snowflake_encrypt_id(id, (SELECT key FROM test_keys WHERE kid = 2))))
     + count(*) FILTER (WHERE snowflake_to_public_base32(id) <> substr(snowflake_to_public_base32(id, 'ord_'), 5))
     + count(*) FILTER (WHERE snowflake_from_public_base32(snowflake_to_public_base32(id, 'ord_'), 'ord_') <> id)
     + count(*) FILTER (WHERE snowflake_from_public_base32(lower(snowflake_to_public_base32(id))) <> id)
     + count(*) FILTER (WHERE snowflake_from_public_base32('1' || snowflake_to_base32(snowflake_to_public(id, 1))) <> id)
  FROM ids};
is($node->safe_psql('postgres', $same), '0',
	'10002 IDs: the configured keys give what the key-argument functions give with their bytes, and the texts read back');

# The text's digits as the base32 form reads them: hyphens, Crockford's
# aliases (I and L for 1, O for 0), either case.
my $text = $node->safe_psql('postgres', q{SELECT snowflake_to_public_base32(382958333860159488, 'ord_')});
like($text, qr/^ord_2[0-9A-HJKMNP-TV-Z]{13}$/, "a public text: the prefix, the key id 2, 13 base32 digits ($text)");
# A public ID whose base32 digits hold zeros and ones, written with
# Crockford's aliases (O for 0, I and L for 1), in lower case, with hyphens.
my $canonical = 'ord_2' . '01010101AZ01K';
is( $node->safe_psql(
		'postgres', qq{
SELECT snowflake_from_public_base32('$canonical', 'ord_') = snowflake_from_public(snowflake_from_base32('01010101AZ01K'), 2),
       snowflake_from_public_base32('ord_2OIOLoiol-az-oi-k', 'ord_') = snowflake_from_public_base32('$canonical', 'ord_'),
       snowflake_from_public_base32('ord_-2-0101-0101-AZ01K', 'ord_') = snowflake_from_public_base32('$canonical', 'ord_')}),
	't|t|t',
	'a text reads with Crockford\'s aliases, in lower case and with hyphens, as the base32 form reads');

# --- rotation ---

my @old_texts = split /\n/,
  $node->safe_psql('postgres', q{SELECT snowflake_to_public_base32(id, 'ord_') FROM ids WHERE i <= 100 ORDER BY i});
is(scalar(grep { /^ord_2/ } @old_texts), 100, '100 texts made with key 2, the current one');

# A session open across the change sees it at its next statement, with no
# reload.
my $session = $node->background_psql('postgres');
is(query_value($session, q{SELECT left(snowflake_to_public_base32(1, 'ord_'), 5)}), 'ord_2',
	'an open session makes texts with key 2');
write_keys($node, 'public.keys', key_line(1) . key_line(2) . key_line(3, 1));
is(query_value($session, q{SELECT left(snowflake_to_public_base32(1, 'ord_'), 5)}), 'ord_3',
	'key 3 marked current: the same session\'s next statement makes texts with key 3, no reload');
my $old_list = join(',', map { "'$_'" } @old_texts);
is( $node->safe_psql(
		'postgres', qq{
SELECT count(*) FILTER (WHERE snowflake_from_public_base32(t, 'ord_') = i.id)
  FROM unnest(ARRAY[$old_list]) WITH ORDINALITY AS u(t, n) JOIN ids i ON i.i = u.n}),
	'100', 'the texts of key 2 still read after key 3 became current');
write_keys($node, 'public.keys', key_line(1) . key_line(3, 1));
is(error_report($node, "SELECT snowflake_from_public_base32('$old_texts[0]', 'ord_')"),
	qq{22023: public ID key 2 is not configured\n}
	  . qq{DETAIL:  The configured keys are 1 and 3.\n}
	  . q{HINT:  The keys are read from the file that snowflake.public_keys_file names.},
	'key 2 removed: its texts no longer read (22023), and the error names the keys there are');
is(query_value($session, 'SELECT snowflake_from_public(snowflake_to_public(5, 3), 3)'), '5',
	'the open session reads with key 3');
$session->quit;

# --- every error of the key file, whole ---

# Each case: what the file holds (or a path), and the whole error report of
# snowflake_to_public(1, 1).
my $dir = $node->data_dir;
make_path("$dir/keydir");
make_path("$dir/locked");
write_keys($node, 'locked/public.keys', key_line(1, 1));
chmod(0000, "$dir/locked") or die "chmod: $!";
my $group = 'group or world access';
my @cases = (
	[ 'no current key', file => key_line(1) . key_line(3),
		undef, 'SELECT snowflake_to_public_base32(1)',
		qq{55000: no public ID key is marked current\nDETAIL:  The configured keys are 1 and 3.\n}
		  . q{HINT:  Mark the key that new public IDs are made with "current" in the file that snowflake.public_keys_file names.} ],
	[ 'no key at all', file => "# nothing yet\n\n",
		undef, 'SELECT snowflake_to_public(1, 1)',
		qq{22023: public ID key 1 is not configured\nDETAIL:  No public ID key is configured.\n}
		  . q{HINT:  The keys are read from the file that snowflake.public_keys_file names.} ],
	[ 'one key', file => key_line(7),
		undef, 'SELECT snowflake_to_public(1, 1)',
		qq{22023: public ID key 1 is not configured\nDETAIL:  The configured key is 7.\n}
		  . q{HINT:  The keys are read from the file that snowflake.public_keys_file names.} ],
	[ 'a missing file', path => 'absent.keys',
		undef, undef, '58P01: could not open public ID key file: No such file or directory' ],
	[ 'a file in a directory it cannot search', path => 'locked/public.keys',
		undef, undef, '42501: could not open public ID key file: Permission denied' ],
	[ 'a directory', path => 'keydir',
		undef, undef, 'F0000: public ID key file is not a regular file' ],
	[ 'group access', file => key_line(1, 1), 0640, undef,
		"F0000: public ID key file has $group\n"
		  . 'DETAIL:  It must have permissions u=rw (0600) or less if owned by the database user, or u=rw,g=r (0640) or less if owned by root.' ],
	[ 'world access', file => key_line(1, 1), 0604, undef,
		"F0000: public ID key file has $group\n"
		  . 'DETAIL:  It must have permissions u=rw (0600) or less if owned by the database user, or u=rw,g=r (0640) or less if owned by root.' ],
	[ 'owned by root, world-readable', path => '/etc/passwd', undef, undef,
		"F0000: public ID key file has $group\n"
		  . 'DETAIL:  It must have permissions u=rw (0600) or less if owned by the database user, or u=rw,g=r (0640) or less if owned by root.' ],
	[ 'too large', file => key_line(1, 1) . ('#' x 65536), undef, undef,
		"F0000: public ID key file is too large\nDETAIL:  It has @{[length(key_line(1, 1)) + 65536]} bytes; a key file has at most 65536." ],
	[ 'unreadable (read fails)', path => '/proc/self/mem', undef, undef,
		'58030: could not read public ID key file: Input/output error' ],
	[ 'a key id out of range', file => key_line(1) . "32 $key{1}\n", undef, undef,
		"F0000: invalid public ID key file\nDETAIL:  Line 2: it does not start with a key id, a whole number from 0 to 31." ],
	[ 'a key id with a leading zero', file => "01 $key{1}\n", undef, undef,
		"F0000: invalid public ID key file\nDETAIL:  Line 1: it does not start with a key id, a whole number from 0 to 31." ],
	[ 'a key first', file => "$key{1} 1\n", undef, undef,
		"F0000: invalid public ID key file\nDETAIL:  Line 1: it does not start with a key id, a whole number from 0 to 31." ],
	[ 'a key id alone', file => "\n\n5 # soon\n", undef, undef,
		"F0000: invalid public ID key file\nDETAIL:  Line 3: its key id is not followed by a key." ],
	[ 'a short key', file => '1 ' . substr($key{1}, 1) . "\n", undef, undef,
		"F0000: invalid public ID key file\nDETAIL:  Line 1: its key is not 32, 48 or 64 hexadecimal digits (AES-128, AES-192 or AES-256)." ],
	[ 'a key that is not hexadecimal', file => '1 ' . substr($key{1}, 1) . "g\n", undef, undef,
		"F0000: invalid public ID key file\nDETAIL:  Line 1: its key is not 32, 48 or 64 hexadecimal digits (AES-128, AES-192 or AES-256)." ],
	[ 'a word after the key', file => "1 $key{1} current now\n", undef, undef,
		"F0000: invalid public ID key file\nDETAIL:  Line 1: its key is followed by something other than the word \"current\"." ],
	[ 'a key given twice', file => key_line(1) . key_line(2) . key_line(1), undef, undef,
		"F0000: invalid public ID key file\nDETAIL:  Line 3: key id 1 appears on an earlier line." ],
	[ 'two current keys', file => key_line(1, 1) . key_line(2, 1), undef, undef,
		"F0000: invalid public ID key file\nDETAIL:  Line 2: key 2 is marked \"current\", as an earlier key is." ],
	[ 'a zero byte', file => key_line(1) . "\0" . key_line(2), undef, undef,
		"F0000: invalid public ID key file\nDETAIL:  Line 2: it holds a zero byte." ]);
my $errors_log = -s $node->logfile;
foreach my $case (@cases)
{
	my ($name, $how, $what, $mode, $sql, $report) = @$case;
	my $setting = 'public.keys';
	if ($how eq 'file')
	{
		write_keys($node, 'public.keys', $what, $mode);
	}
	else
	{
		$setting = $what;
	}
	# A new path needs a reload; a new file needs nothing.
	if ($setting ne $node->safe_psql('postgres', 'SHOW snowflake.public_keys_file'))
	{
		$node->safe_psql('postgres', "ALTER SYSTEM SET snowflake.public_keys_file = '$setting'");
		$node->reload;
		$node->poll_query_until('postgres', "SELECT current_setting('snowflake.public_keys_file') = '$setting'")
		  or die "the reload did not take ($name)";
	}
	is(error_report($node, $sql // 'SELECT snowflake_to_public(1, 1)'), $report, "key file: $name");
}
chmod(0700, "$dir/locked");

# A FIFO at the file's path (a role that can write to the directory can put
# one there): the file is opened without waiting for a writer, found not
# to be a regular file before a byte is read, and the call fails at once;
# a backend held in open() would be past statement_timeout and
# pg_terminate_backend (psql's timeout then fails the test).
POSIX::mkfifo("$dir/keys.fifo", 0600) or die "mkfifo: $!";
$node->safe_psql('postgres', "ALTER SYSTEM SET snowflake.public_keys_file = 'keys.fifo'");
$node->reload;
$node->poll_query_until('postgres', "SELECT current_setting('snowflake.public_keys_file') = 'keys.fifo'")
  or die 'the reload did not take (FIFO)';
my $fifo_timed_out = 0;
my (undef, undef, $fifo_err) = $node->psql('postgres', 'SELECT snowflake_to_public(1, 1)',
	timeout => $PostgreSQL::Test::Utils::timeout_default, timed_out => \$fifo_timed_out);
ok(!$fifo_timed_out && $fifo_err =~ /ERROR:  public ID key file is not a regular file/,
	'key file: a FIFO fails the call at once, not a regular file (nothing waits for a writer)')
  or diag("timed out: $fifo_timed_out; $fifo_err");
unlink("$dir/keys.fifo");

# The client's errors never name the file; the server log does, for the
# operator, with the line's number, and no key.
my $log = slurp_file($node->logfile, $errors_log);
like($log, qr/DETAIL:  File "public\.keys", line 3: key id 1 appears on an earlier line\./,
	'the server log names the file and the line');
like($log, qr/DETAIL:  The file is "keydir"\./, 'and names a file that is not a regular file');

# A broken file leaves no key in use: the keys that read before fail, and
# read again once the file is fixed.
write_keys($node, 'public.keys', key_line(1, 1));
$node->safe_psql('postgres', 'ALTER SYSTEM SET snowflake.public_keys_file = \'public.keys\'');
$node->reload;
$session = $node->background_psql('postgres', on_error_stop => 0);
$session->query_safe(q{SELECT 1 WHERE current_setting('snowflake.public_keys_file') = 'public.keys'});
is(query_value($session, 'SELECT snowflake_from_public(snowflake_to_public(42, 1), 1)'), '42',
	'a session reads with key 1');
write_keys($node, 'public.keys', "1 not-a-key current\n");
$session->query('SELECT snowflake_to_public(42, 1)');
like($session->{stderr}, qr/invalid public ID key file/, 'the file broken: the session\'s next call fails, key 1 is not kept');
$session->{stderr} = '';
write_keys($node, 'public.keys', key_line(1, 1));
is(query_value($session, 'SELECT snowflake_from_public(snowflake_to_public(42, 1), 1)'), '42',
	'the file fixed: the session reads again');
$session->quit;

# --- secrets ---

write_keys($node, 'public.keys', key_line(1) . key_line(2, 1));
$node->safe_psql(
	'postgres', q{
CREATE ROLE app LOGIN;
CREATE ROLE settings_reader LOGIN IN ROLE pg_read_all_settings;
CREATE ROLE file_reader LOGIN IN ROLE pg_read_server_files;
CREATE DATABASE other;
ALTER DATABASE other SET snowflake.public_keys_file = 'other.keys'});
write_keys($node, 'other.keys', key_line(7, 1));
$node->safe_psql('other', 'CREATE EXTENSION snowflake');
load_test_keys($node, 'other');
my @app = (extra_params => [ '-U', 'app' ]);
my @probes = (
	'SHOW snowflake.public_keys_file',
	q{SELECT current_setting('snowflake.public_keys_file')},
	q{SELECT set_config('snowflake.public_keys_file', 'mine.keys', false)},
	q{SET snowflake.public_keys_file = 'mine.keys'},
	q{ALTER ROLE app SET snowflake.public_keys_file = 'mine.keys'},
	q{SELECT * FROM pg_file_settings},
	q{SELECT pg_read_file('public.keys')},
	q{SELECT pg_read_binary_file('public.keys')},
	q{SELECT pg_stat_file('public.keys')},
	q{CREATE TEMP TABLE t (l text); COPY t FROM 'public.keys'},
	q{SELECT lo_import('public.keys')},
	q{SELECT snowflake_to_public(-1, 1)},
	q{SELECT snowflake_to_public(1, 9)},
	q{SELECT snowflake_from_public_base32('9000000000000Z')},
	q{SELECT snowflake_to_public_base32(1, 'bad prefix')});
# Each probe in a session of its own that has loaded the library first
# (without the preload, the setting is a placeholder until then: below).
my $seen = '';
foreach my $probe (@probes)
{
	my (undef, $out, $err) =
	  $node->psql('postgres', "SELECT snowflake_to_public(0, 1) >= 0 AS loaded;\n$probe", @app);
	$seen .= "$out\n$err\n";
}
my ($ret) = $node->psql('postgres', q{SELECT snowflake_to_public(1, 1)}, @app);
is($ret, 0, 'a role that is not a superuser uses the configured keys');
unlike($seen, qr/public\.keys/, 'it sees not even the path through SHOW, current_setting, pg_file_settings or an error');
# (PostgreSQL's own messages, worded differently from 16 on.)
like($seen, qr/(?:must be superuser or have privileges of pg_read_all_settings|permission denied) to examine "snowflake\.public_keys_file"/,
	'SHOW is refused');
like($seen, qr/permission denied to set parameter "snowflake\.public_keys_file"/, 'setting it is refused');
like($seen, qr/permission denied for function pg_read_file/, 'pg_read_file is refused');
like($seen, qr/permission denied for function pg_stat_file/, 'pg_stat_file is refused');
like($seen, qr/(?:must be superuser or have privileges of the pg_read_server_files role|permission denied) to COPY from a file/,
	'COPY from the file is refused');
like($seen, qr/permission denied for function lo_import/, 'lo_import is refused');
my $everything = join("\n",
	$seen,
	$node->safe_psql('postgres', 'SELECT * FROM pg_settings', @app),
	$node->safe_psql('postgres', 'SELECT * FROM pg_db_role_setting', @app),
	$node->safe_psql('postgres', q{SELECT * FROM pg_proc WHERE proname LIKE 'snowflake%'}, @app),
	$node->safe_psql('postgres', 'SELECT * FROM pg_stat_activity', @app));
my @leaked = grep { $everything =~ /\Q$_\E|\Q@{[uc $_]}\E|\Q@{[substr($_, 0, 12)]}\E/i } values %key;
is_deeply(\@leaked, [], 'no key, nor its first 12 digits, in anything the role read');
like($everything, qr/snowflake\.public_keys_file=other\.keys/,
	'pg_db_role_setting shows a database\'s key file path (a path, never a key)');

is($node->safe_psql('postgres', 'SHOW snowflake.public_keys_file', extra_params => [ '-U', 'settings_reader' ]),
	'public.keys', 'a member of pg_read_all_settings sees the path');
is( $node->safe_psql(
		'postgres', q{CREATE TEMP TABLE k (l text); COPY k FROM 'public.keys'; SELECT count(*) FROM k WHERE l LIKE '% current'},
		extra_params => [ '-U', 'file_reader' ]),
	'1',
	'a member of pg_read_server_files can read the key file with COPY (docs/public-ids.md names the role)');

# A database with a key file of its own: key 7 there, absent here.
is( $node->safe_psql('other', qq{SELECT snowflake_to_public(5, 7) = snowflake_encrypt_id(5, (SELECT key FROM test_keys WHERE kid = 7))}, @app),
	't', 'ALTER DATABASE ... SET gives database "other" its own key file');
is(error_report($node, 'SELECT snowflake_to_public(5, 7)'),
	qq{22023: public ID key 7 is not configured\nDETAIL:  The configured keys are 1 and 2.\n}
	  . q{HINT:  The keys are read from the file that snowflake.public_keys_file names.},
	'and the other database does not see it');

# A parallel plan: the table is scanned by parallel workers, the keys are
# used by the leader only (the configured-key functions are PARALLEL
# RESTRICTED: a worker would read the file anew at its first call, and
# could find other keys there), which reads the database's key file.
my $parallel = q{
SET parallel_setup_cost = 0; SET parallel_tuple_cost = 0; SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SELECT bit_xor(snowflake_to_public(id, 7)) FROM ids_other};
$node->safe_psql('other', "CREATE TABLE ids_other AS SELECT g::int8 * 1000003 AS id FROM generate_series(1, 100000) g");
my $plan = $node->safe_psql('other', $parallel =~ s/SELECT bit_xor/EXPLAIN (VERBOSE, COSTS OFF) SELECT bit_xor/r);
like($plan, qr/Workers Planned: 2/, 'the table is scanned by parallel workers');
like($plan, qr/\A\s*Aggregate\n\s+Output: bit_xor\((?:public\.)?snowflake_to_public\(/,
	'the keys are used above the Gather, by the leader only');
unlike($plan, qr/Parallel Seq Scan.*snowflake_to_public/s, 'never by a worker');
is($node->safe_psql('other', $parallel),
	$node->safe_psql('other', "SELECT bit_xor(snowflake_encrypt_id(id, (SELECT key FROM test_keys WHERE kid = 7))) FROM ids_other"),
	'the leader uses the database\'s key file');
is( $node->safe_psql(
		'other',
		q{SELECT string_agg(DISTINCT proparallel::text, ',') FROM pg_proc WHERE proname ~ '^snowflake_(to|from)_public'}),
	'r', 'every configured-key function is PARALLEL RESTRICTED');

# When a change of the file is seen: at the next statement the client
# sends, or the next transaction a procedure starts (a COMMIT in it); the
# statements of one query string in one transaction share one look.  The
# file is rewritten by COPY (whose text holds no key: it comes from
# test_keys) between two uses.
$node->safe_psql('other', 'CREATE TABLE ids_seen (n int, public_id int8)');
my $rewrite = sub {
	my ($kid) = @_;
	return "COPY (SELECT '7 ' || encode(key, 'hex') || ' current' FROM test_keys WHERE kid = $kid) TO '"
	  . $node->data_dir . "/other.keys'";
};
my $expect = sub {
	my ($kid) = @_;
	return $node->safe_psql('other', "SELECT snowflake_encrypt_id(77, (SELECT key FROM test_keys WHERE kid = $kid))");
};
$node->safe_psql('other', $rewrite->(7));
$node->safe_psql(
	'other', qq{
CREATE PROCEDURE rotate_in_between() LANGUAGE plpgsql AS \$\$
BEGIN
    INSERT INTO ids_seen VALUES (1, snowflake_to_public(77, 7));
    EXECUTE \$q\$@{[ $rewrite->(1) ]}\$q\$;
    INSERT INTO ids_seen VALUES (2, snowflake_to_public(77, 7));
    COMMIT;
    INSERT INTO ids_seen VALUES (3, snowflake_to_public(77, 7));
END \$\$});
$node->safe_psql('other', 'CALL rotate_in_between()');
is($node->safe_psql('other', 'SELECT string_agg(public_id::text, \',\' ORDER BY n) FROM ids_seen'),
	join(',', $expect->(7), $expect->(7), $expect->(1)),
	'a procedure: the keys of its transaction until it commits, the new file\'s after');
$node->safe_psql('other', 'TRUNCATE ids_seen');
$node->safe_psql('other', $rewrite->(7));
my ($multi_out, $multi_err) = ('', '');
IPC::Run::run(
	[
		'psql', '-XAtq', '-d', $node->connstr('other'), '-c',
		'INSERT INTO ids_seen VALUES (1, snowflake_to_public(77, 7)); ' . $rewrite->(2)
		  . '; INSERT INTO ids_seen VALUES (2, snowflake_to_public(77, 7))'
	],
	'>', \$multi_out, '2>', \$multi_err) or die "psql -c: $multi_err";
$node->safe_psql('other', 'INSERT INTO ids_seen VALUES (3, snowflake_to_public(77, 7))');
is($node->safe_psql('other', 'SELECT string_agg(public_id::text, \',\' ORDER BY n) FROM ids_seen'),
	join(',', $expect->(7), $expect->(7), $expect->(2)),
	'a query string of several statements: one look for all of them, the new file\'s at the next');
write_keys($node, 'other.keys', key_line(7, 1));

# Reloads that change the setting and the file leave no key in the log.
$node->safe_psql('postgres', q{ALTER SYSTEM SET snowflake.public_keys_file = 'public2.keys'});
write_keys($node, 'public2.keys', key_line(3, 1));
$node->reload;
$node->poll_query_until('postgres', q{SELECT snowflake_to_public(1, 3) IS NOT NULL});
ok(log_appears($node, qr/parameter "snowflake\.public_keys_file" changed to "public2\.keys"/, $log_start),
	'a reload logs the new path');
$log = slurp_file($node->logfile, $log_start);
@leaked = grep { $log =~ /\Q@{[substr($_, 0, 12)]}\E/i } values %key;
is_deeply(\@leaked, [], 'no key, nor its first 12 digits, in the server log after reloads and every error');
$node->stop;

# --- without the preload ---

my $plain = start_snowflake_node('public_ids_plain', preload => 0);
my ($out, $err);
write_keys($plain, 'public.keys', key_line(1, 1));
$plain->append_conf('postgresql.conf', "snowflake.public_keys_file = 'public.keys'\n");
$plain->reload;
$plain->safe_psql('postgres', 'CREATE EXTENSION snowflake; CREATE ROLE app LOGIN');
load_test_keys($plain, 'postgres');
write_keys($plain, 'mine.keys', key_line(2, 1));
is( $plain->safe_psql(
		'postgres', qq{SELECT snowflake_from_public_base32(snowflake_to_public_base32(77, 'x_'), 'x_') = 77
                        AND snowflake_to_public(77, 1) = snowflake_encrypt_id(77, (SELECT key FROM test_keys WHERE kid = 1))}, extra_params => [ '-U', 'app' ]),
	't', 'without the preload the configured keys work');
# Before the library is loaded in a session, the setting is a placeholder
# that any role can read (a path, not a key: docs/public-ids.md) and set;
# loading the library hides it and refuses what a role that is not a
# superuser set, keeping the configured file.
($ret, $out, $err) = $plain->psql('postgres', q{
SHOW snowflake.public_keys_file;
SELECT snowflake_to_public(1, 1) >= 0 AS loaded;
SHOW snowflake.public_keys_file}, extra_params => [ '-U', 'app' ]);
is($out, "public.keys\nt", 'without the preload a session sees the path until the library is loaded');
like($err, qr/(?:must be superuser or have privileges of pg_read_all_settings|permission denied) to examine "snowflake\.public_keys_file"/,
	'and no longer once it is');
(undef, $out, $err) = $plain->psql('postgres', q{
SET snowflake.public_keys_file = 'mine.keys';
SELECT snowflake_to_public_base32(77)}, extra_params => [ '-U', 'app' ]);
like($out, qr/^1/, 'a role that is not a superuser cannot point the placeholder at another file: key 1 still makes the text');
like($err, qr/permission denied to set parameter "snowflake\.public_keys_file"/,
	'loading the library refuses the placeholder\'s value');
$plain->stop;

done_testing();
