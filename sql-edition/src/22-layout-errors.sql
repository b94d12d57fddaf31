-- The error PostgreSQL's time input gives a layout's epoch= text (its
-- message), or NULL when the text is a time it reads; the parsers of a
-- layout argument (10-layout.sql) raise the layout's error with it.
--
-- PostgreSQL 16 and later ask pg_input_error_info(), which reads the text
-- as the cast would, without raising.  15 has no such function: there the
-- cast's error is caught, which takes a subtransaction, and a function
-- that may start one must be PARALLEL UNSAFE (a PARALLEL SAFE or
-- RESTRICTED one can be run while the query is in parallel mode, where no
-- subtransaction can start); so on 15 this function and every function
-- that may call it, the parsers of a layout argument and the decoders,
-- bounds and compose that take one, are PARALLEL UNSAFE, and a query that
-- calls them makes no parallel plan.  Which of the two is created is
-- decided when the script runs (sql-edition/build.pl turns the block into
-- a DO statement).
-- @server-version-below 160000
CREATE FUNCTION @extschema@._snowflake_time_error(value pg_catalog.text)
RETURNS pg_catalog.text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    PERFORM value::timestamptz;
    RETURN NULL;
EXCEPTION WHEN OTHERS THEN
    RETURN SQLERRM;
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_time_error(pg_catalog.text) IS
'the message of the time input''s error for a text, NULL when it reads it (internal)';

ALTER FUNCTION @extschema@._snowflake_parse_epoch(pg_catalog.text, pg_catalog.text) PARALLEL UNSAFE;
ALTER FUNCTION @extschema@._snowflake_parse_layout(pg_catalog.text, pg_catalog.bool) PARALLEL UNSAFE;
ALTER FUNCTION @extschema@._snowflake_layout_parse(pg_catalog.text) PARALLEL UNSAFE;
ALTER FUNCTION @extschema@._snowflake_layout(pg_catalog.text) PARALLEL UNSAFE;
ALTER FUNCTION @extschema@.snowflake_timestamp(pg_catalog.int8, pg_catalog.text) PARALLEL UNSAFE;
ALTER FUNCTION @extschema@.snowflake_node_id(pg_catalog.int8, pg_catalog.text) PARALLEL UNSAFE;
ALTER FUNCTION @extschema@.snowflake_sequence(pg_catalog.int8, pg_catalog.text) PARALLEL UNSAFE;
ALTER FUNCTION @extschema@.snowflake_decode(pg_catalog.int8, pg_catalog.text) PARALLEL UNSAFE;
ALTER FUNCTION @extschema@.snowflake_min_id(pg_catalog.timestamptz, pg_catalog.text) PARALLEL UNSAFE;
ALTER FUNCTION @extschema@.snowflake_max_id(pg_catalog.timestamptz, pg_catalog.text) PARALLEL UNSAFE;
ALTER FUNCTION @extschema@.snowflake_compose(pg_catalog.timestamptz, pg_catalog.int4, pg_catalog.int4, pg_catalog.text) PARALLEL UNSAFE;
-- @server-version-else
CREATE FUNCTION @extschema@._snowflake_time_error(value pg_catalog.text)
RETURNS pg_catalog.text
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN (SELECT e.message FROM pg_catalog.pg_input_error_info(value, 'timestamptz') e);

COMMENT ON FUNCTION @extschema@._snowflake_time_error(pg_catalog.text) IS
'the message of the time input''s error for a text, NULL when it reads it (internal)';
-- @server-version-end
