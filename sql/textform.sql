--
-- textform: the text forms of IDs, snowflake_to_<form>(id [, prefix]) and
-- snowflake_from_<form>(text [, prefix]) for base32, base62, base58, base36
-- and hex (docs/text-forms.md).
--
-- The file needs nothing but those functions and plain SQL, and prints no
-- CONTEXT lines: any implementation of them (the SQL edition's) can be
-- checked against expected/textform.out by running it through psql the way
-- pg_regress does (psql -X -a -q, the output compared as it is).
--
-- Published vectors, then a reference implementation written here in plain
-- SQL compared with the functions over the edges and random IDs, round
-- trips over a million random IDs, the order of the fixed-width texts over
-- random pairs, what decoding accepts besides the canonical text, the
-- prefix, and every error.
--
\set SHOW_CONTEXT never
CREATE SCHEMA tf;

-- An ID from 16 hexadecimal digits (published vectors are bytes in hex).
CREATE FUNCTION tf.from_hex_bytes(h text) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT ('x' || lpad(h, 16, '0'))::bit(64)::bigint
$$;

-- ---------------------------------------------------------------------------
-- 1. Published vectors
-- ---------------------------------------------------------------------------

-- Crockford base32 has no vectors of its own; these are the integers of the
-- examples of two libraries that implement it (Elixir's base32_crockford:
-- 973113317 = "X011Z5", also read from "XoIlZ5" and "X01-1Z5";
-- crockford_base32: 1234 = "16J", also "16-j"), and the values of TypeID's
-- spec/valid.yml below 2^63 (its 26-character suffix is lower-case Crockford
-- base32 of 130 bits, whose last 13 characters are these IDs).
SELECT v.id, snowflake_to_base32(v.id) AS encoded,
       snowflake_to_base32(v.id) = lpad(upper(v.published), 13, '0') AS as_published,
       snowflake_from_base32(lpad(v.published, 13, '0')) = v.id AS decoded
  FROM (VALUES (973113317, 'X011Z5'), (1234, '16J'),
               (0, '0'), (1, '1'), (10, 'a'), (16, 'g'), (32, '10')) v(id, published);
SELECT snowflake_from_base32('0000000XoIlZ5') AS aliases,
       snowflake_from_base32('0000000X01-1Z5') AS hyphen,
       snowflake_from_base32('000000000016-j') AS lower_hyphen;

-- Base58: the vectors of Bitcoin Core's src/test/data/base58_encode_decode.json
-- whose bytes are a number an ID can be (no leading zero byte, which Bitcoin
-- writes as a leading "1": an ID is a number, not bytes), and the IETF draft
-- draft-msporny-base58's 0x0000287fb4cd = "11233QC4" without its two zero
-- bytes.
SELECT v.hex, snowflake_to_base58(tf.from_hex_bytes(v.hex)) AS encoded,
       snowflake_to_base58(tf.from_hex_bytes(v.hex)) = v.published AS as_published,
       snowflake_from_base58(v.published) = tf.from_hex_bytes(v.hex) AS decoded
  FROM (VALUES ('61', '2g'), ('626262', 'a3gV'), ('636363', 'aPEr'),
               ('516b6fcd0f', 'ABnLTmg'), ('572e4794', '3EFU7m'), ('10c8511e', 'Rt5zm'),
               ('271F359E', 'zzzzy'), ('271F359F', 'zzzzz'), ('271F35A0', '211111'),
               ('271F35A1', '211112'), ('287fb4cd', '233QC4')) v(hex, published);
-- Two of Bitcoin's vectors are numbers above 2^63 - 1 (9 and 10 bytes).
SELECT snowflake_from_base58('3SEo3LWLoPntC');
SELECT snowflake_from_base58('EJDM8drfXA6uyA');

-- Base36 is what bwmarrin/snowflake's Base36() writes (Go's
-- strconv.FormatInt(id, 36)); its test parses "8hgmw4blvlkw" and refuses
-- "68h5gmw443blv2lk1w" (out of range).  The largest ID in base 36 is
-- Long.toString(Long.MAX_VALUE, 36) in Java.
SELECT snowflake_from_base36('8hgmw4blvlkw') AS parsed,
       snowflake_to_base36(snowflake_from_base36('8hgmw4blvlkw')) AS again,
       snowflake_to_base36(9223372036854775807) = '1y2p0ij32e8e7' AS largest;
