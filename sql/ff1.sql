--
-- ff1: the FF1 code behind public IDs (src/ff1.c) against NIST's published
-- samples, and the 63-bit path that public IDs take against the general
-- FF1 it specialises; what the general FF1 refuses; and what the C
-- extension says when no key file is configured, and to whom it shows the
-- setting that names one.
--
-- The general FF1 is not part of the SQL interface: the library exports it
-- as snowflake_ff1_digits(key, tweak, radix, digits int4[], encrypt), which
-- this file declares itself (as decode_differential declares its twin).
--
CREATE SCHEMA ff1;
CREATE FUNCTION ff1.digits(key bytea, tweak bytea, radix int4, digits int4[], encrypt bool)
RETURNS int4[] AS '$libdir/snowflake', 'snowflake_ff1_digits'
LANGUAGE C IMMUTABLE STRICT;

-- Numeral strings as NIST writes them: digits 0-9 then a-z.
CREATE FUNCTION ff1.from_text(x text) RETURNS int4[]
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT array_agg(strpos('0123456789abcdefghijklmnopqrstuvwxyz', c) - 1 ORDER BY n)
      FROM regexp_split_to_table(x, '') WITH ORDINALITY AS t(c, n)
$$;
CREATE FUNCTION ff1.to_text(d int4[]) RETURNS text
LANGUAGE sql IMMUTABLE STRICT AS $$
    SELECT string_agg(substr('0123456789abcdefghijklmnopqrstuvwxyz', v + 1, 1), '' ORDER BY n)
      FROM unnest(d) WITH ORDINALITY AS t(v, n)
$$;
-- An ID's 63 bits as radix-2 digits, most significant first, and back.
CREATE FUNCTION ff1.bits(id int8) RETURNS int4[]
LANGUAGE sql IMMUTABLE STRICT
RETURN string_to_array(substr(id::bit(64)::text, 2), NULL)::int4[];
CREATE FUNCTION ff1.unbits(d int4[]) RETURNS int8
LANGUAGE sql IMMUTABLE STRICT
RETURN ('0' || array_to_string(d, ''))::bit(64)::int8;

-- ---------------------------------------------------------------------------
-- 1. NIST's samples (SP 800-38G, "FF1 samples" of the Cryptographic
--    Standards and Guidelines examples): AES-128, -192 and -256, each with
--    radix 10 and no tweak, radix 10 and a 10-byte tweak, radix 36 and an
--    11-byte tweak.
-- ---------------------------------------------------------------------------
CREATE TABLE ff1.samples (sample int, key bytea, tweak bytea, radix int4, plaintext text, ciphertext text);
INSERT INTO ff1.samples VALUES
  (1, '\x2b7e151628aed2a6abf7158809cf4f3c', '', 10, '0123456789', '2433477484'),
  (2, '\x2b7e151628aed2a6abf7158809cf4f3c', '\x39383736353433323130', 10, '0123456789', '6124200773'),
  (3, '\x2b7e151628aed2a6abf7158809cf4f3c', '\x3737373770717273373737', 36, '0123456789abcdefghi', 'a9tv40mll9kdu509eum'),
  (4, '\x2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f', '', 10, '0123456789', '2830668132'),
  (5, '\x2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f', '\x39383736353433323130', 10, '0123456789', '2496655549'),
  (6, '\x2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f', '\x3737373770717273373737', 36, '0123456789abcdefghi', 'xbj3kv35jrawxv32ysr'),
  (7, '\x2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f7f036d6f04fc6a94', '', 10, '0123456789', '6657667009'),
  (8, '\x2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f7f036d6f04fc6a94', '\x39383736353433323130', 10, '0123456789', '1001623463'),
  (9, '\x2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f7f036d6f04fc6a94', '\x3737373770717273373737', 36, '0123456789abcdefghi', 'xs8a0azh2avyalyzuwd');
SELECT sample, 8 * length(key) AS aes, radix, length(tweak) AS tweak_bytes,
       ff1.to_text(ff1.digits(key, tweak, radix, ff1.from_text(plaintext), true)) AS encrypted,
       ff1.to_text(ff1.digits(key, tweak, radix, ff1.from_text(plaintext), true)) = ciphertext AS as_published,
       ff1.to_text(ff1.digits(key, tweak, radix, ff1.from_text(ciphertext), false)) = plaintext AS decrypted
  FROM ff1.samples ORDER BY sample;

