--
-- decode_differential: every query of a corpus run with
-- snowflake.inline_decode off (planned as written) and on (snowflake_decode
-- planned as the scalar decoders, src/inline.c), the rows compared as
-- multisets (and in order where the query orders them), errors by
-- SQLSTATE.  Then the plans of the index, partition and statistics cases:
-- the same plan shapes and row estimates both ways.
--
SET timezone = 'UTC';
-- Prepared statements are planned again for each execution, so each runs
-- with the setting of the moment.
SET plan_cache_mode = force_custom_plan;

-- IDs of 7 nodes over 40 days, some twice, NULLs, and 0.
CREATE TABLE dd_keys (id bigint, grp int, note text);
INSERT INTO dd_keys
SELECT snowflake_compose('2024-01-01'::timestamptz + (g % 40) * interval '1 day' + g * interval '1 ms',
                         g % 7, g % 13), g % 5, 'k' || g
  FROM generate_series(1, 300) g;
INSERT INTO dd_keys VALUES (NULL, 0, 'null'), (NULL, 1, 'null'), (0, 2, 'zero');
INSERT INTO dd_keys SELECT id, grp + 1, note || 'b' FROM dd_keys WHERE id % 10 = 0;
CREATE TABLE dd_other (id bigint, label text);
INSERT INTO dd_other
SELECT snowflake_compose('2024-01-15'::timestamptz + g * interval '1 hour', g % 9, g), 'o' || g
  FROM generate_series(1, 60) g;
INSERT INTO dd_other VALUES (NULL, 'onull');
ANALYZE dd_keys, dd_other;

-- The rows of a query, as text, with the setting on or off; an error as
-- its SQLSTATE.
CREATE FUNCTION regress.dd_run(q text, inline boolean) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    result text[] := '{}';
BEGIN
    PERFORM set_config('snowflake.inline_decode', inline::text, true);
    BEGIN
        FOR r IN EXECUTE q LOOP
            result := result || r::text;
        END LOOP;
    EXCEPTION WHEN OTHERS THEN
        result := ARRAY['ERROR ' || SQLSTATE];
    END;
    RETURN result;
END
$$;

-- Both ways: how many rows, how many only one way has, whether the order
-- is the same (for a query that orders its rows), and whether the plan
-- with the setting on still calls snowflake_decode.
CREATE FUNCTION regress.dd_compare(q text, ordered boolean,
    OUT rows_off int, OUT rows_on int, OUT only_off int, OUT only_on int,
    OUT same_order boolean, OUT decode_on boolean)
LANGUAGE plpgsql AS $$
DECLARE
    a text[] := regress.dd_run(q, false);
    b text[] := regress.dd_run(q, true);
    line text;
BEGIN
    rows_off := cardinality(a);
    rows_on := cardinality(b);
    only_off := (SELECT count(*) FROM (SELECT unnest(a) EXCEPT ALL SELECT unnest(b)) x);
    only_on := (SELECT count(*) FROM (SELECT unnest(b) EXCEPT ALL SELECT unnest(a)) x);
    same_order := CASE WHEN ordered THEN a = b END;
    decode_on := false;
    PERFORM set_config('snowflake.inline_decode', 'on', true);
    BEGIN
        FOR line IN EXECUTE 'EXPLAIN (VERBOSE, COSTS OFF) ' || q LOOP
            decode_on := decode_on OR line LIKE '%snowflake\_decode(%';
        END LOOP;
    EXCEPTION WHEN OTHERS THEN
        decode_on := NULL;
    END;
END
$$;

-- Functions, a view and prepared statements the corpus uses.
CREATE FUNCTION dd_node(bigint) RETURNS integer
LANGUAGE sql IMMUTABLE AS $$ SELECT (snowflake_decode($1)).node_id $$;
CREATE FUNCTION dd_json(bigint) RETURNS json
LANGUAGE sql IMMUTABLE AS $$ SELECT to_json(snowflake_decode($1)) $$;
CREATE FUNCTION dd_since(timestamptz) RETURNS SETOF dd_keys
LANGUAGE sql STABLE AS $$ SELECT * FROM dd_keys WHERE (snowflake_decode(id)).ts >= $1 $$;
CREATE FUNCTION dd_plpgsql(n integer) RETURNS TABLE (id bigint, ts timestamptz, node integer)
LANGUAGE plpgsql AS $$
DECLARE
    k bigint;