SELECT snowflake_from_base36('68h5gmw443blv2lk1w');

-- Hex is to_hex() padded to 16 digits; base62 digits are GMP's for bases
-- above 36 (0-9, A-Z, a-z).
SELECT snowflake_to_hex(9223372036854775807) = to_hex(9223372036854775807) AS hex_largest,
       snowflake_to_hex(48879) AS hex_beef,
       snowflake_to_base62(61) AS base62_61, snowflake_to_base62(62) AS base62_62,
       snowflake_to_base62(9223372036854775807) AS base62_largest;

-- ---------------------------------------------------------------------------
-- 2. A reference implementation in SQL, compared with the functions
-- ---------------------------------------------------------------------------

-- The alphabets, digit values 0 up, and widths (0: no padding).
CREATE TABLE tf.forms (form text PRIMARY KEY, alphabet text NOT NULL, width int NOT NULL);
INSERT INTO tf.forms VALUES
    ('base32', '0123456789ABCDEFGHJKMNPQRSTVWXYZ', 13),
    ('base62', '0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz', 11),
    ('base58', '123456789ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnopqrstuvwxyz', 0),
    ('base36', '0123456789abcdefghijklmnopqrstuvwxyz', 0),
    ('hex', '0123456789abcdef', 16);

-- The digits of id in numeric arithmetic, most significant first, as many
-- as 2^63 needs in that base; then padded or trimmed.
CREATE FUNCTION tf.ref_encode(id bigint, alphabet text, width int) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
    WITH b AS (SELECT length(alphabet)::numeric AS base),
    d AS (
        SELECT string_agg(substr(alphabet,
                   (mod(div(id::numeric, b.base ^ k), b.base))::int + 1, 1), '' ORDER BY k DESC) AS s
          FROM b, generate_series(0, ceil(63 / log(2, b.base))::int - 1) k
    )
    SELECT CASE WHEN width > 0 THEN right(s, width)
                ELSE coalesce(nullif(ltrim(s, left(alphabet, 1)), ''), left(alphabet, 1)) END
      FROM d
$$;

-- The value a text spells in numeric (no checks: canonical text only).
CREATE FUNCTION tf.ref_decode(t text, alphabet text) RETURNS numeric
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT sum((strpos(alphabet, substr(t, i, 1)) - 1)::numeric
               * length(alphabet)::numeric ^ (length(t) - i))
      FROM generate_series(1, length(t)) i
$$;

-- The functions by form name.
CREATE FUNCTION tf.encode(form text, id bigint) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT CASE form WHEN 'base32' THEN snowflake_to_base32(id)
                     WHEN 'base62' THEN snowflake_to_base62(id)
                     WHEN 'base58' THEN snowflake_to_base58(id)
                     WHEN 'base36' THEN snowflake_to_base36(id)
                     WHEN 'hex' THEN snowflake_to_hex(id) END
$$;
CREATE FUNCTION tf.decode(form text, t text) RETURNS bigint
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT CASE form WHEN 'base32' THEN snowflake_from_base32(t)
                     WHEN 'base62' THEN snowflake_from_base62(t)
                     WHEN 'base58' THEN snowflake_from_base58(t)
                     WHEN 'base36' THEN snowflake_from_base36(t)
                     WHEN 'hex' THEN snowflake_from_hex(t) END
$$;

-- The IDs: the edges of every form (each power of its base and of 2, one
-- below and one above), then random IDs of every bit length.
CREATE TABLE tf.ids (id bigint PRIMARY KEY);
INSERT INTO tf.ids
SELECT DISTINCT v FROM (
    SELECT unnest(ARRAY[(2::numeric ^ k)::bigint - 1, (2::numeric ^ k)::bigint,
                        least((2::numeric ^ k) + 1, 9223372036854775807)::bigint])
      FROM generate_series(0, 62) k
    UNION ALL
    SELECT unnest(ARRAY[(b ^ k - 1)::bigint, (b ^ k)::bigint, (b ^ k + 1)::bigint])
      FROM unnest(ARRAY[32, 62, 58, 36, 16]::numeric[]) b,
           generate_series(0, 12) k
     WHERE b ^ k + 1 <= 9223372036854775807
    UNION ALL
    SELECT unnest(ARRAY[0, 9223372036854775806, 9223372036854775807]::bigint[])
) e(v)
WHERE v >= 0;
SELECT setseed(0.39);
INSERT INTO tf.ids
SELECT ((floor(random() * 2147483648)::bigint << 32)
        | floor(random() * 4294967296)::bigint) >> (g % 63)
  FROM generate_series(1, 10000) g
