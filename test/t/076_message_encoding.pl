# Copyright: see LICENSE
#
# 076_message_encoding.pl
#	An error about a layout argument quotes part of the text the user
#	gave: it must quote whole characters, or the message is not text of
#	the database's encoding, and a client of another encoding gets a
#	conversion error (22021) instead of it.  Found by the fuzz target
#	test/fuzz/layout_parse.c (its input regress-detail-cuts-character):
#	 - the 40 bytes a detail quotes of an item cut a character in two;
#	 - an epoch= that PostgreSQL's time input refuses has its message,
#	   which quotes the whole text, cut to the detail's 256 bytes, inside
#	   a character too, and without its final period.
#	A UTF-8 database and a LATIN1 client; the texts are built in SQL with
#	chr(233) ("é"), so that the script itself is ASCII.

use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use SnowflakeTest;
use Test::More;

my $node = start_snowflake_node('enc', node_id => 1,
	init => { extra => [ '--encoding=UTF8', '--locale=C' ] });
$node->safe_psql('postgres', 'CREATE EXTENSION snowflake');
is($node->safe_psql('postgres', 'SHOW server_encoding'), 'UTF8', 'a UTF-8 database');

my $hint = "HINT:  Name a preset (twitter, discord, instagram, sonyflake, mastodon, pgedge), or spell a layout out, such as 'epoch=2015-01-01; fields=timestamp:42,worker:5,process:5,sequence:12'.";

# The first 40 bytes of "W" x 39 . "ééé" end inside the first "é": the
# detail quotes the 39 W's only.  The message quotes the text whole, in
# LATIN1 for this client.
my $w = 'W' x 39;
is( error_report(
		$node, "SET client_encoding = 'LATIN1';
SELECT snowflake_timestamp(1, repeat('W', 39) || repeat(chr(233), 3));"),
	"22023: invalid snowflake layout \"$w\xe9\xe9\xe9\"\n"
	  . "DETAIL:  \"$w\" is not a preset (twitter, discord, instagram, sonyflake, mastodon, pgedge) and not of the form key=value.\n"
	  . $hint,
	'an item cut at 40 bytes: whole characters, the layout error in the client encoding');

# The time input's message cut to fit: whole characters, then the period.
my $lead = 'invalid input syntax for type timestamp with time zone: "x';
my $n = int((254 - length($lead)) / 2);
my $epoch = "epoch=x" . ("\xe9" x 110);
is( error_report(
		$node, "SET client_encoding = 'LATIN1';
SELECT snowflake_timestamp(1, 'epoch=x' || repeat(chr(233), 110) || '; fields=timestamp:41,sequence:12');"),
	# The layout is quoted up to its first 100 characters (issue 46).
	"22023: invalid snowflake layout \"" . substr("$epoch; fields=timestamp:41,sequence:12", 0, 100) . "...\"\n"
	  . "DETAIL:  $lead" . ("\xe9" x $n) . ".\n"
	  . $hint,
	'an epoch the time input refuses, its message cut: whole characters and the period');

# The same for a UTF-8 client: the detail is valid UTF-8.
my (undef, $stderr) = sql_error($node,
	"SELECT snowflake_timestamp(1, 'epoch=x' || repeat(chr(233), 110) || '; fields=timestamp:41,sequence:12');");
my ($detail) = $stderr =~ /^DETAIL:  (.*)$/m;
ok(defined $detail && utf8::decode($detail), 'the detail is UTF-8 for a UTF-8 client');

$node->stop;
done_testing();