BEGIN
    FOR k IN SELECT dd_keys.id FROM dd_keys WHERE (snowflake_decode(dd_keys.id)).node_id = n LOOP
        id := k;
        ts := (snowflake_decode(k)).ts;
        SELECT d.node_id INTO node FROM snowflake_decode(k) d;
        RETURN NEXT;
    END LOOP;
END
$$;
CREATE VIEW dd_view AS
SELECT k.id, (snowflake_decode(k.id)).ts AS field_ts, d.node_id, d.sequence
  FROM dd_keys k, snowflake_decode(k.id) d;
PREPARE dd_prep(bigint, integer) AS
SELECT (snowflake_decode($1)).ts, d.* FROM snowflake_decode($1) d
 WHERE d.node_id = $2 OR $2 IS NULL;
PREPARE dd_prep_keys(integer) AS
SELECT k.id, (snowflake_decode(k.id)).sequence, d.ts
  FROM dd_keys k, snowflake_decode(k.id) d WHERE d.node_id = $1;

CREATE TABLE dd_corpus (n serial, name text, q text, ordered boolean DEFAULT false);
INSERT INTO dd_corpus (name, q, ordered) VALUES
-- fields, whole rows, the layout variant
('fields', $q$SELECT id, (snowflake_decode(id)).ts, (snowflake_decode(id)).node_id, (snowflake_decode(id)).sequence FROM dd_keys$q$, false),
('star', $q$SELECT id, (snowflake_decode(id)).* FROM dd_keys$q$, false),
('whole row', $q$SELECT id, snowflake_decode(id) FROM dd_keys$q$, false),
('whole row json, null', $q$SELECT id, to_json(snowflake_decode(id)), snowflake_decode(id) IS NULL, snowflake_decode(id) IS DISTINCT FROM NULL, coalesce(snowflake_decode(id), snowflake_decode(0)) FROM dd_keys$q$, false),
('layout variant', $q$SELECT id, (snowflake_decode(id, 'twitter')).ts, (snowflake_decode(id, 'twitter')).node_fields, snowflake_decode(id, 'discord') FROM dd_keys$q$, false),
('values', $q$SELECT (snowflake_decode(v)).ts, (snowflake_decode(v)).node_id FROM (VALUES (1::bigint), (NULL), (4194304)) x(v)$q$, false),
-- FROM
('from', $q$SELECT k.id, d.ts, d.node_id, d.sequence FROM dd_keys k, snowflake_decode(k.id) d$q$, false),
('from whole row', $q$SELECT k.id, d, row_to_json(d), d IS NULL FROM dd_keys k, snowflake_decode(k.id) d$q$, false),
('from count', $q$SELECT count(*) FROM dd_keys k, snowflake_decode(k.id) d$q$, false),
('from aliases', $q$SELECT x.* FROM dd_keys k, snowflake_decode(k.id) AS x(a, b, c) WHERE x.b = 3$q$, false),
('from layout', $q$SELECT d.* FROM dd_keys k, snowflake_decode(k.id, 'twitter') d$q$, false),
('from explicit join', $q$SELECT j.id, j.ts FROM (dd_keys k CROSS JOIN LATERAL snowflake_decode(k.id) d) j$q$, false),
('from join, read in a sublink', $q$SELECT (SELECT j.ts) FROM (dd_keys k CROSS JOIN LATERAL snowflake_decode(k.id) d) j WHERE j.id > 0$q$, false),
('from left lateral', $q$SELECT o.label, d.* FROM dd_other o LEFT JOIN LATERAL snowflake_decode(o.id) d ON d.node_id > 4$q$, false),
('from ordinality', $q$SELECT d.* FROM dd_keys k, snowflake_decode(k.id) WITH ORDINALITY d$q$, false),
-- grouping
('group by field', $q$SELECT (snowflake_decode(id)).node_id, count(*) FROM dd_keys GROUP BY 1$q$, false),
('group by whole row', $q$SELECT (snowflake_decode(id)).node_id, (snowflake_decode(id)).ts, count(*) FROM dd_keys GROUP BY snowflake_decode(id)$q$, false),
('rollup whole row', $q$SELECT (snowflake_decode(id)).node_id, count(*) FROM dd_keys GROUP BY ROLLUP (snowflake_decode(id))$q$, false),
('rollup fields', $q$SELECT (snowflake_decode(id)).node_id, (snowflake_decode(id)).sequence, count(*) FROM dd_keys GROUP BY ROLLUP ((snowflake_decode(id)).node_id, (snowflake_decode(id)).sequence)$q$, false),
('rollup id', $q$SELECT (snowflake_decode(id)).node_id, count(*) FROM dd_keys GROUP BY ROLLUP (id)$q$, false),
('cube', $q$SELECT (snowflake_decode(id)).node_id, grp, count(*) FROM dd_keys GROUP BY CUBE (snowflake_decode(id), grp)$q$, false),
('grouping sets', $q$SELECT (snowflake_decode(id)).node_id, grp, sum((snowflake_decode(id)).sequence), GROUPING(snowflake_decode(id)) FROM dd_keys GROUP BY GROUPING SETS ((snowflake_decode(id)), (grp), ())$q$, false),
('having rollup', $q$SELECT (snowflake_decode(id)).node_id, count(*) FROM dd_keys GROUP BY ROLLUP (snowflake_decode(id)) HAVING (snowflake_decode(id)).node_id IS NULL OR (snowflake_decode(id)).node_id > 2$q$, false),
('having', $q$SELECT grp, count(*) FROM dd_keys GROUP BY grp HAVING max((snowflake_decode(id)).node_id) > 4$q$, false),
('sublink in rollup', $q$SELECT (SELECT (snowflake_decode(k.id)).node_id), count(*) FROM dd_keys k GROUP BY ROLLUP (k.id)$q$, false),
('rollup both', $q$SELECT (snowflake_decode(id)).ts, (snowflake_decode(id)).node_id, count(*) FROM dd_keys GROUP BY GROUPING SETS ((snowflake_decode(id)), ((snowflake_decode(id)).ts), ()) HAVING (snowflake_decode(id)).ts IS DISTINCT FROM '2024-01-02'$q$, false),
('rollup over from', $q$SELECT d.node_id, count(*) FROM dd_keys k, snowflake_decode(k.id) d GROUP BY ROLLUP (d.node_id)$q$, false),
('rollup over from, constant', $q$SELECT d.node_id, k.grp, count(*) FROM dd_keys k, snowflake_decode(12345678901234) d GROUP BY ROLLUP (d.node_id, k.grp)$q$, false),
('cube over from row', $q$SELECT d, count(*) FROM dd_keys k, snowflake_decode(k.id) d GROUP BY CUBE (d)$q$, false),
('distinct', $q$SELECT DISTINCT (snowflake_decode(id)).node_id FROM dd_keys$q$, false),
('distinct on', $q$SELECT DISTINCT ON ((snowflake_decode(id)).node_id) (snowflake_decode(id)).node_id, id FROM dd_keys ORDER BY (snowflake_decode(id)).node_id, id$q$, true),
('window', $q$SELECT id, rank() OVER (PARTITION BY (snowflake_decode(id)).node_id ORDER BY (snowflake_decode(id)).ts, id), sum((snowflake_decode(id)).sequence) OVER (PARTITION BY grp) FROM dd_keys$q$, false),
('window over rollup', $q$SELECT (snowflake_decode(id)).node_id, count(*), rank() OVER (ORDER BY (snowflake_decode(id)).node_id NULLS FIRST) FROM dd_keys GROUP BY ROLLUP (snowflake_decode(id))$q$, false),
('order by limit', $q$SELECT id FROM dd_keys ORDER BY (snowflake_decode(id)).ts DESC NULLS LAST, id LIMIT 20$q$, true),
('union', $q$SELECT (snowflake_decode(id)).node_id FROM dd_keys UNION SELECT (snowflake_decode(id)).node_id FROM dd_other$q$, false),
-- joins and sub-selects
('outer join', $q$SELECT k.id, o.id FROM dd_keys k LEFT JOIN dd_other o ON (snowflake_decode(k.id)).node_id = (snowflake_decode(o.id)).node_id AND (snowflake_decode(o.id)).sequence < 5$q$, false),
('full join', $q$SELECT (snowflake_decode(k.id)).node_id, (snowflake_decode(o.id)).node_id FROM dd_keys k FULL JOIN dd_other o ON k.id = o.id$q$, false),
('lateral subquery', $q$SELECT k.id, s.* FROM dd_keys k, LATERAL (SELECT (snowflake_decode(k.id)).ts, d.node_id FROM snowflake_decode(k.id + 1) d) s$q$, false),
('scalar sublink', $q$SELECT k.id, (SELECT max((snowflake_decode(o.id)).ts) FROM dd_other o WHERE (snowflake_decode(o.id)).node_id = (snowflake_decode(k.id)).node_id) FROM dd_keys k$q$, false),
('exists and in', $q$SELECT id FROM dd_keys k WHERE EXISTS (SELECT FROM dd_other o WHERE (snowflake_decode(o.id)).node_id = (snowflake_decode(k.id)).node_id) AND (snowflake_decode(id)).sequence IN (SELECT (snowflake_decode(o.id)).sequence FROM dd_other o)$q$, false),
('subquery in from', $q$SELECT s.ts, count(*) FROM (SELECT (snowflake_decode(id)).ts FROM dd_keys OFFSET 0) s GROUP BY s.ts$q$, false),
('cte', $q$WITH c AS (SELECT id, (snowflake_decode(id)).node_id AS n FROM dd_keys) SELECT n, count(*) FROM c GROUP BY n$q$, false),
('cte materialized', $q$WITH c AS MATERIALIZED (SELECT d.* FROM dd_keys k, snowflake_decode(k.id) d) SELECT node_id, max(ts) FROM c GROUP BY node_id$q$, false),
('cte as argument', $q$WITH c AS (SELECT id FROM dd_keys WHERE id IS NOT NULL ORDER BY id DESC LIMIT 1) SELECT d.* FROM snowflake_decode((SELECT id FROM c)) d$q$, false),
('tablesample argument', $q$SELECT count(*) FILTER (WHERE snowflake_compose(d.ts, d.node_id, d.sequence) IN (SELECT id FROM dd_keys)) FROM generate_series(1, 20) g, LATERAL snowflake_decode((SELECT id FROM dd_keys TABLESAMPLE BERNOULLI (50) WHERE id IS NOT NULL AND g > 0 LIMIT 1)) d$q$, false),
('tablesample cte argument', $q$WITH c AS (SELECT id FROM dd_keys TABLESAMPLE BERNOULLI (50) WHERE id IS NOT NULL LIMIT 1) SELECT snowflake_compose(d.ts, d.node_id, d.sequence) IN (SELECT id FROM dd_keys) FROM snowflake_decode((SELECT id FROM c)) d$q$, false),
('tablesample', $q$SELECT count(*) FROM dd_keys TABLESAMPLE BERNOULLI (100) WHERE (snowflake_decode(id)).node_id = 3$q$, false),
-- arguments: volatile, stable, expensive, parameters
('volatile argument in from', $q$SELECT snowflake_compose(d.ts, d.node_id, d.sequence) = snowflake_lastval() FROM snowflake_decode(snowflake_nextval()) d$q$, false),
('volatile argument of a field', $q$SELECT (snowflake_decode(v)).sequence IS NOT NULL, (snowflake_decode(snowflake_nextval())).node_id FROM (SELECT snowflake_nextval() v) s$q$, false),
('stable argument', $q$SELECT d.* FROM snowflake_decode(snowflake_min_id(now())) d$q$, false),
('expensive argument', $q$SELECT k.id, d.* FROM dd_keys k, snowflake_decode(((((k.id + 1) - 1) * 2) / 2 + 0 - 0 + 1 - 1) * 1 / 1 + 0) d$q$, false),
('prepared', $q$EXECUTE dd_prep(12345678901234, NULL)$q$, false),
('prepared keys', $q$EXECUTE dd_prep_keys(3)$q$, false),
('plpgsql', $q$SELECT * FROM dd_plpgsql(4)$q$, false),
-- views and SQL functions
('view', $q$SELECT * FROM dd_view WHERE node_id < 3$q$, false),
('sql function', $q$SELECT id, dd_node(id) FROM dd_keys$q$, false),
('sql function, whole row', $q$SELECT id, dd_json(id) FROM dd_keys$q$, false),
('sql set-returning function', $q$SELECT count(*), min(id) FROM dd_since('2024-01-20')$q$, false),
-- errors
('error in a field', $q$SELECT (snowflake_decode(id - 1)).ts FROM dd_keys WHERE id = 0$q$, false),
('error in from', $q$SELECT d.node_id FROM dd_keys k, snowflake_decode(k.id - 1) d WHERE k.id = 0$q$, false),
('error, no column read', $q$SELECT count(*) FROM (VALUES (-1::bigint)) v(id), snowflake_decode(v.id) d$q$, false),
('error of a layout', $q$SELECT (snowflake_decode(id, 'nonsense')).ts FROM dd_keys$q$, false),
('error past the largest timestamp, node', $q$SELECT (snowflake_decode(v.id, 'epoch=9999-12-31; unit=86400000ms; fields=timestamp:63')).node_id FROM (VALUES (9223372036854775807::bigint)) v(id)$q$, false),
('error past the largest timestamp, from', $q$SELECT d.sequence FROM (VALUES (9223372036854775807::bigint)) v(id), snowflake_decode(v.id, 'epoch=9999-12-31; unit=86400000ms; fields=timestamp:63') d$q$, false),
-- grouping sets over a join's alias columns: the same expression spelled
-- through USING (before 18 every field above such a grouping is kept)
('rollup over join using', $q$SELECT (snowflake_decode(k.id)).node_id, count(*) FROM dd_keys k JOIN (SELECT DISTINCT id FROM dd_keys) h USING (id) GROUP BY ROLLUP (snowflake_decode(id))$q$, false),
('having rollup over join using', $q$SELECT count(*) FROM dd_keys k JOIN (SELECT DISTINCT id FROM dd_keys) h USING (id) GROUP BY ROLLUP (snowflake_decode(id)) HAVING (snowflake_decode(k.id)).node_id IS NULL$q$, false),
('rollup over full join using', $q$SELECT (snowflake_decode(id)).node_id, count(*) FROM dd_keys k FULL JOIN dd_other o USING (id) GROUP BY ROLLUP (snowflake_decode(id))$q$, false);

