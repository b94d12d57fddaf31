--
-- publicid: public IDs with the key as an argument,
-- snowflake_encrypt_id(id, key) and snowflake_decrypt_id(public_id, key),
-- FF1 over the 63 bits of IDs (docs/public-ids.md); and the errors of the
-- configured-key functions that come before any key is looked up.
--
-- The file needs nothing but those functions and plain SQL, and prints no
-- CONTEXT lines: the SQL edition's implementation is checked against
-- expected/publicid.out by running it through psql as pg_regress does
-- (test/t/066_sql_edition_decoders.pl).  NIST's samples and the comparison
-- with the general FF1 are in ff1.sql (C only).
--
-- Known answers at the edges for the three key lengths, round trips over a
-- million random IDs, what the public IDs of IDs minted in one millisecond
-- look like, other keys giving other permutations, and every error.
--
\set SHOW_CONTEXT never
CREATE SCHEMA pid;
-- NIST's sample keys (published: never use them for real public IDs).
CREATE TABLE pid.keys (aes int PRIMARY KEY, key bytea NOT NULL);
INSERT INTO pid.keys VALUES
  (128, '\x2b7e151628aed2a6abf7158809cf4f3c'),
  (192, '\x2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f'),
  (256, '\x2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f7f036d6f04fc6a94');

-- ---------------------------------------------------------------------------
-- 1. Known answers: the edges of the 63 bits and of FF1's halves (31 and 32
--    bits), each key length, both ways.
-- ---------------------------------------------------------------------------
CREATE TABLE pid.edges (x int8 PRIMARY KEY);
INSERT INTO pid.edges VALUES (0), (1), (2147483647), (2147483648), (4294967295),
  (4294967296), (4611686018427387904), (9223372036854775806), (9223372036854775807);
SELECT k.aes, e.x, snowflake_encrypt_id(e.x, k.key) AS public_id,
       snowflake_decrypt_id(snowflake_encrypt_id(e.x, k.key), k.key) = e.x AS round_trip
  FROM pid.keys k, pid.edges e ORDER BY 1, 2;
SELECT k.aes, e.x AS public_id, snowflake_decrypt_id(e.x, k.key) AS id,
       snowflake_encrypt_id(snowflake_decrypt_id(e.x, k.key), k.key) = e.x AS round_trip
  FROM pid.keys k, pid.edges e ORDER BY 1, 2;

-- ---------------------------------------------------------------------------
-- 2. A million random IDs (every bit random; :rows, which a slower
--    implementation may lower with psql -v rows=N): they map to distinct
--    public IDs, all between 0 and 2^63 - 1, and back; and, over 20,000
--    (:some), the other key lengths both ways (decrypting is a permutation
--    too).
-- ---------------------------------------------------------------------------
\if :{?rows}
\else
\set rows 1000000
\endif
\if :{?some}
\else
\set some 20000
\endif
SELECT setseed(0.48);
SELECT count(*) = :rows AS all_ids, count(DISTINCT id) = count(*) AS distinct_ids,
       count(*) FILTER (WHERE back <> id) AS not_back,
       count(*) FILTER (WHERE public_id < 0) AS out_of_range,
       count(DISTINCT public_id) = count(*) AS distinct_public_ids,
       count(*) FILTER (WHERE public_id = id) AS unchanged
  FROM (SELECT id, public_id, snowflake_decrypt_id(public_id, k) AS back
          FROM (SELECT id, snowflake_encrypt_id(id, k) AS public_id, k
                  FROM (SELECT floor(random() * 2147483648)::int8 << 32
                               | floor(random() * 4294967296)::int8 AS id,
                               (SELECT key FROM pid.keys WHERE aes = 256) AS k
                          FROM generate_series(1, :rows)) r) s) t;
SELECT setseed(0.49);
CREATE TABLE pid.ids AS
SELECT i, floor(random() * 2147483648)::int8 << 32 | floor(random() * 4294967296)::int8 AS id
  FROM generate_series(1, :some) i;
SELECT k.aes,
       count(*) FILTER (WHERE snowflake_decrypt_id(snowflake_encrypt_id(i.id, k.key), k.key) <> i.id) AS not_back,
       count(*) FILTER (WHERE snowflake_encrypt_id(snowflake_decrypt_id(i.id, k.key), k.key) <> i.id) AS not_forth,
       count(*) FILTER (WHERE snowflake_decrypt_id(i.id, k.key) < 0 OR snowflake_encrypt_id(i.id, k.key) < 0) AS out_of_range
  FROM pid.ids i, pid.keys k GROUP BY k.aes ORDER BY 1;

-- ---------------------------------------------------------------------------
-- 3. A thousand IDs minted in one millisecond on one node (sequence 0 to
--    999): their IDs share every bit but the last ten, and sort as they
--    were made; their public IDs spread over the whole range, in no order.
-- ---------------------------------------------------------------------------
SELECT count(DISTINCT id >> 55) AS ids_top_bytes,
       count(DISTINCT public_id >> 55) AS public_top_bytes,
       count(*) FILTER (WHERE next_public_id > public_id) AS public_increasing_pairs,
       count(next_public_id) AS pairs
  FROM (SELECT id, public_id, lead(public_id) OVER (ORDER BY id) AS next_public_id
          FROM (SELECT id, snowflake_encrypt_id(id, key) AS public_id
                  FROM generate_series(382958333860159488, 382958333860160487) id, pid.keys
                 WHERE aes = 128) s) t;

