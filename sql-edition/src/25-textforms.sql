-- Text forms of IDs: snowflake_to_<form>(id [, prefix]) and
-- snowflake_from_<form>(text [, prefix]) for Crockford base32, base62,
-- base58 (Bitcoin's alphabet), base36 and hex, with the C extension's
-- results and errors, SQLSTATE, message and detail, positions counted in
-- characters (docs/text-forms.md, "The rules exactly"; src/textform.c and
-- src/textfunctions.c).  test/t/066_sql_edition_decoders.pl compares both
-- on a million random IDs and every error path; sql/textform.sql and the
-- Perl oracle of test/t/TextFormTest.pm are run against the edition too.
--
-- Each form is a row of the table at the end of this file (its alphabet,
-- its width, what else it reads, what its digits are called); the
-- functions of every form are generated from it when the scripts are built
-- (sql-edition/TextForms.pm, called by build.pl), as the C extension has
-- one encoder and one decoder driven by a table.  This file holds what no
-- form has of its own: the prefix's rules, the encoders' error, and the
-- decoder of any text, which the generated fast paths call with their
-- form's row.
--
-- The work is done by internal SQL functions, one per form and direction,
-- taking the prefix ('' for none), which the planner inlines with every
-- helper they call into one expression; the public functions are PL/pgSQL
-- returning that expression, planned once per session (see TextForms.pm
-- for why).
--
-- Encoding picks each digit with shifts (a base that is a power of two) or
-- divisions, looks up its character in the form's alphabet (a bytea, read
-- in constant time), and pads or trims as the form says (hexadecimal is
-- PostgreSQL's own to_hex()).  Decoding has two paths.  The fast one, in
-- SQL, takes the text an encoder writes (or its other case, where the form
-- reads either): the prefix there, the right number of digits, each of the
-- form, checked by a regular expression, and for the forms whose digits
-- can spell more than 2^63 - 1 a comparison with the largest ID's text
-- under "C" (each alphabet is in the order of ASCII) or, for a base that
-- is a power of two, a bound on the first digit; each digit's value is
-- then a byte of a map indexed by its character's code, and the ID their
-- sum.  Everything else (base32 with hyphens or Crockford's aliases, and
-- every text that is not an ID) goes to _snowflake_text_decode(), PL/pgSQL
-- that reads the text character by character as textform.c does and
-- raises its errors.

-- Whether a prefix is allowed: at most 63 characters, each an ASCII letter
-- or digit, "_", "-", "." or "~" (then its bytes are its characters).
CREATE FUNCTION @extschema@._snowflake_prefix_ok(prefix pg_catalog.text)
RETURNS pg_catalog.bool
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.octet_length(prefix) <= 63
    AND prefix COLLATE pg_catalog."C" ~ '^[-.0-9A-Z_a-z~]*$';

COMMENT ON FUNCTION @extschema@._snowflake_prefix_ok(pg_catalog.text) IS
'whether a text form''s prefix is allowed (internal)';

-- Raise the error of a prefix that is not allowed (22023), as
-- textfunctions.c words it: the first character that is not allowed, or
-- the length.  Returns nothing for an allowed prefix.
CREATE FUNCTION @extschema@._snowflake_prefix_check(prefix pg_catalog.text)
RETURNS pg_catalog.void
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    allowed CONSTANT text := 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789_-.~';
    -- Messages quote at most 100 characters of the input, then "...".
    quoted CONSTANT text := CASE WHEN length(prefix) > 100 THEN left(prefix, 100) || '...' ELSE prefix END;
    c text;
    pos int := 0;
BEGIN
    IF @extschema@._snowflake_prefix_ok(prefix) THEN
        RETURN;
    END IF;
    FOREACH c IN ARRAY string_to_array(prefix, NULL) LOOP
        pos := pos + 1;
        IF strpos(allowed, c) = 0 THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
                MESSAGE = format('invalid snowflake ID prefix "%s"', quoted),
                DETAIL = format('Character "%s" at position %s is not allowed in a prefix, which takes ASCII letters and digits, "_", "-", "." and "~".',
                                c, pos);
        END IF;
    END LOOP;
    RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
        MESSAGE = format('invalid snowflake ID prefix "%s"', quoted),
        DETAIL = format('A prefix has at most 63 characters; this one has %s.', length(prefix));
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_prefix_check(pg_catalog.text) IS
'the error of a text form''s prefix that is not allowed (internal)';

-- The error of an encoder whose arguments are not an ID and an allowed
-- prefix: the ID first (22003), then the prefix (22023).  STRICT: NULL
-- for a NULL argument.
CREATE FUNCTION @extschema@._snowflake_text_encode_error(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF id < 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'numeric_value_out_of_range',
            MESSAGE = format('value %s is out of range for a snowflake ID', id),
            DETAIL = 'Snowflake IDs are between 0 and 9223372036854775807.';
    END IF;
    PERFORM @extschema@._snowflake_prefix_check(prefix);
    -- An allowed prefix and an ID: the encoder's fast path takes those.
    RAISE EXCEPTION USING ERRCODE = 'internal_error',
        MESSAGE = format('snowflake text form: no error for ID %s and prefix "%s"', id, prefix);
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_text_encode_error(pg_catalog.int8, pg_catalog.text) IS
'the error of a text form''s encoder (internal)';

-- Decode any text in one form as textform.c does, reading it once, left
-- to right, and raising the first error in the documented order: the
-- prefix not allowed (22023); the text not starting with it (22P02); the
-- first character that is neither a digit of the form nor one it skips, or
-- that is a digit past a fixed width; too few digits (none, for the forms
-- without a width); a leading zero (forms without a width); more than
-- 2^63 - 1 (22003).  Positions count characters from 1 over the whole
-- text.  The fast paths of the decoders send here every text they do not
-- take, with their form's row of the table: its name, alphabet, width (0:
-- none), what its digits are called, the characters it reads as others
-- (translate()'s from and to), the characters it skips, and the largest
-- ID's text.
CREATE FUNCTION @extschema@._snowflake_text_decode(id_text pg_catalog.text, prefix pg_catalog.text,
                                                   form pg_catalog.text, alphabet pg_catalog.text,
                                                   width pg_catalog.int4, digit_name pg_catalog.text,
                                                   read_from pg_catalog.text, read_as pg_catalog.text,
                                                   skipped pg_catalog.text, largest pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    base CONSTANT int := length(alphabet);
    chars CONSTANT text[] := string_to_array(id_text, NULL);
    -- Messages quote at most 100 characters of the input, then "...".
    quoted CONSTANT text := CASE WHEN length(id_text) > 100 THEN left(id_text, 100) || '...' ELSE id_text END;
    syntax CONSTANT text := format('invalid input syntax for a %s snowflake ID: "%s"', form, quoted);
    plen CONSTANT int := length(prefix);
    c text;
    v int;
    pos int := 0;
    n int := 0;
    first int;
    first_value int;
    acc numeric := 0;
    over bool := false;
BEGIN
    PERFORM @extschema@._snowflake_prefix_check(prefix);
    FOR i IN 1 .. plen LOOP
        IF i > cardinality(chars) THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_text_representation', MESSAGE = syntax,
                DETAIL = format('The text ends after %s characters, inside the prefix "%s".',
                                cardinality(chars), prefix);
        END IF;
        IF chars[i] <> substr(prefix, i, 1) THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_text_representation', MESSAGE = syntax,
                DETAIL = format('Character "%s" at position %s does not match the prefix "%s".',
                                chars[i], i, prefix);
        END IF;
    END LOOP;

    FOREACH c IN ARRAY chars LOOP
        pos := pos + 1;
        CONTINUE WHEN pos <= plen OR strpos(skipped, c) > 0;
        -- The digit's value, the characters the form reads as others
        -- (its other case, Crockford's aliases) read so.
        v := strpos(alphabet, translate(c, read_from, read_as)) - 1;
        IF v < 0 THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_text_representation', MESSAGE = syntax,
                DETAIL = format('Character "%s" at position %s is not a %s digit.', c, pos, digit_name);
        END IF;
        IF width > 0 AND n = width THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_text_representation', MESSAGE = syntax,
                DETAIL = format('Character "%s" at position %s is one digit too many: a %s snowflake ID has %s digits.',
                                c, pos, form, width);
        END IF;
        n := n + 1;
        IF n = 1 THEN
            first := pos;
            first_value := v;
        END IF;
        IF NOT over THEN
            acc := acc * base + v;
            over := acc > 9223372036854775807;
        END IF;
    END LOOP;

    IF n = 0 AND width = 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_text_representation', MESSAGE = syntax,
            DETAIL = format('The text has no digits; a %s snowflake ID has at least one.', form);
    END IF;
    IF n < width THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_text_representation', MESSAGE = syntax,
            DETAIL = format('The text has %s digits; a %s snowflake ID has %s.', n, form, width);
    END IF;
    IF width = 0 AND n > 1 AND first_value = 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_text_representation', MESSAGE = syntax,
            DETAIL = format('Character "%s" at position %s is a leading zero, which %s snowflake IDs are written without.',
                            chars[first], first, form);
    END IF;
    IF over THEN
        RAISE EXCEPTION USING ERRCODE = 'numeric_value_out_of_range',
            MESSAGE = format('%s value "%s" is out of range for a snowflake ID', form, quoted),
            DETAIL = format('The largest snowflake ID is 9223372036854775807, in %s "%s".', form, largest);
    END IF;
    RETURN acc::int8;
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_text_decode(pg_catalog.text, pg_catalog.text, pg_catalog.text, pg_catalog.text, pg_catalog.int4, pg_catalog.text, pg_catalog.text, pg_catalog.text, pg_catalog.text, pg_catalog.text) IS
'any text decoded in one text form, character by character, with the C extension''s errors (internal)';

-- The forms.  Each form: its name (the functions'); its alphabet, the
-- digits 0, 1, ... in order; its width, the digits every text has (the
-- zero digit pads the left), or none (no padding, and no leading zero
-- digit but in 0 itself); what else it reads, separated by semicolons:
-- "either case" (each letter's other case), "X, Y as D" (other characters
-- read as the digit D, in either case where the form reads either), "C
-- skipped" (a character decoding passes over); what its digits are called
-- in the errors; and what the comments of its encoder (to:) and decoder
-- (from:) say.  TextForms.pm turns each form into its functions: a digit's
-- character, the encoder, the decoding map and the decoder, internal and
-- public.
--
-- @text-forms
--   form:     base32
--   alphabet: 0123456789ABCDEFGHJKMNPQRSTVWXYZ
--   width:    13
--   reads:    either case; I, L as 1; O as 0; - skipped
--   called:   Crockford base32
--   to:       an ID as Crockford base32, 13 characters, upper case (sorts as the number)
--   from:     the ID written in Crockford base32 (13 digits; any case, I and L read as 1, O as 0, hyphens ignored)
--
--   form:     base62
--   alphabet: 0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz
--   width:    11
--   called:   base62
--   to:       an ID as base62 (0-9A-Za-z), 11 characters (sorts as the number under the C collation)
--   from:     the ID written in base62 (exactly 11 digits of 0-9A-Za-z)
--
--   form:     base58
--   alphabet: 123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz
--   width:    none
--   called:   base58
--   to:       an ID as base58 (Bitcoin alphabet), no padding
--   from:     the ID written in base58 (Bitcoin alphabet, no leading 1)
--
--   form:     base36
--   alphabet: 0123456789abcdefghijklmnopqrstuvwxyz
--   width:    none
--   reads:    either case
--   called:   base36
--   to:       an ID as base36 (0-9a-z), no padding
--   from:     the ID written in base36 (any case, no leading 0)
--
--   form:     hex
--   alphabet: 0123456789abcdef
--   width:    16
--   reads:    either case
--   called:   hexadecimal
--   to:       an ID as hexadecimal, 16 characters, lower case (sorts as the number)
--   from:     the ID written in hexadecimal (exactly 16 digits, any case)
-- @text-forms-end
