--
-- setup: create the extension and check how its objects are declared; and
-- the helper the later files share (each runs in a session of its own).
--
CREATE EXTENSION snowflake;

SELECT extversion FROM pg_catalog.pg_extension WHERE extname = 'snowflake';

-- Volatility, strictness and parallel labels are part of the contract:
-- generators VOLATILE, decoders IMMUTABLE STRICT, all labelled PARALLEL.
SELECT p.oid::regprocedure AS function,
       p.provolatile AS volatility,
       p.proisstrict AS strict,
       p.proparallel AS parallel,
       p.proretset AS returns_set,
       obj_description(p.oid, 'pg_proc') IS NOT NULL AS commented
  FROM pg_catalog.pg_proc p
 WHERE p.proname LIKE 'snowflake\_%'
 ORDER BY 1::text;

-- Only superusers may reset the counters, adopt a layout or a node id, or
-- confirm a restored server's node id; claims and their removal are for
-- superusers and the role that created the extension.
SELECT p.proname, has_function_privilege('public', p.oid, 'EXECUTE') AS public_execute
  FROM pg_catalog.pg_proc p
 WHERE p.proname IN ('snowflake_stats_reset', 'snowflake_adopt_layout', 'snowflake_nextval',
                     'snowflake_claim_node', 'snowflake_unclaim_node',
                     'snowflake_adopt_node_id', 'snowflake_confirm_restore')
 ORDER BY 1;

-- The settings, their defaults as configured by test/snowflake.conf, and
-- their contexts: what decides uniqueness is postmaster-only.
SELECT name, setting, unit, context, vartype, min_val, max_val
  FROM pg_catalog.pg_settings
 WHERE name LIKE 'snowflake.%'
 ORDER BY name;

-- The SQLSTATE of a statement, or 'ok' (errors.sql, foreign.sql).
CREATE SCHEMA regress;
GRANT USAGE ON SCHEMA regress TO PUBLIC;
CREATE FUNCTION regress.sqlstate_of(query text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE query;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE;
END
$$;
