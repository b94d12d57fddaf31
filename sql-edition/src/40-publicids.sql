-- Public IDs (docs/public-ids.md): FF1 (NIST SP 800-38G) over the 63 bits
-- of IDs on AES, so that an ID can be shown without telling when it was
-- made or how many came before it; the C extension's functions, results
-- and errors (src/ff1.c, src/publicid.c), with pgcrypto's AES in place of
-- libcrypto's: each round encrypts one block with
-- encrypt(block, key, 'aes-ecb/pad:none').  test/t/066_sql_edition_decoders.pl
-- compares both on random IDs, the edges and every error, and runs
-- sql/publicid.sql against the edition.
--
-- FF1 with radix 2, 63 digits and no tweak: the halves A (the 31 high
-- bits) and B (the 32 low ones); P, FF1's first block, is fixed, so the
-- CBC-MAC state after it is AES_K(P) (the "mac" below, computed once per
-- key); each of the ten rounds encrypts mac xor Q, Q being eleven zero
-- bytes, the round number and B's (or, decrypting, A's) four bytes, and
-- adds the low 31 or 32 bits of the result's first eight bytes to the other
-- half.
--
-- Configured keys: where the C extension reads a key file named by a
-- setting (never a setting's value: docs/public-ids.md says why), the
-- edition keeps its keys in a table that only its owner (the role that
-- installed it) and superusers can read, set with snowflake_set_public_key().
-- The functions that use them run as the owner (SECURITY DEFINER, a fixed
-- search_path) and return only what they compute; no function returns a
-- key, and no error shows one.

-- pgcrypto's AES, one block.  pgcrypto is found where it is installed, in
-- whichever schema: this function looks it up at each call, and fails
-- (55000) while it is not installed; when pgcrypto is there as the edition
-- is installed (or updated), the DO statement below replaces it with one
-- bound to pgcrypto's encrypt() when it is created (a SQL body: pgcrypto
-- then cannot be dropped while the edition uses it, short of CASCADE).
-- Either way only pgcrypto's own encrypt(bytea, bytea, text) is called,
-- never another function of that name a search_path could bring.
CREATE FUNCTION @extschema@._snowflake_aes(block pg_catalog.bytea, key pg_catalog.bytea)
RETURNS pg_catalog.bytea
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    pgcrypto_schema name;
    result bytea;
BEGIN
    SELECT n.nspname INTO pgcrypto_schema
      FROM pg_extension e JOIN pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'pgcrypto';
    IF pgcrypto_schema IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = 'public IDs in the SQL edition of snowflake need the pgcrypto extension',
            HINT = 'Install it in this database: CREATE EXTENSION pgcrypto.';
    END IF;
    EXECUTE format('SELECT %I.encrypt($1, $2, $3)', pgcrypto_schema)
      INTO result USING block, key, 'aes-ecb/pad:none'::text;
    RETURN result;
END
$$;

DO $do$
DECLARE
    pgcrypto_schema pg_catalog.name;
BEGIN
    SELECT n.nspname INTO pgcrypto_schema
      FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'pgcrypto';
    IF pgcrypto_schema IS NOT NULL THEN
        EXECUTE pg_catalog.format($f$
CREATE OR REPLACE FUNCTION @extschema@._snowflake_aes(block pg_catalog.bytea, key pg_catalog.bytea)
RETURNS pg_catalog.bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN %I.encrypt(block, key, 'aes-ecb/pad:none'::pg_catalog.text)$f$, pgcrypto_schema);
    END IF;
END
$do$;

COMMENT ON FUNCTION @extschema@._snowflake_aes(pg_catalog.bytea, pg_catalog.bytea) IS
'one AES block under a key, with pgcrypto''s encrypt() (internal)';

-- AES_K(P): P is [1, 2, 1], the radix 2 in three bytes, [10], u = 31, the
-- length 63 in four bytes and the tweak's length 0 in four.
CREATE FUNCTION @extschema@._snowflake_ff1_mac(key pg_catalog.bytea)
RETURNS pg_catalog.bytea
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN @extschema@._snowflake_aes('\x0102010000020a1f0000003f00000000'::pg_catalog.bytea, key);

