# Copyright: see LICENSE
#
# 008_conf_parsing.pl
#	Preloaded or not, the same postgresql.conf means the same layout.
#
# A preloaded server reads the widths through PostgreSQL's own integer
# parser (they are real settings); a server without the preload has only
# the placeholders' text, which the decoders parse themselves.  For every
# way of writing a width, the decoders of a server without the preload
# must use the layout a preloaded server uses with the same postgresql.conf,
# or fail; and if the preloaded server refuses the value, they must fail.
# They must never decode silently with another layout.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

# Each case writes the settings afresh, in a file of their own: the
# preload is one of them.
my $node = start_snowflake_node(
	'conf_parsing',
	preload => 0,
	include => ['snowflake_case.conf']);
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
$node->stop;

sub write_case
{
	write_conf_file($node, 'snowflake_case.conf', @_);
	return;
}

# The node field's width as a preloaded server reads node_bits = $value,
# or 'refused' if it does not start.
sub preloaded_node_bits
{
	my ($value) = @_;
	write_case(
		shared_preload_libraries => 'snowflake',
		'snowflake.node_id' => 1,
		'snowflake.node_bits' => $value);
	return 'refused' unless $node->start(fail_ok => 1);
	my $bits =
	  $node->safe_psql('postgres', 'SELECT node_bits FROM snowflake_stats');
	$node->stop;
	return $bits;
}

# The node field's width the decoders of a server without the preload use,
# or 'fails' if they refuse the configured value with 22023 naming it (any
# other failure is returned as is, and counts as a disagreement).  The
# largest bigint has every bit set, so its node field is 2^node_bits - 1.
sub decoder_node_bits
{
	my ($value) = @_;
	write_case('snowflake.node_bits' => $value);
	$node->start;
	my $report = error_report($node,
		'SELECT snowflake_node_id(9223372036854775807)');
	my $out = $node->safe_psql('postgres',
		'SELECT snowflake_node_id(9223372036854775807)')
	  if $report eq 'none';
	$node->stop;
	return 'fails'
	  if $report =~
	  /\A22023: (?:invalid value for parameter "snowflake\.node_bits": "\Q$value\E"|invalid snowflake layout)\nDETAIL:  [^\n]+\.\z/;
	return "failed otherwise ($report)" if $report ne 'none';
	return sprintf('%d', log($out + 1) / log(2) + 0.5);
}

foreach my $value ('10', '8', ' 9 ', '+9', '011', '010', '0x0A', '9.6', '1e1',
	'ten', '40')
{
	my $preloaded = preloaded_node_bits($value);
	my $decoder = decoder_node_bits($value);
	my $name =
	  "node_bits = '$value': preloaded server $preloaded, decoders without preload $decoder";

	# Agreement, or the decoders fail.
	my $consistent = $decoder eq 'fails' || $decoder eq $preloaded;

	ok($consistent, $name);
}

done_testing();