-- decode_on is not shown for queries with grouping sets: before 18 their
-- fields above the grouping are kept as written, from 18 rewritten, and
-- this file's output is the same on every major.
SELECT n, name, c.rows_off, c.rows_on, c.only_off, c.only_on, c.same_order,
       CASE WHEN q !~* 'rollup|cube|grouping sets' THEN c.decode_on END AS decode_on
  FROM dd_corpus, regress.dd_compare(q, ordered) c
 ORDER BY n;

-- The summary: no query answers differently.
SELECT count(*) AS queries,
       count(*) FILTER (WHERE c.rows_off <> c.rows_on OR c.only_off <> 0 OR c.only_on <> 0
                               OR c.same_order IS FALSE) AS differ
  FROM dd_corpus, regress.dd_compare(q, ordered) c;

-- Row-level security: a policy and a query written in the decode forms,
-- for a role the policy applies to.
CREATE ROLE regress_decode_rls;
CREATE TABLE dd_rls AS SELECT * FROM dd_keys;
ALTER TABLE dd_rls ENABLE ROW LEVEL SECURITY;
CREATE POLICY dd_rls_nodes ON dd_rls
    USING ((snowflake_decode(id)).node_id IN (1, 3) OR id IS NULL);
GRANT SELECT ON dd_rls TO regress_decode_rls;
SET ROLE regress_decode_rls;
SELECT c.* FROM regress.dd_compare(
    $q$SELECT id, (snowflake_decode(id)).ts, d.sequence FROM dd_rls r, snowflake_decode(r.id) d WHERE d.sequence > 3$q$,
    false) c;
