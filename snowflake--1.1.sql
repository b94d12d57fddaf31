/* snowflake--1.1.sql: a fresh install of 1.1 (1.0 plus snowflake--1.0--1.1.sql) */

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION snowflake" to load this file. \quit

-- Generators

CREATE FUNCTION snowflake_nextval()
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_nextval'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_nextval() IS
'next ID of this server''s generator: unique across nodes, increasing on this server';

CREATE FUNCTION snowflake_nextval_batch(count integer)
RETURNS SETOF bigint
AS 'MODULE_PATHNAME', 'snowflake_nextval_batch'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE
ROWS 1000;

COMMENT ON FUNCTION snowflake_nextval_batch(integer) IS
'count consecutive IDs (1 to 1000000), reserved all at once: issued whole or not at all';

-- Decoders: IMMUTABLE because the epoch and layout are fixed for the life of
-- the cluster (the state file refuses a silent change).

CREATE FUNCTION snowflake_decode(id bigint,
    OUT ts timestamptz, OUT node_id integer, OUT sequence integer)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_decode(bigint) IS
'split an ID into its time, node id and sequence number';

CREATE FUNCTION snowflake_timestamp(id bigint)
RETURNS timestamptz
AS 'MODULE_PATHNAME', 'snowflake_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_timestamp(bigint) IS
'the time an ID was minted, to the millisecond';

CREATE FUNCTION snowflake_node_id(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'snowflake_node_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_node_id(bigint) IS
'the node id of the server that minted an ID';

CREATE FUNCTION snowflake_sequence(id bigint)
RETURNS integer
AS 'MODULE_PATHNAME', 'snowflake_sequence'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_sequence(bigint) IS
'the sequence number of an ID within its millisecond';

CREATE FUNCTION snowflake_min_id(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_min_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_min_id(timestamptz) IS
'smallest ID that can carry the millisecond containing ts: WHERE id >= snowflake_min_id(...)';

CREATE FUNCTION snowflake_max_id(ts timestamptz)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_max_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_max_id(timestamptz) IS
'largest ID that can carry the millisecond containing ts';

CREATE FUNCTION snowflake_compose(ts timestamptz, node_id integer, sequence integer)
RETURNS bigint
AS 'MODULE_PATHNAME', 'snowflake_compose'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_compose(timestamptz, integer, integer) IS
'build an ID from its fields, each range-checked: the inverse of snowflake_decode';

-- Monitoring

CREATE FUNCTION snowflake_stats(
    OUT status text,
    OUT node_id integer,
    OUT epoch timestamptz,
    OUT timestamp_bits integer,
    OUT node_bits integer,
    OUT sequence_bits integer,
    OUT last_timestamp timestamptz,
    OUT lead_ms bigint,
    OUT ids_issued bigint,
    OUT borrowed_ms bigint,
    OUT clock_regressions bigint,
    OUT max_clock_regression_ms bigint,
    OUT waits bigint,
    OUT wait_ms bigint,
    OUT refused bigint,
    OUT reserved_until timestamptz,
    OUT reservation_writes bigint,
    OUT stats_reset timestamptz)
RETURNS record
AS 'MODULE_PATHNAME', 'snowflake_stats'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_stats() IS
'state and counters of this server''s snowflake generator';

CREATE VIEW snowflake_stats AS SELECT * FROM snowflake_stats();

COMMENT ON VIEW snowflake_stats IS
'state and counters of this server''s snowflake generator';

GRANT SELECT ON snowflake_stats TO PUBLIC;

CREATE FUNCTION snowflake_stats_reset()
RETURNS void
AS 'MODULE_PATHNAME', 'snowflake_stats_reset'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION snowflake_stats_reset() IS
'zero the counters of snowflake_stats (the generator state is untouched)';

REVOKE ALL ON FUNCTION snowflake_stats_reset() FROM PUBLIC;

-- Operations

CREATE FUNCTION snowflake_adopt_layout(force boolean DEFAULT false)
RETURNS void
AS 'MODULE_PATHNAME', 'snowflake_adopt_layout'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION snowflake_adopt_layout(boolean) IS
'accept a changed epoch or layout after a restart refused it; force when new IDs would not all be larger than old ones (superuser only; read the README first)';

REVOKE ALL ON FUNCTION snowflake_adopt_layout(boolean) FROM PUBLIC;

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
