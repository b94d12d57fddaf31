/* snowflake--1.0--1.1.sql: update an installed 1.0 to 1.1 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.1'" to load this file. \quit

-- Every object added here is added to snowflake--1.1.sql too: an update from
-- 1.0 must leave the same objects as a fresh install of 1.1.

-- Decoding IDs of other layouts (1.1).  The same C functions as the
-- one-argument decoders, with a layout as the last argument: a preset
-- ('twitter', 'discord', 'instagram', 'sonyflake', 'mastodon', 'pgedge') or a
-- spelled-out layout.  IMMUTABLE: the result depends on the arguments alone
-- (the presets never change), so they serve in indexes and partition bounds.

CREATE FUNCTION snowflake_decode(id bigint, layout text,
    OUT ts timestamptz, OUT node_id integer, OUT sequence integer,
    OUT node_fields jsonb)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_decode(bigint, text) IS
'split an ID of the given layout into its time, node id, sequence number and named node fields';

CREATE FUNCTION snowflake_timestamp(id bigint, layout text)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'snowflake_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_timestamp(bigint, text) IS
'the time an ID of the given layout was minted';

CREATE FUNCTION snowflake_node_id(id bigint, layout text)
RETURNS integer
AS 'MODULE_PATHNAME', 'snowflake_node_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_node_id(bigint, text) IS
'the node field of an ID of the given layout (all its parts together)';

CREATE FUNCTION snowflake_sequence(id bigint, layout text)
RETURNS integer
AS 'MODULE_PATHNAME', 'snowflake_sequence'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_sequence(bigint, text) IS
'the sequence field of an ID of the given layout';

CREATE FUNCTION snowflake_min_id(ts timestamptz, layout text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_min_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_min_id(timestamptz, text) IS
'smallest ID of the given layout that can carry the time unit containing ts';

CREATE FUNCTION snowflake_max_id(ts timestamptz, layout text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_max_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_max_id(timestamptz, text) IS
'largest ID of the given layout that can carry the time unit containing ts';

CREATE FUNCTION snowflake_compose(ts timestamptz, node_id integer, sequence integer, layout text)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_compose'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_compose(timestamptz, integer, integer, text) IS
'build an ID of the given layout from its fields, each range-checked';