ON CONFLICT DO NOTHING;
SELECT count(*) > 8000 AS enough_ids FROM tf.ids;

-- Every form: the functions' text is the reference's, and decoding the
-- reference's text gives the ID back; the reference's reading of the
-- functions' text is the ID (numeric, no bigint arithmetic involved).
SELECT form,
       count(*) AS ids,
       count(*) FILTER (WHERE enc <> ref) AS encoded_differently,
       count(*) FILTER (WHERE tf.decode(form, ref) <> id) AS decoded_differently,
       count(*) FILTER (WHERE tf.ref_decode(enc, alphabet) <> id) AS spelled_differently,
       min(length(enc)) AS min_length,
       max(length(enc)) AS max_length
  FROM (SELECT f.form, f.alphabet, i.id, tf.encode(f.form, i.id) AS enc,
               tf.ref_encode(i.id, f.alphabet, f.width) AS ref
          FROM tf.forms f, tf.ids i) r
 GROUP BY form ORDER BY form;

-- ---------------------------------------------------------------------------
-- 3. Round trips over a million random IDs (:rows, which a slower
--    implementation may lower with psql -v rows=N), with and without a
--    prefix
-- ---------------------------------------------------------------------------
\if :{?rows}
\else
\set rows 1000000
\endif

-- Three in four of 63 random bits, one in four shifted right by 0 to 62
-- bits (every length of every form).

SELECT setseed(0.5);
CREATE TABLE tf.million AS
SELECT ((floor(random() * 2147483648)::bigint << 32)
        | floor(random() * 4294967296)::bigint) >> (CASE WHEN g % 4 = 0 THEN g / 4 % 63 ELSE 0 END) AS id
  FROM generate_series(1, :rows) g;
SELECT count(*) = :rows AS all_ids,
       count(DISTINCT id) > 0.94 * :rows AS mostly_distinct,
       min(id) < 100 AS some_small, max(id) > 9200000000000000000 AS some_near_the_top,
       count(*) FILTER (WHERE snowflake_from_base32(snowflake_to_base32(id)) <> id) AS base32,
       count(*) FILTER (WHERE snowflake_from_base62(snowflake_to_base62(id)) <> id) AS base62,
       count(*) FILTER (WHERE snowflake_from_base58(snowflake_to_base58(id)) <> id) AS base58,
       count(*) FILTER (WHERE snowflake_from_base36(snowflake_to_base36(id)) <> id) AS base36,
       count(*) FILTER (WHERE snowflake_from_hex(snowflake_to_hex(id)) <> id) AS hex
  FROM tf.million;
SELECT count(*) FILTER (WHERE snowflake_from_base32(snowflake_to_base32(id, 'ord_'), 'ord_') <> id) AS base32,
       count(*) FILTER (WHERE snowflake_from_base62(snowflake_to_base62(id, 'ord_'), 'ord_') <> id) AS base62,
       count(*) FILTER (WHERE snowflake_from_base58(snowflake_to_base58(id, 'ord_'), 'ord_') <> id) AS base58,
       count(*) FILTER (WHERE snowflake_from_base36(snowflake_to_base36(id, 'ord_'), 'ord_') <> id) AS base36,
       count(*) FILTER (WHERE snowflake_from_hex(snowflake_to_hex(id, 'ord_'), 'ord_') <> id) AS hex,
       count(*) FILTER (WHERE snowflake_to_base32(id, 'ord_') <> 'ord_' || snowflake_to_base32(id)) AS prefix_is_prepended
  FROM tf.million WHERE id % 10 = 0;
-- ---------------------------------------------------------------------------
-- 4. Order: the fixed-width texts compare as their IDs under "C"
-- ---------------------------------------------------------------------------

