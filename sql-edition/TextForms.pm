# Copyright: see LICENSE
#
# sql-edition/TextForms.pm
#	The SQL edition's text forms, generated from one table: build.pl
#	replaces the table between "-- @text-forms" and "-- @text-forms-end"
#	in a fragment of sql-edition/src (25-textforms.sql) by the table
#	followed by the functions of every form in it.
#
# A form of the table is a block of "key: value" comment lines, blocks
# separated by an empty comment line:
#
#   form:     the name, as the functions and the errors write it
#   alphabet: the digits 0, 1, ... in order (ASCII, in ASCII's order)
#   width:    the number of digits of every text, or "none"
#   reads:    optional, separated by ";": "either case"; "X, Y as D"
#             (characters read as the digit D, in either case where the
#             form reads either); "C skipped" (passed over by decoding)
#   called:   what the digits are called in the errors
#   to:, from: the comments of the encoder and of the decoder
#
# The rules the functions follow come from the row: a base that is a power
# of two is encoded with shifts and, fixed-width, its first digit bounded
# (no comparison, which would have to fold case); other bases with
# divisions and a comparison of the text with the largest ID's under "C"
# (the reason the alphabet must be in ASCII's order); the forms without a
# width are read right-aligned, as if padded to the most digits an ID has;
# the alphabet 0-9a-f is PostgreSQL's to_hex() and a cast through bit(64).
#
# Why the internal functions are SQL and the public ones PL/pgSQL: the
# planner inlines an internal function and every helper it calls into one
# expression; PL/pgSQL plans the public function's RETURN once per
# session.  Were the internal SQL functions called from queries instead,
# the planner would inline that expression into each of them: planning a
# query that decodes a constant would take far longer than the call, and an
# argument that is itself an expression of some cost (another text-form
# call) would keep the planner from inlining, each call then running as a
# query of its own.  Only qualified functions, no operator in the public
# functions: no search_path of their own is needed (nor paid for).  The
# internal functions' operators have operands of exactly their types, a
# literal written with its type where it would be another (& 31::int8,
# % 62::int8): their bodies are bound when the script creates them, under
# its search_path (20-decoders.sql says why).

package TextForms;

use strict;
use warnings;

use Exporter 'import';
use Math::BigInt;

our @EXPORT_OK = qw(expand_text_forms);

my $MAX_ID = Math::BigInt->new('9223372036854775807');

# The forms of the table in $block (its comment lines), in order.
sub parse_table
{
	my ($block, $where) = @_;
	my @forms;
	my $form;
	foreach my $line (split /\n/, $block)
	{
		$line =~ s/^--\s?//;
		if ($line =~ /^\s*$/)
		{
			$form = undef;
			next;
		}
		my ($key, $value) = $line =~ /^\s*(\w+):\s*(.*?)\s*$/
		  or die "$where: not a \"key: value\" line of the text forms: $line\n";
		if (!$form)
		{
			die "$where: a text form starts with \"form:\", not \"$key:\"\n" unless $key eq 'form';
			$form = {};
			push @forms, $form;
		}
		die "$where: \"$key\" twice in text form $form->{form}\n" if exists $form->{$key};
		$form->{$key} = $value;
	}
	check_form($_, $where) foreach @forms;
	return @forms;
}

