/* snowflake--1.1--1.2.sql: update an installed 1.1 to 1.2 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.2'" to load this file. \quit

-- A fresh CREATE EXTENSION snowflake runs snowflake--1.0.sql, then
-- snowflake--1.0--1.1.sql, then this script (there is no install script of
-- a later version: see the header of snowflake--1.0--1.1.sql).  Qualify
-- every name (pg_catalog., @extschema@.): a database owner may run it.

-- The last key this session minted (1.2), for code that cannot use
-- RETURNING, like lastval() for sequences.  VOLATILE and PARALLEL UNSAFE as
-- lastval() is: its value is the backend's own, so a query that calls it
-- runs in the leader alone, with every snowflake_nextval() of that query.
CREATE FUNCTION @extschema@.snowflake_lastval()
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_lastval'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.snowflake_lastval() IS
'the last ID snowflake_nextval() or snowflake_nextval_batch() handed to this session (of a batch, its largest); an error before the first';