RESET ROLE;
DROP TABLE dd_rls;
DROP ROLE regress_decode_rls;

--
-- Plans.  An expression index, a partial index, a partition key and an
-- extended statistics object written in the decode form, and queries
-- written the same way: the same plan shape (nodes, relations, indexes)
-- and row estimates both ways.
--
CREATE TABLE dd_idx (id bigint, grp int);
INSERT INTO dd_idx
SELECT snowflake_compose('2024-01-01'::timestamptz + g * interval '10 min', g % 8, g % 4096), (g % 8) / 4
  FROM generate_series(1, 20000) g;
CREATE INDEX dd_idx_ts ON dd_idx (((snowflake_decode(id)).ts));
CREATE INDEX dd_idx_node3 ON dd_idx (id) WHERE (snowflake_decode(id)).node_id = 3;
CREATE STATISTICS dd_idx_stat ON ((snowflake_decode(id)).node_id), grp FROM dd_idx;
CREATE TABLE dd_part (id bigint, v int) PARTITION BY RANGE (((snowflake_decode(id)).ts));
CREATE TABLE dd_part_jan PARTITION OF dd_part FOR VALUES FROM ('2024-01-01') TO ('2024-02-01');
CREATE TABLE dd_part_feb PARTITION OF dd_part FOR VALUES FROM ('2024-02-01') TO ('2024-03-01');
CREATE TABLE dd_part_other PARTITION OF dd_part DEFAULT;
INSERT INTO dd_part SELECT id, grp FROM dd_idx;
ANALYZE dd_idx, dd_part;

