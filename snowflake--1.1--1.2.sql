/* snowflake--1.1--1.2.sql: update an installed 1.1 to 1.2 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.2'" to load this file. \quit

-- Each SQL object is written once: there is no snowflake--1.2.sql.  A fresh
-- CREATE EXTENSION snowflake runs snowflake--1.0.sql, snowflake--1.0--1.1.sql
-- and then this script (see the head of snowflake--1.0--1.1.sql for the
-- rules every update script follows: qualify every name, add objects or
-- CREATE OR REPLACE them, never drop one that users' objects may depend on).

-- snowflake.node_id_span (1.2): a server and its standbys take node ids
-- node_id .. node_id + node_id_span - 1 in turn, one per timeline.  The stats
-- row gains the node id this server's IDs carry now and the span, appended
-- after stats_reset as the 1.1 script describes.

ALTER TYPE @extschema@.snowflake_stats_row
    ADD ATTRIBUTE node_id_in_use pg_catalog.int4,
    ADD ATTRIBUTE node_id_span pg_catalog.int4;

CREATE OR REPLACE VIEW @extschema@.snowflake_stats AS
SELECT s.status, s.node_id, s.epoch, s.timestamp_bits, s.node_bits, s.sequence_bits,
       s.last_timestamp, s.lead_ms, s.ids_issued, s.borrowed_ms,
       s.clock_regressions, s.max_clock_regression_ms, s.waits, s.wait_ms,
       s.refused, s.reserved_until, s.reservation_writes, s.stats_reset,
       -- 1.1
       s.background_writes, s.caller_writes, s.caller_wait_ms,
       -- 1.2
       s.node_id_in_use, s.node_id_span
  FROM @extschema@.snowflake_stats_all() s;

-- A claim covers every node id of the span: the standbys of the server that
-- claims share its system identifier, and mint with the other node ids of
-- the span once promoted.  All or none: a node id of the span that another
-- server holds refuses the whole claim.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_claim_node(server_name pg_catalog.text DEFAULT NULL)
RETURNS pg_catalog.int4
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp name;
    node integer;
    span integer;
    sysid bigint;
    name text;
BEGIN
    SELECT n.nspname INTO nsp
      FROM pg_catalog.pg_extension e
      JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'snowflake';
    -- snowflake_stats_all() raises 55000 when the library is not preloaded.
    EXECUTE format('SELECT node_id, node_id_span FROM %I.snowflake_stats_all()', nsp)
        INTO node, span;
    IF node IS NULL THEN
        RAISE EXCEPTION USING
            ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = 'parameter "snowflake.node_id" is not set',
            HINT = 'Set "snowflake.node_id" in postgresql.conf and restart the server before claiming a node id.';
    END IF;
    SELECT c.system_identifier INTO sysid FROM pg_catalog.pg_control_system() c;
    name := coalesce(server_name,
                     nullif(pg_catalog.current_setting('cluster_name'), ''),
                     sysid::text);
    FOR i IN 0 .. span - 1 LOOP
        EXECUTE format('INSERT INTO %I.snowflake_node_claims (node_id, system_identifier, server_name) VALUES ($1, $2, $3)', nsp)
            USING node + i, sysid, name;
    END LOOP;
    RETURN node;
END
$$;

COMMENT ON FUNCTION @extschema@.snowflake_claim_node(pg_catalog.text) IS
'record in snowflake_node_claims that this server (its system identifier) mints with its node id, and with the next ones of snowflake.node_id_span; fails if another server claimed one of them (superuser only)';
