-- The demo: a table keyed by snowflake_nextval(), rows inserted, IDs decoded.
CREATE EXTENSION snowflake;

CREATE TABLE orders (
    id   bigint PRIMARY KEY DEFAULT snowflake_nextval(),
    item text NOT NULL
);

INSERT INTO orders (item) VALUES ('apples'), ('pears'), ('plums');
INSERT INTO orders (item) SELECT 'bulk ' || g FROM generate_series(1, 10000) g;

\echo
\echo 'The first rows, with their IDs decoded:'
SELECT o.id, o.item, d.ts, d.node_id, d.sequence
  FROM orders o, snowflake_decode(o.id) d
 ORDER BY o.id
 LIMIT 5;

\echo 'Rows created in the last minute, found by ID range alone:'
SELECT count(*) AS rows_last_minute
  FROM orders
 WHERE id >= snowflake_min_id(now() - interval '1 minute');

\echo 'The generator:'
SELECT status, node_id, ids_issued, lead_ms, reserved_until, reservation_writes
  FROM snowflake_stats;
