/* snowflake--1.1.sql: a fresh install of 1.1 (1.0 plus snowflake--1.0--1.1.sql) */

-- The extension is trusted: a database owner without superuser can install
-- it, and this script then runs as the bootstrap superuser in a schema that
-- other users may be able to create objects in.  So every reference is
-- qualified: types and built-in objects with pg_catalog, our own objects with
-- @extschema@ (hence relocatable = false in snowflake.control), and nothing
-- is looked up through search_path.

-- complain if script is sourced in psql, rather than via CREATE EXTENSION
\echo Use "CREATE EXTENSION snowflake" to load this file. \quit

-- Generators

CREATE FUNCTION @extschema@.snowflake_nextval()
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_nextval'
LANGUAGE C VOLATILE PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_nextval() IS
'next ID of this server''s generator: unique across nodes, increasing on this server';

CREATE FUNCTION @extschema@.snowflake_nextval_batch(count pg_catalog.int4)
RETURNS SETOF pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_nextval_batch'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE
ROWS 1000;

COMMENT ON FUNCTION @extschema@.snowflake_nextval_batch(pg_catalog.int4) IS
'count consecutive IDs (1 to 1000000), reserved all at once: issued whole or not at all';

-- Decoders: IMMUTABLE because the epoch and layout are fixed for the life of
-- the cluster (the state file refuses a silent change).

CREATE FUNCTION @extschema@.snowflake_decode(id pg_catalog.int8,
    OUT ts pg_catalog.timestamptz, OUT node_id pg_catalog.int4, OUT sequence pg_catalog.int4)
RETURNS pg_catalog.record
AS 'MODULE_PATHNAME', 'snowflake_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_decode(pg_catalog.int8) IS
'split an ID into its time, node id and sequence number';

CREATE FUNCTION @extschema@.snowflake_timestamp(id pg_catalog.int8)
RETURNS pg_catalog.timestamptz
AS 'MODULE_PATHNAME', 'snowflake_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_timestamp(pg_catalog.int8) IS
'the time an ID was minted, to the millisecond';

CREATE FUNCTION @extschema@.snowflake_node_id(id pg_catalog.int8)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'snowflake_node_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_node_id(pg_catalog.int8) IS
'the node id of the server that minted an ID';

CREATE FUNCTION @extschema@.snowflake_sequence(id pg_catalog.int8)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'snowflake_sequence'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_sequence(pg_catalog.int8) IS
'the sequence number of an ID within its millisecond';

CREATE FUNCTION @extschema@.snowflake_min_id(ts pg_catalog.timestamptz)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_min_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_min_id(pg_catalog.timestamptz) IS
'smallest ID that can carry the millisecond containing ts: WHERE id >= snowflake_min_id(...)';

CREATE FUNCTION @extschema@.snowflake_max_id(ts pg_catalog.timestamptz)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_max_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_max_id(pg_catalog.timestamptz) IS
'largest ID that can carry the millisecond containing ts';

CREATE FUNCTION @extschema@.snowflake_compose(ts pg_catalog.timestamptz, node_id pg_catalog.int4, sequence pg_catalog.int4)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_compose'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_compose(pg_catalog.timestamptz, pg_catalog.int4, pg_catalog.int4) IS
'build an ID from its fields, each range-checked: the inverse of snowflake_decode';

-- Monitoring

CREATE FUNCTION @extschema@.snowflake_stats(
    OUT status pg_catalog.text,
    OUT node_id pg_catalog.int4,
    OUT epoch pg_catalog.timestamptz,
    OUT timestamp_bits pg_catalog.int4,
    OUT node_bits pg_catalog.int4,
    OUT sequence_bits pg_catalog.int4,
    OUT last_timestamp pg_catalog.timestamptz,
    OUT lead_ms pg_catalog.int8,
    OUT ids_issued pg_catalog.int8,
    OUT borrowed_ms pg_catalog.int8,
    OUT clock_regressions pg_catalog.int8,
    OUT max_clock_regression_ms pg_catalog.int8,
    OUT waits pg_catalog.int8,
    OUT wait_ms pg_catalog.int8,
    OUT refused pg_catalog.int8,
    OUT reserved_until pg_catalog.timestamptz,
    OUT reservation_writes pg_catalog.int8,
    OUT stats_reset pg_catalog.timestamptz)
RETURNS pg_catalog.record
AS 'MODULE_PATHNAME', 'snowflake_stats'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_stats() IS
'state and counters of this server''s snowflake generator';

CREATE VIEW @extschema@.snowflake_stats AS SELECT * FROM @extschema@.snowflake_stats();

COMMENT ON VIEW @extschema@.snowflake_stats IS
'state and counters of this server''s snowflake generator';

GRANT SELECT ON @extschema@.snowflake_stats TO PUBLIC;

CREATE FUNCTION @extschema@.snowflake_stats_reset()
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'snowflake_stats_reset'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_stats_reset() IS
'zero the counters of snowflake_stats (the generator state is untouched)';

REVOKE ALL ON FUNCTION @extschema@.snowflake_stats_reset() FROM PUBLIC;

-- Operations

CREATE FUNCTION @extschema@.snowflake_adopt_layout(force pg_catalog.bool DEFAULT false)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'snowflake_adopt_layout'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.snowflake_adopt_layout(pg_catalog.bool) IS
'accept a changed epoch or layout after a restart refused it; force when new IDs would not all be larger than old ones (superuser only; read the README first)';

REVOKE ALL ON FUNCTION @extschema@.snowflake_adopt_layout(pg_catalog.bool) FROM PUBLIC;
