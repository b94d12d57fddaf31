# Copyright: see LICENSE
#
# TextFormTest.pm
#	The rules of the text forms of IDs (docs/text-forms.md) written again
#	in Perl, as an oracle that shares nothing with src/textform.c: what
#	every call of snowflake_to_<form>() and snowflake_from_<form>() must
#	return, a value or the whole error (SQLSTATE, message, detail).  Any
#	implementation of the functions can be checked against it in any
#	database that has them (test/t/039_text_forms.pl checks the C
#	extension's; the SQL edition's test can point it at its own):
#
#	  my @calls = text_form_corpus($seed, $n);
#	  my %got = text_form_outcomes($node, $db, @calls);
#	  is($got{$_->{sql}}, $_->{expected}) foreach @calls;
#
#	or check_text_forms($node, $db, $seed, $n), which does that and
#	reports each mismatch.  The corpus: IDs at every edge and of every
#	length, each encoded in every form with and without a prefix, its text
#	decoded, and that text changed every way a hand or a program changes it
#	(a character replaced, inserted or dropped, case changed, Crockford's
#	aliases and hyphens, a digit too many or too few, a leading zero, the
#	prefix cut or altered, characters of two and three bytes), random
#	strings, and texts and prefixes longer than the 100 characters a
#	message quotes of them.  Positions count characters: the database must
#	be UTF8.

package TextFormTest;

use strict;
use warnings;
use utf8;

use Encode qw(decode encode);
use Exporter 'import';
use Test::More;

our @EXPORT = qw(text_form_corpus text_form_expected_to
  text_form_expected_from text_form_outcomes check_text_forms
  text_form_encode);

my $MAX = 9223372036854775807;

# name => [alphabet, width (0: none), case-insensitive, digit name]
our %FORMS = (
	base32 => [ '0123456789ABCDEFGHJKMNPQRSTVWXYZ', 13, 1, 'Crockford base32' ],
	base62 => [
		'0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz',
		11, 0, 'base62'
	],
	base58 => [
		'123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz',
		0, 0, 'base58'
	],
	base36 => [ '0123456789abcdefghijklmnopqrstuvwxyz', 0, 1, 'base36' ],
	hex => [ '0123456789abcdef', 16, 1, 'hexadecimal' ],
);
our @FORM_NAMES = qw(base32 base62 base58 base36 hex);

# The digit value of one character in a form, or undef; base32's hyphen
# gives '-'.
sub digit_value
{
	my ($form, $c) = @_;
	my ($alphabet, undef, $any_case) = @{ $FORMS{$form} };
	if ($form eq 'base32')
	{
		return '-' if $c eq '-';
		return 1 if $c =~ /^[IiLl]$/;
		return 0 if $c =~ /^[Oo]$/;
	}
	my $i = index($alphabet, $c);
	$i = index($alphabet, $c =~ /[a-z]/ ? uc $c : lc $c)
	  if $i < 0 && $any_case && $c =~ /^[A-Za-z]$/;
	return $i < 0 ? undef : $i;
}

# The digits of a non-negative ID in a form.
sub text_form_encode
{
	my ($form, $id) = @_;
	use integer;
	my ($alphabet, $width) = @{ $FORMS{$form} };
	my $base = length $alphabet;
	my $s = '';
	do
	{
		$s = substr($alphabet, $id % $base, 1) . $s;
		$id /= $base;
	} while ($id > 0);
	$s = substr($alphabet, 0, 1) x ($width - length $s) . $s if length $s < $width;
	return $s;
}

# What a message quotes of an input: at most its first 100 characters,
# followed by "..." when it has more.
sub quoted
{
	my ($s) = @_;
	return length($s) > 100 ? substr($s, 0, 100) . '...' : $s;
}

