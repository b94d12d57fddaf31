--
-- decode: NULL handling, use in index expressions, generated columns and
-- partition bounds (the decoders are IMMUTABLE).
--
SET timezone = 'UTC';

-- STRICT: NULL in, NULL out.
SELECT snowflake_timestamp(NULL) IS NULL AS ts_null,
       snowflake_node_id(NULL) IS NULL AS node_null,
       snowflake_sequence(NULL) IS NULL AS seq_null,
       snowflake_min_id(NULL) IS NULL AS min_null,
       snowflake_max_id(NULL) IS NULL AS max_null,
       snowflake_compose(NULL, 1, 1) IS NULL AS compose_null;
SELECT * FROM snowflake_decode(NULL);
SELECT count(*) AS batch_of_null FROM snowflake_nextval_batch(NULL);

-- A table keyed by the generator, with a generated column and an index on
-- a decoded expression.
CREATE TABLE events (
    id bigint PRIMARY KEY DEFAULT snowflake_nextval(),
    created_at timestamptz GENERATED ALWAYS AS (snowflake_timestamp(id)) STORED,
    node integer GENERATED ALWAYS AS (snowflake_node_id(id)) STORED,
    payload text
);
CREATE INDEX events_created_idx ON events (snowflake_timestamp(id));

INSERT INTO events (payload) SELECT 'e' || g FROM generate_series(1, 1000) g;
-- Rows with fixed, known IDs.
INSERT INTO events (id, payload)
VALUES (snowflake_compose('2024-06-01 12:00:00+00', 3, 0), 'june'),
       (snowflake_compose('2024-06-01 12:00:00+00', 3, 1), 'june again'),
       (snowflake_compose('2024-07-01 00:00:00+00', 4, 0), 'july');

SELECT id, created_at, node, payload
  FROM events WHERE id < snowflake_min_id('2024-08-01') ORDER BY id;
SELECT count(*) AS generated_rows,
       bool_and(node = 7) AS all_from_node_7,
       bool_and(created_at = snowflake_timestamp(id)) AS generated_column_agrees
  FROM events WHERE payload LIKE 'e%';

-- The planner can use the expression index and the primary key for time
-- ranges.
ANALYZE events;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT payload FROM events
 WHERE snowflake_timestamp(id) >= '2024-06-01' AND snowflake_timestamp(id) < '2024-06-02';
SELECT payload FROM events
 WHERE snowflake_timestamp(id) >= '2024-06-01' AND snowflake_timestamp(id) < '2024-06-02'
 ORDER BY id;
EXPLAIN (COSTS OFF)
SELECT payload FROM events
 WHERE id >= snowflake_min_id('2024-06-01') AND id <= snowflake_max_id('2024-06-30');
RESET enable_seqscan;

-- Range partitioning by ID, bounds computed from timestamps.
CREATE TABLE ledger (id bigint NOT NULL DEFAULT snowflake_nextval(), note text)
    PARTITION BY RANGE (id);
CREATE TABLE ledger_2024 PARTITION OF ledger
    FOR VALUES FROM (snowflake_min_id('2024-01-01')) TO (snowflake_min_id('2025-01-01'));
CREATE TABLE ledger_later PARTITION OF ledger
    FOR VALUES FROM (snowflake_min_id('2025-01-01')) TO (MAXVALUE);
INSERT INTO ledger (id, note) VALUES (snowflake_compose('2024-03-03', 1, 1), 'old');
INSERT INTO ledger (note) VALUES ('new');
SELECT tableoid::regclass AS partition, note FROM ledger ORDER BY id;

DROP TABLE events, ledger;