-- The plan's nodes (no expressions), and its row estimates.
CREATE FUNCTION regress.dd_shape(q text, inline boolean) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
    shape text := '';
BEGIN
    PERFORM set_config('snowflake.inline_decode', inline::text, true);
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || q LOOP
        IF line !~ ':' OR line ~ 'Subplans Removed' THEN
            -- 17 stopped printing what an InitPlan returns.
            shape := shape || regexp_replace(line, ' \(returns .*\)$', '') || E'\n';
        END IF;
    END LOOP;
    RETURN shape;
END
$$;
CREATE FUNCTION regress.dd_estimates(q text, inline boolean) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    plan jsonb;
BEGIN
    PERFORM set_config('snowflake.inline_decode', inline::text, true);
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || q INTO plan;
    RETURN jsonb_path_query_array(plan, 'strict $.**."Plan Rows"');
END
$$;

CREATE TABLE dd_plans (n serial, name text, q text);
INSERT INTO dd_plans (name, q) VALUES
('expression index', $q$SELECT id FROM dd_idx WHERE (snowflake_decode(id)).ts >= '2024-03-01' AND (snowflake_decode(id)).ts < '2024-03-01 12:00'$q$),
('expression index order', $q$SELECT id FROM dd_idx ORDER BY (snowflake_decode(id)).ts DESC LIMIT 5$q$),
('expression index max', $q$SELECT max((snowflake_decode(id)).ts) FROM dd_idx$q$),
('partial index', $q$SELECT id FROM dd_idx WHERE (snowflake_decode(id)).node_id = 3 AND id < 100000000000000$q$),
('statistics', $q$SELECT count(*) FROM dd_idx WHERE (snowflake_decode(id)).node_id = 3 AND grp = 0$q$),
('statistics, group by', $q$SELECT (snowflake_decode(id)).node_id, grp, count(*) FROM dd_idx GROUP BY 1, 2$q$),
('partition key', $q$SELECT count(*) FROM dd_part WHERE (snowflake_decode(id)).ts >= '2024-02-01' AND (snowflake_decode(id)).ts < '2024-02-15'$q$),
('partition key, prepared', $q$EXECUTE dd_part_since('2024-02-10')$q$),
('partition key, sql function', $q$SELECT count(*) FROM dd_part_since_fn('2024-02-10')$q$),
('check constraint exclusion', $q$SELECT count(*) FROM dd_ev WHERE (snowflake_decode(id)).ts >= '2024-02-10'$q$);
-- A SQL function PostgreSQL inlines after the hook, and inheritance with
-- CHECK constraints in the decode form (constraint_exclusion = partition).
CREATE FUNCTION dd_part_since_fn(timestamptz) RETURNS SETOF dd_part
LANGUAGE sql STABLE AS $$ SELECT * FROM dd_part WHERE (snowflake_decode(id)).ts >= $1 $$;
CREATE TABLE dd_ev (id bigint);
CREATE TABLE dd_ev_jan (CHECK ((snowflake_decode(id)).ts < '2024-02-01')) INHERITS (dd_ev);
CREATE TABLE dd_ev_feb (CHECK ((snowflake_decode(id)).ts >= '2024-02-01')) INHERITS (dd_ev);
INSERT INTO dd_ev_jan SELECT id FROM dd_idx WHERE (snowflake_decode(id)).ts < '2024-02-01';
INSERT INTO dd_ev_feb SELECT id FROM dd_idx WHERE (snowflake_decode(id)).ts >= '2024-02-01';
ANALYZE dd_ev, dd_ev_jan, dd_ev_feb;
PREPARE dd_part_since(timestamptz) AS
SELECT count(*) FROM dd_part WHERE (snowflake_decode(id)).ts >= $1;

