#!/usr/bin/perl
# Copyright: see LICENSE
#
# No TAP file uses the result of a background session's query_safe()
# directly (CONTRIBUTING.md, "A PostgreSQL built from source": compare
# results through query_value() of test/t/SnowflakeTest.pm).  The test
# framework of PostgreSQL 16.2 leaves the result's trailing newline, those
# of 15, 17, 18 and 19 remove it: a file that compares query_safe()'s
# result passes on the majors CI runs and fails on 16.
#
#   test/query-safe.pl FILE...
#
# A call is allowed only as a statement of its own, its result thrown away
# (`$session->query_safe('SET ...');`, `$_->query_safe(...) foreach @s;`,
# `eval { $s->query_safe(...) }`): the text between the start of the
# statement (the previous ';', '{' or '}', or the file's start) and the
# object the method is called on must be empty.  query_value() itself, in
# test/t/SnowflakeTest.pm, is the one place that reads the result.  Comments
# are not read (a '#' that starts a line or follows a blank).
#
# Prints each use as "FILE:LINE: ..." and exits 1 if there is one.

use strict;
use warnings;

die "usage: $0 FILE...\n" unless @ARGV;

my $found = 0;
for my $file (@ARGV)
{
	open my $fh, '<', $file or die "could not read $file: $!\n";
	my @lines = <$fh>;
	close $fh;

	# The text without comments, each line's start offset kept.
	my $text = '';
	my $in_query_value = 0;
	for my $line (@lines)
	{
		my $code = $line;
		$code =~ s/(^|\s)#.*$/$1/;
		# query_value's body reads the raw result on purpose: blanked.
		$in_query_value = 1 if $code =~ /^sub query_value\b/;
		if ($in_query_value)
		{
			$in_query_value = 0 if $code =~ /^\}/;
			$code = "\n";
		}
		$text .= $code;
	}

	# Each call, and what stands between its statement's start and the
	# object it is called on.
	while ($text =~ /(\$[\w:]+(?:->)?(?:\[[^\]\n]*\]|\{[^}\n]*\})*)\s*->\s*query_safe\s*\(/g)
	{
		my $object_start = $-[1];
		my $before = substr($text, 0, $object_start);
		my $stmt_start = 0;
		$stmt_start = $+[0] if $before =~ /.*[;{}]/s;
		my $lead = substr($before, $stmt_start);
		next if $lead =~ /^\s*$/;
		my $line = 1 + (substr($text, 0, $object_start) =~ tr/\n//);
		$lead =~ s/\s+/ /g;
		$lead =~ s/^ | $//g;
		print "$file:$line: the result of query_safe() is used (after \"$lead\"): "
		  . "read it through query_value() (test/t/SnowflakeTest.pm)\n";
		$found = 1;
	}
}
exit $found;