-- ---------------------------------------------------------------------------
-- 4. Another key, another permutation: over those IDs no two keys give
--    one ID the same public ID, and a public ID decrypted under a key that
--    did not make it is another ID.  A key differing in one bit is another
--    key.
-- ---------------------------------------------------------------------------
SELECT a.aes AS made_with, b.aes AS other,
       count(*) FILTER (WHERE snowflake_encrypt_id(i.id, a.key) = snowflake_encrypt_id(i.id, b.key)) AS same_public_id,
       count(*) FILTER (WHERE snowflake_decrypt_id(snowflake_encrypt_id(i.id, a.key), b.key) = i.id) AS decrypts_to_id
  FROM pid.ids i, pid.keys a, pid.keys b
 WHERE a.aes < b.aes
 GROUP BY 1, 2 ORDER BY 1, 2;
SELECT count(*) FILTER (WHERE snowflake_encrypt_id(id, '\x2b7e151628aed2a6abf7158809cf4f3c')
                             = snowflake_encrypt_id(id, '\x2b7e151628aed2a6abf7158809cf4f3d')) AS same_public_id
  FROM pid.ids;

-- A column of keys: each row under its own key.
SELECT k.aes, snowflake_decrypt_id(snowflake_encrypt_id(x, k.key), k.key) = x AS round_trip
  FROM pid.keys k, (VALUES (382958333860159488)) v(x) ORDER BY 1;

-- ---------------------------------------------------------------------------
-- 5. NULL, and every error of the key-argument functions, in the order
--    they are checked: the value, then the key (whose bytes no error shows).
-- ---------------------------------------------------------------------------
SELECT snowflake_encrypt_id(NULL, key) IS NULL AS null_id, snowflake_encrypt_id(1, NULL) IS NULL AS null_key,
       snowflake_decrypt_id(NULL, key) IS NULL AS null_public_id, snowflake_decrypt_id(1, NULL) IS NULL AS null_key2
  FROM pid.keys WHERE aes = 128;
SELECT snowflake_encrypt_id(-1, '\x2b7e151628aed2a6abf7158809cf4f3c');
SELECT snowflake_encrypt_id(-9223372036854775808, '\x2b7e151628aed2a6abf7158809cf4f3c');
SELECT snowflake_decrypt_id(-1, '\x2b7e151628aed2a6abf7158809cf4f3c');
SELECT snowflake_encrypt_id(-1, '\x00');
SELECT snowflake_encrypt_id(1, '\x');
SELECT snowflake_encrypt_id(1, '\x2b7e151628aed2a6abf7158809cf4f');
SELECT snowflake_decrypt_id(1, '\x2b7e151628aed2a6abf7158809cf4f3c00');
SELECT snowflake_encrypt_id(1, '\x2b7e151628aed2a6abf7158809cf4f3cef4359d8d580aa4f7f036d6f04fc6a9400');
SELECT snowflake_encrypt_id(1, 'a key written as text, 32 bytes');

-- ---------------------------------------------------------------------------
-- 6. The configured-key functions: what they check before they look a key
--    up (the ID, the key id's range, the prefix, a public text's syntax),
--    the same with any key file or none.
-- ---------------------------------------------------------------------------
SELECT snowflake_to_public(NULL, 1) IS NULL AS null_id, snowflake_to_public(1, NULL) IS NULL AS null_key_id,
       snowflake_from_public_base32(NULL) IS NULL AS null_text,
       snowflake_from_public_base32('ord_10000000000001', NULL) IS NULL AS null_prefix,
       snowflake_to_public_base32(NULL, 'ord_') IS NULL AS null_id2;
SELECT snowflake_to_public(-1, 1);
SELECT snowflake_to_public(-1, 99);
SELECT snowflake_to_public(1, 32);
SELECT snowflake_to_public(1, -1);
SELECT snowflake_from_public(-1, 1);
SELECT snowflake_from_public(1, 2147483647);
SELECT snowflake_to_public_base32(-1);
SELECT snowflake_to_public_base32(-1, 'ord/');
SELECT snowflake_to_public_base32(1, 'ord/');
SELECT snowflake_to_public_base32(1, repeat('p', 64));
SELECT snowflake_from_public_base32('ord_10000000000001', 'ord/');
-- A public text: the prefix, then 14 Crockford base32 digits, the key id's
-- and the public ID's 13, read as the base32 form reads its digits.
SELECT snowflake_from_public_base32('');
SELECT snowflake_from_public_base32('---');
SELECT snowflake_from_public_base32('1');
SELECT snowflake_from_public_base32('1000000000000');
SELECT snowflake_from_public_base32('100000000000000');
SELECT snowflake_from_public_base32('1-000-000-000-000');
SELECT snowflake_from_public_base32('U0000000000000');
SELECT snowflake_from_public_base32('1000000000000U');
SELECT snowflake_from_public_base32('1 0000000000000');
SELECT snowflake_from_public_base32('1000000000000é');
SELECT snowflake_from_public_base32('18000000000000');
SELECT snowflake_from_public_base32('1ZZZZZZZZZZZZZ');
-- Messages quote at most 100 characters of the text, then "...".
SELECT snowflake_from_public_base32(repeat('1', 150));
SELECT snowflake_from_public_base32('18' || repeat('0', 12) || repeat('-', 120));
SELECT snowflake_from_public_base32('ord_10000000000001');
SELECT snowflake_from_public_base32('ord_', 'ord_');
SELECT snowflake_from_public_base32('or', 'ord_');
SELECT snowflake_from_public_base32('Ord_10000000000001', 'ord_');
SELECT snowflake_from_public_base32('ord_1000000000000', 'ord_');
SELECT snowflake_from_public_base32('ord_x-o00000000I', 'ord_');
SELECT snowflake_from_public_base32('ord_8ZZZZZZZZZZZZZ', 'ord_');