# Check a form's row and work out what its functions need.
sub check_form
{
	my ($f, $where) = @_;
	foreach my $key (qw(form alphabet width called to from))
	{
		die "$where: text form " . ($f->{form} // '?') . " has no \"$key:\"\n" unless defined $f->{$key};
	}
	foreach my $key (keys %$f)
	{
		die "$where: text form $f->{form}: unknown key \"$key:\"\n"
		  unless $key =~ /^(?:form|alphabet|width|reads|called|to|from)$/;
	}
	die "$where: text form name \"$f->{form}\" is not a lower-case word\n" unless $f->{form} =~ /^[a-z][a-z0-9]*$/;
	my @digits = split //, $f->{alphabet};
	my %seen;
	foreach my $d (@digits)
	{
		die "$where: $f->{form}: the alphabet must be ASCII letters and digits\n" unless $d =~ /^[0-9A-Za-z]$/;
		die "$where: $f->{form}: \"$d\" twice in the alphabet\n" if $seen{$d}++;
	}
	die "$where: $f->{form}: the alphabet must be in ASCII's order\n"
	  unless join('', sort @digits) eq $f->{alphabet};
	$f->{base} = scalar @digits;
	die "$where: $f->{form}: a base between 2 and 62\n" if $f->{base} < 2;
	$f->{value} = { map { $digits[$_] => $_ } 0 .. $#digits };
	($f->{bits}) = grep { 2**$_ == $f->{base} } 1 .. 6;
	$f->{largest} = encode_number($f, $MAX_ID);
	$f->{max_digits} = length $f->{largest};
	if ($f->{width} eq 'none')
	{
		$f->{width} = 0;
	}
	else
	{
		die "$where: $f->{form}: width must be a number of digits or \"none\"\n" unless $f->{width} =~ /^[1-9][0-9]*$/;
		die "$where: $f->{form}: width $f->{width} holds fewer digits than the largest ID's $f->{max_digits}\n"
		  if $f->{width} < $f->{max_digits};
		die "$where: $f->{form}: a fixed width must be the largest ID's number of digits, $f->{max_digits}\n"
		  if $f->{width} > $f->{max_digits};
	}
	$f->{hex} = $f->{alphabet} eq '0123456789abcdef';

	# What it reads besides its digits.
	$f->{either_case} = 0;
	$f->{read_from} = '';
	$f->{read_as} = '';
	$f->{skipped} = '';
	foreach my $rule (split /\s*;\s*/, $f->{reads} // '')
	{
		if ($rule eq 'either case')
		{
			$f->{either_case} = 1;
			foreach my $d (@digits)
			{
				next unless $d =~ /[A-Za-z]/;
				(my $other = $d) =~ tr/A-Za-z/a-zA-Z/;
				die "$where: $f->{form}: both cases of \"$d\" in an alphabet read in either case\n" if $seen{$other};
				$f->{read_from} .= $other;
				$f->{read_as} .= $d;
			}
		}
		elsif ($rule =~ /^(\S(?:\s*,\s*\S)*)\s+as\s+(\S)$/)
		{
			my ($chars, $as) = ($1, $2);
			die "$where: $f->{form}: \"$as\" is not a digit\n" unless exists $f->{value}{$as};
			foreach my $c (split /\s*,\s*/, $chars)
			{
				die "$where: $f->{form}: \"$c\" is a digit, not an alias\n" if $seen{$c};
				my @cases = ($c);
				if ($f->{either_case} && $c =~ /[A-Za-z]/)
				{
					(my $other = $c) =~ tr/A-Za-z/a-zA-Z/;
					push @cases, $other;
				}
				$f->{read_from} .= $_ foreach @cases;
				$f->{read_as} .= $as x @cases;
			}
		}
		elsif ($rule =~ /^(\S) skipped$/)
		{
			$f->{skipped} .= $1;
		}
		else
		{
			die "$where: $f->{form}: a rule of \"reads:\" is \"either case\", \"X, Y as D\" or \"C skipped\", not \"$rule\"\n";
		}
	}
	die "$where: $f->{form}: \"either case\" comes before the aliases\n"
	  if ($f->{reads} // '') =~ /\bas\b.*either case/;
	return;
}

# The digits of a number in a form, without padding.
sub encode_number
{
	my ($f, $n) = @_;
	my @digits = split //, $f->{alphabet};
	my $v = Math::BigInt->new($n);
	my $text = '';
	do
	{
		my ($q, $r) = $v->copy->bdiv($f->{base});
		$text = $digits[$r->numify] . $text;
		$v = $q;
	} while (!$v->is_zero);
	return $text;
}

sub power
{
	my ($base, $exp) = @_;
	return Math::BigInt->new($base)->bpow($exp)->bstr;
}

# A regular expression's bracket expression for a set of characters,
# consecutive runs written as ranges (three or more).
sub char_class
{
	my (@chars) = sort { ord($a) <=> ord($b) } @_;
	my $class = '';
	my $i = 0;
	while ($i < @chars)
	{
		my $j = $i;
		$j++ while $j + 1 < @chars && ord($chars[ $j + 1 ]) == ord($chars[$j]) + 1;
		if ($j - $i >= 2)
		{
			$class .= "$chars[$i]-$chars[$j]";
		}
		else
		{
			$class .= join('', @chars[ $i .. $j ]);
		}
		$i = $j + 1;
	}
	return "[$class]";
}

# The characters a form's fast path takes as digits: its alphabet, and the
# other case of each letter where it reads either.
sub fast_digits
{
	my ($f, @digits) = @_;
	my @chars = @digits;
	if ($f->{either_case})
	{
		push @chars, map { (my $o = $_) =~ tr/A-Za-z/a-zA-Z/; $o } grep { /[A-Za-z]/ } @digits;
	}
	return @chars;
}

sub sql_string
{
	my ($s) = @_;
	$s =~ s/'/''/g;
	return "'$s'";
}

# The functions of one form.
sub form_sql
{
	my ($f) = @_;
	my $name = $f->{form};
	my $called = $f->{called};
	my $base = $f->{base};
	my $n = $f->{width} || $f->{max_digits};
	my @digits = split //, $f->{alphabet};
	my $zero = $digits[0];
	my $sql = "-- $name (generated from the table above by sql-edition/TextForms.pm).\n\n";

	# A digit's character.
	unless ($f->{hex})
	{
		$sql .= <<"EOT";
CREATE FUNCTION \@extschema\@._snowflake_${name}_char(v pg_catalog.int8)
RETURNS pg_catalog.bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.substr('$f->{alphabet}'::pg_catalog.bytea, v::pg_catalog.int4 + 1, 1);

COMMENT ON FUNCTION \@extschema\@._snowflake_${name}_char(pg_catalog.int8) IS
'a $called digit (internal)';

EOT
	}

	# The encoder.
	my $encoded;
	if ($f->{hex})
	{
		$encoded = "prefix || pg_catalog.lpad(pg_catalog.to_hex(id), $n, '0')";
	}
	else
	{
		my @terms;
		foreach my $i (0 .. $n - 1)
		{
			my $k = $n - 1 - $i;
			my $digit;
			if ($f->{bits})
			{
				my $shift = $f->{bits} * $k;
				$digit = ($shift ? "(id >> $shift)" : 'id') . ' & ' . ($base - 1) . '::pg_catalog.int8';
			}
			else
			{
				$digit = ($k ? 'id / ' . power($base, $k) : 'id') . " % ${base}::pg_catalog.int8";
			}
			push @terms, "\@extschema\@._snowflake_${name}_char($digit)";
		}
		my $bytes = join("\n            || ", @terms);
		if ($f->{width})
		{
			$encoded = "prefix || pg_catalog.encode(\n               $bytes, 'escape')";
		}
		else
		{
			$encoded = "prefix || COALESCE(NULLIF(pg_catalog.ltrim(pg_catalog.encode(\n"
			  . "               $bytes, 'escape'), '$zero'), ''), '$zero')";
		}
	}
	$sql .= <<"EOT";
CREATE FUNCTION \@extschema\@._snowflake_to_$name(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN id >= 0 AND \@extschema\@._snowflake_prefix_ok(prefix)
    THEN $encoded
    ELSE \@extschema\@._snowflake_text_encode_error(id, prefix)
END;

COMMENT ON FUNCTION \@extschema\@._snowflake_to_$name(pg_catalog.int8, pg_catalog.text) IS
'an ID in $called after a prefix (internal)';

EOT

	# The decoding map: byte k is the value of the character whose code is
	# k, ff for one that is not a digit of the fast path, byte 0 (no
	# character: the positions before the first digit of a form without a
	# width) 0; up to the highest code of a digit.
	unless ($f->{hex})
	{
		my %value = %{ $f->{value} };
		foreach my $c (fast_digits($f, @digits))
		{
			next if exists $value{$c};
			(my $other = $c) =~ tr/A-Za-z/a-zA-Z/;
			$value{$c} = $value{$other};
		}
		my ($top) = sort { $b <=> $a } map { ord } keys %value;
		my @lines;
		for (my $code = 0; $code <= $top; $code += 16)
		{
			my $hex = '';
			my @shown;
			foreach my $c ($code .. ($code + 15 < $top ? $code + 15 : $top))
			{
				$hex .= $c == 0 ? '00' : exists $value{ chr $c } ? sprintf('%02x', $value{ chr $c }) : 'ff';
				push @shown, chr $c if $c >= 48;
			}
			my $note = $code < 48
			  ? "codes $code to " . ($code + 15) . ($code == 0 ? ' (0: no character)' : '')
			  : join(' ', @shown);
			push @lines, [ ($code == 0 ? "'\\x$hex'" : "'$hex'"), $note ];
		}
		my $width = 2 + length($lines[0][0]);
		my $map = join("\n", map { sprintf("    %-*s  -- %s", $width, $_->[0], $_->[1]) } @lines);
		my $char = $f->{width}
		  ? 'pg_catalog.substr(t, off + pos, 1)'
		  : "pg_catalog.substr(t, pg_catalog.octet_length(t) - $n + pos,\n"
		  . "                                       (pg_catalog.octet_length(t) - $n + pos > off)::pg_catalog.int4)";
		my $what = $f->{width} ? "the value of a $called digit" : "the value of a $called digit, the digits padded to $n";
		$sql .= <<"EOT";
CREATE FUNCTION \@extschema\@._snowflake_${name}_digit(t pg_catalog.text, off pg_catalog.int4, pos pg_catalog.int4)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.get_byte(
$map
    ::pg_catalog.bytea,
    pg_catalog.ascii($char))::pg_catalog.int8;

COMMENT ON FUNCTION \@extschema\@._snowflake_${name}_digit(pg_catalog.text, pg_catalog.int4, pg_catalog.int4) IS
'$what (internal)';

EOT
	}

	# The decoder: the fast path's conditions, the value, the slow path.
	my $rest = 'pg_catalog.substr(t, pg_catalog.octet_length(prefix) + 1)';
	my $length = 'pg_catalog.octet_length(t) - pg_catalog.octet_length(prefix)';
	my $class = char_class(fast_digits($f, @digits));
	my @conditions = (
		'@extschema@._snowflake_prefix_ok(prefix)',
		'pg_catalog.starts_with(t COLLATE pg_catalog."C", prefix)');
	my $compare_text = $f->{either_case}
	  ? ($f->{alphabet} =~ /[a-z]/ ? "pg_catalog.lower($rest COLLATE pg_catalog.\"C\")" : "pg_catalog.upper($rest COLLATE pg_catalog.\"C\")")
	  : "$rest COLLATE pg_catalog.\"C\"";
	my $compare = "$compare_text <= " . sql_string($f->{largest});
	if ($f->{width})
	{
		push @conditions, "$length = $n";
		if ($f->{bits})
		{
			# The first digit holds what is left of 63 bits.
			my $first_max = 63 - $f->{bits} * ($n - 1);
			my @first = grep { $f->{value}{$_} < 2**$first_max } @digits;
			push @conditions,
			  "-- $n digits, the first at most $first[-1]: at most 2^63 - 1.\n"
			  . "$rest COLLATE pg_catalog.\"C\"\n    ~ '^" . char_class(fast_digits($f, @first)) . "$class*\$'";
		}
		else
		{
			push @conditions, "$rest COLLATE pg_catalog.\"C\" ~ '^$class*\$'",
			  "-- The alphabet is in the order of ASCII: \"C\" compares the values.\n$compare";
		}
	}
	else
	{
		my $nonzero = char_class(fast_digits($f, @digits[ 1 .. $#digits ]));
		push @conditions, "$length <= $n",
		  "-- 1 to $n digits, " . ($f->{either_case} ? 'either case, ' : '') . "no leading zero digit.\n"
		  . "$rest COLLATE pg_catalog.\"C\"\n    ~ '^($nonzero$class*|$zero)\$'",
		  "($length < $n\n OR $compare)";
	}
	# A condition's comment, if any, goes above its AND.
	my $when = shift @conditions;
	foreach my $c (@conditions)
	{
		my ($comment, $expr) = $c =~ /\A(--[^\n]*\n)?(.*)\z/s;
		$when .= "\n" . ($comment ? "         $comment" : '') . '         AND ' . ($expr =~ s/\n/\n         /gr);
	}
	my $value;
	if ($f->{hex})
	{
		$value = "('x' || $rest)::pg_catalog.\"bit\"(64)::pg_catalog.int8";
	}
	else
	{
		my @terms;
		foreach my $pos (1 .. $n)
		{
			my $k = $n - $pos;
			my $digit = "\@extschema\@._snowflake_${name}_digit(t, pg_catalog.octet_length(prefix), $pos)";
			if ($f->{bits})
			{
				push @terms, $k ? "($digit << " . ($f->{bits} * $k) . ')' : $digit;
			}
			else
			{
				push @terms, $k ? "$digit * " . power($base, $k) : $digit;
			}
		}
		$value = join($f->{bits} ? "\n        | " : "\n        + ", @terms);
	}
	my $slow = join(', ', 't', 'prefix', map({ sql_string($_) . '::pg_catalog.text' } $name, $f->{alphabet}),
		$f->{width}, map { sql_string($_) . '::pg_catalog.text' } $called, $f->{read_from}, $f->{read_as},
		$f->{skipped}, $f->{largest});
	$sql .= <<"EOT";
CREATE FUNCTION \@extschema\@._snowflake_from_$name(t pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN $when
    THEN $value
    ELSE \@extschema\@._snowflake_text_decode($slow)
END;

COMMENT ON FUNCTION \@extschema\@._snowflake_from_$name(pg_catalog.text, pg_catalog.text) IS
'the ID written in $called after a prefix (internal)';

EOT

	# The public functions, as the C extension declares them
	# (snowflake--1.1--1.2.sql): IMMUTABLE, STRICT and PARALLEL SAFE.
	my @public = (
		[ "to_$name", 'id pg_catalog.int8', 'pg_catalog.int8', 'pg_catalog.text', "_snowflake_to_$name(id, ''::pg_catalog.text)", $f->{to} ],
		[ "to_$name", 'id pg_catalog.int8, prefix pg_catalog.text', 'pg_catalog.int8, pg_catalog.text',
			'pg_catalog.text', "_snowflake_to_$name(id, prefix)", "$f->{to}, after the prefix" ],
		[ "from_$name", 'id_text pg_catalog.text', 'pg_catalog.text', 'pg_catalog.int8',
			"_snowflake_from_$name(id_text, ''::pg_catalog.text)", $f->{from} ],
		[ "from_$name", 'id_text pg_catalog.text, prefix pg_catalog.text', 'pg_catalog.text, pg_catalog.text',
			'pg_catalog.int8', "_snowflake_from_$name(id_text, prefix)", "$f->{from} after the prefix, which must be there" ]);
	foreach my $p (@public)
	{
		my ($fn, $args, $types, $result, $body, $comment) = @$p;
		$sql .= <<"EOT";
CREATE FUNCTION \@extschema\@.snowflake_$fn($args)
RETURNS $result
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS \$\$ BEGIN RETURN \@extschema\@.$body; END \$\$;

COMMENT ON FUNCTION \@extschema\@.snowflake_$fn($types) IS
@{[ sql_string($comment) ]};

EOT
	}
	return $sql;
}

# $text with its table of text forms (the lines between the markers)
# followed by their functions.
sub expand_text_forms
{
	my ($text, $where) = @_;
	my $tables = () = $text =~ /^-- \@text-forms$/mg;
	return $text if $tables == 0;
	die "$where: more than one table of text forms\n" if $tables > 1;
	$text =~ s{^-- \@text-forms\n(.*?)^-- \@text-forms-end\n}{
		my $block = $1;
		$block . "\n" . join('', map { form_sql($_) } parse_table($block, $where))
	}mse or die "$where: \"-- \@text-forms\" without \"-- \@text-forms-end\"\n";
	return $text;
}

1;