-- -1, 0 or 1 as x sorts before, with or after y under "C".
CREATE FUNCTION tf.cmp_c(x text, y text) RETURNS int
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT CASE WHEN x < y COLLATE "C" THEN -1 WHEN x > y COLLATE "C" THEN 1 ELSE 0 END
$$;

-- 200,000 random pairs (:pairs, lowered like :rows above; half of them
-- close to each other), and each edge ID with its neighbours: how many
-- compare differently as text and as numbers.
\if :{?pairs}
\else
\set pairs 200000
\endif
SELECT setseed(0.25);
CREATE TABLE tf.pairs AS
SELECT a, CASE WHEN g % 2 = 0 THEN b ELSE least(a::numeric + b % 100000, 9223372036854775807)::bigint END AS b
  FROM (SELECT g, ((floor(random() * 2147483648)::bigint << 32)
                   | floor(random() * 4294967296)::bigint) >> (g % 7 * 9) AS a,
               ((floor(random() * 2147483648)::bigint << 32)
                | floor(random() * 4294967296)::bigint) >> (g % 5 * 13) AS b
          FROM generate_series(1, :pairs) g) r
UNION ALL
SELECT i.id, (i.id::numeric + d)::bigint
  FROM tf.ids i, (VALUES (-1), (0), (1)) v(d)
 WHERE i.id::numeric + d BETWEEN 0 AND 9223372036854775807;
SELECT count(*) > :pairs AS enough_pairs,
       count(*) FILTER (WHERE a < b) > :pairs / 4 AND count(*) FILTER (WHERE a > b) > :pairs / 4
           AND count(*) FILTER (WHERE a = b) > 100 AS every_outcome,
       count(*) FILTER (WHERE sign(a - b) <> tf.cmp_c(snowflake_to_base32(a), snowflake_to_base32(b))) AS base32,
       count(*) FILTER (WHERE sign(a - b) <> tf.cmp_c(lower(snowflake_to_base32(a)), lower(snowflake_to_base32(b)))) AS base32_lower,
       count(*) FILTER (WHERE sign(a - b) <> tf.cmp_c(snowflake_to_base62(a), snowflake_to_base62(b))) AS base62,
       count(*) FILTER (WHERE sign(a - b) <> tf.cmp_c(snowflake_to_hex(a), snowflake_to_hex(b))) AS hex,
       count(*) FILTER (WHERE sign(a - b) <> tf.cmp_c(snowflake_to_base62(a, 'ord_'), snowflake_to_base62(b, 'ord_'))) AS base62_prefixed
  FROM tf.pairs;
-- The forms without padding do not sort as the numbers: shorter texts are
-- smaller numbers, but base58's upper case sorts before its lower case and
-- "2" > "11111" whatever the length.
SELECT count(*) FILTER (WHERE sign(a - b) <> tf.cmp_c(snowflake_to_base58(a), snowflake_to_base58(b))) > 0 AS base58_unordered,
       count(*) FILTER (WHERE sign(a - b) <> tf.cmp_c(snowflake_to_base36(a), snowflake_to_base36(b))) > 0 AS base36_unordered
  FROM tf.pairs;
-- ORDER BY the text is ORDER BY the ID.
SELECT (SELECT array_agg(id ORDER BY snowflake_to_base32(id) COLLATE "C") FROM tf.ids)
         = (SELECT array_agg(id ORDER BY id) FROM tf.ids) AS base32,
       (SELECT array_agg(id ORDER BY snowflake_to_base62(id) COLLATE "C") FROM tf.ids)
         = (SELECT array_agg(id ORDER BY id) FROM tf.ids) AS base62,
       (SELECT array_agg(id ORDER BY snowflake_to_hex(id) COLLATE "C") FROM tf.ids)
         = (SELECT array_agg(id ORDER BY id) FROM tf.ids) AS hex;

-- ---------------------------------------------------------------------------
-- 5. What decoding accepts besides the canonical text
-- ---------------------------------------------------------------------------

-- Encoders write base32 in upper case, base36 and hex in lower case.
SELECT snowflake_to_base32(9223372036854775807) AS base32,
       snowflake_to_base36(9223372036854775807) AS base36,
       snowflake_to_hex(9223372036854775807) AS hex;
