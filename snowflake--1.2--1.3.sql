/* snowflake--1.2--1.3.sql: update an installed 1.2 to 1.3 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.3'" to load this file. \quit

-- Each SQL object is written once: there is no snowflake--1.3.sql.  A fresh
-- CREATE EXTENSION snowflake runs snowflake--1.0.sql and the update scripts
-- up to this one (see the head of snowflake--1.0--1.1.sql for the rules
-- every update script follows: qualify every name, add objects or CREATE OR
-- REPLACE them, never drop one that users' objects may depend on).
