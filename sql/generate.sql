--
-- generate: snowflake_nextval() and snowflake_nextval_batch() on a server
-- with snowflake.node_id = 7 (test/snowflake.conf).
--
SELECT snowflake_stats_reset();

-- Two calls in one row: the second is larger.
SELECT a < b AS increasing FROM (SELECT snowflake_nextval() AS a, snowflake_nextval() AS b) s;

-- Every ID carries the configured node id and a time that is never behind
-- the clock read before the call and never more than snowflake.max_drift_ms
-- ahead of the clock read after it.
DO $$
DECLARE
    before timestamptz;
    after  timestamptz;
    id     bigint;
    drift  interval := current_setting('snowflake.max_drift_ms')::interval;
BEGIN
    FOR i IN 1 .. 1000 LOOP
        before := clock_timestamp();
        id := snowflake_nextval();
        after := clock_timestamp();
        IF snowflake_node_id(id) <> 7 THEN
            RAISE EXCEPTION 'ID % carries node %', id, snowflake_node_id(id);
        END IF;
        IF snowflake_timestamp(id) < date_trunc('milliseconds', before) THEN
            RAISE EXCEPTION 'ID % is behind the clock: % < %', id, snowflake_timestamp(id), before;
        END IF;
        IF snowflake_timestamp(id) > after + drift THEN
            RAISE EXCEPTION 'ID % leads the clock by more than %', id, drift;
        END IF;
    END LOOP;
END
$$;

-- 200000 IDs in one statement: distinct and strictly increasing in call
-- order, well past the 4096 IDs one millisecond holds.
CREATE TEMP TABLE ids AS
    SELECT n, snowflake_nextval() AS id FROM generate_series(1, 200000) n;
SELECT count(*) AS ids,
       count(DISTINCT id) AS distinct_ids,
       bool_and(id > prev) AS strictly_increasing,
       max(snowflake_sequence(id)) > 0 AS sequence_used,
       count(DISTINCT snowflake_timestamp(id)) >= 200000 / 4096 AS spans_many_ms
  FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM ids) s;

-- A batch: consecutive IDs, all above what was issued before, all below
-- what comes after.
CREATE TEMP TABLE batch AS
    SELECT row_number() OVER () AS n, id FROM snowflake_nextval_batch(10000) AS b(id);
SELECT count(*) AS ids,
       count(DISTINCT id) AS distinct_ids,
       min(id) > (SELECT max(id) FROM ids) AS above_earlier,
       max(id) < snowflake_nextval() AS below_later,
       bool_and(snowflake_node_id(id) = 7) AS node_7
  FROM batch;
SELECT bool_and(id > prev) AS strictly_increasing
  FROM (SELECT id, lag(id) OVER (ORDER BY n) AS prev FROM batch) s;

-- The largest batch is served whole.
SELECT count(*) AS ids, count(DISTINCT id) AS distinct_ids
  FROM snowflake_nextval_batch(1000000) AS b(id);
SELECT count(*) AS one FROM snowflake_nextval_batch(1);

-- In a target list the batch function expands to rows too.
SELECT count(*) FROM (SELECT snowflake_nextval_batch(5)) s;

-- The counters saw all of it: 2 + 1000 + 200000 + 10000 + 1 + 1000000 + 1 + 5.
-- Which process wrote the reservation, and when, depends on the background
-- writer's timing; that every write is counted as one kind or the other
-- does not.
SELECT status, node_id, ids_issued, borrowed_ms > 0 AS borrowed,
       reservation_writes = background_writes + caller_writes AS writes_counted,
       refused,
       last_timestamp IS NOT NULL AS has_last,
       reserved_until >= last_timestamp AS reservation_covers_last,
       lead_ms * interval '1 millisecond' <= current_setting('snowflake.max_drift_ms')::interval AS lead_bounded
  FROM snowflake_stats;

-- Reset zeroes the counters, not the generator.
SELECT max(id) AS before_reset FROM ids \gset
SELECT snowflake_stats_reset();
SELECT ids_issued, borrowed_ms, refused, last_timestamp IS NOT NULL AS has_last
  FROM snowflake_stats;
SELECT snowflake_nextval() > :before_reset AS still_increasing;

-- IDs as a column default.
CREATE TEMP TABLE orders (id bigint PRIMARY KEY DEFAULT snowflake_nextval(), item text);
INSERT INTO orders (item) VALUES ('a'), ('b'), ('c');
SELECT item, snowflake_node_id(id) AS node FROM orders ORDER BY id;

-- The settings that decide uniqueness cannot be changed in a session;
-- snowflake.max_wait_ms can.
SET snowflake.node_id = 3;
SET snowflake.epoch = '2020-01-01';
SET snowflake.sequence_bits = 5;
SET snowflake.max_drift_ms = 10;
SET snowflake.max_wait_ms = 50;
SHOW snowflake.max_wait_ms;
RESET snowflake.max_wait_ms;
-- The prefix is reserved: a misspelt setting is an error, not a silent
-- placeholder.
SET snowflake.node = 3;
