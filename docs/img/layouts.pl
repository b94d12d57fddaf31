#!/usr/bin/perl
# Copyright: see LICENSE
#
# Draws the bit layout of a snowflake ID as an SVG picture, one file per
# layout: the server's default and the foreign presets of docs/layouts.md,
# all the same way (the sign bit, each field in proportion to its width,
# and what each field gives: the lifetime and end of the timestamp, the
# number of node ids, the IDs per time unit).
#
#   perl docs/img/layouts.pl [DIR]     write layout-NAME.svg into DIR
#                                      (default: this script's directory)
#
# The numbers are computed here from each layout's widths, epoch and time
# unit; test/t/043_docs.pl checks that the committed pictures are what this
# script draws and that their numbers are what the server's decoders say of
# the same layouts.

package SnowflakeLayoutPicture;

use strict;
use warnings;

use File::Basename qw(dirname);
use POSIX qw(floor strftime);

# Each layout: the name snowflake_decode knows it by (undef: the server's),
# its epoch in Unix ms, its time unit in ms, and its fields from the most
# significant: [ name, bits, kind ] with kind t(imestamp), n(ode), s(equence).
my @layouts = (
	{
		file => 'default',
		title => 'The default layout: 41/10/12',
		layout => undef,
		epoch => 1704067200000,
		unit => 1,
		fields => [ [ 'timestamp', 41, 't' ], [ 'node', 10, 'n' ], [ 'sequence', 12, 's' ] ]
	},
	{
		file => 'twitter',
		title => "Preset 'twitter'",
		layout => 'twitter',
		epoch => 1288834974657,
		unit => 1,
		fields => [
			[ 'timestamp', 41, 't' ], [ 'datacenter', 5, 'n' ],
			[ 'worker', 5, 'n' ], [ 'sequence', 12, 's' ]
		]
	},
	{
		file => 'discord',
		title => "Preset 'discord'",
		layout => 'discord',
		epoch => 1420070400000,
		unit => 1,
		fields => [
			[ 'timestamp', 42, 't' ], [ 'worker', 5, 'n' ],
			[ 'process', 5, 'n' ], [ 'sequence', 12, 's' ]
		]
	},
	{
		file => 'instagram',
		title => "Preset 'instagram'",
		layout => 'instagram',
		epoch => 1314220021721,
		unit => 1,
		fields => [ [ 'timestamp', 41, 't' ], [ 'shard', 13, 'n' ], [ 'sequence', 10, 's' ] ]
	},
	{
		file => 'sonyflake',
		title => "Preset 'sonyflake'",
		layout => 'sonyflake',
		epoch => 1409529600000,
		unit => 10,
		fields => [ [ 'timestamp', 39, 't' ], [ 'sequence', 8, 's' ], [ 'machine', 16, 'n' ] ]
	},
	{
		file => 'mastodon',
		title => "Preset 'mastodon'",
		layout => 'mastodon',
		epoch => 0,
		unit => 1,
		fields => [ [ 'timestamp', 48, 't' ], [ 'sequence', 16, 's' ] ]
	},
	{
		file => 'pgedge',
		title => "Preset 'pgedge'",
		layout => 'pgedge',
		epoch => 1672531200000,
		unit => 1,
		fields => [ [ 'timestamp', 41, 't' ], [ 'node', 10, 'n' ], [ 'sequence', 12, 's' ] ]
	});

# Drawing constants: pixels per bit, margins, the bar's top and height.
my $PX = 13;
my $LEFT = 20;
my $BAR_Y = 48;
my $BAR_H = 40;
my $WIDTH = $LEFT * 2 + 64 * $PX;
my %FILL = (sign => '#e0e0e0', t => '#cfe2f3', n => '#d9ead3', s => '#fce5cd');

# 1234567 as "1,234,567".
sub thousands
{
	my ($n) = @_;
	1 while $n =~ s/^(\d+)(\d{3})/$1,$2/;
	return $n;
}

sub date_of
{
	my ($unix_ms) = @_;
	return strftime('%Y-%m-%d', gmtime(floor($unix_ms / 1000)));
}

sub unit_name
{
	my ($unit) = @_;
	return $unit == 1 ? 'ms' : "$unit ms";
}

# What a layout's numbers are: per field, its bits, the bits usable in a
# bigint (the timestamp's top bit is the sign bit in a 64-bit layout), and
# the lines said under it.
sub numbers
{
	my ($l) = @_;
	my $total = 0;
	$total += $_->[1] foreach @{ $l->{fields} };
	my @out;
	foreach my $f (@{ $l->{fields} })
	{
		my ($name, $bits, $kind) = @$f;
		my %n = (name => $name, bits => $bits, kind => $kind);
		if ($kind eq 't')
		{
			my $usable = $bits - ($total - 63);
			my $span_ms = (1 << $usable) * $l->{unit};
			$n{usable} = $usable;
			$n{years} = sprintf('%.1f', $span_ms / (365.25 * 86400000));
			$n{first} = date_of($l->{epoch});
			$n{last} = date_of($l->{epoch} + ((1 << $usable) - 1) * $l->{unit});
			$n{lines} = [
				"$n{years} years (" . unit_name($l->{unit}) . " units)",
				"$n{first} to $n{last}"
			];
		}
		elsif ($kind eq 'n')
		{
			$n{count} = 1 << $bits;
			$n{lines} = [
				thousands($n{count}) . ($l->{layout} ? ' values' : ' node ids'),
				'0 .. ' . thousands($n{count} - 1)
			];
		}
		else
		{
			$n{count} = 1 << $bits;
			$n{lines} = [ thousands($n{count}) . ' IDs', 'per ' . unit_name($l->{unit}) ];
			$n{lines}[1] .= ' per node' if !$l->{layout};
		}
		push @out, \%n;
	}
	return ($total, @out);
}

