/* snowflake--1.2--1.3.sql: update an installed 1.2 to 1.3 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.3'" to load this file. \quit

-- Each SQL object is written once: there is no snowflake--1.3.sql.  A fresh
-- CREATE EXTENSION snowflake runs snowflake--1.0.sql and the update scripts
-- up to this one (see the head of snowflake--1.0--1.1.sql for the rules
-- every update script follows: qualify every name, add objects or CREATE OR
-- REPLACE them, never drop one that users' objects may depend on).

-- Public IDs (1.3, docs/public-ids.md): a keyed permutation of the 63-bit
-- IDs, FF1 (NIST SP 800-38G) on AES from OpenSSL's libcrypto, so that an
-- ID can be shown without telling when it was made or how many came
-- before it.  Every ID maps to exactly one public ID, 0 to 2^63 - 1, and
-- back.
--
-- With the key as an argument (16, 24 or 32 bytes: AES-128, -192, -256):
-- IMMUTABLE, the result depends on the arguments alone.
CREATE FUNCTION @extschema@.snowflake_encrypt_id(id pg_catalog.int8, key pg_catalog.bytea)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_encrypt_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_encrypt_id(pg_catalog.int8, pg_catalog.bytea) IS
'the public ID of a snowflake ID under an AES key of 16, 24 or 32 bytes: FF1 (NIST SP 800-38G) over its 63 bits';

CREATE FUNCTION @extschema@.snowflake_decrypt_id(public_id pg_catalog.int8, key pg_catalog.bytea)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_decrypt_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_decrypt_id(pg_catalog.int8, pg_catalog.bytea) IS
'the snowflake ID of a public ID made by snowflake_encrypt_id() under the same key';

-- With a configured key, named by its id (0 to 31), from the key file that
-- the setting snowflake.public_keys_file names: STABLE, the keys can
-- change between statements.
CREATE FUNCTION @extschema@.snowflake_to_public(id pg_catalog.int8, key_id pg_catalog.int4)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_to_public'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_to_public(pg_catalog.int8, pg_catalog.int4) IS
'the public ID of a snowflake ID under the configured key key_id (0 to 31)';

CREATE FUNCTION @extschema@.snowflake_from_public(public_id pg_catalog.int8, key_id pg_catalog.int4)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_from_public'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_from_public(pg_catalog.int8, pg_catalog.int4) IS
'the snowflake ID of a public ID made by snowflake_to_public() with the configured key key_id';

-- The public text form: the prefix, the key id as one Crockford base32
-- digit, and the public ID's 13 (the base32 text form's): made with the key
-- marked current, read with the key the text names, so that texts made
-- before a new key became current still read.
CREATE FUNCTION @extschema@.snowflake_to_public_base32(id pg_catalog.int8)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'snowflake_to_public_base32'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_to_public_base32(pg_catalog.int8) IS
'the public text of a snowflake ID: the current key''s id and the public ID under it, 14 Crockford base32 digits';

CREATE FUNCTION @extschema@.snowflake_to_public_base32(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'snowflake_to_public_base32'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_to_public_base32(pg_catalog.int8, pg_catalog.text) IS
'the public text of a snowflake ID after a prefix: the current key''s id and the public ID under it, 14 Crockford base32 digits';

CREATE FUNCTION @extschema@.snowflake_from_public_base32(public_text pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_from_public_base32'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_from_public_base32(pg_catalog.text) IS
'the snowflake ID of a public text made by snowflake_to_public_base32(), under the configured key it names';

CREATE FUNCTION @extschema@.snowflake_from_public_base32(public_text pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_from_public_base32'
LANGUAGE C STABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_from_public_base32(pg_catalog.text, pg_catalog.text) IS
'the snowflake ID of a public text made by snowflake_to_public_base32() with that prefix, under the configured key it names';
