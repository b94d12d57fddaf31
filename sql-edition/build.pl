#!/usr/bin/env perl
# Copyright: see LICENSE
#
# sql-edition/build.pl
#	Generate the SQL edition's scripts from its one source, the fragments
#	sql-edition/src/*.sql (read in the order of their names), into a
#	directory (sql-edition/build by default; `make sql-edition` runs this):
#
#	  snowflake--VERSION.sql   the extension script, @extschema@ kept, for
#	                           pg_tle and database.dev (dbdev publish, with
#	                           snowflake.control beside it)
#	  snowflake.control        the control file pg_tle would build:
#	                           superuser = false, trusted = false
#	  pgtle-install.sql        the same script as the argument of
#	                           pgtle.install_extension('snowflake', ...), for
#	                           Amazon RDS and Aurora and Supabase
#	  snowflake-plain.sql      the same script for a plain psql run, in one
#	                           transaction, into the schema --schema (default
#	                           public), for Cloud SQL, Azure and Neon
#	  switch-to-c.sql          the switch of a database from the edition to
#	                           the C extension (docs/deployment/sql-edition.md)
#
# A fragment holds whole statements; text between the lines
# "-- @extension-only-begin" and "-- @extension-only-end" goes into the
# extension script only (pg_extension_config_dump() works only there).
# Tokens such as @EPOCH_MS@ and @SHIFT@ stand for the layout's numbers
# (--epoch, --layout: the C extension's defaults unless given).  The
# generator refuses a source that would need what pg_tle does not allow: a
# function in another language than SQL or PL/pgSQL, a library, a server
# file, its string delimiters.  Adding functions: write them into a fragment
# (or a new one), each with its COMMENT ON FUNCTION; nothing here changes.

use strict;
use warnings;

use File::Basename qw(dirname);
use File::Spec;
use File::Path qw(make_path);
use Getopt::Long;
use Time::Local qw(timegm);

my $root = dirname(dirname(File::Spec->rel2abs(__FILE__)));
my %opt = (
	out => "$root/sql-edition/build",
	schema => 'public',
	epoch => '2024-01-01 00:00:00+00',
	layout => '41/10/12',
	version => undef);
GetOptions(\%opt, 'out=s', 'schema=s', 'epoch=s', 'layout=s', 'version=s')
  or die "usage: $0 [--out DIR] [--schema NAME] [--epoch 'YYYY-MM-DD HH:MM:SS+00'] [--layout T/N/S] [--version V]\n";

# The version: the C extension's, written once, in snowflake.control.
if (!defined $opt{version})
{
	open my $fh, '<', "$root/snowflake.control" or die "$root/snowflake.control: $!";
	while (<$fh>)
	{
		$opt{version} = $1 if /^default_version\s*=\s*'([^']+)'/;
	}
	close $fh;
	die "no default_version in $root/snowflake.control\n" unless defined $opt{version};
}

# The layout's numbers.
my ($tbits, $nbits, $sbits) = $opt{layout} =~ m{^(\d+)/(\d+)/(\d+)$}
  or die "--layout must be T/N/S, such as 41/10/12\n";
die "--layout: the timestamp field needs 32 to 53 bits, the node and sequence fields 1 to 31, 63 in all\n"
  if $tbits < 32 || $tbits > 53 || $nbits < 1 || $nbits > 31 || $sbits < 1 || $sbits > 31
  || $tbits + $nbits + $sbits > 63;
my ($y, $mo, $d, $h, $mi, $s) =
  $opt{epoch} =~ /^(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\+00|Z)?$/
  or die "--epoch must be 'YYYY-MM-DD HH:MM:SS+00' (UTC)\n";
my $epoch_ms = timegm($s, $mi, $h, $d, $mo - 1, $y) * 1000;
my %tokens = (
	EPOCH_MS => $epoch_ms,
	TIMESTAMP_BITS => $tbits,
	NODE_BITS => $nbits,
	SEQUENCE_BITS => $sbits,
	SHIFT => $nbits + $sbits,
	MAX_NODE => (1 << $nbits) - 1,
	MAX_SEQUENCE => (1 << $sbits) - 1,
	MAX_MS => (1 << $tbits) - 1,
	# How far a key may lead the clock, and how long a call may wait for it
	# (the C extension's defaults of snowflake.max_drift_ms and
	# snowflake.max_wait_ms).
	MAX_LEAD_MS => 1000,
	MAX_WAIT_MS => 1000,
	VERSION => $opt{version});

die "--schema must be a plain lower-case identifier\n" unless $opt{schema} =~ /^[a-z_][a-z0-9_]*$/;

sub slurp
{
	my ($path) = @_;
	open my $fh, '<', $path or die "$path: $!";
	local $/;
	my $text = <$fh>;
	close $fh;
	return $text;
}

sub spew
{
	my ($path, $text) = @_;
	open my $fh, '>', "$path.tmp" or die "$path.tmp: $!";
	print $fh $text;
	close $fh or die "$path.tmp: $!";
	rename("$path.tmp", $path) or die "rename to $path: $!";
	return;
}

# Replace the tokens; die on one that is not known.
sub substitute
{
	my ($text, $where) = @_;
	$text =~ s/\@([A-Z_]+)\@/exists $tokens{$1} ? $tokens{$1} : die "$where: unknown token \@$1\@\n"/ge;
	return $text;
}

