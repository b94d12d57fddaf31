#!/usr/bin/perl
# Copyright: see LICENSE
#
# No C function longer than a limit (80 lines by default), counted from the
# line of its opening brace to the line of its closing brace, both included
# (CONTRIBUTING.md, "Writing C").  Definitions are found as the code is
# written here (pgindent style): the name at the start of a line, the body's
# braces alone at the start of lines.
#
#   test/function-length.pl [--limit N] FILE...
#
# Prints each function over the limit as "FILE: NAME is N lines (limit L)"
# and exits 1 if there is one; exits 2 if a body has no closing brace.

use strict;
use warnings;

my $limit = 80;
if (@ARGV >= 2 && $ARGV[0] eq '--limit')
{
	(undef, $limit) = splice(@ARGV, 0, 2);
}
die "usage: $0 [--limit N] FILE...\n" unless @ARGV && $limit =~ /^\d+$/;

my $over = 0;
for my $file (@ARGV)
{
	open my $fh, '<', $file or die "could not read $file: $!\n";
	my @lines = <$fh>;
	close $fh;

	for (my $i = 0; $i < @lines; $i++)
	{
		next unless $lines[$i] =~ /^\{/;

		# A function's header ends with ")" right before its brace; a
		# struct's or an initializer's does not.
		next unless $i > 0 && $lines[ $i - 1 ] =~ /\)\s*(?:\/\*.*\*\/\s*)?$/;
		my $name;
		for (my $j = $i - 1; $j >= 0 && $j >= $i - 10; $j--)
		{
			if ($lines[$j] =~ /^([A-Za-z_]\w*)\s*\(/)
			{
				$name = $1;
				last;
			}
		}
		next unless defined $name;

		my $end = $i + 1;
		$end++ while $end < @lines && $lines[$end] !~ /^\}/;
		if ($end >= @lines)
		{
			print "$file: $name has no closing brace at the start of a line\n";
			exit 2;
		}
		my $length = $end - $i + 1;
		if ($length > $limit)
		{
			print "$file: $name is $length lines (limit $limit)\n";
			$over = 1;
		}
		$i = $end;
	}
}
exit $over;