# The error of a prefix that is not allowed, or undef.
sub prefix_error
{
	my ($prefix) = @_;
	return undef unless defined $prefix;
	my @c = split //, $prefix;
	my $q = quoted($prefix);
	for my $i (0 .. $#c)
	{
		next if $c[$i] =~ /^[A-Za-z0-9_.~-]$/;
		return "22023: invalid snowflake ID prefix \"$q\"\n"
		  . "DETAIL:  Character \"$c[$i]\" at position "
		  . ($i + 1)
		  . ' is not allowed in a prefix, which takes ASCII letters and digits, "_", "-", "." and "~".';
	}
	return undef if @c <= 63;
	return "22023: invalid snowflake ID prefix \"$q\"\n"
	  . 'DETAIL:  A prefix has at most 63 characters; this one has ' . scalar(@c) . '.';
}

# What snowflake_to_<form>($id [, $prefix]) returns: the text, or the error.
sub text_form_expected_to
{
	my ($form, $id, $prefix) = @_;
	return "22003: value $id is out of range for a snowflake ID\n"
	  . "DETAIL:  Snowflake IDs are between 0 and $MAX."
	  if $id < 0;
	my $err = prefix_error($prefix);
	return $err if defined $err;
	return ($prefix // '') . text_form_encode($form, $id);
}

# What snowflake_from_<form>($text [, $prefix]) returns: the ID (as its
# decimal text), or the error.  The checks in their documented order.
sub text_form_expected_from
{
	my ($form, $text, $prefix) = @_;
	my $err = prefix_error($prefix);
	return $err if defined $err;
	my ($alphabet, $width, undef, $digit_name) = @{ $FORMS{$form} };
	my $base = length $alphabet;
	my $q = quoted($text);
	my $syntax = "22P02: invalid input syntax for a $form snowflake ID: \"$q\"\nDETAIL:  ";
	my @c = split //, $text;
	my @p = split //, ($prefix // '');
	for my $i (0 .. $#p)
	{
		return $syntax . "The text ends after " . scalar(@c)
		  . " characters, inside the prefix \"$prefix\"."
		  if $i > $#c;
		return $syntax . "Character \"$c[$i]\" at position " . ($i + 1)
		  . " does not match the prefix \"$prefix\"."
		  if $c[$i] ne $p[$i];
	}
	my @digits;    # [value, position]
	for my $i (scalar(@p) .. $#c)
	{
		my $v = digit_value($form, $c[$i]);
		return $syntax . "Character \"$c[$i]\" at position " . ($i + 1)
		  . " is not a $digit_name digit."
		  unless defined $v;
		next if $v eq '-';
		return $syntax . "Character \"$c[$i]\" at position " . ($i + 1)
		  . " is one digit too many: a $form snowflake ID has $width digits."
		  if $width && @digits == $width;
		push @digits, [ $v, $i + 1 ];
	}
	return $syntax . "The text has no digits; a $form snowflake ID has at least one."
	  if !$width && !@digits;
	return $syntax . 'The text has ' . scalar(@digits)
	  . " digits; a $form snowflake ID has $width."
	  if @digits < $width;
	return $syntax . "Character \"$c[$digits[0][1] - 1]\" at position $digits[0][1]"
	  . " is a leading zero, which $form snowflake IDs are written without."
	  if !$width && @digits > 1 && $digits[0][0] == 0;
	my $v = 0;
	{
		use integer;
		foreach my $d (@digits)
		{
			if ($v > ($MAX - $d->[0]) / $base)
			{
				return "22003: $form value \"$q\" is out of range for a snowflake ID\n"
				  . "DETAIL:  The largest snowflake ID is $MAX, in $form \""
				  . text_form_encode($form, $MAX) . '".';
			}
			$v = $v * $base + $d->[0];
		}
	}
	return "$v";
}

# A string as an SQL literal.
sub literal
{
	my ($s) = @_;
	return 'NULL' unless defined $s;
	(my $q = $s) =~ s/'/''/g;
	return "'$q'";
}

# One call of the corpus: its SQL and what it must give.
sub to_call
{
	my ($form, $id, $prefix) = @_;
	return {
		sql => "SELECT snowflake_to_$form($id"
		  . (defined $prefix ? ', ' . literal($prefix) : '') . ')',
		expected => text_form_expected_to($form, $id, $prefix)
	};
}

sub from_call
{
	my ($form, $text, $prefix) = @_;
	return {
		sql => "SELECT snowflake_from_$form(" . literal($text)
		  . (defined $prefix ? ', ' . literal($prefix) : '') . ')',
		expected => text_form_expected_from($form, $text, $prefix)
	};
}

# Characters the changes draw from: every form's digits and the letters
# none has, case, separators, spaces, and characters of two and three bytes.
my @POOL = ((split //, '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'),
	'-', '_', '.', '~', ' ', '/', '+', '=', "'", '"', '\\', '%', 'é', 'ß', 'Ö', '日', '€');

# The IDs: the edges of every form and of 2's powers, and $n random ones of
# every bit length.
sub corpus_ids
{
	my ($n) = @_;
	my %ids = map { $_ => 1 } (0, 1, 2, $MAX - 1, $MAX);
	{
		use integer;
		for my $k (1 .. 62)
		{
			my $p = 1 << $k;
			$ids{ $p - 1 } = $ids{$p} = $ids{ $p + 1 } = 1;
		}
		foreach my $base (32, 62, 58, 36, 16)
		{
			my $p = 1;
			while ($p <= $MAX / $base)
			{
				$p *= $base;
				$ids{ $p - 1 } = $ids{$p} = 1;
				$ids{ $p + 1 } = 1 if $p < $MAX;
			}
		}
	}
	for (1 .. $n)
	{
		use integer;
		my $id = (int(rand(2**31)) << 32) | int(rand(2**32));
		$ids{ $id >> int(rand(63)) } = 1;
	}
	# In numeric order without floating point: by length, then digits.
	return sort { length($a) <=> length($b) or $a cmp $b } keys %ids;
}

# A random prefix: none most often, else an allowed one, sometimes one
# that is not allowed.
sub random_prefix
{
	my $r = rand();
	return undef if $r < 0.5;
	return (qw(ord_ cus_ x u ID. a-b~c_ p))[ int(rand(7)) ] if $r < 0.9;
	return (('é', 'a b', 'ord/', 'p' x 64, 'p' x 63, ''))[ int(rand(6)) ];
}

# Ways to change a text, each a function of (form, text, prefix) giving a
# new text.
sub changes
{
	my $pick = sub { $POOL[ int(rand(@POOL)) ] };
	return (
		sub { my (undef, $t) = @_; my $i = int(rand(length($t) || 1)); substr($t, $i, 1, $pick->()) if length $t; $t },
		sub { my (undef, $t) = @_; substr($t, int(rand(length($t) + 1)), 0, $pick->()); $t },
		sub { my (undef, $t) = @_; substr($t, int(rand(length $t)), 1, '') if length $t; $t },
		sub { my (undef, $t) = @_; lc $t },
		sub { my (undef, $t) = @_; uc $t },
		sub { my (undef, $t) = @_; $t =~ s/(.)/rand() < 0.3 ? (lc $1 eq $1 ? uc $1 : lc $1) : $1/ge; $t },
		sub { my (undef, $t) = @_; $t =~ s/1/(qw(I i L l 1))[int(rand(5))]/ge; $t =~ s/0/(qw(O o 0))[int(rand(3))]/ge; $t },
		sub { my (undef, $t) = @_; substr($t, int(rand(length($t) + 1)), 0, '-' x (1 + int(rand(2)))) for 1 .. 3; $t },
		sub { my ($f, $t, $p) = @_; my $z = substr($FORMS{$f}[0], 0, 1); my $l = length($p // ''); substr($t, $l, 0, $z); $t },
		sub { my ($f, $t) = @_; $t . substr($FORMS{$f}[0], int(rand(length $FORMS{$f}[0])), 1) },
		sub { my ($f, $t) = @_; substr($t, 0, length($t) - 1) },
		sub { my (undef, $t, $p) = @_; substr($t, 0, int(rand(length($p // '') + 1))) },
		sub { my (undef, $t) = @_; " $t" },
		sub { my (undef, $t) = @_; "$t\t" },
		sub { my (undef, $t) = @_; join '', map { $pick->() } 1 .. int(rand(18)) },
	);
}

# The corpus: calls with what each must give.  Deterministic for a seed.
sub text_form_corpus
{
	my ($seed, $n) = @_;
	srand($seed);
	my @changes = changes();
	my @calls;
	foreach my $id (corpus_ids($n))
	{
		foreach my $form (@FORM_NAMES)
		{
			my $prefix = random_prefix();
			push @calls, to_call($form, $id, $prefix);
			my $right = defined prefix_error($prefix) ? undef : $prefix;
			my $text = ($right // '') . text_form_encode($form, $id);
			push @calls, from_call($form, $text, $right);
			my $changed = $changes[ int(rand(@changes)) ]->($form, $text, $right);
			push @calls, from_call($form, $changed, rand() < 0.9 ? $right : random_prefix());
			# The text in another form's decoder.
			push @calls, from_call($FORM_NAMES[ int(rand(5)) ], $text, $right);
		}
		if (rand() < 0.05)
		{
			use integer;
			push @calls, to_call($FORM_NAMES[ int(rand(5)) ], -$id - 1, random_prefix());
		}
	}
	# Just above the largest ID, every form.
	foreach my $form (@FORM_NAMES)
	{
		my $top = text_form_encode($form, $MAX);
		my $last = substr($top, -1);
		my $alphabet = $FORMS{$form}[0];
		my $next = substr($alphabet, index($alphabet, $last) + 1, 1);
		push @calls, from_call($form, substr($top, 0, -1) . $next, undef) if $next ne '';
		push @calls, from_call($form, substr($alphabet, -1) x length($top), undef);
		push @calls, from_call($form, substr($alphabet, 1, 1) . $top, undef)
		  unless $FORMS{$form}[1];
		# Long texts and prefixes, which messages quote in part: digits
		# and a character that is not one at positions 100, 101 and 150,
		# digits only, two-byte characters, a prefix too long.
		my $digit = substr($alphabet, 1, 1);
		push @calls, from_call($form, ($digit x ($_ - 1)) . '/', undef) foreach (100, 101, 150);
		push @calls, from_call($form, $digit x 150, undef);
		push @calls, from_call($form, 'é' x 150, undef);
		push @calls, from_call($form, $top, 'p' x 150);
		push @calls, to_call($form, 1, ('p' x 149) . '/');
	}
	return @calls;
}

# Run the calls in database $db of $node: a hash from each call's SQL to
# its value (as text) or its error ("SQLSTATE: message", then "DETAIL:  "
# and the detail on a line of its own), as text_form_expected_* write them.
sub text_form_outcomes
{
	my ($node, $db, @calls) = @_;
	my $copy = join '', map {
		(my $q = $_->{sql}) =~ s/\\/\\\\/g;
		$q =~ s/\t/\\t/g;
		"$q\n"
	} @calls;
	my $out = $node->safe_psql($db, encode('UTF-8', <<"SQL" . $copy . <<'SQL2'));
SET client_encoding = 'UTF8';
SET client_min_messages = warning;
CREATE TEMP TABLE tf_calls (n serial, q text);
CREATE FUNCTION pg_temp.tf_try(q text) RETURNS text LANGUAGE plpgsql AS \$\$
DECLARE
    r text;
    s text;
    m text;
    d text;
BEGIN
    EXECUTE q INTO r;
    RETURN r;
EXCEPTION WHEN OTHERS THEN
    GET STACKED DIAGNOSTICS s = RETURNED_SQLSTATE, m = MESSAGE_TEXT, d = PG_EXCEPTION_DETAIL;
    RETURN s || ': ' || m || CASE WHEN d <> '' THEN E'\\nDETAIL:  ' || d ELSE '' END;
END
\$\$;
COPY tf_calls (q) FROM STDIN;
SQL
\.
SELECT translate(encode(convert_to(q, 'UTF8'), 'base64'), E'\n', '') || ' '
       || translate(encode(convert_to(coalesce(pg_temp.tf_try(q), '<NULL>'), 'UTF8'), 'base64'), E'\n', '')
  FROM tf_calls ORDER BY n;
SQL2
	my %got;
	require MIME::Base64;
	foreach my $line (split /\n/, $out)
	{
		my ($q, $r) = split / /, $line;
		$got{ decode('UTF-8', MIME::Base64::decode_base64($q)) } =
		  decode('UTF-8', MIME::Base64::decode_base64($r));
	}
	return %got;
}

# Check every call of the corpus in $db; one test, with the first
# mismatches reported.  Returns how many calls ran.
sub check_text_forms
{
	my ($node, $db, $seed, $n, $what) = @_;
	my @calls = text_form_corpus($seed, $n);
	my %got = text_form_outcomes($node, $db, @calls);
	my @wrong = grep { ($got{ $_->{sql} } // '<not run>') ne $_->{expected} } @calls;
	my %kinds;
	foreach my $c (@calls)
	{
		my $e = $c->{expected};
		$kinds{ $e =~ /^(\w{5}): / ? "$1" : 'value' }++;
	}
	is(scalar @wrong, 0,
		"$what: every call of the corpus gives what the rules say ("
		  . scalar(@calls) . ' calls: '
		  . join(', ', map { "$kinds{$_} $_" } sort keys %kinds) . ')')
	  or diag(join "\n",
		map { encode('UTF-8', "$_->{sql}\n  expected: $_->{expected}\n  got:      " . ($got{ $_->{sql} } // '<not run>')) }
		  @wrong[ 0 .. ($#wrong < 9 ? $#wrong : 9) ]);
	return scalar @calls;
}

1;