# The source, and what pg_tle requires of it.
my @fragments = sort glob("$root/sql-edition/src/*.sql");
die "no fragments in $root/sql-edition/src\n" unless @fragments;
my $source = '';
foreach my $file (@fragments)
{
	my $text = substitute(slurp($file), $file);
	$text .= "\n" unless $text =~ /\n\z/;
	(my $name = $file) =~ s{.*/}{};
	$source .= "\n-- sql-edition/src/$name\n\n$text";
}
my @problems;
(my $code = $source) =~ s/--[^\n]*//g;
while ($code =~ /\bLANGUAGE\s+("?)(\w+)\1/gi)
{
	push @problems, "LANGUAGE $2 (only sql and plpgsql)" unless lc($2) eq 'sql' || lc($2) eq 'plpgsql';
}
foreach my $forbidden (
	qr/MODULE_PATHNAME/, qr/\$_pgtle_/, qr/\bpg_read_(?:binary_)?file\b/, qr/\bpg_ls_\w+\b/,
	qr/\bpg_stat_file\b/, qr/\blo_(?:import|export)\b/, qr/\bCOPY\s/i, qr/\bdblink\w*\b/)
{
	push @problems, "$forbidden" if $code =~ $forbidden;
}
my %created = map { $_ => 1 } $source =~ /^CREATE FUNCTION (\@extschema\@\.\w+)\(/mg;
my %commented = map { $_ => 1 } $source =~ /^COMMENT ON FUNCTION (\@extschema\@\.\w+)\(/mg;
push @problems, "no COMMENT ON FUNCTION for $_" foreach grep { !$commented{$_} } sort keys %created;
die "sql-edition/src: " . join('; ', @problems) . "\n" if @problems;

my $extension_only = qr/^-- \@extension-only-begin\n.*?^-- \@extension-only-end\n/ms;
(my $ext_body = $source) =~ s/^-- \@extension-only-(?:begin|end)\n//mg;
(my $plain_body = $source) =~ s/$extension_only//g;
$plain_body =~ s/\@extschema\@/$opt{schema}/g;
die "sql-edition/src: an \@extension-only-begin without its end\n"
  if $plain_body =~ /\@extension-only/;

my $comment = 'SQL edition of snowflake: 64-bit time-sortable IDs with the keys and functions of the C extension, in SQL and PL/pgSQL';
my $version = $opt{version};
my $header = <<"EOT";
/*
 * snowflake $version, SQL edition: generated by sql-edition/build.pl from
 * the fragments of sql-edition/src (do not edit), layout $tbits/$nbits/$sbits, epoch $opt{epoch}.
 * Guide: docs/deployment/sql-edition.md.
 */
EOT

make_path($opt{out});

# The extension script, and the control file pg_tle builds for it.
my $script = $header
  . "\n-- complain if script is sourced in psql, rather than via CREATE EXTENSION\n"
  . "\\echo Use \"CREATE EXTENSION snowflake\" to load this file. \\quit\n"
  . $ext_body;
spew("$opt{out}/snowflake--$version.sql", $script);
spew("$opt{out}/snowflake.control", <<"EOT");
# snowflake, SQL edition (generated by sql-edition/build.pl): the control
# file pgtle.install_extension() builds, for dbdev publish and for tests.
comment = '$comment'
default_version = '$version'
relocatable = false
superuser = false
trusted = false
EOT

# pg_tle: the script is a dollar-quoted argument; PostgreSQL would drop the
# \\echo line, pg_tle is given none.
spew("$opt{out}/pgtle-install.sql", $header . <<"EOT" . $ext_body . <<"EOT2");

-- Amazon RDS and Aurora, Supabase: run as a member of pgtle_admin, in the
-- database, after CREATE EXTENSION pg_tle; then CREATE EXTENSION snowflake.
SELECT pgtle.install_extension('snowflake', '$version', '$comment',
\$_pgtle_\$
EOT
\$_pgtle_\$);
EOT2

# The plain script.
spew("$opt{out}/snowflake-plain.sql", $header . <<"EOT" . $plain_body . "\nCOMMIT;\n");

-- Cloud SQL, Azure Database for PostgreSQL, Neon, or any server: run as
-- the role that is to own the objects (not a superuser: the database owner,
-- or a role that owns schema $opt{schema}), in the database:
--   psql -v ON_ERROR_STOP=1 -f snowflake-plain.sql
-- (no psql command in it: a SQL console that runs a script takes it too;
-- one transaction, so an error leaves nothing behind).  Then the same role
-- sets the node id: SELECT snowflake_set_node_id(N);
BEGIN;
SET LOCAL search_path = pg_catalog, pg_temp;
EOT

# The switch to the C extension.
my $switch = substitute(slurp("$root/sql-edition/switch-to-c.sql"), 'switch-to-c.sql');
$switch =~ s/\@extschema\@/$opt{schema}/g;
spew("$opt{out}/switch-to-c.sql", $header . $switch);

print "sql-edition: wrote snowflake--$version.sql, snowflake.control, pgtle-install.sql, "
  . "snowflake-plain.sql (schema $opt{schema}) and switch-to-c.sql to $opt{out}\n";
