#!/usr/bin/env perl
# Copyright: see LICENSE
#
# sql-edition/build.pl
#	Generate the SQL edition's files from its one source, the fragments
#	sql-edition/src/*.sql (read in the order of their names; the text forms
#	from their table, sql-edition/TextForms.pm), into sql-edition/dist,
#	where they are committed for users to download (`make sql-edition`
#	runs this; docs/deployment/sql-edition.md says which file is for whom):
#
#	  snowflake-plain.sql            install, with psql or any SQL console,
#	                                 into the first schema of search_path
#	  snowflake-plain-update.sql     update a plain install of any released
#	                                 version to this one
#	  snowflake-plain-uninstall.sql  remove a plain install
#	  snowflake-pgtle-install.sql    pgtle.install_extension() of this
#	                                 version (Amazon RDS and Aurora, Supabase)
#	  snowflake-pgtle-update.sql     this version and the update paths from
#	                                 each released version, made the default
#	  snowflake-switch-to-c.sql      move a database to the C extension
#	  extension/                     the extension: snowflake.control, the
#	                                 script of each version and the update
#	                                 scripts (database.dev publishes this
#	                                 directory; pg_tle is given the same
#	                                 scripts)
#
# A released version's extension script, extension/snowflake--R.sql, is
# kept as it was released and never written here: it is what the update
# scripts from R are generated from (with the hand-written steps of
# sql-edition/steps/A--B.sql, run first: moves and renames the difference
# cannot tell).  An update script re-creates every function of the new
# version with CREATE OR REPLACE (its OID, and what users' objects that
# depend on it, kept), creates the new objects, and drops, without CASCADE,
# the functions and objects the new version no longer has (an update that
# would drop what a user's object depends on fails, leaving everything as
# it was).
#
#	  perl sql-edition/build.pl            regenerate sql-edition/dist
#	  perl sql-edition/build.pl --check    fail if sql-edition/dist differs
#	                                       from what the sources build (CI)
#	  perl sql-edition/build.pl --layout T/N/S --epoch 'YYYY-MM-DD HH:MM:SS+00'
#	       [--previous FILE ...] --out DIR
#	                                       an edition for another layout or
#	                                       epoch (into sql-edition/build by
#	                                       default), updates from the
#	                                       extension scripts given
#
# A fragment holds whole statements.  Statements between the lines
# "-- @extension-only-begin" and "-- @extension-only-end" go into the
# extension's scripts only (pg_extension_config_dump() works only there);
# those between "-- @server-version-below N", "-- @server-version-else" and
# "-- @server-version-end" become a DO statement that runs the first ones
# on a server older than N, the others on N and later.  Tokens such as
# @EPOCH_MS@ and @SHIFT@ stand for the layout's numbers.  The generator
# refuses a source that would need what pg_tle does not allow: a function
# in another language than SQL or PL/pgSQL, a library, a server file, the
# string delimiters of pg_tle and of the generated files.  Adding
# functions: write them into a fragment (or a new one), each with its
# COMMENT ON FUNCTION; nothing here changes.

use strict;
use warnings;

use Digest::SHA qw(sha256_hex);
use File::Basename qw(dirname);
use File::Path qw(make_path remove_tree);
use File::Spec;
use File::Temp qw(tempdir);
use Getopt::Long;
use Time::Local qw(timegm);
use lib dirname(File::Spec->rel2abs(__FILE__));
use TextForms qw(expand_text_forms);

my $root = dirname(dirname(File::Spec->rel2abs(__FILE__)));
my $dist = "$root/sql-edition/dist";

# The released versions' extension scripts, as released: any change to one
# fails --check (an update from it would no longer be from what users have).
my %released = ('1.2' => '39ebde24f87908756dfc9fefa0d47fa6322aaf45ade93f82fac14c6a086e18c9');

my %opt = (epoch => '2024-01-01 00:00:00+00', layout => '41/10/12', previous => []);
GetOptions(\%opt, 'out=s', 'epoch=s', 'layout=s', 'version=s', 'previous=s@', 'check')
  or die "usage: $0 [--check] [--out DIR] [--epoch 'YYYY-MM-DD HH:MM:SS+00'] [--layout T/N/S] [--previous FILE]... [--version V]\n";
my $default_layout = $opt{epoch} eq '2024-01-01 00:00:00+00' && $opt{layout} eq '41/10/12';

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
my $version = $opt{version};

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
	# How long a call waits for the generator's lock: another call's move of
	# the key sequence holds it for a few statements, the switch to the C
	# extension for as long as it takes (at most 3 s, switch-to-c.sql).
	MAX_LOCK_WAIT_MS => 5000,
	# The generator's state while a move is under way: the node id plus
	# this (sql-edition/src/00-state.sql).
	MOVING => 1 << $nbits,
	# How far past the clock a move places the next key where the sequence
	# was moved less than this long ago (sql-edition/src/30-generator.sql):
	# at more than a call every few milliseconds, one move serves the calls
	# of that many.
	MOVE_AHEAD_MS => 4,
	VERSION => $version);

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
	make_path(dirname($path));
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

# --- statements ---