-- Base32 reads either case, Crockford's aliases (I and L for 1, O for 0, in
-- either case) and hyphens anywhere, ignored.
SELECT t, snowflake_from_base32(t)
  FROM (VALUES ('7ZZZZZZZZZZZZ'), ('7zzzzzzzzzzzz'), ('7zZzZzZzZzZzZ'),
               ('0000000000001'), ('000000000000i'), ('000000000000I'),
               ('000000000000l'), ('000000000000L'), ('oOoOoOoOoOoO1'),
               ('-0000000000001'), ('0000000000001-'), ('0---000000000001'),
               ('00000-00000-001'), ('7ZZ-ZZZ-ZZZ-ZZZ-Z')) v(t);
-- Base36 and hex read either case; base62 and base58 are case-sensitive.
SELECT snowflake_from_base36('1Y2P0IJ32E8E7') AS base36_upper,
       snowflake_from_hex('7FFFFFFFFFFFFFFF') AS hex_upper,
       snowflake_from_hex('000000000000bEeF') AS hex_mixed,
       snowflake_from_base62('0000000000A') AS base62_upper_a,
       snowflake_from_base62('0000000000a') AS base62_lower_a,
       snowflake_from_base58('Z') AS base58_upper_z,
       snowflake_from_base58('z') AS base58_lower_z;
-- The unpadded forms: 0 is the zero digit alone.
SELECT snowflake_to_base58(0) AS base58_zero, snowflake_from_base58('1') AS base58_one_digit,
       snowflake_to_base36(0) AS base36_zero, snowflake_from_base36('0') AS base36_zero_digit;

-- ---------------------------------------------------------------------------
-- 6. The prefix
-- ---------------------------------------------------------------------------

-- Written as given before the digits, and required, byte for byte, by the
-- decoder; the empty prefix is no prefix.
SELECT snowflake_to_base32(1234, 'ord_') AS base32, snowflake_to_base62(1234, 'cus_') AS base62,
       snowflake_to_base58(1234, 'u') AS base58, snowflake_to_base36(1234, 'x-') AS base36,
       snowflake_to_hex(1234, 'ID.') AS hex;
SELECT snowflake_from_base32('ord_000000000016J', 'ord_') AS base32,
       snowflake_from_base62('cus_000000000Ju', 'cus_') AS base62,
       snowflake_from_base58('uNH', 'u') AS base58,
       snowflake_from_base36('x-ya', 'x-') AS base36,
       snowflake_from_hex('ID.00000000000004d2', 'ID.') AS hex;
SELECT snowflake_to_base62(1234, '') = snowflake_to_base62(1234) AS empty_to,
       snowflake_from_base62('000000000Ju', '') AS empty_from;
-- Every character a prefix may hold, and the longest prefix (63).
SELECT snowflake_to_base36(35, 'azAZ09_-.~') AS every_kind,
       snowflake_from_base36('azAZ09_-.~z', 'azAZ09_-.~') AS back,
       length(snowflake_to_hex(0, repeat('p', 63))) AS longest;
-- Base32's hyphens may follow a prefix that ends in one; the prefix's own
-- case counts even for base32.
SELECT snowflake_from_base32('ord-0000-0000-00001', 'ord-') AS hyphens_after_prefix;
SELECT snowflake_from_base32('ORD_0000000000001', 'ord_');
-- STRICT: NULL in, NULL out, whatever the other argument.
SELECT snowflake_to_base32(NULL) IS NULL AS id_null,
       snowflake_to_base32(1, NULL) IS NULL AS prefix_null,
       snowflake_from_base32(NULL) IS NULL AS text_null,
       snowflake_from_base32('not an ID', NULL) IS NULL AS from_prefix_null;

-- ---------------------------------------------------------------------------
-- 7. Every error
-- ---------------------------------------------------------------------------

-- Negative IDs have no text form (22003).
SELECT snowflake_to_base32(-1);
SELECT snowflake_to_base62(-9223372036854775808);
SELECT snowflake_to_base58(-1, 'ord_');
SELECT snowflake_to_base36(-58);
SELECT snowflake_to_hex(-1);

