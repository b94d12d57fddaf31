--
-- lastval: snowflake_lastval() (1.2), the last ID snowflake_nextval() or
-- snowflake_nextval_batch() handed to this session.  Each regression file
-- runs in a session of its own, so this one starts without a last value.
-- Other sessions and concurrency: test/t/033_lastval.pl.
--

-- Before the session has one: 55000, as lastval() before any nextval().
SELECT snowflake_lastval();

-- After snowflake_nextval(): that ID.
SELECT snowflake_nextval() AS id \gset
SELECT snowflake_lastval() = :id AS same_id;

-- A key default fills it: the key of the row an INSERT made, without
-- RETURNING; after several rows, the last made (the largest).
CREATE TABLE lastval_t (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), v text);
INSERT INTO lastval_t (v) VALUES ('one');
SELECT snowflake_lastval() = (SELECT id FROM lastval_t WHERE v = 'one') AS key_of_the_row;
INSERT INTO lastval_t (v) SELECT 'many' FROM generate_series(1, 100);
SELECT snowflake_lastval() = (SELECT max(id) FROM lastval_t) AS largest_key;

-- A batch: its largest ID, also when only its first row is read (a batch is
-- handed out whole).
SELECT max(b) AS batch_max, count(*) AS batch_count FROM snowflake_nextval_batch(1000) b \gset
SELECT :batch_count AS batch_count, snowflake_lastval() = :batch_max AS batch_largest;
SELECT b AS first_row FROM (SELECT snowflake_nextval_batch(10) AS b LIMIT 1) s \gset
SELECT snowflake_lastval() > :first_row AS past_first_row,
       snowflake_lastval() > :batch_max AS past_previous_batch;
SELECT snowflake_lastval() AS partial \gset
SELECT snowflake_nextval() > :partial AS next_is_above;

-- A rollback does not undo it: the ID was handed out all the same.
BEGIN;
INSERT INTO lastval_t (v) VALUES ('rolled back');
SELECT snowflake_lastval() AS rolled \gset
ROLLBACK;
SELECT snowflake_lastval() = :rolled AS survives_rollback,
       NOT EXISTS (SELECT FROM lastval_t WHERE id = :rolled) AS row_gone;

-- A call that fails issues nothing and changes nothing.
SELECT count(*) FROM snowflake_nextval_batch(0);
SELECT snowflake_lastval() = :rolled AS unchanged_by_error;

-- In a function, as a default is read back without RETURNING.
CREATE FUNCTION lastval_insert(v text) RETURNS bigint LANGUAGE plpgsql AS $$
BEGIN
    INSERT INTO lastval_t (v) VALUES (v);
    RETURN snowflake_lastval();
END $$;
SELECT lastval_insert('from a function') = (SELECT id FROM lastval_t WHERE v = 'from a function') AS from_function;

-- DISCARD SEQUENCES and DISCARD ALL forget it, as they forget lastval();
-- DISCARD PLANS and DISCARD TEMP do not.
SELECT snowflake_lastval() AS before_discard \gset
DISCARD PLANS;
DISCARD TEMP;
SELECT snowflake_lastval() = :before_discard AS kept;
DISCARD SEQUENCES;
SELECT snowflake_lastval();
SELECT snowflake_nextval() > :before_discard AS minted_again;
SELECT snowflake_lastval() > :before_discard AS set_again;
DISCARD ALL;
SELECT snowflake_lastval();

-- A parallel plan: the generators are PARALLEL RESTRICTED, so the scan runs
-- in parallel workers and the IDs are minted in the leader, above the
-- Gather; the last value is the statement's last ID.  (Forced with costs
-- only: debug_parallel_query is 16's name for 15's force_parallel_mode.
-- The leader takes no part in the scan, so that an ID minted in a worker
-- could not hide behind a later one of the leader's.)
CREATE TABLE lastval_big AS SELECT g FROM generate_series(1, 20000) g;
ANALYZE lastval_big;
SET parallel_setup_cost = 0;
SET parallel_tuple_cost = 0;
SET min_parallel_table_scan_size = 0;
SET max_parallel_workers_per_gather = 2;
SET parallel_leader_participation = off;
SELECT snowflake_nextval() AS before_parallel \gset
EXPLAIN (VERBOSE, COSTS OFF)
CREATE TABLE lastval_par AS SELECT snowflake_nextval() AS id, g FROM lastval_big;
CREATE TABLE lastval_par AS SELECT snowflake_nextval() AS id, g FROM lastval_big;
SELECT count(*) AS minted, count(DISTINCT id) AS distinct_ids,
       snowflake_lastval() = max(id) AS lastval_is_the_largest,
       min(id) > :before_parallel AS all_after_before
  FROM lastval_par;
-- Batches in the select list, one per row, likewise above the Gather.
EXPLAIN (VERBOSE, COSTS OFF)
CREATE TABLE lastval_batches AS SELECT snowflake_nextval_batch(2) AS id, g FROM lastval_big;
CREATE TABLE lastval_batches AS SELECT snowflake_nextval_batch(2) AS id, g FROM lastval_big;
SELECT count(*) AS minted, count(DISTINCT id) AS distinct_ids,
       snowflake_lastval() = max(id) AS lastval_is_the_largest
  FROM lastval_batches;
RESET parallel_setup_cost;
RESET parallel_tuple_cost;
RESET min_parallel_table_scan_size;
RESET max_parallel_workers_per_gather;
RESET parallel_leader_participation;
DROP TABLE lastval_big, lastval_par, lastval_batches;

DROP FUNCTION lastval_insert(text);
DROP TABLE lastval_t;