SELECT n, name,
       regress.dd_shape(q, false) = regress.dd_shape(q, true) AS same_plan,
       regress.dd_estimates(q, false) = regress.dd_estimates(q, true) AS same_estimates
  FROM dd_plans ORDER BY n;
SELECT n, name, regress.dd_shape(q, true) AS plan
  FROM dd_plans WHERE name IN ('expression index', 'partial index', 'partition key',
                             'partition key, sql function', 'check constraint exclusion') ORDER BY n;
-- The statistics object applies both ways: 2,500 rows (node 3 has only
-- group 0), where the two columns alone would give 1,250.
SELECT regress.dd_estimates(q, false) AS estimates_off, regress.dd_estimates(q, true) AS estimates_on
  FROM dd_plans WHERE name = 'statistics';
-- The results, both ways.
SELECT n, name, c.rows_off, c.rows_on, c.only_off, c.only_on
  FROM dd_plans, regress.dd_compare(q, false) c ORDER BY n;

-- The two plans in full: an index on ((snowflake_decode(id)).ts) serves
-- the query written the same way, and a table partitioned by it prunes.
SET snowflake.inline_decode = off;
EXPLAIN (COSTS OFF)
SELECT id FROM dd_idx WHERE (snowflake_decode(id)).ts >= '2024-03-01' AND (snowflake_decode(id)).ts < '2024-03-01 12:00';
EXPLAIN (COSTS OFF)
SELECT count(*) FROM dd_part WHERE (snowflake_decode(id)).ts >= '2024-02-01' AND (snowflake_decode(id)).ts < '2024-02-15';
SET snowflake.inline_decode = on;
EXPLAIN (COSTS OFF)
SELECT id FROM dd_idx WHERE (snowflake_decode(id)).ts >= '2024-03-01' AND (snowflake_decode(id)).ts < '2024-03-01 12:00';
EXPLAIN (COSTS OFF)
SELECT count(*) FROM dd_part WHERE (snowflake_decode(id)).ts >= '2024-02-01' AND (snowflake_decode(id)).ts < '2024-02-15';
-- Written in FROM, a query can use the same index, which the function
-- scan's columns cannot; partitions are pruned by quals written as the key
-- is, as without the speed-up.
EXPLAIN (COSTS OFF)
SELECT k.id FROM dd_idx k, snowflake_decode(k.id) d WHERE d.ts >= '2024-03-01' AND d.ts < '2024-03-01 12:00';
EXPLAIN (COSTS OFF)
SELECT count(*) FROM dd_part p, snowflake_decode(p.id) d WHERE d.ts >= '2024-02-01' AND d.ts < '2024-02-15';

DEALLOCATE dd_prep;
DEALLOCATE dd_prep_keys;
DEALLOCATE dd_part_since;
DROP VIEW dd_view;
DROP FUNCTION dd_node(bigint), dd_json(bigint), dd_since(timestamptz), dd_plpgsql(integer),
    dd_part_since_fn(timestamptz);
DROP TABLE dd_ev CASCADE;
DROP FUNCTION regress.dd_run(text, boolean), regress.dd_compare(text, boolean),
    regress.dd_shape(text, boolean), regress.dd_estimates(text, boolean);
DROP TABLE dd_keys, dd_other, dd_corpus, dd_idx, dd_part, dd_plans;