-- A character that is not a digit of the form (22P02), named with its
-- position, in characters from 1 over the whole text (characters of more
-- than one byte: test/t/039_text_forms.pl, in a UTF8 database).
SELECT snowflake_from_base32('000000000000U');
SELECT snowflake_from_base32('00000000000u1');
SELECT snowflake_from_base32('ord_0000000000001');
SELECT snowflake_from_base32(' 0000000000001');
SELECT snowflake_from_base32('0000000000001 ');
SELECT snowflake_from_base62('00000000-01');
SELECT snowflake_from_base58('10');
SELECT snowflake_from_base58('1O');
SELECT snowflake_from_base58('1I');
SELECT snowflake_from_base58('1l');
SELECT snowflake_from_base58('-1');
SELECT snowflake_from_base36('12_3');
SELECT snowflake_from_hex('000000000000000g');
SELECT snowflake_from_hex('0x00000000000001');

-- A digit past the width of a fixed-width form.
SELECT snowflake_from_base32('00000000000001');
SELECT snowflake_from_base32('0-0-0-0-0-0-0-0-0-0-0-0-0-1');
SELECT snowflake_from_base62('000000000001');
SELECT snowflake_from_hex('ord_00000000000000001', 'ord_');

-- Too few digits, or none.
SELECT snowflake_from_base32('000000000001');
SELECT snowflake_from_base32('');
SELECT snowflake_from_base32('-------------');
SELECT snowflake_from_base62('0000000001');
SELECT snowflake_from_hex('ord_fff', 'ord_');
SELECT snowflake_from_base58('');
SELECT snowflake_from_base36('ord_', 'ord_');

-- A leading zero, which the forms without padding never write.
SELECT snowflake_from_base58('12');
SELECT snowflake_from_base36('00');
SELECT snowflake_from_base36('ord_0a', 'ord_');

-- A value above the largest ID, 2^63 - 1 (22003).
SELECT snowflake_from_base32('8000000000000');
SELECT snowflake_from_base32('zzzzzzzzzzzzz');
SELECT snowflake_from_base62('AzL8n0Y58m8');
SELECT snowflake_from_base62('zzzzzzzzzzz');
SELECT snowflake_from_base58('NQm6nKp8qFD');
SELECT snowflake_from_base58('211111111111');
SELECT snowflake_from_base36('1y2p0ij32e8e8');
SELECT snowflake_from_hex('8000000000000000');
SELECT snowflake_from_hex('ord_ffffffffffffffff', 'ord_');

-- The prefix: the text does not start with it, or ends inside it.
SELECT snowflake_from_base62('cus_000000000Ju', 'ord_');
SELECT snowflake_from_base62('000000000Ju', 'ord_');
SELECT snowflake_from_base58('or', 'ord_');
SELECT snowflake_from_hex('', 'ord_');

-- A prefix that is not allowed (22023), for encoders and decoders alike.
SELECT snowflake_to_base32(1, 'ord/');
SELECT snowflake_to_base62(1, 'ord_ ');
SELECT snowflake_to_base58(1, repeat('p', 64));
SELECT snowflake_from_base36('a b1', 'a b');
SELECT snowflake_from_hex('0000000000000001', repeat('p', 100));

-- Which error comes first: the prefix, then the first offending character
-- from the left, then too few digits, then a leading zero, then the range.
SELECT snowflake_from_base32('X8000000000000U', 'Y');
SELECT snowflake_from_base32('80000000000000U');
SELECT snowflake_from_base32('8000000000U00');
SELECT snowflake_from_base32('800000000000');
SELECT snowflake_from_base58('1NQm6nKp8qFD');

-- A long text is quoted in part, its first 100 characters followed by
-- "...", never inside a character; the position still counts over the
-- whole text.  100 characters are quoted whole, 101 are not; 10,000
-- digits with a character that is not one at their end, 10,000 digits out
-- of range, 10,000 two-byte characters, a prefix of 10,000 characters.
-- (test/t/039_text_forms.pl does the same with a megabyte.)
SELECT snowflake_from_base58(repeat('2', 99) || '0');
SELECT snowflake_from_base58(repeat('2', 100) || '0');
SELECT snowflake_from_base58(repeat('2', 9999) || '0');
SELECT snowflake_from_base58(repeat('2', 10000));
SELECT snowflake_from_base36(repeat('é', 10000));
SELECT snowflake_from_hex(repeat('f', 16), repeat('p', 10000));
SELECT snowflake_to_base62(1, repeat('p', 9999) || '/');

SET client_min_messages = warning;
DROP SCHEMA tf CASCADE;
