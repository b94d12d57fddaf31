# Copyright: see LICENSE
#
# The documentation cannot drift from the code: every ```sql block of
# README.md, CONTRIBUTING.md and docs/**/*.md runs here, read from the
# Markdown file itself, and the output a document shows is compared with
# what the server returns.  Every relative link (file and #anchor) of those
# files must resolve.  The conventions are in CONTRIBUTING.md, "Writing
# documentation":
#
# - each Markdown file gets a database of its own on one preloaded server
#   (snowflake.node_id = 1, TimeZone UTC), and its sql blocks run there in
#   document order, each through one psql -X -q -v ON_ERROR_STOP=1 with
#   \pset footer off; the extension is created first unless the file's own
#   blocks create it;
# - a ```text block after a sql block (only blank lines and at most one
#   marker between them) is that block's output in psql's aligned format,
#   compared exactly, trailing spaces ignored; after a block that fails on
#   purpose it is the error as psql prints it;
# - an HTML comment on the line right before a fence is a marker:
#     <!-- not run: REASON -->          the sql block does not run
#     <!-- output varies: REASON -->    the text block: only the column
#                                       headers and row counts are compared
#     <!-- fails with: SQLSTATE -->     the sql block must fail with it
#     <!-- recipe: PATH -->             application code that another test
#                                       writes to PATH and runs (a sql
#                                       block still runs here)
#   and a file may carry <!-- test settings: name = value; ... --> to run on
#   a server of its own with those settings, and <!-- test key file: LINE;
#   LINE --> to run on a server of its own whose key file of public IDs
#   (docs/public-ids.md) holds those lines.  A marker without a reason, or
#   an unknown one, fails the test.
#
# Three rules of CONTRIBUTING.md are checked here too, since they concern
# what a reader sees of the source: no C function in src/ is longer than
# 80 lines (test/function-length.pl, shown to fail on one that is), no TAP
# file uses the result of a background session's query_safe() directly
# (test/query-safe.pl, shown to fail on one that does), and the
# pictures of docs/img/ are what their script draws now.

use strict;
use warnings;

use Encode qw(decode encode);
use File::Basename qw(dirname);
use File::Find;
use File::Spec;
use IPC::Run;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;

use lib dirname(__FILE__);
use SnowflakeTest;

my $root = File::Spec->rel2abs(dirname(__FILE__) . '/../..');

# The files whose sql blocks run, and the files whose links are checked.
my @run_files = ('README.md', 'CONTRIBUTING.md');
find(
	{
		wanted => sub { push @run_files, File::Spec->abs2rel($_, $root) if /\.md$/ && -f $_ },
		no_chdir => 1
	},
	"$root/docs");