# The chunks of a script: each statement with the comments and white space
# before it (lead), the statement itself (sql, from its first word to its
# semicolon), and a last chunk of what follows the last statement.
sub split_sql
{
	my ($text, $where) = @_;
	my @chunks;
	my $start = 0;
	pos($text) = 0;
	while (pos($text) < length $text)
	{
		if ($text =~ /\G--[^\n]*/gc || $text =~ /\G\s+/gc)
		{
			next;
		}
		if ($text =~ /\G\/\*/gc)
		{
			my $depth = 1;
			while ($depth > 0)
			{
				if ($text =~ /\G\/\*/gc) { $depth++ }
				elsif ($text =~ /\G\*\//gc) { $depth-- }
				elsif ($text !~ /\G./gcs) { die "$where: a comment that does not end\n" }
			}
			next;
		}
		if ($text =~ /\G[Ee]'(?:[^'\\]|\\.|'')*'/gcs
			|| $text =~ /\G'(?:[^']|'')*'/gcs
			|| $text =~ /\G"(?:[^"]|"")*"/gcs)
		{
			next;
		}
		if ($text =~ /\G(\$(?:[A-Za-z_][A-Za-z_0-9]*)?\$)/gc)
		{
			my $tag = $1;
			$text =~ /\G.*?\Q$tag\E/gcs or die "$where: $tag is not closed\n";
			next;
		}
		if ($text =~ /\G;/gc)
		{
			push @chunks, substr($text, $start, pos($text) - $start);
			$start = pos($text);
			next;
		}
		$text =~ /\G(?:[A-Za-z0-9_@.,()=<>+*\/%|&#~!^:\[\]{}-]+|.)/gcs;
	}
	my @statements;
	foreach my $chunk (@chunks)
	{
		my ($lead, $sql) = $chunk =~ /\A((?:\s+|--[^\n]*)*)(.*)\z/s;
		push @statements, { lead => $lead, sql => $sql };
	}
	my $rest = substr($text, $start);
	die "$where: text after the last statement that is not a comment: " . substr($rest, 0, 60) . "\n"
	  unless $rest =~ /\A(?:\s+|--[^\n]*)*\z/;
	push @statements, { lead => $rest, sql => undef };
	return @statements;
}

# A type's name as it is compared: lower case, without pg_catalog.
sub norm_type
{
	my ($type) = @_;
	$type = lc $type;
	$type =~ s/\bpg_catalog\.//g;
	$type =~ s/"//g;
	$type =~ s/\s+/ /g;
	$type =~ s/^\s+|\s+$//g;
	return $type;
}

