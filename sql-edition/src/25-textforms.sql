-- Text forms of IDs: snowflake_to_<form>(id [, prefix]) and
-- snowflake_from_<form>(text [, prefix]) for Crockford base32, base62,
-- base58 (Bitcoin's alphabet), base36 and hex, with the C extension's
-- results and errors, SQLSTATE, message and detail, positions counted in
-- characters (docs/text-forms.md, "The rules exactly"; src/textform.c and
-- src/textfunctions.c).  test/t/066_sql_edition_decoders.pl compares both
-- on a million random IDs and every error path; sql/textform.sql and the
-- Perl oracle of test/t/TextFormTest.pm are run against the edition too.
--
-- The work is done by internal SQL functions, one per form and direction,
-- taking the prefix ('' for none), which the planner inlines with every
-- helper they call into one expression; the public functions are PL/pgSQL
-- returning that expression, planned once per session (see the end of the
-- file for why).
--
-- Encoding picks each digit with shifts (base32) or divisions, looks up its
-- character in the form's alphabet (a bytea, read in constant time), and
-- pads or trims as the form says.  Decoding has two paths.  The fast one,
-- in SQL, takes the text an encoder writes (or its other case, where the
-- form reads either): the prefix there, the right number of digits, each of
-- the form, checked by a regular expression, and for the forms whose digits
-- can spell more than 2^63 - 1 a comparison with the largest ID's text
-- under "C"; each digit's value is then a byte of a map indexed by its
-- character's code, and the ID their sum.  Everything else (base32 with
-- hyphens or Crockford's aliases, and every text that is not an ID) goes
-- to _snowflake_text_decode(), PL/pgSQL that reads the text character by
-- character as textform.c does and raises its errors.

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

-- Decode any text as textform.c does, reading it once, left to right, and
-- raising the first error in the documented order: the prefix not allowed
-- (22023); the text not starting with it (22P02); the first character that
-- is neither a digit of the form nor (base32) a hyphen, or that is a digit
-- past a fixed width; too few digits (none, for the forms without a width);
-- a leading zero (forms without a width); more than 2^63 - 1 (22003).
-- Positions count characters from 1 over the whole text.  The fast paths of
-- the decoders below send here every text they do not take.  form:
-- 'base32', 'base62', 'base58', 'base36' or 'hex'.
CREATE FUNCTION @extschema@._snowflake_text_decode(form pg_catalog.text, id_text pg_catalog.text,
                                                   prefix pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    alphabet CONSTANT text := CASE form
        WHEN 'base32' THEN '0123456789ABCDEFGHJKMNPQRSTVWXYZ'
        WHEN 'base62' THEN '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'
        WHEN 'base58' THEN '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'
        WHEN 'base36' THEN '0123456789abcdefghijklmnopqrstuvwxyz'
        WHEN 'hex' THEN '0123456789abcdef' END;
    width CONSTANT int := CASE form WHEN 'base32' THEN 13 WHEN 'base62' THEN 11 WHEN 'hex' THEN 16 ELSE 0 END;
    digit_name CONSTANT text := CASE form WHEN 'base32' THEN 'Crockford base32'
                                         WHEN 'hex' THEN 'hexadecimal' ELSE form END;
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
        CONTINUE WHEN pos <= plen OR (form = 'base32' AND c = '-');
        -- The digit's value: base32 reads either case and Crockford's
        -- aliases, base36 and hex either case.
        v := strpos(alphabet, CASE
            WHEN form = 'base32' THEN translate(c, 'abcdefghjkmnpqrstvwxyzIiLlOo', 'ABCDEFGHJKMNPQRSTVWXYZ111100')
            WHEN form IN ('base36', 'hex') THEN translate(c, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz')
            ELSE c END) - 1;
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
            DETAIL = format('The largest snowflake ID is 9223372036854775807, in %s "%s".', form,
                            CASE form WHEN 'base32' THEN @extschema@.snowflake_to_base32(9223372036854775807)
                                      WHEN 'base62' THEN @extschema@.snowflake_to_base62(9223372036854775807)
                                      WHEN 'base58' THEN @extschema@.snowflake_to_base58(9223372036854775807)
                                      WHEN 'base36' THEN @extschema@.snowflake_to_base36(9223372036854775807)
                                      ELSE @extschema@.snowflake_to_hex(9223372036854775807) END);
    END IF;
    RETURN acc::int8;
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_text_decode(pg_catalog.text, pg_catalog.text, pg_catalog.text) IS
'any text decoded in a text form, character by character, with the C extension''s errors (internal)';

-- Each form's character of a digit value (0 to base - 1), as a byte.

CREATE FUNCTION @extschema@._snowflake_base32_char(v pg_catalog.int8)
RETURNS pg_catalog.bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ'::pg_catalog.bytea, v::pg_catalog.int4 + 1, 1);

COMMENT ON FUNCTION @extschema@._snowflake_base32_char(pg_catalog.int8) IS
'a Crockford base32 digit (internal)';

CREATE FUNCTION @extschema@._snowflake_base62_char(v pg_catalog.int8)
RETURNS pg_catalog.bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.substr('0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz'::pg_catalog.bytea,
                         v::pg_catalog.int4 + 1, 1);

COMMENT ON FUNCTION @extschema@._snowflake_base62_char(pg_catalog.int8) IS
'a base62 digit (internal)';

CREATE FUNCTION @extschema@._snowflake_base58_char(v pg_catalog.int8)
RETURNS pg_catalog.bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.substr('123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz'::pg_catalog.bytea,
                         v::pg_catalog.int4 + 1, 1);

COMMENT ON FUNCTION @extschema@._snowflake_base58_char(pg_catalog.int8) IS
'a base58 digit (internal)';

CREATE FUNCTION @extschema@._snowflake_base36_char(v pg_catalog.int8)
RETURNS pg_catalog.bytea
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.substr('0123456789abcdefghijklmnopqrstuvwxyz'::pg_catalog.bytea, v::pg_catalog.int4 + 1, 1);

COMMENT ON FUNCTION @extschema@._snowflake_base36_char(pg_catalog.int8) IS
'a base36 digit (internal)';

-- Each form's encoder, with the prefix ('' for none): every digit of the
-- ID, most significant first, as bytes, then made text (the alphabets are
-- ASCII, which the escape format writes as it is); base58 and base36 drop
-- the leading zero digits (0 itself keeps one).  A negative ID, a prefix
-- that is not allowed: the error.

CREATE FUNCTION @extschema@._snowflake_to_base32(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN id >= 0 AND @extschema@._snowflake_prefix_ok(prefix)
    THEN prefix || pg_catalog.encode(
               @extschema@._snowflake_base32_char((id >> 60) & 31)
            || @extschema@._snowflake_base32_char((id >> 55) & 31)
            || @extschema@._snowflake_base32_char((id >> 50) & 31)
            || @extschema@._snowflake_base32_char((id >> 45) & 31)
            || @extschema@._snowflake_base32_char((id >> 40) & 31)
            || @extschema@._snowflake_base32_char((id >> 35) & 31)
            || @extschema@._snowflake_base32_char((id >> 30) & 31)
            || @extschema@._snowflake_base32_char((id >> 25) & 31)
            || @extschema@._snowflake_base32_char((id >> 20) & 31)
            || @extschema@._snowflake_base32_char((id >> 15) & 31)
            || @extschema@._snowflake_base32_char((id >> 10) & 31)
            || @extschema@._snowflake_base32_char((id >> 5) & 31)
            || @extschema@._snowflake_base32_char(id & 31), 'escape')
    ELSE @extschema@._snowflake_text_encode_error(id, prefix)
END;

COMMENT ON FUNCTION @extschema@._snowflake_to_base32(pg_catalog.int8, pg_catalog.text) IS
'an ID in Crockford base32 after a prefix (internal)';

CREATE FUNCTION @extschema@._snowflake_to_base62(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN id >= 0 AND @extschema@._snowflake_prefix_ok(prefix)
    THEN prefix || pg_catalog.encode(
               @extschema@._snowflake_base62_char(id / 839299365868340224 % 62)
            || @extschema@._snowflake_base62_char(id / 13537086546263552 % 62)
            || @extschema@._snowflake_base62_char(id / 218340105584896 % 62)
            || @extschema@._snowflake_base62_char(id / 3521614606208 % 62)
            || @extschema@._snowflake_base62_char(id / 56800235584 % 62)
            || @extschema@._snowflake_base62_char(id / 916132832 % 62)
            || @extschema@._snowflake_base62_char(id / 14776336 % 62)
            || @extschema@._snowflake_base62_char(id / 238328 % 62)
            || @extschema@._snowflake_base62_char(id / 3844 % 62)
            || @extschema@._snowflake_base62_char(id / 62 % 62)
            || @extschema@._snowflake_base62_char(id % 62), 'escape')
    ELSE @extschema@._snowflake_text_encode_error(id, prefix)
END;

COMMENT ON FUNCTION @extschema@._snowflake_to_base62(pg_catalog.int8, pg_catalog.text) IS
'an ID in base62 after a prefix (internal)';

CREATE FUNCTION @extschema@._snowflake_to_base58(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN id >= 0 AND @extschema@._snowflake_prefix_ok(prefix)
    THEN prefix || COALESCE(NULLIF(pg_catalog.ltrim(pg_catalog.encode(
               @extschema@._snowflake_base58_char(id / 430804206899405824 % 58)
            || @extschema@._snowflake_base58_char(id / 7427658739644928 % 58)
            || @extschema@._snowflake_base58_char(id / 128063081718016 % 58)
            || @extschema@._snowflake_base58_char(id / 2207984167552 % 58)
            || @extschema@._snowflake_base58_char(id / 38068692544 % 58)
            || @extschema@._snowflake_base58_char(id / 656356768 % 58)
            || @extschema@._snowflake_base58_char(id / 11316496 % 58)
            || @extschema@._snowflake_base58_char(id / 195112 % 58)
            || @extschema@._snowflake_base58_char(id / 3364 % 58)
            || @extschema@._snowflake_base58_char(id / 58 % 58)
            || @extschema@._snowflake_base58_char(id % 58), 'escape'), '1'), ''), '1')
    ELSE @extschema@._snowflake_text_encode_error(id, prefix)
END;

COMMENT ON FUNCTION @extschema@._snowflake_to_base58(pg_catalog.int8, pg_catalog.text) IS
'an ID in base58 after a prefix (internal)';

CREATE FUNCTION @extschema@._snowflake_to_base36(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN id >= 0 AND @extschema@._snowflake_prefix_ok(prefix)
    THEN prefix || COALESCE(NULLIF(pg_catalog.ltrim(pg_catalog.encode(
               @extschema@._snowflake_base36_char(id / 4738381338321616896 % 36)
            || @extschema@._snowflake_base36_char(id / 131621703842267136 % 36)
            || @extschema@._snowflake_base36_char(id / 3656158440062976 % 36)
            || @extschema@._snowflake_base36_char(id / 101559956668416 % 36)
            || @extschema@._snowflake_base36_char(id / 2821109907456 % 36)
            || @extschema@._snowflake_base36_char(id / 78364164096 % 36)
            || @extschema@._snowflake_base36_char(id / 2176782336 % 36)
            || @extschema@._snowflake_base36_char(id / 60466176 % 36)
            || @extschema@._snowflake_base36_char(id / 1679616 % 36)
            || @extschema@._snowflake_base36_char(id / 46656 % 36)
            || @extschema@._snowflake_base36_char(id / 1296 % 36)
            || @extschema@._snowflake_base36_char(id / 36 % 36)
            || @extschema@._snowflake_base36_char(id % 36), 'escape'), '0'), ''), '0')
    ELSE @extschema@._snowflake_text_encode_error(id, prefix)
END;

COMMENT ON FUNCTION @extschema@._snowflake_to_base36(pg_catalog.int8, pg_catalog.text) IS
'an ID in base36 after a prefix (internal)';

CREATE FUNCTION @extschema@._snowflake_to_hex(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN id >= 0 AND @extschema@._snowflake_prefix_ok(prefix)
    THEN prefix || pg_catalog.lpad(pg_catalog.to_hex(id), 16, '0')
    ELSE @extschema@._snowflake_text_encode_error(id, prefix)
END;

COMMENT ON FUNCTION @extschema@._snowflake_to_hex(pg_catalog.int8, pg_catalog.text) IS
'an ID in hexadecimal after a prefix (internal)';

-- Each form's value of the digit at position pos (from 1) of the digits
-- that follow off characters of prefix in t; the forms without padding
-- are read as if padded on the left to their widest (11 and 13 digits),
-- the positions before their first digit giving no character.  The map:
-- byte k is the value of the character whose code is k, ff for one that is
-- not a digit of the form, and byte 0, for no character, 0; base32 and
-- base36 map both cases.  Only for text the fast path has checked.

CREATE FUNCTION @extschema@._snowflake_base32_digit(t pg_catalog.text, off pg_catalog.int4, pos pg_catalog.int4)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.get_byte(
    '\x00ffffffffffffffffffffffffffffff'  -- codes 0 to 15 (0: no character)
    'ffffffffffffffffffffffffffffffff'    -- codes 16 to 31
    'ffffffffffffffffffffffffffffffff'    -- codes 32 to 47
    '00010203040506070809ffffffffffff'    -- 0 1 2 3 4 5 6 7 8 9 : ; < = > ?
    'ff0a0b0c0d0e0f1011ff1213ff1415ff'    -- @ A B C D E F G H I J K L M N O
    '161718191aff1b1c1d1e1fffffffffff'    -- P Q R S T U V W X Y Z [ \ ] ^ _
    'ff0a0b0c0d0e0f1011ff1213ff1415ff'    -- ` a b c d e f g h i j k l m n o
    '161718191aff1b1c1d1e1f'              -- p q r s t u v w x y z
    ::pg_catalog.bytea,
    pg_catalog.ascii(pg_catalog.substr(t, off + pos, 1)))::pg_catalog.int8;

COMMENT ON FUNCTION @extschema@._snowflake_base32_digit(pg_catalog.text, pg_catalog.int4, pg_catalog.int4) IS
'the value of a Crockford base32 digit (internal)';

CREATE FUNCTION @extschema@._snowflake_base62_digit(t pg_catalog.text, off pg_catalog.int4, pos pg_catalog.int4)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.get_byte(
    '\x00ffffffffffffffffffffffffffffff'  -- codes 0 to 15 (0: no character)
    'ffffffffffffffffffffffffffffffff'    -- codes 16 to 31
    'ffffffffffffffffffffffffffffffff'    -- codes 32 to 47
    '00010203040506070809ffffffffffff'    -- 0 1 2 3 4 5 6 7 8 9 : ; < = > ?
    'ff0a0b0c0d0e0f101112131415161718'    -- @ A B C D E F G H I J K L M N O
    '191a1b1c1d1e1f20212223ffffffffff'    -- P Q R S T U V W X Y Z [ \ ] ^ _
    'ff2425262728292a2b2c2d2e2f303132'    -- ` a b c d e f g h i j k l m n o
    '333435363738393a3b3c3d'              -- p q r s t u v w x y z
    ::pg_catalog.bytea,
    pg_catalog.ascii(pg_catalog.substr(t, off + pos, 1)))::pg_catalog.int8;

COMMENT ON FUNCTION @extschema@._snowflake_base62_digit(pg_catalog.text, pg_catalog.int4, pg_catalog.int4) IS
'the value of a base62 digit (internal)';

CREATE FUNCTION @extschema@._snowflake_base58_digit(t pg_catalog.text, off pg_catalog.int4, pos pg_catalog.int4)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.get_byte(
    '\x00ffffffffffffffffffffffffffffff'  -- codes 0 to 15 (0: no character)
    'ffffffffffffffffffffffffffffffff'    -- codes 16 to 31
    'ffffffffffffffffffffffffffffffff'    -- codes 32 to 47
    'ff000102030405060708ffffffffffff'    -- 0 1 2 3 4 5 6 7 8 9 : ; < = > ?
    'ff090a0b0c0d0e0f10ff1112131415ff'    -- @ A B C D E F G H I J K L M N O
    '161718191a1b1c1d1e1f20ffffffffff'    -- P Q R S T U V W X Y Z [ \ ] ^ _
    'ff2122232425262728292a2bff2c2d2e'    -- ` a b c d e f g h i j k l m n o
    '2f30313233343536373839'              -- p q r s t u v w x y z
    ::pg_catalog.bytea,
    pg_catalog.ascii(pg_catalog.substr(t, pg_catalog.octet_length(t) - 11 + pos,
                                       (pg_catalog.octet_length(t) - 11 + pos > off)::pg_catalog.int4)))::pg_catalog.int8;

COMMENT ON FUNCTION @extschema@._snowflake_base58_digit(pg_catalog.text, pg_catalog.int4, pg_catalog.int4) IS
'the value of a base58 digit, the digits padded to 11 (internal)';

CREATE FUNCTION @extschema@._snowflake_base36_digit(t pg_catalog.text, off pg_catalog.int4, pos pg_catalog.int4)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.get_byte(
    '\x00ffffffffffffffffffffffffffffff'  -- codes 0 to 15 (0: no character)
    'ffffffffffffffffffffffffffffffff'    -- codes 16 to 31
    'ffffffffffffffffffffffffffffffff'    -- codes 32 to 47
    '00010203040506070809ffffffffffff'    -- 0 1 2 3 4 5 6 7 8 9 : ; < = > ?
    'ff0a0b0c0d0e0f101112131415161718'    -- @ A B C D E F G H I J K L M N O
    '191a1b1c1d1e1f20212223ffffffffff'    -- P Q R S T U V W X Y Z [ \ ] ^ _
    'ff0a0b0c0d0e0f101112131415161718'    -- ` a b c d e f g h i j k l m n o
    '191a1b1c1d1e1f20212223'              -- p q r s t u v w x y z
    ::pg_catalog.bytea,
    pg_catalog.ascii(pg_catalog.substr(t, pg_catalog.octet_length(t) - 13 + pos,
                                       (pg_catalog.octet_length(t) - 13 + pos > off)::pg_catalog.int4)))::pg_catalog.int8;

COMMENT ON FUNCTION @extschema@._snowflake_base36_digit(pg_catalog.text, pg_catalog.int4, pg_catalog.int4) IS
'the value of a base36 digit, the digits padded to 13 (internal)';

-- Each form's decoder, with the prefix ('' for none): the fast path for
-- the text an encoder writes, _snowflake_text_decode() for anything else.
-- Every expression after THEN reads the digits at off, so that a constant
-- text with a prefix that is not a constant is not read while planning
-- before it is checked.

CREATE FUNCTION @extschema@._snowflake_from_base32(t pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN @extschema@._snowflake_prefix_ok(prefix)
         AND pg_catalog.starts_with(t COLLATE pg_catalog."C", prefix)
         AND pg_catalog.octet_length(t) - pg_catalog.octet_length(prefix) = 13
         -- 13 digits, the first at most 7: at most 2^63 - 1.
         AND pg_catalog.substr(t, pg_catalog.octet_length(prefix) + 1) COLLATE pg_catalog."C"
             ~ '^[0-7][0-9A-HJKMNP-TV-Za-hjkmnp-tv-z]*$'
    THEN (@extschema@._snowflake_base32_digit(t, pg_catalog.octet_length(prefix), 1) << 60)
        | (@extschema@._snowflake_base32_digit(t, pg_catalog.octet_length(prefix), 2) << 55)
        | (@extschema@._snowflake_base32_digit(t, pg_catalog.octet_length(prefix), 3) << 50)
        | (@extschema@._snowflake_base32_digit(t, pg_catalog.octet_length(prefix), 4) << 45)
        | (@extschema@._snowflake_base32_digit(t, pg_catalog.octet_length(prefix), 5) << 40)
        | (@extschema@._snowflake_base32_digit(t, pg_catalog.octet_length(prefix), 6) << 35)
        | (@extschema@._snowflake_base32_digit(t, pg_catalog.octet_length(prefix), 7) << 30)
        | (@extschema@._snowflake_base32_digit(t, pg_catalog.octet_length(prefix), 8) << 25)
        | (@extschema@._snowflake_base32_digit(t, pg_catalog.octet_length(prefix), 9) << 20)
        | (@extschema@._snowflake_base32_digit(t, pg_catalog.octet_length(prefix), 10) << 15)
        | (@extschema@._snowflake_base32_digit(t, pg_catalog.octet_length(prefix), 11) << 10)
        | (@extschema@._snowflake_base32_digit(t, pg_catalog.octet_length(prefix), 12) << 5)
        | @extschema@._snowflake_base32_digit(t, pg_catalog.octet_length(prefix), 13)
    ELSE @extschema@._snowflake_text_decode('base32', t, prefix)
END;

COMMENT ON FUNCTION @extschema@._snowflake_from_base32(pg_catalog.text, pg_catalog.text) IS
'the ID written in Crockford base32 after a prefix (internal)';

CREATE FUNCTION @extschema@._snowflake_from_base62(t pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN @extschema@._snowflake_prefix_ok(prefix)
         AND pg_catalog.starts_with(t COLLATE pg_catalog."C", prefix)
         AND pg_catalog.octet_length(t) - pg_catalog.octet_length(prefix) = 11
         AND pg_catalog.substr(t, pg_catalog.octet_length(prefix) + 1) COLLATE pg_catalog."C" ~ '^[0-9A-Za-z]*$'
         -- The alphabet is in the order of ASCII: "C" compares the values.
         AND pg_catalog.substr(t, pg_catalog.octet_length(prefix) + 1) COLLATE pg_catalog."C" <= 'AzL8n0Y58m7'
    THEN @extschema@._snowflake_base62_digit(t, pg_catalog.octet_length(prefix), 1) * 839299365868340224
        + @extschema@._snowflake_base62_digit(t, pg_catalog.octet_length(prefix), 2) * 13537086546263552
        + @extschema@._snowflake_base62_digit(t, pg_catalog.octet_length(prefix), 3) * 218340105584896
        + @extschema@._snowflake_base62_digit(t, pg_catalog.octet_length(prefix), 4) * 3521614606208
        + @extschema@._snowflake_base62_digit(t, pg_catalog.octet_length(prefix), 5) * 56800235584
        + @extschema@._snowflake_base62_digit(t, pg_catalog.octet_length(prefix), 6) * 916132832
        + @extschema@._snowflake_base62_digit(t, pg_catalog.octet_length(prefix), 7) * 14776336
        + @extschema@._snowflake_base62_digit(t, pg_catalog.octet_length(prefix), 8) * 238328
        + @extschema@._snowflake_base62_digit(t, pg_catalog.octet_length(prefix), 9) * 3844
        + @extschema@._snowflake_base62_digit(t, pg_catalog.octet_length(prefix), 10) * 62
        + @extschema@._snowflake_base62_digit(t, pg_catalog.octet_length(prefix), 11)
    ELSE @extschema@._snowflake_text_decode('base62', t, prefix)
END;

COMMENT ON FUNCTION @extschema@._snowflake_from_base62(pg_catalog.text, pg_catalog.text) IS
'the ID written in base62 after a prefix (internal)';

CREATE FUNCTION @extschema@._snowflake_from_base58(t pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN @extschema@._snowflake_prefix_ok(prefix)
         AND pg_catalog.starts_with(t COLLATE pg_catalog."C", prefix)
         AND pg_catalog.octet_length(t) - pg_catalog.octet_length(prefix) <= 11
         -- 1 to 11 digits, no leading zero digit.
         AND pg_catalog.substr(t, pg_catalog.octet_length(prefix) + 1) COLLATE pg_catalog."C"
             ~ '^([2-9A-HJ-NP-Za-km-z][1-9A-HJ-NP-Za-km-z]*|1)$'
         AND (pg_catalog.octet_length(t) - pg_catalog.octet_length(prefix) < 11
              OR pg_catalog.substr(t, pg_catalog.octet_length(prefix) + 1) COLLATE pg_catalog."C" <= 'NQm6nKp8qFC')
    THEN @extschema@._snowflake_base58_digit(t, pg_catalog.octet_length(prefix), 1) * 430804206899405824
        + @extschema@._snowflake_base58_digit(t, pg_catalog.octet_length(prefix), 2) * 7427658739644928
        + @extschema@._snowflake_base58_digit(t, pg_catalog.octet_length(prefix), 3) * 128063081718016
        + @extschema@._snowflake_base58_digit(t, pg_catalog.octet_length(prefix), 4) * 2207984167552
        + @extschema@._snowflake_base58_digit(t, pg_catalog.octet_length(prefix), 5) * 38068692544
        + @extschema@._snowflake_base58_digit(t, pg_catalog.octet_length(prefix), 6) * 656356768
        + @extschema@._snowflake_base58_digit(t, pg_catalog.octet_length(prefix), 7) * 11316496
        + @extschema@._snowflake_base58_digit(t, pg_catalog.octet_length(prefix), 8) * 195112
        + @extschema@._snowflake_base58_digit(t, pg_catalog.octet_length(prefix), 9) * 3364
        + @extschema@._snowflake_base58_digit(t, pg_catalog.octet_length(prefix), 10) * 58
        + @extschema@._snowflake_base58_digit(t, pg_catalog.octet_length(prefix), 11)
    ELSE @extschema@._snowflake_text_decode('base58', t, prefix)
END;

COMMENT ON FUNCTION @extschema@._snowflake_from_base58(pg_catalog.text, pg_catalog.text) IS
'the ID written in base58 after a prefix (internal)';

CREATE FUNCTION @extschema@._snowflake_from_base36(t pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN @extschema@._snowflake_prefix_ok(prefix)
         AND pg_catalog.starts_with(t COLLATE pg_catalog."C", prefix)
         AND pg_catalog.octet_length(t) - pg_catalog.octet_length(prefix) <= 13
         -- 1 to 13 digits, either case, no leading zero digit.
         AND pg_catalog.substr(t, pg_catalog.octet_length(prefix) + 1) COLLATE pg_catalog."C"
             ~ '^([1-9A-Za-z][0-9A-Za-z]*|0)$'
         AND (pg_catalog.octet_length(t) - pg_catalog.octet_length(prefix) < 13
              OR pg_catalog.lower(pg_catalog.substr(t, pg_catalog.octet_length(prefix) + 1) COLLATE pg_catalog."C")
                 <= '1y2p0ij32e8e7')
    THEN @extschema@._snowflake_base36_digit(t, pg_catalog.octet_length(prefix), 1) * 4738381338321616896
        + @extschema@._snowflake_base36_digit(t, pg_catalog.octet_length(prefix), 2) * 131621703842267136
        + @extschema@._snowflake_base36_digit(t, pg_catalog.octet_length(prefix), 3) * 3656158440062976
        + @extschema@._snowflake_base36_digit(t, pg_catalog.octet_length(prefix), 4) * 101559956668416
        + @extschema@._snowflake_base36_digit(t, pg_catalog.octet_length(prefix), 5) * 2821109907456
        + @extschema@._snowflake_base36_digit(t, pg_catalog.octet_length(prefix), 6) * 78364164096
        + @extschema@._snowflake_base36_digit(t, pg_catalog.octet_length(prefix), 7) * 2176782336
        + @extschema@._snowflake_base36_digit(t, pg_catalog.octet_length(prefix), 8) * 60466176
        + @extschema@._snowflake_base36_digit(t, pg_catalog.octet_length(prefix), 9) * 1679616
        + @extschema@._snowflake_base36_digit(t, pg_catalog.octet_length(prefix), 10) * 46656
        + @extschema@._snowflake_base36_digit(t, pg_catalog.octet_length(prefix), 11) * 1296
        + @extschema@._snowflake_base36_digit(t, pg_catalog.octet_length(prefix), 12) * 36
        + @extschema@._snowflake_base36_digit(t, pg_catalog.octet_length(prefix), 13)
    ELSE @extschema@._snowflake_text_decode('base36', t, prefix)
END;

COMMENT ON FUNCTION @extschema@._snowflake_from_base36(pg_catalog.text, pg_catalog.text) IS
'the ID written in base36 after a prefix (internal)';

CREATE FUNCTION @extschema@._snowflake_from_hex(t pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN @extschema@._snowflake_prefix_ok(prefix)
         AND pg_catalog.starts_with(t COLLATE pg_catalog."C", prefix)
         AND pg_catalog.octet_length(t) - pg_catalog.octet_length(prefix) = 16
         -- 16 digits, the first at most 7: at most 2^63 - 1.
         AND pg_catalog.substr(t, pg_catalog.octet_length(prefix) + 1) COLLATE pg_catalog."C"
             ~ '^[0-7][0-9A-Fa-f]*$'
    THEN ('x' || pg_catalog.substr(t, pg_catalog.octet_length(prefix) + 1))::pg_catalog."bit"(64)::pg_catalog.int8
    ELSE @extschema@._snowflake_text_decode('hex', t, prefix)
END;

COMMENT ON FUNCTION @extschema@._snowflake_from_hex(pg_catalog.text, pg_catalog.text) IS
'the ID written in hexadecimal after a prefix (internal)';

-- The functions, as the C extension declares them (snowflake--1.1--1.2.sql):
-- PL/pgSQL, IMMUTABLE, STRICT and PARALLEL SAFE like the C functions, each
-- returning the internal function above, which PL/pgSQL plans once per
-- session, the planner inlining it and its helpers into one expression.
-- Were the internal SQL functions called from queries instead, the planner
-- would inline that expression into each of them: planning a query that
-- decodes a constant would take far longer than the call, and an argument
-- that is itself an expression of some cost (another text-form call) would
-- keep the planner from inlining, each call then running as a query of its
-- own.  Only qualified functions, no operator: no search_path of their own
-- is needed (nor paid for).

CREATE FUNCTION @extschema@.snowflake_to_base32(id pg_catalog.int8)
RETURNS pg_catalog.text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_to_base32(id, ''); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_to_base32(pg_catalog.int8) IS
'an ID as Crockford base32, 13 characters, upper case (sorts as the number)';

CREATE FUNCTION @extschema@.snowflake_to_base32(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_to_base32(id, prefix); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_to_base32(pg_catalog.int8, pg_catalog.text) IS
'an ID as Crockford base32, 13 characters, upper case (sorts as the number), after the prefix';

CREATE FUNCTION @extschema@.snowflake_from_base32(id_text pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_from_base32(id_text, ''); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_from_base32(pg_catalog.text) IS
'the ID written in Crockford base32 (13 digits; any case, I and L read as 1, O as 0, hyphens ignored)';

CREATE FUNCTION @extschema@.snowflake_from_base32(id_text pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_from_base32(id_text, prefix); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_from_base32(pg_catalog.text, pg_catalog.text) IS
'the ID written in Crockford base32 (13 digits; any case, I and L read as 1, O as 0, hyphens ignored) after the prefix, which must be there';

CREATE FUNCTION @extschema@.snowflake_to_base62(id pg_catalog.int8)
RETURNS pg_catalog.text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_to_base62(id, ''); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_to_base62(pg_catalog.int8) IS
'an ID as base62 (0-9A-Za-z), 11 characters (sorts as the number under the C collation)';

CREATE FUNCTION @extschema@.snowflake_to_base62(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_to_base62(id, prefix); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_to_base62(pg_catalog.int8, pg_catalog.text) IS
'an ID as base62 (0-9A-Za-z), 11 characters (sorts as the number under the C collation), after the prefix';

CREATE FUNCTION @extschema@.snowflake_from_base62(id_text pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_from_base62(id_text, ''); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_from_base62(pg_catalog.text) IS
'the ID written in base62 (exactly 11 digits of 0-9A-Za-z)';

CREATE FUNCTION @extschema@.snowflake_from_base62(id_text pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_from_base62(id_text, prefix); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_from_base62(pg_catalog.text, pg_catalog.text) IS
'the ID written in base62 (exactly 11 digits of 0-9A-Za-z) after the prefix, which must be there';

CREATE FUNCTION @extschema@.snowflake_to_base58(id pg_catalog.int8)
RETURNS pg_catalog.text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_to_base58(id, ''); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_to_base58(pg_catalog.int8) IS
'an ID as base58 (Bitcoin alphabet), no padding';

CREATE FUNCTION @extschema@.snowflake_to_base58(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_to_base58(id, prefix); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_to_base58(pg_catalog.int8, pg_catalog.text) IS
'an ID as base58 (Bitcoin alphabet), no padding, after the prefix';

CREATE FUNCTION @extschema@.snowflake_from_base58(id_text pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_from_base58(id_text, ''); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_from_base58(pg_catalog.text) IS
'the ID written in base58 (Bitcoin alphabet, no leading 1)';

CREATE FUNCTION @extschema@.snowflake_from_base58(id_text pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_from_base58(id_text, prefix); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_from_base58(pg_catalog.text, pg_catalog.text) IS
'the ID written in base58 (Bitcoin alphabet, no leading 1) after the prefix, which must be there';

CREATE FUNCTION @extschema@.snowflake_to_base36(id pg_catalog.int8)
RETURNS pg_catalog.text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_to_base36(id, ''); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_to_base36(pg_catalog.int8) IS
'an ID as base36 (0-9a-z), no padding';

CREATE FUNCTION @extschema@.snowflake_to_base36(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_to_base36(id, prefix); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_to_base36(pg_catalog.int8, pg_catalog.text) IS
'an ID as base36 (0-9a-z), no padding, after the prefix';

CREATE FUNCTION @extschema@.snowflake_from_base36(id_text pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_from_base36(id_text, ''); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_from_base36(pg_catalog.text) IS
'the ID written in base36 (any case, no leading 0)';

CREATE FUNCTION @extschema@.snowflake_from_base36(id_text pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_from_base36(id_text, prefix); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_from_base36(pg_catalog.text, pg_catalog.text) IS
'the ID written in base36 (any case, no leading 0) after the prefix, which must be there';

CREATE FUNCTION @extschema@.snowflake_to_hex(id pg_catalog.int8)
RETURNS pg_catalog.text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_to_hex(id, ''); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_to_hex(pg_catalog.int8) IS
'an ID as hexadecimal, 16 characters, lower case (sorts as the number)';

CREATE FUNCTION @extschema@.snowflake_to_hex(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_to_hex(id, prefix); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_to_hex(pg_catalog.int8, pg_catalog.text) IS
'an ID as hexadecimal, 16 characters, lower case (sorts as the number), after the prefix';

CREATE FUNCTION @extschema@.snowflake_from_hex(id_text pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_from_hex(id_text, ''); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_from_hex(pg_catalog.text) IS
'the ID written in hexadecimal (exactly 16 digits, any case)';

CREATE FUNCTION @extschema@.snowflake_from_hex(id_text pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$ BEGIN RETURN @extschema@._snowflake_from_hex(id_text, prefix); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_from_hex(pg_catalog.text, pg_catalog.text) IS
'the ID written in hexadecimal (exactly 16 digits, any case) after the prefix, which must be there';