@run_files = ($run_files[0], $run_files[1], sort @run_files[ 2 .. $#run_files ]);
my @link_files = (@run_files, 'CHANGELOG.md', 'test/bench/README.md');

sub slurp
{
	my ($path) = @_;
	open my $fh, '<:encoding(UTF-8)', "$root/$path" or die "could not read $root/$path: $!";
	local $/;
	my $text = <$fh>;
	close $fh;
	return $text;
}

# ---- Parsing ----

# The fenced blocks of a Markdown text: a list of hashes with the info
# string (lang), the content (indentation of the fence removed), the line of
# the fence, the marker right before it (if any) and whether only blank
# lines (and that marker) separate it from the previous block.
sub fenced_blocks
{
	my ($text) = @_;
	my @lines = split /\n/, $text, -1;
	my @blocks;
	my $since_block = undef;    # lines since the previous block closed
	for (my $i = 0; $i < @lines; $i++)
	{
		my $line = $lines[$i];
		if ($line =~ /^(\s*)(`{3,}|~{3,})\s*([\w+-]*)/)
		{
			my ($indent, $fence, $lang) = (length $1, $2, lc $3);
			my $start = $i;
			my @content;
			for ($i++; $i < @lines; $i++)
			{
				last if $lines[$i] =~ /^\s*\Q$fence\E\s*$/;
				my $c = $lines[$i];
				$c =~ s/^ {1,$indent}// if $indent;
				push @content, $c;
			}
			my ($marker, $adjacent) = (undef, 0);
			if ($start > 0 && $lines[ $start - 1 ] =~ /^\s*<!--(.*)-->\s*$/)
			{
				$marker = $1;
			}
			if (defined $since_block)
			{
				my @between = @$since_block;
				pop @between if defined $marker;
				$adjacent = !grep { /\S/ } @between;
			}
			push @blocks,
			  {
				lang => $lang,
				content => join("\n", @content) . "\n",
				line => $start + 1,
				marker => $marker,
				adjacent => $adjacent
			  };
			$since_block = [];
			next;
		}
		push @$since_block, $line if defined $since_block;
	}
	return @blocks;
}

# A marker parsed: (kind, argument); kind 'bad' with a message when it is
# not one this test knows or lacks its argument.
sub parse_marker
{
	my ($marker) = @_;
	return () unless defined $marker;
	return () if $marker =~ /^\s*test (?:settings|key file):/;    # the file's, see below
	# A recipe's block is run by the test that runs the page's application
	# code (doc_recipes in SnowflakeTest.pm); here it is a block like any
	# other, a sql one runs.
	return () if $marker =~ /^\s*recipe:\s*\S+\s*$/;
	if ($marker =~ /^\s*(not run|output varies|fails with)\s*:\s*(.*?)\s*$/)
	{
		return ('bad', "marker \"$1\" without a reason") if $2 eq '';
		return ($1, $2);
	}
	return ('bad', "unknown marker <!--$marker--> before a fence");
}

# GitHub's heading anchors of a Markdown text: lower case, everything but
# letters, digits, spaces, hyphens and underscores removed, spaces made
# hyphens, "-1", "-2" ... appended to repeats.  Headings inside fences do
# not count.
sub anchors
{
	my ($text) = @_;
	my %seen;
	my %anchors;
	my $fence;
	foreach my $line (split /\n/, $text)
	{
		if ($line =~ /^\s*(`{3,}|~{3,})/)
		{
			if (!defined $fence) { $fence = $1; }
			elsif ($line =~ /^\s*\Q$fence\E\s*$/) { undef $fence; }
			next;
		}
		next if defined $fence;
		$anchors{$1} = 1 while $line =~ /<a\s+(?:name|id)="([^"]+)"/g;
		next unless $line =~ /^#{1,6}\s+(.*?)\s*#*\s*$/;
		my $h = $1;
		$h =~ s/\[([^\]]*)\]\([^)]*\)/$1/g;    # links: their text
		$h =~ s/<[^>]+>//g;                    # HTML tags
		my $slug = lc $h;
		$slug =~ s/[^\w\- ]//g;
		$slug =~ s/ /-/g;
		my $n = $seen{$slug}++;
		$anchors{ $n ? "$slug-$n" : $slug } = 1;
	}
	return \%anchors;
}