-- ---------------------------------------------------------------------------
-- 2. Public IDs are FF1 with radix 2 over the 63 bits and no tweak: the
--    63-bit path (one AES block a round, P's block computed once per key)
--    gives what the general FF1 gives, both ways, for the three key
--    lengths, over the edges and 5,000 random IDs.
-- ---------------------------------------------------------------------------
SELECT setseed(0.38);
CREATE TABLE ff1.ids AS
SELECT floor(random() * 2147483648)::int8 << 32 | floor(random() * 4294967296)::int8 AS id
  FROM generate_series(1, 5000)
UNION ALL
SELECT unnest(ARRAY[0, 1, 2147483647, 2147483648, 4294967295, 4294967296,
                    4611686018427387904, 9223372036854775806, 9223372036854775807]::int8[]);
SELECT 8 * length(s.key) AS aes, count(*) AS ids,
       count(*) FILTER (WHERE ff1.unbits(ff1.digits(s.key, '', 2, ff1.bits(i.id), true))
                              <> snowflake_encrypt_id(i.id, s.key)) AS encrypt_differs,
       count(*) FILTER (WHERE ff1.unbits(ff1.digits(s.key, '', 2, ff1.bits(i.id), false))
                              <> snowflake_decrypt_id(i.id, s.key)) AS decrypt_differs
  FROM ff1.ids i, (SELECT DISTINCT key FROM ff1.samples) s
 GROUP BY s.key ORDER BY 1;

-- The general FF1 at the ends of what it takes: radix 2^16 (6 digits, halves
-- of 2^48 values), radix 2 with 112 digits (halves of 2^56), and the
-- smallest domains, 2^20 and 10^6.
SELECT radix, cardinality(x) AS n,
       ff1.digits(k, '\x00', radix, ff1.digits(k, '\x00', radix, x, true), false) = x AS round_trip,
       ff1.digits(k, '\x00', radix, x, true) <> x AS changed
  FROM (VALUES ('\x2b7e151628aed2a6abf7158809cf4f3c'::bytea)) key(k),
       (VALUES (65536, ARRAY[65535, 0, 1, 65534, 40000, 7]),
               (2, array_fill(1, ARRAY[112])),
               (2, array_fill(0, ARRAY[20])),
               (10, ARRAY[9, 9, 9, 9, 9, 9])) v(radix, x);

-- What it refuses, in the order it checks: the key, the radix, the length,
-- each digit, the domain's size.
SELECT ff1.digits('\x00', '', 10, ARRAY[1, 2, 3, 4, 5, 6], true);
SELECT ff1.digits('\x2b7e151628aed2a6abf7158809cf4f3c', '', 1, ARRAY[0, 0, 0, 0, 0, 0], true);
SELECT ff1.digits('\x2b7e151628aed2a6abf7158809cf4f3c', '', 65537, ARRAY[0, 0, 0, 0, 0, 0], true);
SELECT ff1.digits('\x2b7e151628aed2a6abf7158809cf4f3c', '', 65536, ARRAY[0], true);
SELECT ff1.digits('\x2b7e151628aed2a6abf7158809cf4f3c', '', 2, array_fill(0, ARRAY[113]), true);
SELECT ff1.digits('\x2b7e151628aed2a6abf7158809cf4f3c', '', 10, ARRAY[1, 2, 3, 4, 5, 10], true);
SELECT ff1.digits('\x2b7e151628aed2a6abf7158809cf4f3c', '', 10, ARRAY[1, 2, 3, 4, 5, -1], true);
SELECT ff1.digits('\x2b7e151628aed2a6abf7158809cf4f3c', '', 10, ARRAY[1, 2, 3, 4, 5, NULL], true);
SELECT ff1.digits('\x2b7e151628aed2a6abf7158809cf4f3c', '', 10, ARRAY[1, 2, 3, 4, 5], true);
SELECT ff1.digits('\x2b7e151628aed2a6abf7158809cf4f3c', '', 2, array_fill(0, ARRAY[19]), true);
SELECT ff1.digits('\x2b7e151628aed2a6abf7158809cf4f3c', '', 65536, array_fill(0, ARRAY[8]), true);
SELECT ff1.digits('\x2b7e151628aed2a6abf7158809cf4f3c', '', 3, array_fill(0, ARRAY[72]), true);

-- ---------------------------------------------------------------------------
-- 3. The configured keys without a key file (this server sets none); the
--    key id's range is checked first, and a public text's syntax.
-- ---------------------------------------------------------------------------
SELECT snowflake_to_public(1, 1);
SELECT snowflake_from_public(1, 0);
SELECT snowflake_to_public_base32(1);
SELECT snowflake_to_public_base32(1, 'ord_');
SELECT snowflake_from_public_base32('10000000000001');
SELECT snowflake_to_public(1, 32);
SELECT snowflake_from_public_base32('1000000000000U');

-- The setting that names the key file is a superuser's: others can neither
-- read nor set it (42501; PostgreSQL's own messages, which differ between
-- majors), nor see it in pg_settings.
CREATE ROLE regress_ff1_user;
SET ROLE regress_ff1_user;
SELECT regress.sqlstate_of('SHOW snowflake.public_keys_file') AS show,
       regress.sqlstate_of($$SELECT current_setting('snowflake.public_keys_file')$$) AS current_setting,
       regress.sqlstate_of($$SET snowflake.public_keys_file = 'other.keys'$$) AS set;
SELECT count(*) AS visible FROM pg_settings WHERE name = 'snowflake.public_keys_file';
RESET ROLE;
SELECT name, setting, context, vartype FROM pg_settings WHERE name = 'snowflake.public_keys_file';
DROP ROLE regress_ff1_user;