sub esc
{
	my ($s) = @_;
	$s =~ s/&/&amp;/g;
	$s =~ s/</&lt;/g;
	$s =~ s/>/&gt;/g;
	return $s;
}

sub text
{
	my ($x, $y, $size, $s, %attr) = @_;
	my $extra = join('', map { qq{ $_="$attr{$_}"} } sort keys %attr);
	return sprintf(qq{  <text x="%d" y="%d" font-size="%d" text-anchor="middle"%s>%s</text>\n},
		$x, $y, $size, $extra, esc($s));
}

sub svg
{
	my ($l) = @_;
	my ($total, @fields) = numbers($l);
	my $height = $BAR_Y + $BAR_H + 44;
	my @desc;
	foreach my $f (@fields)
	{
		push @desc, "$f->{name}, $f->{bits} bits: " . join(', ', @{ $f->{lines} });
	}
	my $desc = ($total == 64 ? 'The sign bit is the timestamp\'s top bit. ' : 'Sign bit 0. ')
	  . join('; ', @desc) . '.';
	my $out = qq{<svg xmlns="http://www.w3.org/2000/svg" width="$WIDTH" height="$height" viewBox="0 0 $WIDTH $height" font-family="DejaVu Sans, Verdana, sans-serif" role="img">\n};
	$out .= '  <title>' . esc("$l->{title}: bits of a 64-bit ID") . "</title>\n";
	$out .= '  <desc>' . esc($desc) . "</desc>\n";
	$out .= qq{  <rect x="0" y="0" width="$WIDTH" height="$height" fill="#ffffff"/>\n};
	$out .= text($WIDTH / 2, 18, 13, $l->{title} . ($l->{layout} ? '' : ', epoch ' . date_of($l->{epoch})),
		'font-weight' => 'bold');

	# The sign bit: its own cell, or the timestamp's top bit.
	my $x = $LEFT;
	my $bit = 63;
	$out .= qq{  <rect x="$x" y="$BAR_Y" width="$PX" height="$BAR_H" fill="$FILL{sign}" stroke="#555555"/>\n};
	$out .= text($x + $PX / 2, $BAR_Y + $BAR_H / 2 + 4, 11, '0');
	$out .= text($x + $PX / 2, $BAR_Y - 6, 9, '63', fill => '#555555');
	$out .= text($x + $PX / 2, $BAR_Y + $BAR_H + 14, 9, 'sign', fill => '#555555');
	$x += $PX;
	$bit--;
	foreach my $f (@fields)
	{
		my $bits = $f->{kind} eq 't' ? $f->{usable} : $f->{bits};
		my $w = $bits * $PX;
		my $label = $f->{kind} eq 't' && $bits != $f->{bits}
		  ? "$f->{name}, $f->{bits} bits (top bit: sign)" : "$f->{name}, $f->{bits} bits";
		$out .= qq{  <rect x="$x" y="$BAR_Y" width="$w" height="$BAR_H" fill="$FILL{$f->{kind}}" stroke="#555555"/>\n};
		if ($w >= 100)
		{
			$out .= text($x + $w / 2, $BAR_Y + $BAR_H / 2 + 4, 12, $label);
		}
		else
		{
			$out .= text($x + $w / 2, $BAR_Y + $BAR_H / 2 - 3, 11, $f->{name});
			$out .= text($x + $w / 2, $BAR_Y + $BAR_H / 2 + 11, 11, "$f->{bits} bits");
		}
		$out .= text($x + $PX / 2, $BAR_Y - 6, 9, $bit, fill => '#555555');
		$out .= text($x + $w / 2, $BAR_Y + $BAR_H + 16 + 14 * $_, 11, $f->{lines}[$_])
		  foreach 0 .. $#{ $f->{lines} };
		$x += $w;
		$bit -= $bits;
	}
	$out .= text($x - $PX / 2, $BAR_Y - 6, 9, '0', fill => '#555555');
	$out .= "</svg>\n";
	return $out;
}

# The layouts, for test/t/043_docs.pl (with numbers() and svg()).
sub layouts { return @layouts }

if (!caller)
{
	my $dir = $ARGV[0] // dirname(__FILE__);
	foreach my $l (@layouts)
	{
		my $path = "$dir/layout-$l->{file}.svg";
		open my $fh, '>', $path or die "could not write $path: $!";
		print $fh svg($l);
		close $fh or die "could not write $path: $!";
	}
}

1;