# The lines of a Markdown text outside fenced code, each [number, text]
# with its code spans removed.
sub prose_lines
{
	my ($text) = @_;
	my @lines;
	my $fence;
	my $n = 0;
	foreach my $line (split /\n/, $text)
	{
		$n++;
		if ($line =~ /^\s*(`{3,}|~{3,})/)
		{
			if (!defined $fence) { $fence = $1; }
			elsif ($line =~ /^\s*\Q$fence\E\s*$/) { undef $fence; }
			next;
		}
		next if defined $fence;
		(my $l = $line) =~ s/`[^`]*`//g;    # code spans
		push @lines, [ $n, $l ];
	}
	return @lines;
}

# The relative links of a Markdown text, outside code: [text](target) and
# reference definitions.
sub links
{
	my ($text) = @_;
	my @links;
	foreach my $p (prose_lines($text))
	{
		my ($n, $l) = @$p;
		push @links, [ $n, $1 ] while $l =~ /\]\(\s*<?([^)\s>]+)>?(?:\s+"[^"]*")?\s*\)/g;
		push @links, [ $n, $1 ] if $l =~ /^\s*\[[^\]]+\]:\s*(\S+)/;
	}
	return grep { $_->[1] !~ m{^(?:[a-z][a-z0-9+.-]*:|//)}i } @links;
}

# ---- Links ----

my %anchor_cache;
foreach my $file (@link_files)
{
	ok(-e "$root/$file", "$file exists") or next;
	my $text = slurp($file);
	my @bad;
	foreach my $link (links($text))
	{
		my ($line, $target) = @$link;
		my ($path, $anchor) = $target =~ /^([^#]*)(?:#(.*))?$/;
		my $resolved =
		  $path eq ''
		  ? $file
		  : File::Spec->abs2rel(
			File::Spec->rel2abs($path, dirname("$root/$file")), $root);
		1 while $resolved =~ s{(^|/)(?!\.\./)[^/]+/\.\./}{$1};
		if (!-e "$root/$resolved")
		{
			push @bad, "line $line: $target (no file $resolved)";
			next;
		}
		next unless defined $anchor && $resolved =~ /\.md$/;
		$anchor_cache{$resolved} //= anchors(slurp($resolved));
		push @bad, "line $line: $target (no heading for #$anchor in $resolved)"
		  unless $anchor_cache{$resolved}{$anchor};
	}
	is(join("\n", @bad), '', "$file: every relative link resolves");
}

# ---- Placeholders ----

# A figure left to fill in (a token such as @SWITCH@, or a line that is
# only a token such as FUZZ_TABLE) is never published: outside code, no
# Markdown file holds one.
sub placeholders
{
	my ($text) = @_;
	my @found;
	foreach my $p (prose_lines($text))
	{
		my ($n, $l) = @$p;
		push @found, "line $n: $1" while $l =~ /(@[A-Z][A-Z0-9_]+@)/g;
		if ($l =~ /^\s*([A-Z][A-Z0-9]*(?:_[A-Z0-9]+)+)\s*$/)
		{
			push @found, "line $n: $1";
		}
		elsif ($l =~ /\b((?:SOAK|FUZZ|COMMIT|CHAOS)[A-Z0-9]*_[A-Z0-9_]+)\b/)
		{
			push @found, "line $n: $1";
		}
	}
	return @found;
}
is(join("\n", placeholders("probe \@SWITCH\@ and `\@EPOCH_MS\@`\nFUZZ_TABLE\n```\nX_Y\n```\nat COMMIT_SOAK, ok\n")),
	"line 1: \@SWITCH\@\nline 2: FUZZ_TABLE\nline 6: COMMIT_SOAK",
	'the placeholder check finds a token, a line that is a token and a named figure, outside code');
foreach my $file (@link_files)
{
	next unless -e "$root/$file";
	is(join("\n", placeholders(slurp($file))), '', "$file: no placeholder left to fill in");
}

# ---- Function length ----

{
	my @sources = map { "src/$_" } sort grep { /\.c$/ }
	  do { opendir my $dh, "$root/src" or die "$root/src: $!"; readdir $dh };
	cmp_ok(scalar(@sources), '>=', 9, 'the C sources are found');
	my ($out, $err);
	my $ok = IPC::Run::run([ $^X, 'test/function-length.pl', @sources ],
		'>', \$out, '2>', \$err, init => sub { chdir $root or die $! });
	is($out . $err, '', 'no function in src/*.c is over 80 lines');
	ok($ok, 'test/function-length.pl exits 0 on src/*.c');

	# The check fails on a function of 81 lines, and names it.
	my $probe = PostgreSQL::Test::Utils::tempdir() . '/probe.c';
	open my $fh, '>', $probe or die "$probe: $!";
	print $fh "static int\nsf_short(void)\n{\n\treturn 0;\n}\n\n",
	  "static void\nsf_long(int a,\n\t\tint b)\n{\n", "\ta++;\n" x 79, "}\n";
	close $fh;
	$ok = IPC::Run::run([ $^X, "$root/test/function-length.pl", $probe ],
		'>', \$out, '2>', \$err);
	ok(!$ok, 'test/function-length.pl fails on a function of 81 lines');
	is($out, "$probe: sf_long is 81 lines (limit 80)\n", 'and names it with its length');
}

# ---- query_safe() results only through query_value() ----

{
	my @tap = map { "test/t/$_" } sort grep { /\.p[lm]$/ }
	  do { opendir my $dh, "$root/test/t" or die "$root/test/t: $!"; readdir $dh };
	cmp_ok(scalar(@tap), '>=', 70, 'the TAP files are found');
	my ($out, $err);
	my $ok = IPC::Run::run([ $^X, 'test/query-safe.pl', @tap ],
		'>', \$out, '2>', \$err, init => sub { chdir $root or die $! });
	is($out . $err, '', 'no TAP file uses the result of query_safe() directly');
	ok($ok, 'test/query-safe.pl exits 0 on test/t');

	# The check fails on a comparison of query_safe()'s result, as 078 had
	# five (16.2's framework keeps the trailing newline), and on a result
	# kept in a variable; a call whose result is thrown away passes.
	# (The calls are spelt QUERY here, so that this file passes its own
	# check.)
	my $probe = PostgreSQL::Test::Utils::tempdir() . '/probe.pl';
	open my $fh, '>', $probe or die "$probe: $!";
	print $fh map { s/QUERY/query_safe/gr } "\$session->QUERY('SET x = 1');\n",
	  "\$_->QUERY('SELECT 1') foreach \@sessions;\n",
	  "# is(\$session->QUERY('SELECT 1'), '1', 'a comment');\n",
	  "is(\$session->QUERY(q{SELECT left('ord_2', 5)}), 'ord_2',\n\t'a comparison');\n",
	  "my \$pid =\n  \$victim->QUERY('SELECT pg_backend_pid()');\n";
	close $fh;
	$ok = IPC::Run::run([ $^X, "$root/test/query-safe.pl", $probe ], '>', \$out, '2>', \$err);
	ok(!$ok, 'test/query-safe.pl fails on a file that compares query_safe()\'s result');
	is( $out,
		"$probe:4: the result of query_safe() is used (after \"is(\"): read it through query_value() (test/t/SnowflakeTest.pm)\n"
		  . "$probe:7: the result of query_safe() is used (after \"my \$pid =\"): read it through query_value() (test/t/SnowflakeTest.pm)\n",
		'and names each use with its line, and only those');
}

# ---- SQL examples ----

my %servers;    # settings text => node

sub server_for
{
	my ($settings, $keys) = @_;
	my $which = $settings . (defined $keys ? " keys: $keys" : '');
	return $servers{$which} if $servers{$which};
	my %extra = ('snowflake.node_id' => 1);
	foreach my $item (split /;/, $settings)
	{
		next unless $item =~ /\S/;
		$item =~ /^\s*([\w.]+)\s*=\s*'?(.*?)'?\s*$/
		  or die "bad test setting \"$item\"";
		$extra{$1} = $2;
	}
	$extra{'snowflake.public_keys_file'} = 'public.keys' if defined $keys;
	my $node = start_snowflake_node('docs' . scalar(keys %servers),
		settings => \%extra, start => 0);
	if (defined $keys)
	{
		my $path = $node->data_dir . '/public.keys';
		open my $fh, '>', $path or die "$path: $!";
		print $fh join('', map { s/^\s+|\s+$//gr . "\n" } split /;/, $keys);
		close $fh or die "$path: $!";
		chmod(0600, $path) or die "chmod $path: $!";
	}
	$node->start;
	$servers{$which} = $node;
	return $node;
}

# Run $sql in database $db; return (exit code, stdout, stderr).
sub run_sql
{
	my ($node, $db, $sql) = @_;
	my ($stdout, $stderr) = ('', '');
	local $ENV{PGTZ} = 'UTC';
	local $ENV{PGDATESTYLE} = 'ISO, MDY';
	IPC::Run::run(
		[
			'psql', '-X', '-q', '-v', 'ON_ERROR_STOP=1',
			'-d', $node->connstr($db), '-f', '-'
		],
		'<', \encode('UTF-8', "\\pset footer off\n\\set VERBOSITY verbose\n$sql"),
		'>', \$stdout, '2>', \$stderr);
	return ($? >> 8, decode('UTF-8', $stdout), decode('UTF-8', $stderr));
}

# Output as a document shows it: psql's prefixes, the SQLSTATE and the
# LOCATION lines of verbose errors removed, trailing spaces and blank lines
# at the ends dropped.
sub normalise
{
	my ($text) = @_;
	my @lines;
	foreach my $line (split /\n/, $text)
	{
		next if $line =~ /^(?:psql:\S+ )?LOCATION:  /;
		$line =~ s/^psql:<stdin>:\d+: //;
		$line =~ s/^((?:ERROR|WARNING|NOTICE):  )[0-9A-Z]{5}: /$1/;
		$line =~ s/\s+$//;
		push @lines, $line;
	}
	shift @lines while @lines && $lines[0] eq '';
	pop @lines while @lines && $lines[-1] eq '';
	return join("\n", @lines);
}

# The shape of aligned output: each result's column headers (spaces
# collapsed) and number of rows.
sub shape
{
	my ($text) = @_;
	my @lines = split /\n/, normalise($text);
	my @shape;
	for (my $i = 0; $i < @lines; $i++)
	{
		if ($i + 1 < @lines && $lines[ $i + 1 ] =~ /^-[-+]*$/)
		{
			(my $h = $lines[$i]) =~ s/\s+/ /g;
			$h =~ s/^ | $//g;
			push @shape, [ $h, 0 ];
			$i++;
		}
		elsif (@shape && $lines[$i] ne '')
		{
			$shape[-1][1]++;
		}
	}
	return join("\n", map { "$_->[0] ($_->[1] rows)" } @shape);
}

my ($total_ran, $total_marked) = (0, 0);
my %ran;
my $dbno = 0;
foreach my $file (@run_files)
{
	my $text = slurp($file);
	my @blocks = fenced_blocks($text);
	my ($settings) = $text =~ /^\s*<!--\s*test settings:\s*(.*?)\s*-->/m;
	my ($keys) = $text =~ /^\s*<!--\s*test key file:\s*(.*?)\s*-->/m;
	my ($ran, $marked, $compared) = (0, 0, 0);
	my @failures;
	my @run = grep { $_->{lang} eq 'sql' } @blocks;
	next unless @run;

	my $node = server_for($settings // '', $keys);
	my $db = 'doc' . $dbno++;
	$node->safe_psql('postgres', "CREATE DATABASE $db");
	my $creates = grep {
		my ($kind) = parse_marker($_->{marker});
		($kind // '') ne 'not run'
		  && $_->{content} =~ /CREATE EXTENSION (?:IF NOT EXISTS )?snowflake\b/i
	} @run;
	$node->safe_psql($db, 'CREATE EXTENSION snowflake') unless $creates;

	my $last;    # the output of the previous sql block that ran: {out}
	foreach my $b (@blocks)
	{
		my ($kind, $arg) = parse_marker($b->{marker});
		my $where = "$file:$b->{line}";
		if (($kind // '') eq 'bad')
		{
			push @failures, "$where: $arg";
			next;
		}
		if ($b->{lang} eq 'sql')
		{
			undef $last;
			if (($kind // '') eq 'not run')
			{
				$marked++;
				next;
			}
			if (defined $kind && $kind ne 'fails with')
			{
				push @failures, "$where: marker \"$kind\" before a sql block";
				next;
			}
			my ($status, $out, $err) = run_sql($node, $db, $b->{content});
			$ran++;
			if (($kind // '') eq 'fails with')
			{
				my ($state) = $err =~ /ERROR:  ([0-9A-Z]{5}):/;
				push @failures,
				  "$where: expected an error $arg, got "
				  . ($state // "none (exit $status)")
				  unless $status != 0 && ($state // '') eq $arg;
				$last = { out => $err };
			}
			else
			{
				if ($status != 0)
				{
					# Its output is not compared: the failure says it all.
					push @failures, "$where: failed:\n$err";
					next;
				}
				$last = { out => $out };
			}
			next;
		}
		if ($b->{lang} eq 'text' && $b->{adjacent} && $last)
		{
			$compared++;
			if (($kind // '') eq 'output varies')
			{
				my ($want, $got) = (shape($b->{content}), shape($last->{out}));
				push @failures,
				  "$where: shown output differs in its columns or rows:\n"
				  . "shown:\n$want\ngot:\n$got"
				  if $want ne $got;
			}
			elsif (defined $kind)
			{
				push @failures, "$where: marker \"$kind\" before an output block";
			}
			else
			{
				my ($want, $got) = (normalise($b->{content}), normalise($last->{out}));
				push @failures,
				  "$where: shown output differs:\nshown:\n"
				  . join("\n", map { "|$_" } split /\n/, $want)
				  . "\ngot:\n"
				  . join("\n", map { "|$_" } split /\n/, $got)
				  if $want ne $got;
			}
			undef $last;
			next;
		}
		push @failures, "$where: marker \"$kind\" before a $b->{lang} block"
		  if defined $kind && $kind ne 'not run';
		undef $last;
	}
	note("$file: $ran sql blocks ran, $marked marked not run, "
		  . "$compared outputs compared");
	$ran{$file} = $ran;
	$total_ran += $ran;
	$total_marked += $marked;
	is(join("\n\n", @failures), '', "$file: every sql example runs as shown");
}

# Markers that stand alone (not right before a fence) do nothing, which is
# a mistake: catch them.
foreach my $file (@run_files)
{
	my @lines = split /\n/, slurp($file);
	my @stray;
	for my $i (0 .. $#lines)
	{
		(my $l = $lines[$i]) =~ s/`[^`]*`//g;    # code spans
		next unless $l =~ /<!--\s*(not run|output varies|fails with|recipe)\b/;
		push @stray, 'line ' . ($i + 1)
		  unless $i < $#lines && $lines[ $i + 1 ] =~ /^\s*(`{3,}|~{3,})/;
	}
	is(join(', ', @stray), '', "$file: every marker stands right before a fence");
}

note("all files: $total_ran sql blocks ran, $total_marked marked not run");
cmp_ok($ran{'README.md'} // 0, '>=', 4, "README.md: the quick start's examples ran");
cmp_ok($total_ran, '>', 3 * $total_marked, 'most sql examples run');

# ---- Pictures ----

# The layout pictures are what docs/img/layouts.pl draws now, and their
# numbers are what the server says of the same layouts: the epoch and the
# last time a bigint holds (its largest value decoded), the lifetime
# between them, and the number of values of every other field.
{
	package SnowflakeLayoutPicture;
	do "$root/docs/img/layouts.pl" or die "docs/img/layouts.pl: $@ $!";
}
my @pictures = SnowflakeLayoutPicture::layouts();
my $pic_node = server_for('');
$pic_node->safe_psql('postgres', 'CREATE DATABASE pictures');
$pic_node->safe_psql('pictures', 'CREATE EXTENSION snowflake');
foreach my $l (@pictures)
{
	my $file = "docs/img/layout-$l->{file}.svg";
	is(-e "$root/$file" ? slurp($file) : '', SnowflakeLayoutPicture::svg($l),
		"$file is what docs/img/layouts.pl draws");

	my ($total, @fields) = SnowflakeLayoutPicture::numbers($l);
	my $arg = defined $l->{layout} ? ", '$l->{layout}'" : '';
	my $max = '9223372036854775807';
	my ($code, $out, $err) = run_sql($pic_node, 'pictures', qq{\\pset format unaligned
\\pset tuples_only on
SELECT snowflake_timestamp(0$arg)::date, snowflake_timestamp($max$arg)::date,
       round(((extract(epoch FROM snowflake_timestamp($max$arg) - snowflake_timestamp(0$arg))
               + $l->{unit} / 1000.0) / (365.25 * 86400))::numeric, 1),
       d.node_id, d.sequence
  FROM snowflake_decode($max$arg) d;
} . (defined $l->{layout} ? "SELECT node_fields FROM snowflake_decode($max$arg);\n" : ''));
	is($err, '', "$l->{file}: the server decodes the layout's bounds");
	my ($row, $json) = split /\n/, $out;
	my ($first, $last, $years, $node_max, $seq_max) = split /\|/, $row // '';
	my ($t) = grep { $_->{kind} eq 't' } @fields;
	my @node = grep { $_->{kind} eq 'n' } @fields;
	my ($seq) = grep { $_->{kind} eq 's' } @fields;
	is("$t->{first} to $t->{last}, $t->{years} years", "$first to $last, $years years",
		"$file: the timestamp's first and last day and lifetime");
	is($seq->{count}, $seq_max + 1, "$file: $seq->{count} IDs per unit");
	if (defined $l->{layout})
	{
		my %max = ($json // '') =~ /"(\w+)": (\d+)/g;
		is(join(',', map { "$_->{name}:$_->{count}" } @node),
			join(',', map { "$_->{name}:" . (($max{ $_->{name} } // -1) + 1) } @node),
			"$file: the values of each node field");
	}
	else
	{
		is($node[0]{count}, $node_max + 1, "$file: $node[0]{count} node ids");
	}
}
cmp_ok(scalar(@pictures), '>=', 7, 'the default layout and the six presets are drawn');

$_->stop foreach values %servers;
done_testing();