# The arguments of a function's parenthesised list: [mode, name, type].
sub parse_args
{
	my ($list) = @_;
	my @args;
	my ($depth, $cur) = (0, '');
	foreach my $c (split //, $list)
	{
		$depth++ if $c eq '(';
		$depth-- if $c eq ')';
		if ($c eq ',' && $depth == 0)
		{
			push @args, $cur;
			$cur = '';
			next;
		}
		$cur .= $c;
	}
	push @args, $cur if $cur =~ /\S/;
	my @parsed;
	foreach my $arg (@args)
	{
		# (A default is no part of the type: snowflake_set_public_key's
		# current boolean DEFAULT false.)
		$arg =~ s/\s+(?:DEFAULT\s|=).*\z//is;
		my @words = split ' ', $arg;
		my $mode = @words > 1 && $words[0] =~ /^(?:IN|OUT|INOUT|VARIADIC)$/i ? uc shift @words : 'IN';
		my $name = @words > 1 ? lc shift @words : '';
		push @parsed, [ $mode, $name, norm_type(join ' ', @words) ];
	}
	return @parsed;
}

# What a statement does: kind and the object it creates (key), for the
# update scripts.  Functions are keyed by name and argument types, other
# objects by kind and name.
sub classify
{
	my ($st, $where) = @_;
	my $sql = $st->{sql};
	if ($sql =~ /\ACREATE\s+(?:OR\s+REPLACE\s+)?FUNCTION\s+([^\s(]+)\s*\(/i)
	{
		my $name = lc $1;
		my $open = $+[0] - 1;
		my ($depth, $i) = (0, $open);
		for (; $i < length $sql; $i++)
		{
			my $c = substr($sql, $i, 1);
			$depth++ if $c eq '(';
			$depth-- if $c eq ')';
			last if $depth == 0;
		}
		my @args = parse_args(substr($sql, $open + 1, $i - $open - 1));
		my ($returns) = substr($sql, $i + 1) =~ /\A\s*RETURNS\s+(.*?)\s*\n/is
		  or die "$where: no RETURNS in $name\n";
		$st->{kind} = 'function';
		$st->{key} = "function $name(" . join(',', map { $_->[2] } grep { $_->[0] ne 'OUT' } @args) . ')';
		$st->{signature} = join(', ', map { join ' ', grep { $_ ne '' } @$_ } @args) . ' -> ' . norm_type($returns);
		$st->{drop} = "$name(" . join(', ', map { $_->[2] } grep { $_->[0] ne 'OUT' } @args) . ')';
	}
	elsif ($sql =~ /\ACREATE\s+(SEQUENCE|TABLE|TYPE|SCHEMA)\s+([^\s(;]+)/i)
	{
		my ($kind, $name) = ($1, $2);
		$st->{kind} = lc $kind;
		$st->{key} = lc($kind) . ' ' . lc($name);
		$st->{drop} = uc($kind) . " $name";
		($st->{definition} = $sql) =~ s/\Q$name\E/NAME/;
		$st->{definition} =~ s/\s+/ /g;
	}
	elsif ($sql =~ /\AALTER\s+(SEQUENCE|TABLE|TYPE|FUNCTION)\s+(\S+)\s+SET\s+SCHEMA\s+(\S+)\s*;\z/is)
	{
		my ($kind, $name, $schema) = (lc $1, lc $2, lc $3);
		(my $new = $name) =~ s/^[^.]+\./$schema./;
		$st->{kind} = 'move';
		$st->{from} = "$kind $name";
		$st->{to} = "$kind $new";
	}
	elsif ($sql =~ /\A(?:COMMENT\s+ON|GRANT|REVOKE|ALTER\s+FUNCTION\s+\S+\s*\(.*\)\s+PARALLEL\s+\w+\s*;\z|SELECT\s+pg_catalog\.pg_extension_config_dump\s*\()/is)
	{
		$st->{kind} = 'idempotent';
	}
	elsif ($sql =~ /\ADO\s/i)
	{
		# A DO statement runs again in every update, after the statements
		# before it: it must be one that can (such as 40-publicids.sql's,
		# which replaces a function the statement before it creates).
		$st->{kind} = 'idempotent';
	}
	else
	{
		die "$where: a statement the generator does not know how to update: " . substr($sql, 0, 80) . "\n";
	}
	return $st;
}

# The statements of a script with their directives applied: each has its
# flags ext_only; a versioned block is one statement {kind => 'versioned',
# below => N, old => [...], new => [...]}.
sub parse_script
{
	my ($text, $where) = @_;
	my @out;
	my $ext_only = 0;
	my $block;
	my $branch;
	foreach my $st (split_sql($text, $where))
	{
		my $lead = '';
		foreach my $line (split /(?<=\n)/, $st->{lead})
		{
			if ($line =~ /^-- \@extension-only-(begin|end)\s*$/)
			{
				die "$where: \@extension-only-$1 out of place\n" if ($1 eq 'begin') == $ext_only;
				$ext_only = $1 eq 'begin';
			}
			elsif ($line =~ /^-- \@server-version-below (\d+)\s*$/)
			{
				die "$where: nested \@server-version blocks\n" if $block;
				$block = { kind => 'versioned', below => $1, old => [], new => [], lead => $lead, ext_only => $ext_only };
				$lead = '';
				$branch = 'old';
				push @out, $block;
			}
			elsif ($line =~ /^-- \@server-version-else\s*$/)
			{
				die "$where: \@server-version-else out of place\n" unless $block && $branch eq 'old';
				$branch = 'new';
			}
			elsif ($line =~ /^-- \@server-version-end\s*$/)
			{
				die "$where: \@server-version-end out of place\n" unless $block && $branch eq 'new';
				$block = undef;
			}
			elsif ($line =~ /^-- \@/)
			{
				die "$where: unknown directive: $line";
			}
			else
			{
				$lead .= $line;
			}
		}
		if (!defined $st->{sql})
		{
			die "$where: an unterminated \@server-version block\n" if $block;
			die "$where: an \@extension-only-begin without its end\n" if $ext_only;
			push @out, { kind => 'trailer', lead => $lead } if $lead =~ /\S/;
			last;
		}
		$st->{lead} = $lead;
		$st->{ext_only} = $ext_only;
		classify($st, $where);
		die "$where: only functions, comments and ALTER FUNCTION in a \@server-version block\n"
		  if $block && $st->{kind} ne 'function' && $st->{kind} ne 'idempotent';
		push @{ $block ? $block->{$branch} : \@out }, $st;
	}
	foreach my $b (grep { $_->{kind} eq 'versioned' } @out)
	{
		my %old = map { $_->{key} => 1 } grep { $_->{key} } @{ $b->{old} };
		my %new = map { $_->{key} => 1 } grep { $_->{key} } @{ $b->{new} };
		die "$where: the branches of a \@server-version block must create the same functions\n"
		  unless join(',', sort keys %old) eq join(',', sort keys %new);
		$b->{keys} = [ sort keys %old ];
	}
	return @out;
}

# The text of statements, for the extension (ext => 1) or the plain
# script; replace => the keys of functions to create with CREATE OR
# REPLACE.  A versioned block becomes a DO statement.
sub render
{
	my ($statements, %how) = @_;
	my $text = '';
	foreach my $st (@$statements)
	{
		next if $st->{ext_only} && !$how{ext};
		if ($st->{kind} eq 'trailer')
		{
			$text .= $st->{lead};
			next;
		}
		if ($st->{kind} eq 'versioned')
		{
			my $branch = sub {
				join('', map { "        EXECUTE \$snowflake_sql\$\n" . (statement_sql($_, %how) =~ s/;\z//r) . "\n\$snowflake_sql\$;\n" }
					  grep { !$_->{ext_only} || $how{ext} } @{ $_[0] });
			};
			$text .= $st->{lead}
			  . "DO \$snowflake_version\$\nBEGIN\n"
			  . "    IF pg_catalog.current_setting('server_version_num')::pg_catalog.int4 < $st->{below} THEN\n"
			  . $branch->($st->{old})
			  . "    ELSE\n"
			  . $branch->($st->{new})
			  . "    END IF;\nEND\n\$snowflake_version\$;";
			next;
		}
		$text .= $st->{lead} . statement_sql($st, %how);
	}
	return $text;
}

sub statement_sql
{
	my ($st, %how) = @_;
	my $sql = $st->{sql};
	$sql =~ s/\ACREATE\s+FUNCTION\b/CREATE OR REPLACE FUNCTION/i
	  if $st->{kind} eq 'function' && $how{replace} && $how{replace}{ $st->{key} };
	return $sql;
}

# --- the source ---

sub read_source
{
	my @fragments = sort glob("$root/sql-edition/src/*.sql");
	die "no fragments in $root/sql-edition/src\n" unless @fragments;
	my $source = '';
	foreach my $file (@fragments)
	{
		(my $name = $file) =~ s{.*/}{};
		my $text = expand_text_forms(slurp($file), "sql-edition/src/$name");
		$text = substitute($text, "sql-edition/src/$name");
		$text .= "\n" unless $text =~ /\n\z/;
		$source .= "\n-- sql-edition/src/$name\n\n$text";
	}
	my @problems;
	(my $code = $source) =~ s/--[^\n]*//g;
	while ($code =~ /\bLANGUAGE\s+("?)(\w+)\1/gi)
	{
		push @problems, "LANGUAGE $2 (only sql and plpgsql)" unless lc($2) eq 'sql' || lc($2) eq 'plpgsql';
	}
	foreach my $forbidden (
		qr/MODULE_PATHNAME/, qr/\$_pgtle_/, qr/\$snowflake_/, qr/\bpg_read_(?:binary_)?file\b/, qr/\bpg_ls_\w+\b/,
		qr/\bpg_stat_file\b/, qr/\blo_(?:import|export)\b/, qr/\bCOPY\s/i, qr/\bdblink\w*\b/)
	{
		push @problems, "$forbidden" if $code =~ $forbidden;
	}
	my %created = map { $_ => 1 } $source =~ /^CREATE FUNCTION (\@extschema\@\.\w+)\(/mg;
	my %commented = map { $_ => 1 } $source =~ /^COMMENT ON FUNCTION (\@extschema\@\.\w+)\(/mg;
	push @problems, "no COMMENT ON FUNCTION for $_" foreach grep { !$commented{$_} } sort keys %created;
	die "sql-edition/src: " . join('; ', @problems) . "\n" if @problems;
	return $source;
}

# --- updates ---

# The version an extension script says it is (its header).
sub script_version
{
	my ($text, $where) = @_;
	my ($v) = $text =~ /^ \* snowflake (\S+), SQL edition/m or die "$where: no version in its header\n";
	return $v;
}

# The statements of a released extension script (its header and \echo
# line left out).
sub released_statements
{
	my ($text, $where) = @_;
	$text =~ s/\A.*?^\\echo [^\n]*\\quit\n//ms or die "$where: no \\echo line\n";
	return parse_script($text, $where);
}

# The hand-written steps from version $from to $to, in order.
sub steps
{
	my ($from, $to) = @_;
	my @steps;
	my $at = $from;
	my %step = map { m{/([^/]+)--([^/]+)\.sql$} ? ($1 => [ $2, $_ ]) : () } glob("$root/sql-edition/steps/*.sql");
	while ($at ne $to && $step{$at})
	{
		my ($next, $file) = @{ $step{$at} };
		push @steps, parse_script(substitute(slurp($file), $file), $file);
		$at = $next;
	}
	die "sql-edition/steps: the steps from $from end at $at, not at $to\n" if @steps && $at ne $to;
	return @steps;
}

# The update from the released script $from_text to @$to (this version's
# statements): the steps, then every statement of this version (functions
# that existed with CREATE OR REPLACE, other objects that exist left as
# they are), then the drops.
sub update_statements
{
	my ($from_text, $where, $to) = @_;
	my $from_version = script_version($from_text, $where);
	my @from = released_statements($from_text, $where);
	my %have;
	foreach my $st (map { $_->{kind} eq 'versioned' ? @{ $_->{new} } : $_ } @from)
	{
		$have{ $st->{key} } = $st if $st->{key};
	}
	my @order = grep { $_->{key} } map { $_->{kind} eq 'versioned' ? @{ $_->{new} } : $_ } @from;
	my @steps = steps($from_version, $version);
	foreach my $st (@steps)
	{
		if ($st->{kind} eq 'move')
		{
			my $obj = delete $have{ $st->{from} } or die "$where: a step moves $st->{from}, which $from_version does not have\n";
			$obj = { %$obj, key => $st->{to} };
			$have{ $st->{to} } = $obj;
			$_ = $obj foreach grep { $_->{key} eq $st->{from} } @order;
		}
		elsif ($st->{key})
		{
			$have{ $st->{key} } = $st;
		}
	}
	my (@update, %replace, %kept);
	foreach my $st (@$to)
	{
		my @keys = $st->{kind} eq 'versioned' ? @{ $st->{keys} } : ($st->{key} // ());
		my $skip = 0;
		foreach my $key (@keys)
		{
			$kept{$key} = 1;
			my $old = $have{$key} or next;
			if ($key =~ /^function /)
			{
				my ($new) = $st->{kind} eq 'versioned' ? grep { ($_->{key} // '') eq $key } @{ $st->{new} } : ($st);
				die "$where: $key changes its arguments' names or its result between $from_version and $version"
				  . " ($old->{signature} to $new->{signature}): CREATE OR REPLACE cannot; give it another name\n"
				  if $old->{signature} ne $new->{signature};
				$replace{$key} = 1;
			}
			else
			{
				die "$where: $key is defined differently in $from_version and $version: write the change into sql-edition/steps\n"
				  if defined $old->{definition} && $old->{definition} ne $st->{definition};
				$skip = 1;
			}
		}
		push @update, $st unless $skip;
	}
	my @gone = reverse grep { !$kept{ $_->{key} } } @order;
	my @drops;
	my @functions = grep { $_->{kind} eq 'function' } @gone;
	if (@functions)
	{
		push @drops, { kind => 'idempotent', ext_only => 0,
			lead => "\n-- What $version no longer has (without CASCADE: nothing of a user's may depend on it).\n",
			sql => 'DROP FUNCTION ' . join(",\n    ", map { $_->{drop} } @functions) . ';' };
	}
	foreach my $st (grep { $_->{kind} ne 'function' } @gone)
	{
		push @drops, { kind => 'idempotent', ext_only => 0, lead => "\n", sql => "DROP $st->{drop};" };
	}
	return ($from_version, [ @steps, @update, @drops, { kind => 'trailer', lead => "\n" } ], \%replace);
}

# --- the files ---

my $comment = 'SQL edition of snowflake: 64-bit time-sortable IDs with the keys and functions of the C extension, in SQL and PL/pgSQL';

sub header
{
	my ($what) = @_;
	return <<"EOT";
/*
 * snowflake $version, SQL edition: $what
 * Generated by sql-edition/build.pl from sql-edition/src (do not edit);
 * layout $tbits/$nbits/$sbits, epoch $opt{epoch}.
 * Guide: docs/deployment/sql-edition.md.
 */
EOT
}

# A psql-free script: statements run one by one by a DO statement, with
# the schema it finds in place of @extschema@.
sub plain_array
{
	my ($statements, $indent, %how) = @_;
	my @items;
	foreach my $st (@$statements)
	{
		next if $st->{ext_only} || $st->{kind} eq 'trailer';
		my $sql = render([ { %$st, lead => '' } ], %how);
		$sql =~ s/;\z//;
		push @items, "\$snowflake_statement\$\n$sql\n\$snowflake_statement\$";
	}
	return "${indent}ARRAY[\n" . join(",\n", @items) . "\n${indent}]::pg_catalog.text[]";
}

# The SQL that finds the edition's schema in a database, exactly: the
# schema of the PL/pgSQL snowflake_set_node_id(integer) of the edition's
# owner, never another role's function of that name elsewhere.  1.3 and
# later keep their state in the schema _snowflake, that only the edition's
# owner may use, and that owner is the edition's (an edition's schema also
# has its _snowflake_edition_version()); 1.2 kept its sequences beside its
# functions, with the same owner, and a schema of another role that looks
# the same is told apart only by who runs the script (a role that may act
# as its owner).  Both ways are asked, so that a schema _snowflake made by
# another role (with CREATE on the database) beside a 1.2 edition finds
# two, and the script refuses, naming them, rather than take the wrong
# one.  Then the extension the edition belongs to, if any, and
# the version installed, read from the definition of its
# _snowflake_edition_version() (1.2 had none): the script never calls a
# function of the edition, which its owner could have replaced, as the
# superuser that may run it.  In PL/pgSQL, after the search_path is set.
my $find_schema = <<'EOT';
    SELECT pg_catalog.array_agg(n.nspname ORDER BY n.nspname) INTO found
      FROM pg_catalog.pg_proc p
      JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
      JOIN pg_catalog.pg_language l ON l.oid = p.prolang
     WHERE p.proname = 'snowflake_set_node_id' AND p.proargtypes = '23'::pg_catalog.oidvector
       AND l.lanname = 'plpgsql'
       AND ((p.proowner = (SELECT s.nspowner FROM pg_catalog.pg_namespace s WHERE s.nspname = '_snowflake')
             AND EXISTS (SELECT FROM pg_catalog.pg_proc v
                          WHERE v.pronamespace = n.oid AND v.proname = '_snowflake_edition_version'
                            AND v.pronargs = 0 AND v.proowner = p.proowner))
            OR (pg_catalog.pg_has_role(p.proowner, 'USAGE')
                AND EXISTS (SELECT FROM pg_catalog.pg_class c
                             WHERE c.relnamespace = n.oid AND c.relname = '_snowflake_node_seq'
                               AND c.relkind = 'S' AND c.relowner = p.proowner)));
    IF found IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'undefined_object',
            MESSAGE = 'no SQL edition of snowflake in this database',
            HINT = 'Connect to the database the edition is installed in, as the role that owns it.';
    END IF;
    IF pg_catalog.cardinality(found) > 1 THEN
        RAISE EXCEPTION USING ERRCODE = 'duplicate_object',
            MESSAGE = pg_catalog.format('the SQL edition of snowflake is installed in more than one schema: %s',
                                        pg_catalog.array_to_string(found, ', ')),
            HINT = 'One edition per database: remove the others with snowflake-plain-uninstall.sql, or run this as the role that owns the edition.';
    END IF;
    target := found[1];
    SELECT e.extname INTO extension
      FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
     WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass
       AND d.objid = pg_catalog.to_regprocedure(pg_catalog.format('%I.snowflake_set_node_id(integer)', target))
       AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e';
    SELECT coalesce(pg_catalog.substring(pg_catalog.pg_get_functiondef(p.oid), 'RETURN ''([0-9.]+)'''), '?')
      INTO installed
      FROM pg_catalog.pg_proc p
     WHERE p.oid = pg_catalog.to_regprocedure(pg_catalog.format('%I._snowflake_edition_version()', target));
    installed := coalesce(installed, '1.2');
EOT

sub build
{
	my ($out) = @_;
	my $source = read_source();
	my @statements = parse_script($source, 'sql-edition/src');
	my $ext_body = render(\@statements, ext => 1);
	my %files;

	# The extension.
	$files{"extension/snowflake--$version.sql"} = header('the extension script (CREATE EXTENSION snowflake).')
	  . "\n-- complain if script is sourced in psql, rather than via CREATE EXTENSION\n"
	  . "\\echo Use \"CREATE EXTENSION snowflake\" to load this file. \\quit\n"
	  . $ext_body;
	$files{'extension/snowflake.control'} = <<"EOT";
# snowflake, SQL edition (generated by sql-edition/build.pl): the control
# file pgtle.install_extension() builds; database.dev publishes this
# directory (dbdev publish).
comment = '$comment'
default_version = '$version'
relocatable = false
superuser = false
trusted = false
EOT

	# The updates, from each released version (or each --previous).
	my @previous = @{ $opt{previous} };
	if ($default_layout && !@previous)
	{
		@previous = map { "$dist/extension/snowflake--$_.sql" } grep { $_ ne $version } sort keys %released;
	}
	my (@updates, @plain_updates);
	foreach my $file (@previous)
	{
		my ($from, $update, $replace) = update_statements(slurp($file), $file, \@statements);
		die "$file: version $from is this version\n" if $from eq $version;
		my $script = render($update, ext => 1, replace => $replace);
		$files{"extension/snowflake--$from--$version.sql"} =
		  header("the update from $from (ALTER EXTENSION snowflake UPDATE).")
		  . "\n-- complain if script is sourced in psql, rather than via ALTER EXTENSION\n"
		  . "\\echo Use \"ALTER EXTENSION snowflake UPDATE TO '$version'\" to load this file. \\quit\n"
		  . $script;
		push @updates, [ $from, $script ];
		push @plain_updates, [ $from, $update, $replace ];
	}

	# pg_tle.
	$files{'snowflake-pgtle-install.sql'} = header('its installation through pg_tle.') . <<"EOT" . $ext_body . "\$_pgtle_\$);\n";

-- Amazon RDS and Aurora, Supabase: run as a member of pgtle_admin, in the
-- database, after CREATE EXTENSION pg_tle:
--   psql -v ON_ERROR_STOP=1 -f snowflake-pgtle-install.sql
-- then CREATE EXTENSION snowflake (SCHEMA app).  An earlier version is
-- installed already: run snowflake-pgtle-update.sql instead.  (The
-- database's default search_path reaches no name here.)
SET search_path = pg_catalog, pg_temp;
SELECT pgtle.install_extension('snowflake', '$version', '$comment',
\$_pgtle_\$
EOT
	my $pgtle_update = header('its update through pg_tle.') . <<"EOT";

-- Amazon RDS and Aurora, Supabase, where an earlier version of the edition
-- was installed with pgtle.install_extension(): run as a member of
-- pgtle_admin, in the database:
--   psql -v ON_ERROR_STOP=1 -f snowflake-pgtle-update.sql
-- then ALTER EXTENSION snowflake UPDATE.  It gives pg_tle this version's
-- script (for CREATE EXTENSION, a restore of a dump among them), the update
-- from each released version, and makes this version the default.  (The
-- database's default search_path reaches no name here.)
SET search_path = pg_catalog, pg_temp;
SELECT pgtle.install_extension_version_sql('snowflake', '$version',
\$_pgtle_\$
$ext_body\$_pgtle_\$);
EOT
	foreach my $u (@updates)
	{
		$pgtle_update .= "\nSELECT pgtle.install_update_path('snowflake', '$u->[0]', '$version',\n\$_pgtle_\$\n$u->[1]\$_pgtle_\$);\n";
	}
	$pgtle_update .= "\nSELECT pgtle.set_default_version('snowflake', '$version');\n";
	$files{'snowflake-pgtle-update.sql'} = $pgtle_update if @updates;

	# The plain scripts.
	$files{'snowflake-plain.sql'} = header('install it with psql or any SQL console.') . <<"EOT";

-- Google Cloud SQL, Azure Database for PostgreSQL, Neon, or any server:
-- run it as the role that is to own the edition (not a superuser: the
-- database owner, or a role with CREATE on the database and on the
-- schema), in the database, with the schema to install it in first in its
-- search_path:
--   psql -v ON_ERROR_STOP=1 -d appdb -c 'SET search_path = app' -f snowflake-plain.sql
-- (no psql command in it: a SQL console takes it too, after SET
-- search_path = app).  One statement, so an error leaves nothing behind.
-- Its internal state goes into the schema _snowflake, which it creates.
-- Then the same role sets the node id: SELECT app.snowflake_set_node_id(N);
DO \$snowflake_plain\$
DECLARE
    target pg_catalog.text := pg_catalog.current_schema();
    saved pg_catalog.text := pg_catalog.current_setting('search_path');
    statement pg_catalog.text;
BEGIN
    -- Nothing before this resolves a name through the caller's search_path
    -- (the declarations call qualified functions only), nothing after it
    -- does: the database's default search_path (public first, say) reaches
    -- no name of this script.
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    IF target IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_schema_name',
            MESSAGE = 'no schema to install the snowflake SQL edition in',
            DETAIL = pg_catalog.format('No schema of the search_path, %s, exists that this role may use.', saved),
            HINT = 'Set search_path to the schema first, such as: SET search_path = app.';
    END IF;
    IF EXISTS (SELECT FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
                WHERE n.nspname = '_snowflake' AND c.relname = '_snowflake_id_seq')
       OR target = '_snowflake' THEN
        RAISE EXCEPTION USING ERRCODE = 'duplicate_schema',
            MESSAGE = 'the snowflake SQL edition is installed in this database already',
            HINT = 'Update it with snowflake-plain-update.sql. A database has one edition, its state in the schema _snowflake.';
    END IF;
    IF pg_catalog.to_regnamespace('_snowflake') IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'duplicate_schema',
            MESSAGE = 'schema "_snowflake" already exists and is not the snowflake SQL edition''s',
            DETAIL = pg_catalog.format('It belongs to role %s; the edition keeps its state in a schema of that name, which only its owner may use.',
                                       (SELECT s.nspowner::pg_catalog.regrole FROM pg_catalog.pg_namespace s
                                         WHERE s.nspname = '_snowflake')),
            HINT = 'Drop or rename that schema first (its owner or a superuser), then install the edition.';
    END IF;
    IF NOT pg_catalog.has_schema_privilege(target, 'CREATE')
       OR NOT pg_catalog.has_database_privilege(pg_catalog.current_database(), 'CREATE') THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = pg_catalog.format('permission denied to install the snowflake SQL edition in schema "%s"', target),
            DETAIL = 'The role that installs the edition owns it; it needs CREATE on the schema and on the database (for the schema _snowflake).',
            HINT = 'Run it as the database owner, or as a role granted those privileges.';
    END IF;
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
    FOREACH statement IN ARRAY
@{[ plain_array(\@statements, '    ') ]}
    LOOP
        EXECUTE pg_catalog.replace(statement, '\@extschema\@', pg_catalog.quote_ident(target));
    END LOOP;
    PERFORM pg_catalog.set_config('search_path', saved, true);
    RAISE NOTICE 'snowflake SQL edition $version installed in schema "%"', target
        USING HINT = pg_catalog.format('Set the node id: SELECT %I.snowflake_set_node_id(N);', target);
END
\$snowflake_plain\$;
EOT

	my $cases = '';
	foreach my $u (@plain_updates)
	{
		my ($from, $update, $replace) = @$u;
		$cases .= ($cases ? '    ELSIF' : '    IF') . " installed = '$from' THEN\n        todo :=\n"
		  . plain_array($update, '        ', replace => $replace) . ";\n";
	}
	$cases .= @plain_updates ? "    ELSE\n" : "    IF true THEN\n";
	$cases .= <<"EOT";
        RAISE EXCEPTION USING ERRCODE = 'feature_not_supported',
            MESSAGE = pg_catalog.format('no update of the snowflake SQL edition from version %s to $version', installed),
            HINT = 'Updates go from each released version to this one; see the CHANGELOG.';
    END IF;
EOT
	$files{'snowflake-plain-update.sql'} = header('update a plain install of it.') . <<"EOT";

-- A database whose edition was installed with snowflake-plain.sql (of any
-- released version): run it as the role that owns the edition, in the
-- database:
--   psql -v ON_ERROR_STOP=1 -d appdb -f snowflake-plain-update.sql
-- It finds the edition's schema and version itself.  One statement, so an
-- error leaves the edition as it was.  Through pg_tle or database.dev the
-- edition is an extension: update it as the page says instead.
DO \$snowflake_update\$
DECLARE
    found pg_catalog.name[];
    target pg_catalog.name;
    extension pg_catalog.name;
    installed pg_catalog.text := '1.2';
    saved pg_catalog.text := pg_catalog.current_setting('search_path');
    todo pg_catalog.text[];
    statement pg_catalog.text;
BEGIN
    -- First: no name of this script resolves through the caller's
    -- search_path (a database's default one, public first, say).
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
$find_schema    IF extension IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = pg_catalog.format('the SQL edition of snowflake is the extension "%s" here', extension),
            HINT = 'Update it with ALTER EXTENSION, after giving pg_tle the new version (snowflake-pgtle-update.sql).';
    END IF;
    IF installed = '$version' THEN
        RAISE NOTICE 'the snowflake SQL edition in schema "%" is at version $version already', target;
        RETURN;
    END IF;
$cases    FOREACH statement IN ARRAY todo LOOP
        EXECUTE pg_catalog.replace(statement, '\@extschema\@', pg_catalog.quote_ident(target));
    END LOOP;
    PERFORM pg_catalog.set_config('search_path', saved, true);
    RAISE NOTICE 'snowflake SQL edition in schema "%" updated from % to $version', target, installed;
END
\$snowflake_update\$;
EOT

	# Uninstall: every function of the edition, its type and its state.
	my @functions = map { $_->{drop} } grep { $_->{kind} eq 'function' }
	  map { $_->{kind} eq 'versioned' ? @{ $_->{new} } : $_ } @statements;
	my $drop_list = join(",\n", map { "            '" . ($_ =~ s/'/''/gr) . "'" } @functions);
	$files{'snowflake-plain-uninstall.sql'} = header('remove a plain install of it.') . <<"EOT";

-- A database whose edition was installed with snowflake-plain.sql: run it
-- as the role that owns the edition (or a superuser), in the database:
--   psql -v ON_ERROR_STOP=1 -d appdb -f snowflake-plain-uninstall.sql
-- It refuses while an object of yours uses the edition's functions (a
-- column default, a view, an index, a function), and names them: change
-- or drop them first (docs/deployment/sql-edition.md, "Uninstalling").
-- Through pg_tle or database.dev: DROP EXTENSION instead.
DO \$snowflake_uninstall\$
DECLARE
    found pg_catalog.name[];
    target pg_catalog.name;
    extension pg_catalog.name;
    installed pg_catalog.text := '1.2';
    users pg_catalog.text;
    functions pg_catalog.text[] := ARRAY[
$drop_list
        ];
BEGIN
    -- First: no name of this script resolves through the caller's
    -- search_path (a database's default one, public first, say).
    PERFORM pg_catalog.set_config('search_path', 'pg_catalog, pg_temp', true);
$find_schema    IF extension IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = pg_catalog.format('the SQL edition of snowflake is the extension "%s" here', extension),
            HINT = 'Remove it with DROP EXTENSION, then pgtle.uninstall_extension().';
    END IF;
    IF installed <> '$version' THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = pg_catalog.format('the snowflake SQL edition in schema "%s" is at version %s', target, installed),
            HINT = 'Update it to $version with snowflake-plain-update.sql first, or use the uninstall script of its version.';
    END IF;
    -- What of the user's depends on a function of the edition.
    SELECT pg_catalog.string_agg(DISTINCT pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid), '; ')
      INTO users
      FROM pg_catalog.pg_depend d
     WHERE d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.deptype IN ('n', 'a')
       AND d.refobjid IN (SELECT pg_catalog.to_regprocedure(pg_catalog.replace(f, '\@extschema\@', pg_catalog.quote_ident(target)))
                            FROM pg_catalog.unnest(functions) f)
       AND NOT (d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass
                AND d.objid IN (SELECT pg_catalog.to_regprocedure(pg_catalog.replace(f, '\@extschema\@', pg_catalog.quote_ident(target)))
                                  FROM pg_catalog.unnest(functions) f));
    IF users IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'dependent_objects_still_exist',
            MESSAGE = 'cannot remove the snowflake SQL edition because other objects use its functions',
            DETAIL = users || '.',
            HINT = 'Change or drop them first: a column default with ALTER TABLE ... ALTER COLUMN ... DROP DEFAULT (or SET DEFAULT another one).';
    END IF;
    EXECUTE 'DROP FUNCTION ' || pg_catalog.replace(pg_catalog.array_to_string(functions, ', '), '\@extschema\@', pg_catalog.quote_ident(target));
    EXECUTE pg_catalog.format('DROP TYPE %I._snowflake_layout', target);
    DROP SCHEMA _snowflake CASCADE;
    RAISE NOTICE 'snowflake SQL edition removed from schema "%"', target;
END
\$snowflake_uninstall\$;
EOT

	# The switch to the C extension, with the list of the edition's
	# functions (the only ones it moves, replaces or drops).
	local $tokens{EDITION_FUNCTIONS} = "ARRAY[\n" . join(",\n", map { "        '" . ($_ =~ s/'/''/gr) . "'" } @functions)
	  . "\n    ]::pg_catalog.text[]";
	$files{'snowflake-switch-to-c.sql'} = header('move a database to the C extension.')
	  . substitute(slurp("$root/sql-edition/switch-to-c.sql"), 'sql-edition/switch-to-c.sql');

	foreach my $name (sort keys %files)
	{
		spew("$out/$name", $files{$name});
	}
	return \%files;
}

# --- main ---

if ($opt{check})
{
	die "--check compares the default layout's files with sql-edition/dist\n" unless $default_layout && !$opt{out};
	my $tmp = tempdir(CLEANUP => 1);
	foreach my $v (sort keys %released)
	{
		next if $v eq $version;
		my $file = "$dist/extension/snowflake--$v.sql";
		die "sql-edition/dist/extension/snowflake--$v.sql: missing (released, needed for the update from $v)\n" unless -f $file;
		die "sql-edition/dist/extension/snowflake--$v.sql: changed since it was released\n"
		  unless sha256_hex(slurp($file)) eq $released{$v};
	}
	my $files = build($tmp);
	my @differ;
	foreach my $name (sort keys %$files)
	{
		push @differ, "$name (" . (-f "$dist/$name" ? 'differs' : 'missing') . ')'
		  unless -f "$dist/$name" && slurp("$dist/$name") eq $files->{$name};
	}
	my %expected = (%$files, map { ("extension/snowflake--$_.sql" => 1) } keys %released);
	foreach my $file (glob("$dist/*.sql $dist/*/*.sql $dist/*/*.control"))
	{
		(my $name = $file) =~ s{^\Q$dist\E/}{};
		push @differ, "$name (not built)" unless $expected{$name};
	}
	if (@differ)
	{
		print STDERR "sql-edition/dist differs from what sql-edition/src builds: @differ\n"
		  . "Run `make sql-edition` (perl sql-edition/build.pl) and commit sql-edition/dist.\n";
		exit 1;
	}
	print "sql-edition/dist is what sql-edition/src builds (" . scalar(keys %$files) . " files)\n";
	exit 0;
}

my $out = $opt{out} // ($default_layout ? $dist : "$root/sql-edition/build");
my $files = build($out);
print "sql-edition: wrote " . join(', ', sort keys %$files) . " to $out\n";
