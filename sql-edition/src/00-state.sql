-- The SQL edition's state, in a schema of its own, _snowflake, that only
-- the edition's owner may use: four sequences and the generator's lock.
--
-- No role but the owner (the role that installed the edition) and
-- superusers has USAGE on _snowflake, so no other role can name what is in
-- it: a role that can name a table or a sequence can queue a strong lock
-- on it that every later caller waits behind (an ALTER TABLE ... ATTACH
-- PARTITION of it takes ACCESS EXCLUSIVE before it checks ownership).
-- Functions that take a relation's OID can still queue the weaker locks
-- (ACCESS SHARE, ROW EXCLUSIVE, SHARE UPDATE EXCLUSIVE) on anything, name
-- or not: the generator (30-generator.sql) takes only locks that conflict
-- with none of those, and no advisory lock, which needs no privilege at
-- all.  One edition per database: its state is this schema.
CREATE SCHEMA _snowflake;

COMMENT ON SCHEMA _snowflake IS
'the internal state of the snowflake SQL edition (only its owner may use it)';

-- _snowflake_id_seq holds the last key taken, whole (time, node and
-- sequence fields as the key carries them).  snowflake_nextval() takes the
-- next key with nextval(); a call that finds the key behind the clock, in
-- another node field (4096 keys taken in one millisecond carry into the
-- node field) or absent moves the sequence forward with setval() under the
-- generator's lock (30-generator.sql).  A sequence is never set back by a
-- crash: nextval() logs ahead of the value it returns, and setval() logs at
-- once, both before the transaction that took the key commits.  CACHE 1: a
-- cache would hand each session a range of its own, out of the order of the
-- calls, and setval() could not move it.  Every role may read it (SELECT),
-- so that PostgreSQL's lastval() returns the key a session was handed;
-- none but the owner may advance or set it.
CREATE SEQUENCE _snowflake._snowflake_id_seq
    AS pg_catalog.int8 MINVALUE 0 NO MAXVALUE START 0 CACHE 1 NO CYCLE;

COMMENT ON SEQUENCE _snowflake._snowflake_id_seq IS
'the last snowflake key taken (internal: only the snowflake functions may change it)';

GRANT SELECT ON SEQUENCE _snowflake._snowflake_id_seq TO PUBLIC;

-- The node id, set by an administrator with snowflake_set_node_id(): a
-- sequence's value, which only its owner (the role that installed the
-- edition) and superusers can change, read in every call without a query.
-- Not yet called (is_called false, pg_sequence_last_value() NULL) means not
-- set: generation refuses.  Dumped, so a restore keeps it.
CREATE SEQUENCE _snowflake._snowflake_node_seq
    AS pg_catalog.int8 MINVALUE 0 MAXVALUE @MAX_NODE@ START 0 CACHE 1 NO CYCLE;

COMMENT ON SEQUENCE _snowflake._snowflake_node_seq IS
'the snowflake node id of this database (internal: set it with snowflake_set_node_id())';

-- The server life that last moved the keys: a hash of the postmaster's start
-- time and of the time the cumulative statistics were last reset, which
-- crash recovery does (30-generator.sql).  A new life (a restart, a crash, a
-- promoted standby, a restored backup) places the next key a second past the
-- clock, above any key the previous life can have handed out and then lost
-- with WAL that never reached the disk.  Not dumped: a restored database is
-- a new life.
CREATE SEQUENCE _snowflake._snowflake_life_seq
    AS pg_catalog.int8 MINVALUE -9223372036854775808 NO MAXVALUE START 0 CACHE 1 NO CYCLE;

COMMENT ON SEQUENCE _snowflake._snowflake_life_seq IS
'the server life that last moved the snowflake keys (internal)';

-- The generator's state, which every call reads before it takes a key
-- without the lock (30-generator.sql): the node id (0 to @MAX_NODE@) while
-- a call may do so; the node id plus @MOVING@ while a move of the key
-- sequence is under way or owed (a move sets it before it reads the
-- sequence, and the node id again at its end; snowflake_set_node_id()
-- sets it so that the next call moves the sequence to the new node id's
-- keys); -1 while the database switches to the C extension
-- (switch-to-c.sql); never set (pg_sequence_last_value() NULL) until the
-- first move.  Anything but a node id sends every call for the
-- generator's lock, where the next move puts it right: a move cancelled
-- half-way, a crash, a switch rolled back, a restored value.  Only ever
-- changed with setval() under the generator's lock.  Not dumped.
CREATE SEQUENCE _snowflake._snowflake_state_seq
    AS pg_catalog.int8 MINVALUE -1 NO MAXVALUE START 0 CACHE 1 NO CYCLE;

COMMENT ON SEQUENCE _snowflake._snowflake_state_seq IS
'the snowflake node id while calls may take keys without the lock, else a move is under way (internal)';

-- The generator's lock: a row lock on the one row of this table (FOR
-- UPDATE, which takes ROW SHARE on the table), taken by a move inside a
-- subtransaction that the move rolls back at its end, so that it is held
-- for the few statements of the move, never to the end of the caller's
-- transaction, and released by any error or cancel.  No other role can
-- take it or queue for it: locking a row needs UPDATE on the table (the
-- owner's alone), and ROW SHARE conflicts with no lock that another role
-- can ask for on a relation it cannot use (brin_summarize_new_values()
-- queues SHARE UPDATE EXCLUSIVE on any relation by its OID before it checks
-- anything, gin_clean_pending_list() ROW EXCLUSIVE, pg_relation_size()
-- ACCESS SHARE: test/t/092_sql_edition_oid_locks.pl tries them all).  A
-- table lock in any mode that conflicts with itself conflicts with SHARE
-- UPDATE EXCLUSIVE too, and an advisory lock is open to every role.
CREATE TABLE _snowflake._snowflake_lock ();

COMMENT ON TABLE _snowflake._snowflake_lock IS
'the snowflake generator''s lock: its one row, locked by a move of the key sequence (internal)';

DO $do$
BEGIN
    INSERT INTO _snowflake._snowflake_lock SELECT WHERE NOT EXISTS (SELECT FROM _snowflake._snowflake_lock);
END
$do$;

-- @extension-only-begin
SELECT pg_catalog.pg_extension_config_dump('_snowflake._snowflake_id_seq', '');
SELECT pg_catalog.pg_extension_config_dump('_snowflake._snowflake_node_seq', '');
-- @extension-only-end

-- The version of the edition installed (the update scripts and the switch
-- to the C extension read it).
CREATE FUNCTION @extschema@._snowflake_edition_version()
RETURNS pg_catalog.text
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN '@VERSION@';

COMMENT ON FUNCTION @extschema@._snowflake_edition_version() IS
'the version of the snowflake SQL edition installed (internal)';
