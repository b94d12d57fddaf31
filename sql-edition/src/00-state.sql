-- The SQL edition's state: three sequences, no table.
--
-- _snowflake_id_seq holds the last key taken, whole (time, node and
-- sequence fields as the key carries them).  snowflake_nextval() takes the
-- next key with nextval() while holding a shared advisory lock; a call that
-- finds the key behind the clock, in another node field (4096 keys taken in
-- one millisecond carry into the node field) or absent moves the sequence
-- forward with setval() under the exclusive lock (30-generator.sql).  A
-- sequence is never set back by a crash: nextval() logs ahead of the value it
-- returns, and setval() logs at once, both before the transaction that took
-- the key commits.  CACHE 1: a cache would hand each session a range of its
-- own, out of the order of the calls, and setval() could not move it.
CREATE SEQUENCE @extschema@._snowflake_id_seq
    AS pg_catalog.int8 MINVALUE 0 NO MAXVALUE START 0 CACHE 1 NO CYCLE;

COMMENT ON SEQUENCE @extschema@._snowflake_id_seq IS
'the last snowflake key taken (internal: only the snowflake functions may change it)';

-- The node id, set by an administrator with snowflake_set_node_id(): a
-- sequence's value, which only its owner (the role that installed the
-- edition) and superusers can change, read in every call without a query.
-- Not yet called (is_called false, pg_sequence_last_value() NULL) means not
-- set: generation refuses.  Dumped, so a restore keeps it.
CREATE SEQUENCE @extschema@._snowflake_node_seq
    AS pg_catalog.int8 MINVALUE 0 MAXVALUE @MAX_NODE@ START 0 CACHE 1 NO CYCLE;

COMMENT ON SEQUENCE @extschema@._snowflake_node_seq IS
'the snowflake node id of this database (internal: set it with snowflake_set_node_id())';

-- The server life that last moved the keys: a hash of the postmaster's start
-- time and of the time the cumulative statistics were last reset, which
-- crash recovery does (30-generator.sql).  A new life (a restart, a crash, a
-- promoted standby, a restored backup) places the next key a second past the
-- clock, above any key the previous life can have handed out and then lost
-- with WAL that never reached the disk.  Not dumped: a restored database is
-- a new life.
CREATE SEQUENCE @extschema@._snowflake_life_seq
    AS pg_catalog.int8 MINVALUE -9223372036854775808 NO MAXVALUE START 0 CACHE 1 NO CYCLE;

COMMENT ON SEQUENCE @extschema@._snowflake_life_seq IS
'the server life that last moved the snowflake keys (internal)';

-- @extension-only-begin
SELECT pg_catalog.pg_extension_config_dump('@extschema@._snowflake_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('@extschema@._snowflake_node_seq', '');
-- @extension-only-end