COMMENT ON FUNCTION @extschema@._snowflake_ff1_mac(pg_catalog.bytea) IS
'the CBC-MAC state after FF1''s block P for 63 binary digits (internal)';

-- FF1's ten rounds over x (0 to 2^63 - 1) under the key whose state after
-- P is mac; decrypting when not encrypt.
CREATE FUNCTION @extschema@._snowflake_ff1(x pg_catalog.int8, key pg_catalog.bytea, mac pg_catalog.bytea,
                                           encrypt pg_catalog.bool)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    a int8 := x >> 32;
    b int8 := x & 4294967295;
    head CONSTANT bytea := substr(mac, 1, 11);
    -- (PostgreSQL's <<, |, & and # share one precedence, left to right.)
    tail CONSTANT int8 := (get_byte(mac, 11)::int8 << 32) | (get_byte(mac, 12)::int8 << 24)
                          | (get_byte(mac, 13)::int8 << 16) | (get_byte(mac, 14)::int8 << 8) | get_byte(mac, 15);
    i int;
    r bytea;
    y int8;
    c int8;
BEGIN
    FOR k IN 0 .. 9 LOOP
        i := CASE WHEN encrypt THEN k ELSE 9 - k END;
        -- mac xor Q: its last five bytes xor the round number and the half.
        r := @extschema@._snowflake_aes(
                 head || substr(int8send(tail # ((i::int8 << 32) | CASE WHEN encrypt THEN b ELSE a END)), 4, 5),
                 key);
        y := (get_byte(r, 4)::int8 << 24) | (get_byte(r, 5)::int8 << 16) | (get_byte(r, 6)::int8 << 8) | get_byte(r, 7);
        IF encrypt THEN
            c := (a + y) & CASE WHEN i % 2 = 0 THEN 2147483647 ELSE 4294967295 END;
            a := b;
            b := c;
        ELSE
            c := (b - y) & CASE WHEN i % 2 = 0 THEN 2147483647 ELSE 4294967295 END;
            b := a;
            a := c;
        END IF;
    END LOOP;
    RETURN (a << 32) | b;
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_ff1(pg_catalog.int8, pg_catalog.bytea, pg_catalog.bytea, pg_catalog.bool) IS
'FF1 over 63 bits, one way or the other (internal)';

-- The errors the C extension raises before it encrypts: a negative ID or
-- public ID (22003), a key that is not 16, 24 or 32 bytes (22023), a key id
-- out of range (22023).
CREATE FUNCTION @extschema@._snowflake_public_check(x pg_catalog.int8, public_id pg_catalog.bool,
                                                    key pg_catalog.bytea, key_id pg_catalog.int4)
RETURNS pg_catalog.void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF x < 0 AND public_id THEN
        RAISE EXCEPTION USING ERRCODE = 'numeric_value_out_of_range',
            MESSAGE = format('value %s is out of range for a public snowflake ID', x),
            DETAIL = 'Public snowflake IDs are between 0 and 9223372036854775807.';
    ELSIF x < 0 THEN
        RAISE EXCEPTION USING ERRCODE = 'numeric_value_out_of_range',
            MESSAGE = format('value %s is out of range for a snowflake ID', x),
            DETAIL = 'Snowflake IDs are between 0 and 9223372036854775807.';
    ELSIF octet_length(key) NOT IN (16, 24, 32) THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'invalid AES key length',
            DETAIL = format('An AES key has 16, 24 or 32 bytes; this one has %s.', octet_length(key));
    ELSIF key_id NOT BETWEEN 0 AND 31 THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('public ID key %s is out of range', key_id),
            DETAIL = 'Key ids are between 0 and 31.';
    END IF;
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_public_check(pg_catalog.int8, pg_catalog.bool, pg_catalog.bytea, pg_catalog.int4) IS
'the errors of a public ID''s arguments (internal)';

CREATE FUNCTION @extschema@.snowflake_encrypt_id(id pg_catalog.int8, key pg_catalog.bytea)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF id < 0 OR octet_length(key) NOT IN (16, 24, 32) THEN
        PERFORM @extschema@._snowflake_public_check(id, false, key, NULL::pg_catalog.int4);
    END IF;
    RETURN @extschema@._snowflake_ff1(id, key, @extschema@._snowflake_ff1_mac(key), true);
END
$$;

COMMENT ON FUNCTION @extschema@.snowflake_encrypt_id(pg_catalog.int8, pg_catalog.bytea) IS
'the public ID of a snowflake ID under an AES key of 16, 24 or 32 bytes: FF1 (NIST SP 800-38G) over its 63 bits';

CREATE FUNCTION @extschema@.snowflake_decrypt_id(public_id pg_catalog.int8, key pg_catalog.bytea)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF public_id < 0 OR octet_length(key) NOT IN (16, 24, 32) THEN
        PERFORM @extschema@._snowflake_public_check(public_id, true, key, NULL::pg_catalog.int4);
    END IF;
    RETURN @extschema@._snowflake_ff1(public_id, key, @extschema@._snowflake_ff1_mac(key), false);
END
$$;

COMMENT ON FUNCTION @extschema@.snowflake_decrypt_id(pg_catalog.int8, pg_catalog.bytea) IS
'the snowflake ID of a public ID made by snowflake_encrypt_id() under the same key';

-- The configured keys, in the edition's schema of its own (00-state.sql):
-- only the owner and superusers can name, read or change them, or lock
-- the table.  At most one is current: the key new public texts are made
-- with (an exclusion constraint, part of the table's definition).  Dumped
-- with the data (pg_dump keeps the keys: a dump is then a secret).  The
-- key and its state after P are kept in hexadecimal, in columns of a
-- bounded length: a row then always fits a page, and the table has no
-- TOAST table.
CREATE TABLE _snowflake._snowflake_public_keys (
    key_id pg_catalog.int4 PRIMARY KEY CHECK (key_id BETWEEN 0 AND 31),
    key pg_catalog.varchar(64) NOT NULL
        CHECK (key::pg_catalog.text COLLATE pg_catalog."C" ~ '^[0-9a-f]{32}([0-9a-f]{16}){0,2}$'),
    mac pg_catalog.varchar(32) NOT NULL,
    current pg_catalog.bool NOT NULL DEFAULT false,
    CONSTRAINT _snowflake_public_keys_one_current EXCLUDE (current WITH pg_catalog.=) WHERE (current)
);

COMMENT ON TABLE _snowflake._snowflake_public_keys IS
'the keys of public IDs (internal: set them with snowflake_set_public_key(); only the owner reads them)';

REVOKE ALL ON TABLE _snowflake._snowflake_public_keys FROM PUBLIC;

-- @extension-only-begin
SELECT pg_catalog.pg_extension_config_dump('_snowflake._snowflake_public_keys', '');
-- @extension-only-end

-- The detail that lists the configured keys, worded as keyring.c words it.
CREATE FUNCTION @extschema@._snowflake_public_key_list()
RETURNS pg_catalog.text
LANGUAGE plpgsql STABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ids text[] := ARRAY(SELECT key_id::text FROM _snowflake._snowflake_public_keys ORDER BY key_id);
    n CONSTANT int := cardinality(ids);
BEGIN
    RETURN CASE
        WHEN n = 0 THEN 'No public ID key is configured.'
        WHEN n = 1 THEN format('The configured key is %s.', ids[1])
        ELSE format('The configured keys are %s and %s.', array_to_string(ids[1:n - 1], ', '), ids[n]) END;
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_public_key_list() IS
'the configured key ids, as an error detail (internal)';

-- A configured key and its state after P; 22023 when it is not there.
CREATE FUNCTION @extschema@._snowflake_public_key(key_id pg_catalog.int4, OUT key pg_catalog.bytea,
                                                  OUT mac pg_catalog.bytea)
RETURNS pg_catalog.record
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    SELECT decode(k.key, 'hex'), decode(k.mac, 'hex') INTO key, mac
      FROM _snowflake._snowflake_public_keys k WHERE k.key_id = $1;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('public ID key %s is not configured', $1),
            DETAIL = @extschema@._snowflake_public_key_list(),
            HINT = 'The SQL edition''s keys are set with snowflake_set_public_key().';
    END IF;
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_public_key(pg_catalog.int4) IS
'a configured key of public IDs (internal: its owner''s only)';

CREATE FUNCTION @extschema@.snowflake_to_public(id pg_catalog.int8, key_id pg_catalog.int4)
RETURNS pg_catalog.int8
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    k record;
BEGIN
    PERFORM @extschema@._snowflake_public_check(id, false, '\x00000000000000000000000000000000'::pg_catalog.bytea, key_id);
    k := @extschema@._snowflake_public_key(key_id);
    RETURN @extschema@._snowflake_ff1(id, k.key, k.mac, true);
END
$$;

COMMENT ON FUNCTION @extschema@.snowflake_to_public(pg_catalog.int8, pg_catalog.int4) IS
'the public ID of a snowflake ID under the configured key key_id (0 to 31)';

CREATE FUNCTION @extschema@.snowflake_from_public(public_id pg_catalog.int8, key_id pg_catalog.int4)
RETURNS pg_catalog.int8
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    k record;
BEGIN
    PERFORM @extschema@._snowflake_public_check(public_id, true, '\x00000000000000000000000000000000'::pg_catalog.bytea, key_id);
    k := @extschema@._snowflake_public_key(key_id);
    RETURN @extschema@._snowflake_ff1(public_id, k.key, k.mac, false);
END
$$;

COMMENT ON FUNCTION @extschema@.snowflake_from_public(pg_catalog.int8, pg_catalog.int4) IS
'the snowflake ID of a public ID made by snowflake_to_public() with the configured key key_id';

-- The public text: the prefix, the current key's id as one Crockford base32
-- digit, the public ID's 13.
CREATE FUNCTION @extschema@._snowflake_to_public_base32(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    k record;
BEGIN
    PERFORM @extschema@._snowflake_public_check(id, false, '\x00000000000000000000000000000000'::pg_catalog.bytea, 0);
    PERFORM @extschema@._snowflake_prefix_check(prefix);
    SELECT p.key_id, decode(p.key, 'hex') AS key, decode(p.mac, 'hex') AS mac INTO k
      FROM _snowflake._snowflake_public_keys p WHERE p.current;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = 'no public ID key is marked current',
            DETAIL = @extschema@._snowflake_public_key_list(),
            HINT = 'Mark the key that new public IDs are made with current: snowflake_set_public_key(key_id, key, true).';
    END IF;
    RETURN prefix || substr('0123456789ABCDEFGHJKMNPQRSTVWXYZ', k.key_id + 1, 1)
        || @extschema@.snowflake_to_base32(@extschema@._snowflake_ff1(id, k.key, k.mac, true));
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_to_public_base32(pg_catalog.int8, pg_catalog.text) IS
'the public text of an ID after a prefix (internal: its owner''s only)';

-- A public text's key id and public ID, read as src/textform.c reads it:
-- the prefix (22023 if it is not allowed, 22P02 if the text does not start
-- with it), then 14 Crockford base32 digits, hyphens skipped, either case,
-- I and L read as 1, O as 0 (22P02: the first character that is not a
-- digit or is one too many, else too few digits), the last 13 at most
-- 2^63 - 1 (22003).  The text the encoder writes takes a shorter path.
CREATE FUNCTION @extschema@._snowflake_public_text_decode(public_text pg_catalog.text, prefix pg_catalog.text,
                                                          OUT key_id pg_catalog.int4,
                                                          OUT public_id pg_catalog.int8)
RETURNS pg_catalog.record
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    alphabet CONSTANT text := '0123456789ABCDEFGHJKMNPQRSTVWXYZ';
    plen CONSTANT int := length(prefix);
    -- Messages quote at most 100 characters of the input, then "...".
    quoted CONSTANT text := CASE WHEN length(public_text) > 100 THEN left(public_text, 100) || '...' ELSE public_text END;
    syntax CONSTANT text := format('invalid input syntax for a public snowflake ID: "%s"', quoted);
    chars text[];
    c text;
    v int;
    pos int := 0;
    n int := 0;
    digits text := '';
BEGIN
    PERFORM @extschema@._snowflake_prefix_check(prefix);
    IF starts_with(public_text COLLATE "C", prefix)
       AND substr(public_text, plen + 1) COLLATE "C" ~ '^[0-9A-HJKMNP-TV-Z][0-7][0-9A-HJKMNP-TV-Z]{12}$' THEN
        key_id := strpos(alphabet, substr(public_text, plen + 1, 1)) - 1;
        public_id := @extschema@.snowflake_from_base32(substr(public_text, plen + 2));
        RETURN;
    END IF;

    chars := string_to_array(public_text, NULL);
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
        CONTINUE WHEN pos <= plen OR c = '-';
        v := strpos(alphabet, translate(c, 'abcdefghjkmnpqrstvwxyzIiLlOo', 'ABCDEFGHJKMNPQRSTVWXYZ111100')) - 1;
        IF v < 0 THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_text_representation', MESSAGE = syntax,
                DETAIL = format('Character "%s" at position %s is not a Crockford base32 digit.', c, pos);
        END IF;
        IF n = 14 THEN
            RAISE EXCEPTION USING ERRCODE = 'invalid_text_representation', MESSAGE = syntax,
                DETAIL = format('Character "%s" at position %s is one digit too many: a public snowflake ID has 14 digits.',
                                c, pos);
        END IF;
        n := n + 1;
        IF n = 1 THEN
            key_id := v;
        ELSE
            digits := digits || substr(alphabet, v + 1, 1);
        END IF;
    END LOOP;
    IF n < 14 THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_text_representation', MESSAGE = syntax,
            DETAIL = format('The text has %s digits; a public snowflake ID has 14.', n);
    END IF;
    IF strpos(alphabet, substr(digits, 1, 1)) > 8 THEN
        RAISE EXCEPTION USING ERRCODE = 'numeric_value_out_of_range',
            MESSAGE = format('value "%s" is out of range for a public snowflake ID', quoted),
            DETAIL = 'After the key id, the 13 digits of a public snowflake ID spell at most "7ZZZZZZZZZZZZ".';
    END IF;
    public_id := @extschema@.snowflake_from_base32(digits);
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_public_text_decode(pg_catalog.text, pg_catalog.text) IS
'the key id and public ID a public text spells after a prefix, with the C extension''s errors (internal)';

CREATE FUNCTION @extschema@._snowflake_from_public_base32(public_text pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    t record;
    k record;
BEGIN
    t := @extschema@._snowflake_public_text_decode(public_text, prefix);
    k := @extschema@._snowflake_public_key(t.key_id);
    RETURN @extschema@._snowflake_ff1(t.public_id, k.key, k.mac, false);
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_from_public_base32(pg_catalog.text, pg_catalog.text) IS
'the ID a public text names after a prefix (internal: its owner''s only)';

CREATE FUNCTION @extschema@.snowflake_to_public_base32(id pg_catalog.int8)
RETURNS pg_catalog.text
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$ BEGIN RETURN @extschema@._snowflake_to_public_base32(id, ''::pg_catalog.text); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_to_public_base32(pg_catalog.int8) IS
'the public text of a snowflake ID: the current key''s id and the public ID under it, 14 Crockford base32 digits';

CREATE FUNCTION @extschema@.snowflake_to_public_base32(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$ BEGIN RETURN @extschema@._snowflake_to_public_base32(id, prefix); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_to_public_base32(pg_catalog.int8, pg_catalog.text) IS
'the public text of a snowflake ID after a prefix: the current key''s id and the public ID under it, 14 Crockford base32 digits';

CREATE FUNCTION @extschema@.snowflake_from_public_base32(public_text pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$ BEGIN RETURN @extschema@._snowflake_from_public_base32(public_text, ''::pg_catalog.text); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_from_public_base32(pg_catalog.text) IS
'the snowflake ID of a public text made by snowflake_to_public_base32(), under the configured key it names';

CREATE FUNCTION @extschema@.snowflake_from_public_base32(public_text pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql STABLE STRICT PARALLEL SAFE
SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$ BEGIN RETURN @extschema@._snowflake_from_public_base32(public_text, prefix); END $$;

COMMENT ON FUNCTION @extschema@.snowflake_from_public_base32(pg_catalog.text, pg_catalog.text) IS
'the snowflake ID of a public text made by snowflake_to_public_base32() with that prefix, under the configured key it names';

-- Add a key (16, 24 or 32 bytes) under a key id (0 to 31), or replace it;
-- current: new public texts are made with it (the key that was current no
-- longer is).  A NULL key removes the key id: texts made with it no longer
-- read.  The owner's and superusers' only.
CREATE FUNCTION @extschema@.snowflake_set_public_key(key_id pg_catalog.int4, key pg_catalog.bytea,
                                                     current pg_catalog.bool DEFAULT false)
RETURNS pg_catalog.int4
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF key_id IS NULL OR key_id NOT BETWEEN 0 AND 31 THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('public ID key %s is out of range', coalesce(key_id::text, 'NULL')),
            DETAIL = 'Key ids are between 0 and 31.';
    END IF;
    IF octet_length(key) NOT IN (16, 24, 32) THEN
        PERFORM @extschema@._snowflake_public_check(0::pg_catalog.int8, false, key, key_id);
    END IF;
    -- (The table found by its OID: the caller may have no USAGE on
    -- _snowflake, which a name would need.)
    IF NOT has_table_privilege((SELECT c.oid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
                                 WHERE n.nspname = '_snowflake' AND c.relname = '_snowflake_public_keys'),
                               'UPDATE') THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = 'permission denied to set a public ID key',
            DETAIL = 'Only the owner of the snowflake objects (the role that installed them) and superusers may set them.';
    END IF;
    IF key IS NULL THEN
        DELETE FROM _snowflake._snowflake_public_keys k WHERE k.key_id = $1;
        RETURN key_id;
    END IF;
    IF coalesce(current, false) THEN
        UPDATE _snowflake._snowflake_public_keys k SET current = false WHERE k.current AND k.key_id <> $1;
    END IF;
    INSERT INTO _snowflake._snowflake_public_keys AS k (key_id, key, mac, current)
    VALUES ($1, encode($2, 'hex'), encode(@extschema@._snowflake_ff1_mac($2), 'hex'), coalesce($3, false))
    ON CONFLICT ON CONSTRAINT _snowflake_public_keys_pkey
    DO UPDATE SET key = EXCLUDED.key, mac = EXCLUDED.mac, current = EXCLUDED.current;
    RETURN key_id;
END
$$;

COMMENT ON FUNCTION @extschema@.snowflake_set_public_key(pg_catalog.int4, pg_catalog.bytea, pg_catalog.bool) IS
'add or replace the key of public IDs key_id (0 to 31; NULL key: remove it), current: the one new public texts are made with (its owner and superusers only)';

REVOKE ALL ON FUNCTION @extschema@.snowflake_set_public_key(pg_catalog.int4, pg_catalog.bytea, pg_catalog.bool) FROM PUBLIC;

-- What reads the keys runs as the owner, called from the functions above;
-- no one else may call it.
REVOKE ALL ON FUNCTION @extschema@._snowflake_public_key(pg_catalog.int4) FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@._snowflake_public_key_list() FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@._snowflake_to_public_base32(pg_catalog.int8, pg_catalog.text) FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@._snowflake_from_public_base32(pg_catalog.text, pg_catalog.text) FROM PUBLIC;
