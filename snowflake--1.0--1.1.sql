/* snowflake--1.0--1.1.sql: update an installed 1.0 to 1.1 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.1'" to load this file. \quit

-- Every object added here is added to snowflake--1.1.sql too: an update from
-- 1.0 must leave the same objects as a fresh install of 1.1.

-- 1.1 is trusted (snowflake.control): a database owner without superuser
-- may create and update it.  The objects of 1.0 are unchanged; only the
-- fresh install script was rewritten to qualify every reference, which
-- leaves the same catalog entries as 1.0's unqualified ones.  The update
-- takes "trusted" and "relocatable = false" from the control file.
