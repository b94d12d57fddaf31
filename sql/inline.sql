--
-- inline: snowflake_decode planned as the scalar decoders (src/inline.c),
-- for a field and in FROM, and where it is not: whenever that could change
-- an answer (issue 26, items 1 to 4).  The reference for each result is
-- the same call in a form never rewritten: a scalar subquery for a field,
-- WITH ORDINALITY in FROM, or snowflake.inline_decode = off.
-- decode_differential.sql runs a whole corpus both ways.
--
SET timezone = 'UTC';

CREATE TABLE inline_keys (id bigint);
INSERT INTO inline_keys
SELECT snowflake_compose('2024-06-01 12:00:00+00'::timestamptz + g * interval '1 ms', g % 5, g)
FROM generate_series(1, 200) g;
INSERT INTO inline_keys VALUES (NULL), (0), (snowflake_compose('2024-06-01', 1023, 4095));

-- The plans: scalar decoders, no snowflake_decode, no Function Scan.
EXPLAIN (VERBOSE, COSTS OFF)
SELECT (snowflake_decode(id)).ts, (snowflake_decode(id)).node_id FROM inline_keys;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT d.ts, d.sequence FROM inline_keys k, snowflake_decode(k.id) d;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT d.* FROM inline_keys k, snowflake_decode(k.id, 'twitter') d;
-- A field no scalar decoder computes stays a field of snowflake_decode.
EXPLAIN (VERBOSE, COSTS OFF)
SELECT (snowflake_decode(id, 'twitter')).node_fields FROM inline_keys;
-- Inside a CTE, a subquery and a sublink: the decoders the plan calls
-- (the plan's shape differs between majors).
CREATE FUNCTION plan_decoders(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    plan text := '';
    line text;
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || query LOOP
        plan := plan || line || E'\n';
    END LOOP;
    RETURN (SELECT string_agg(DISTINCT m[1], ', ' ORDER BY m[1])
            FROM regexp_matches(plan, '(snowflake_[a-z_]+|Function Scan)', 'g') m);
END $$;
SELECT plan_decoders($q$
WITH c AS MATERIALIZED (SELECT (snowflake_decode(id)).ts FROM inline_keys)
SELECT (SELECT max(d.sequence) FROM snowflake_decode(k.id) d)
FROM (SELECT id FROM inline_keys OFFSET 0) k
WHERE k.id IN (SELECT snowflake_min_id(ts) FROM c)
  AND EXISTS (SELECT FROM snowflake_decode(k.id) e WHERE e.node_id < 5)
$q$);
-- Not rewritten: ORDINALITY, and a function of the same name and result
-- elsewhere.
EXPLAIN (VERBOSE, COSTS OFF)
SELECT d.ts FROM inline_keys k, snowflake_decode(k.id) WITH ORDINALITY d;
CREATE SCHEMA other;
CREATE FUNCTION other.snowflake_decode(id bigint,
    OUT ts timestamptz, OUT node_id integer, OUT sequence integer)
LANGUAGE sql IMMUTABLE AS $$ SELECT 'epoch'::timestamptz, 0, 0 $$;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT (other.snowflake_decode(id)).ts FROM inline_keys;
SELECT (other.snowflake_decode(1)).ts AS other_ts;
DROP SCHEMA other CASCADE;

-- The same results as the forms not rewritten, row for row, NULLs
-- included.
SELECT count(*) AS rows,
       count(*) FILTER (WHERE (snowflake_decode(k.id)).ts IS NOT DISTINCT FROM r.ts
                          AND (snowflake_decode(k.id)).node_id IS NOT DISTINCT FROM r.node_id
                          AND (snowflake_decode(k.id)).sequence IS NOT DISTINCT FROM r.sequence
                          AND (snowflake_decode(k.id, 'twitter')).node_id IS NOT DISTINCT FROM t.node_id)
         AS fields_equal
FROM inline_keys k,
     snowflake_decode(k.id) WITH ORDINALITY r,
     snowflake_decode(k.id, 'twitter') WITH ORDINALITY t;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE ROW(d.ts, d.node_id, d.sequence) IS NOT DISTINCT FROM ROW(r.ts, r.node_id, r.sequence)
                          AND d::text IS NOT DISTINCT FROM ROW(r.ts, r.node_id, r.sequence)::text)
         AS rows_equal
FROM inline_keys k, snowflake_decode(k.id) d,
     snowflake_decode(k.id) WITH ORDINALITY r;
SELECT count(*) AS rows,
       count(*) FILTER (WHERE d::text = ROW(r.ts, r.node_id, r.sequence, r.node_fields)::text) AS rows_equal
FROM inline_keys k, snowflake_decode(k.id, 'twitter') d,
     snowflake_decode(k.id, 'twitter') WITH ORDINALITY r
WHERE k.id IS NOT NULL;

-- A NULL ID: NULL fields, and in FROM one row of NULLs, as before.
SELECT (snowflake_decode(NULL::bigint)).ts IS NULL AS field_null;
SELECT v.id, d, d IS NULL AS all_null, row_to_json(d)
FROM (VALUES (NULL::bigint)) v(id), snowflake_decode(v.id) d;
SELECT v.id, d.ts, d.node_id, d.sequence
FROM (VALUES (NULL::bigint), (0)) v(id)
LEFT JOIN LATERAL snowflake_decode(v.id) d ON true ORDER BY 1;
-- Column aliases and a whole-row reference.
SELECT d AS whole, row_to_json(d) AS json
FROM snowflake_decode(snowflake_compose('2024-06-01', 3, 9)) AS d(t, n, s);

-- The same error as snowflake_decode, from a field and from FROM.
SELECT (snowflake_decode(id - 1)).ts FROM inline_keys WHERE id = 0;
SELECT d.node_id FROM inline_keys k, snowflake_decode(k.id - 1) d WHERE k.id = 0;

-- A volatile argument keeps the function scan: evaluated once per row,
-- not once per column.
EXPLAIN (VERBOSE, COSTS OFF)
SELECT d.* FROM snowflake_decode(snowflake_nextval()) d;
SELECT snowflake_compose(d.ts, d.node_id, d.sequence) = snowflake_lastval() AS one_id
FROM snowflake_decode(snowflake_nextval()) d;
-- A call in FROM none of whose columns is read keeps the function scan,
-- so that an invalid ID still raises its error.
SELECT count(*) AS rows FROM (VALUES (-1::bigint)) v(id), snowflake_decode(v.id) d;
EXPLAIN (COSTS OFF)
SELECT count(*) AS rows FROM inline_keys k, snowflake_decode(k.id) d;

-- A view keeps snowflake_decode in its definition; its plan has the
-- scalars.  A prepared statement gives the same results.
CREATE VIEW inline_view AS
SELECT k.id, d.ts, d.node_id FROM inline_keys k, snowflake_decode(k.id) d;
SELECT pg_get_viewdef('inline_view'::regclass) LIKE '%snowflake_decode(k.id)%' AS view_has_decode;
EXPLAIN (VERBOSE, COSTS OFF) SELECT node_id FROM inline_view WHERE id = 0;
SELECT node_id, ts FROM inline_view WHERE id = 0;
PREPARE inline_stmt(bigint) AS
SELECT (snowflake_decode($1)).sequence, d.node_id FROM snowflake_decode($1) d;
EXECUTE inline_stmt(snowflake_compose('2024-06-01', 7, 11));
EXECUTE inline_stmt(NULL);
DEALLOCATE inline_stmt;
DROP VIEW inline_view;

-- The setting: off, the query is planned as written.
SHOW snowflake.inline_decode;
SET snowflake.inline_decode = off;
EXPLAIN (VERBOSE, COSTS OFF)
SELECT (snowflake_decode(id)).ts, d.node_id FROM inline_keys k, snowflake_decode(k.id) d;
RESET snowflake.inline_decode;

--
-- Item 1: grouping sets.  Grouped by snowflake_decode(id), a field is
-- taken from the grouped row, which the total row has NULL.
--
CREATE TABLE inline_two (id bigint);
INSERT INTO inline_two VALUES (snowflake_compose('2024-06-01', 5, 1)),
                              (snowflake_compose('2024-06-01', 5, 2));
SELECT (snowflake_decode(id)).node_id, count(*)
  FROM inline_two GROUP BY ROLLUP (snowflake_decode(id)) ORDER BY 1, 2;
SELECT plan_decoders($q$SELECT (snowflake_decode(id)).node_id, count(*)
  FROM inline_two GROUP BY ROLLUP (snowflake_decode(id))$q$);
SELECT (snowflake_decode(id)).node_id, count(*)
  FROM inline_keys GROUP BY ROLLUP (snowflake_decode(id))
HAVING (snowflake_decode(id)).node_id IS NULL OR (snowflake_decode(id)).sequence > 195
 ORDER BY 1, 2;
SET snowflake.inline_decode = off;
SELECT (snowflake_decode(id)).node_id, count(*)
  FROM inline_keys GROUP BY ROLLUP (snowflake_decode(id))
HAVING (snowflake_decode(id)).node_id IS NULL OR (snowflake_decode(id)).sequence > 195
 ORDER BY 1, 2;
RESET snowflake.inline_decode;
-- Inside an aggregate a field is computed before the grouping, from values
-- the grouping sets do not null: it is rewritten on every major.  Above the
-- grouping, before 18, every field of a query with grouping sets is left as
-- written (from 18 the grouping step leaves none to get wrong), so the plan
-- of the node_id differs by major; the answer does not.
SELECT plan_decoders($q$SELECT sum((snowflake_decode(id)).sequence), (snowflake_decode(id)).node_id
  FROM inline_two GROUP BY ROLLUP (id)$q$) LIKE '%snowflake_sequence%' AS aggregate_argument_rewritten;
SELECT sum((snowflake_decode(id)).sequence), (snowflake_decode(id)).node_id, count(*)
  FROM inline_two GROUP BY ROLLUP (id) ORDER BY 2, 3;

--
-- Item 2: an argument is evaluated as often as the query says.  A
-- sub-select (each run may read another row: TABLESAMPLE), a CTE read once,
-- a volatile or an expensive argument keep the function scan: each row's
-- fields come from one ID.
--
SELECT count(*) FILTER (WHERE snowflake_compose(d.ts, d.node_id, d.sequence) IN (SELECT id FROM inline_keys))
       AS fields_of_one_id
  FROM generate_series(1, 20) g,
       LATERAL snowflake_decode((SELECT id FROM inline_keys TABLESAMPLE BERNOULLI (50)
                                  WHERE id > 0 AND g > 0 LIMIT 1)) d;
SELECT plan_decoders($q$
WITH c AS (SELECT id FROM inline_keys TABLESAMPLE BERNOULLI (50) WHERE id > 0 LIMIT 1)
SELECT d.* FROM snowflake_decode((SELECT id FROM c)) d
$q$);
SELECT plan_decoders($q$
SELECT d.ts FROM inline_keys k,
       snowflake_decode((((k.id + 1) * 2 - 2) / 2 - 1) * 3 / 3 + 1 - 1 + 0 - 0 + 0) d
$q$);
-- A cheap one is copied into each column read.
EXPLAIN (VERBOSE, COSTS OFF)
SELECT d.ts, d.sequence FROM inline_keys k, snowflake_decode(k.id + 1) d;

--
-- Item 4: EXECUTE.  Without it on snowflake_decode, the fields and FROM
-- fail as the call does; a cached plan made before the REVOKE, or for
-- another role, is made again.  Without it on a scalar decoder only, the
-- query runs snowflake_decode.
--
CREATE ROLE regress_inline_user;
GRANT SELECT ON inline_keys TO regress_inline_user;
SET plan_cache_mode = force_generic_plan;
SET ROLE regress_inline_user;
PREPARE inline_field AS SELECT max((snowflake_decode(id)).ts) FROM inline_keys;
EXECUTE inline_field;
RESET ROLE;
REVOKE EXECUTE ON FUNCTION snowflake_decode(bigint) FROM PUBLIC;
SET ROLE regress_inline_user;
EXECUTE inline_field;
RESET ROLE;
PREPARE inline_from AS SELECT max(d.ts) FROM inline_keys k, snowflake_decode(k.id) d;
EXECUTE inline_from;
SET ROLE regress_inline_user;
EXECUTE inline_from;
SELECT regress.sqlstate_of('SELECT snowflake_decode(id) FROM inline_keys') AS whole_row,
       regress.sqlstate_of('SELECT (snowflake_decode(id)).ts FROM inline_keys') AS field,
       regress.sqlstate_of('SELECT d.ts FROM inline_keys k, snowflake_decode(k.id) d') AS in_from;
RESET ROLE;
GRANT EXECUTE ON FUNCTION snowflake_decode(bigint) TO PUBLIC;
REVOKE EXECUTE ON FUNCTION snowflake_timestamp(bigint) FROM PUBLIC;
SET ROLE regress_inline_user;
EXECUTE inline_field;
SELECT regress.sqlstate_of('SELECT snowflake_timestamp(id) FROM inline_keys') AS scalar,
       regress.sqlstate_of('SELECT (snowflake_decode(id)).ts FROM inline_keys') AS field,
       regress.sqlstate_of('SELECT d.ts FROM inline_keys k, snowflake_decode(k.id) d') AS in_from;
SELECT plan_decoders('SELECT (snowflake_decode(id)).ts, (snowflake_decode(id)).node_id FROM inline_keys');
DEALLOCATE inline_field;
DEALLOCATE inline_from;
RESET ROLE;
RESET plan_cache_mode;
GRANT EXECUTE ON FUNCTION snowflake_timestamp(bigint) TO PUBLIC;
REVOKE SELECT ON inline_keys FROM regress_inline_user;
DROP ROLE regress_inline_user;

-- A SET of snowflake.inline_decode replans cached plans: a statement
-- prepared without parameters keeps one generic plan, which the setting
-- must not outlive.
PREPARE inline_cached AS SELECT (snowflake_decode(id)).ts FROM inline_keys;
SELECT plan_decoders('EXECUTE inline_cached') AS cached_on;
SET snowflake.inline_decode = off;
SELECT plan_decoders('EXECUTE inline_cached') AS cached_off;
RESET snowflake.inline_decode;
SELECT plan_decoders('EXECUTE inline_cached') AS cached_on_again;
DEALLOCATE inline_cached;

-- Quals keep their fields as written (indexes, partition keys and CHECK
-- constraints in the decode form match them as without the speed-up);
-- the target list's are planned as the scalar decoders.
SELECT plan_decoders('SELECT (snowflake_decode(id)).node_id FROM inline_keys WHERE (snowflake_decode(id)).ts > now()') AS qual_kept;

DROP TABLE inline_keys, inline_two;
DROP FUNCTION plan_decoders(text);
