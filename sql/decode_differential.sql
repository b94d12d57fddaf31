--
-- decode_differential: snowflake_decode is planned and run exactly as
-- PostgreSQL defines it for any C function returning a row.  Nothing of the
-- library rewrites a query, an index or a statistics object, and the
-- function has no planner support function (1.2's planner hook and
-- SupportRequestInlineInFrom are gone: CHANGELOG.md).
--
-- Every query of a corpus runs twice: over the extension's snowflake_decode
-- and over its twin, twin.snowflake_decode, the same C function declared the
-- same way by a plain CREATE FUNCTION; objects whose definitions call it (an
-- expression index, a partition key, CHECK constraints, a statistics
-- object, a view, SQL and PL/pgSQL functions, prepared statements, a
-- row-level security policy) exist once for each.  Both ways must give the
-- same rows (in order, where the query orders them), the same error
-- (SQLSTATE), the same side effects (a sequence's value, IDs minted), and
-- the same plan (EXPLAIN, costs off) with the same row estimates.
-- Then the scalar decoders: the same answers as the fields they compute.
--
SET timezone = 'UTC';
-- Prepared statements are planned again for each execution.
SET plan_cache_mode = force_custom_plan;

CREATE SCHEMA twin;
CREATE FUNCTION twin.snowflake_decode(id bigint, OUT ts timestamptz, OUT node_id integer,
    OUT sequence integer)
RETURNS record AS '$libdir/snowflake', 'snowflake_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
CREATE FUNCTION twin.snowflake_decode(id bigint, layout text, OUT ts timestamptz,
    OUT node_id integer, OUT sequence integer, OUT node_fields jsonb)
RETURNS record AS '$libdir/snowflake', 'snowflake_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;
GRANT USAGE ON SCHEMA twin TO PUBLIC;
-- Declared as the extension declares its own, neither with a support
-- function.
SELECT p.oid::regprocedure AS function, p.prosupport, p.provolatile, p.proisstrict,
       p.proparallel, p.procost, p.prorows
  FROM pg_catalog.pg_proc p
 WHERE p.proname = 'snowflake_decode' ORDER BY p.pronamespace::regnamespace::text, p.pronargs;

-- IDs of 7 nodes over 40 days, some twice, NULLs, and 0; an invalid one
-- (negative) among valid ones.
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
CREATE TABLE dd_bad (id bigint, note text);
INSERT INTO dd_bad VALUES (-1, 'negative'), (snowflake_compose('2024-01-01', 1, 1), 'valid');
CREATE SEQUENCE dd_seq;
ANALYZE dd_keys, dd_other, dd_bad;

-- The objects that call the function, once for each: %D% is the function,
-- %S% the suffix of the object's name (_x for the extension's, _t for the
-- twin's).
CREATE TABLE dd_objects (n serial, ddl text);
INSERT INTO dd_objects (ddl) VALUES
($q$CREATE FUNCTION dd_node%S%(bigint) RETURNS integer
LANGUAGE sql IMMUTABLE AS $f$ SELECT (%D%($1)).node_id $f$$q$),
($q$CREATE FUNCTION dd_json%S%(bigint) RETURNS json
LANGUAGE sql IMMUTABLE AS $f$ SELECT to_json(%D%($1)) $f$$q$),
($q$CREATE FUNCTION dd_since%S%(timestamptz) RETURNS SETOF dd_keys
LANGUAGE sql STABLE AS $f$ SELECT * FROM dd_keys WHERE (%D%(id)).ts >= $1 $f$$q$),
($q$CREATE FUNCTION dd_plpgsql%S%(n integer) RETURNS TABLE (id bigint, ts timestamptz, node integer)
LANGUAGE plpgsql AS $f$
DECLARE
    k bigint;
BEGIN
    FOR k IN SELECT dd_keys.id FROM dd_keys WHERE (%D%(dd_keys.id)).node_id = n LOOP
        id := k;
        ts := (%D%(k)).ts;
        SELECT d.node_id INTO node FROM %D%(k) d;
        RETURN NEXT;
    END LOOP;
END
$f$$q$),
($q$CREATE VIEW dd_view%S% AS
SELECT k.id, (%D%(k.id)).ts AS field_ts, d.node_id, d.sequence
  FROM dd_keys k, %D%(k.id) d$q$),
($q$PREPARE dd_prep%S%(bigint, integer) AS
SELECT (%D%($1)).ts, d.* FROM %D%($1) d WHERE d.node_id = $2 OR $2 IS NULL$q$),
($q$PREPARE dd_prep_keys%S%(integer) AS
SELECT k.id, (%D%(k.id)).sequence, d.ts FROM dd_keys k, %D%(k.id) d WHERE d.node_id = $1$q$),
($q$PREPARE dd_prep_bad%S%(bigint) AS
SELECT (%D%($1)).ts FROM dd_keys k WHERE k.id = $1$q$),
-- An expression index, a partial index, a statistics object, a partition
-- key and CHECK constraints in the decode form.
($q$CREATE TABLE dd_idx%S% (id bigint, grp int)$q$),
($q$INSERT INTO dd_idx%S%
SELECT snowflake_compose('2024-01-01'::timestamptz + g * interval '10 min', g % 8, g % 4096), (g % 8) / 4
  FROM generate_series(1, 20000) g$q$),
($q$CREATE INDEX dd_idx_ts%S% ON dd_idx%S% (((%D%(id)).ts))$q$),
($q$CREATE INDEX dd_idx_node3%S% ON dd_idx%S% (id) WHERE (%D%(id)).node_id = 3$q$),
($q$CREATE STATISTICS dd_idx_stat%S% ON ((%D%(id)).node_id), grp FROM dd_idx%S%$q$),
($q$CREATE TABLE dd_part%S% (id bigint, v int) PARTITION BY RANGE (((%D%(id)).ts))$q$),
($q$CREATE TABLE dd_part_jan%S% PARTITION OF dd_part%S% FOR VALUES FROM ('2024-01-01') TO ('2024-02-01')$q$),
($q$CREATE TABLE dd_part_feb%S% PARTITION OF dd_part%S% FOR VALUES FROM ('2024-02-01') TO ('2024-03-01')$q$),
($q$CREATE TABLE dd_part_other%S% PARTITION OF dd_part%S% DEFAULT$q$),
($q$INSERT INTO dd_part%S% SELECT id, grp FROM dd_idx%S%$q$),
($q$CREATE VIEW dd_part_view%S% AS SELECT id, (%D%(id)).ts AS ts FROM dd_part%S%$q$),
($q$CREATE FUNCTION dd_part_since%S%(timestamptz) RETURNS SETOF dd_part%S%
LANGUAGE sql STABLE AS $f$ SELECT * FROM dd_part%S% WHERE (%D%(id)).ts >= $1 $f$$q$),
($q$PREPARE dd_part_since%S%(timestamptz) AS
SELECT count(*) FROM dd_part%S% WHERE (%D%(id)).ts >= $1$q$),
($q$CREATE TABLE dd_ev%S% (id bigint)$q$),
($q$CREATE TABLE dd_ev_jan%S% (CHECK ((%D%(id)).ts < '2024-02-01')) INHERITS (dd_ev%S%)$q$),
($q$CREATE TABLE dd_ev_feb%S% (CHECK ((%D%(id)).ts >= '2024-02-01')) INHERITS (dd_ev%S%)$q$),
($q$INSERT INTO dd_ev_jan%S% SELECT id FROM dd_idx%S% WHERE (%D%(id)).ts < '2024-02-01'$q$),
($q$INSERT INTO dd_ev_feb%S% SELECT id FROM dd_idx%S% WHERE (%D%(id)).ts >= '2024-02-01'$q$),
($q$ANALYZE dd_idx%S%, dd_part%S%, dd_ev%S%, dd_ev_jan%S%, dd_ev_feb%S%$q$),
-- Row-level security: a policy in the decode form.
($q$CREATE TABLE dd_rls%S% AS SELECT * FROM dd_keys$q$),
($q$ALTER TABLE dd_rls%S% ENABLE ROW LEVEL SECURITY$q$),
($q$CREATE POLICY dd_rls_nodes%S% ON dd_rls%S% USING ((%D%(id)).node_id IN (1, 3) OR id IS NULL)$q$),
($q$GRANT SELECT ON dd_rls%S% TO PUBLIC$q$);

-- A statement with %D% and %S% for the extension's function (x) or the
-- twin (t).
CREATE FUNCTION regress.dd_for(q text, side text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
SELECT replace(replace(q, '%D%', CASE side WHEN 'x' THEN 'public.snowflake_decode'
                                             ELSE 'twin.snowflake_decode' END),
               '%S%', '_' || side)
$$;
DO $$
DECLARE
    d text;
BEGIN
    FOR d IN SELECT ddl FROM dd_objects ORDER BY n LOOP
        EXECUTE regress.dd_for(d, 'x');
        EXECUTE regress.dd_for(d, 't');
    END LOOP;
END
$$;

-- The rows of a query as text, or its error as its SQLSTATE; then what it
-- did: the sequence's value (set to 1 before) and how many IDs were minted.
CREATE FUNCTION regress.dd_run(q text, side text) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    result text[] := '{}';
    issued bigint := (SELECT ids_issued FROM snowflake_stats);
BEGIN
    PERFORM setval('dd_seq', 1, false);
    BEGIN
        FOR r IN EXECUTE regress.dd_for(q, side) LOOP
            result := result || r::text;
        END LOOP;
    EXCEPTION WHEN OTHERS THEN
        result := ARRAY['ERROR ' || SQLSTATE];
    END;
    RETURN result || ARRAY['dd_seq ' || (SELECT last_value FROM dd_seq),
                           'minted ' || ((SELECT ids_issued FROM snowflake_stats) - issued)];
END
$$;

-- The plan, costs off, with the names of each side's objects made the
-- same; and its row estimates.
CREATE FUNCTION regress.dd_plan(q text, side text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
    plan text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || regress.dd_for(q, side) LOOP
        plan := plan || regexp_replace(replace(line, 'twin.snowflake_decode', 'snowflake_decode'),
                                       '_' || side || '(?![[:alnum:]])', '', 'g') || E'\n';
    END LOOP;
    RETURN plan;
EXCEPTION WHEN OTHERS THEN
    RETURN 'ERROR ' || SQLSTATE;
END
$$;
CREATE FUNCTION regress.dd_estimates(q text, side text) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    plan jsonb;
BEGIN
    EXECUTE 'EXPLAIN (FORMAT JSON) ' || regress.dd_for(q, side) INTO plan;
    RETURN jsonb_path_query_array(plan, 'strict $.**."Plan Rows"');
EXCEPTION WHEN OTHERS THEN
    RETURN to_jsonb('ERROR ' || SQLSTATE);
END
$$;

-- Both ways: the rows (and the error) of the extension's function, and
-- whether the twin gives the same multiset of rows, in the same order for a
-- query that orders its rows, the same side effects, the same plan and the
-- same estimates.
CREATE FUNCTION regress.dd_compare(q text, ordered boolean,
    OUT rows int, OUT error text, OUT same_rows boolean, OUT same_order boolean,
    OUT same_effects boolean, OUT same_plan boolean, OUT same_estimates boolean)
LANGUAGE plpgsql AS $$
DECLARE
    a text[] := regress.dd_run(q, 'x');
    b text[] := regress.dd_run(q, 't');
    n int := cardinality(a) - 2;
BEGIN
    rows := CASE WHEN a[1] LIKE 'ERROR %' THEN NULL ELSE n END;
    error := CASE WHEN a[1] LIKE 'ERROR %' THEN substr(a[1], 7) END;
    same_rows := cardinality(a) = cardinality(b) AND
        NOT EXISTS (SELECT unnest(a[1:n]) EXCEPT ALL SELECT unnest(b[1:n])) AND
        NOT EXISTS (SELECT unnest(b[1:n]) EXCEPT ALL SELECT unnest(a[1:n]));
    same_order := CASE WHEN ordered THEN a[1:n] = b[1:n] END;
    same_effects := a[n + 1:] = b[cardinality(b) - 1:];
    same_plan := regress.dd_plan(q, 'x') = regress.dd_plan(q, 't');
    same_estimates := regress.dd_estimates(q, 'x') = regress.dd_estimates(q, 't');
END
$$;

CREATE TABLE dd_corpus (n serial, name text, q text, ordered boolean DEFAULT false);
INSERT INTO dd_corpus (name, q, ordered) VALUES
-- fields, whole rows, the layout variant
('fields', $q$SELECT id, (%D%(id)).ts, (%D%(id)).node_id, (%D%(id)).sequence FROM dd_keys$q$, false),
('star', $q$SELECT id, (%D%(id)).* FROM dd_keys$q$, false),
('whole row', $q$SELECT id, %D%(id) FROM dd_keys$q$, false),
('whole row json, null', $q$SELECT id, to_json(%D%(id)), %D%(id) IS NULL, %D%(id) IS DISTINCT FROM NULL, coalesce(%D%(id), %D%(0)) FROM dd_keys$q$, false),
('layout variant', $q$SELECT id, (%D%(id, 'twitter')).ts, (%D%(id, 'twitter')).node_fields, %D%(id, 'discord') FROM dd_keys$q$, false),
('values', $q$SELECT (%D%(v)).ts, (%D%(v)).node_id FROM (VALUES (1::bigint), (NULL), (4194304)) x(v)$q$, false),
-- FROM
('from', $q$SELECT k.id, d.ts, d.node_id, d.sequence FROM dd_keys k, %D%(k.id) d$q$, false),
('from whole row', $q$SELECT k.id, d, row_to_json(d), d IS NULL FROM dd_keys k, %D%(k.id) d$q$, false),
('from count', $q$SELECT count(*) FROM dd_keys k, %D%(k.id) d$q$, false),
('from aliases', $q$SELECT x.* FROM dd_keys k, %D%(k.id) AS x(a, b, c) WHERE x.b = 3$q$, false),
('from layout', $q$SELECT d.* FROM dd_keys k, %D%(k.id, 'twitter') d$q$, false),
('from explicit join', $q$SELECT j.id, j.ts FROM (dd_keys k CROSS JOIN LATERAL %D%(k.id) d) j$q$, false),
('from join, read in a sublink', $q$SELECT (SELECT j.ts) FROM (dd_keys k CROSS JOIN LATERAL %D%(k.id) d) j WHERE j.id > 0$q$, false),
('from left lateral', $q$SELECT o.label, d.* FROM dd_other o LEFT JOIN LATERAL %D%(o.id) d ON d.node_id > 4$q$, false),
('from ordinality', $q$SELECT d.* FROM dd_keys k, %D%(k.id) WITH ORDINALITY d$q$, false),
-- grouping
('group by field', $q$SELECT (%D%(id)).node_id, count(*) FROM dd_keys GROUP BY 1$q$, false),
('group by whole row', $q$SELECT (%D%(id)).node_id, (%D%(id)).ts, count(*) FROM dd_keys GROUP BY %D%(id)$q$, false),
('rollup whole row', $q$SELECT (%D%(id)).node_id, count(*) FROM dd_keys GROUP BY ROLLUP (%D%(id))$q$, false),
('rollup fields', $q$SELECT (%D%(id)).node_id, (%D%(id)).sequence, count(*) FROM dd_keys GROUP BY ROLLUP ((%D%(id)).node_id, (%D%(id)).sequence)$q$, false),
('rollup id', $q$SELECT (%D%(id)).node_id, count(*) FROM dd_keys GROUP BY ROLLUP (id)$q$, false),
('cube', $q$SELECT (%D%(id)).node_id, grp, count(*) FROM dd_keys GROUP BY CUBE (%D%(id), grp)$q$, false),
('grouping sets', $q$SELECT (%D%(id)).node_id, grp, sum((%D%(id)).sequence), GROUPING(%D%(id)) FROM dd_keys GROUP BY GROUPING SETS ((%D%(id)), (grp), ())$q$, false),
('having rollup', $q$SELECT (%D%(id)).node_id, count(*) FROM dd_keys GROUP BY ROLLUP (%D%(id)) HAVING (%D%(id)).node_id IS NULL OR (%D%(id)).node_id > 2$q$, false),
('having', $q$SELECT grp, count(*) FROM dd_keys GROUP BY grp HAVING max((%D%(id)).node_id) > 4$q$, false),
('sublink in rollup', $q$SELECT (SELECT (%D%(k.id)).node_id), count(*) FROM dd_keys k GROUP BY ROLLUP (k.id)$q$, false),
('rollup both', $q$SELECT (%D%(id)).ts, (%D%(id)).node_id, count(*) FROM dd_keys GROUP BY GROUPING SETS ((%D%(id)), ((%D%(id)).ts), ()) HAVING (%D%(id)).ts IS DISTINCT FROM '2024-01-02'$q$, false),
('rollup over from', $q$SELECT d.node_id, count(*) FROM dd_keys k, %D%(k.id) d GROUP BY ROLLUP (d.node_id)$q$, false),
('rollup over from, constant', $q$SELECT d.node_id, k.grp, count(*) FROM dd_keys k, %D%(12345678901234) d GROUP BY ROLLUP (d.node_id, k.grp)$q$, false),
('cube over from row', $q$SELECT d, count(*) FROM dd_keys k, %D%(k.id) d GROUP BY CUBE (d)$q$, false),
('rollup over join using', $q$SELECT (%D%(k.id)).node_id, count(*) FROM dd_keys k JOIN (SELECT DISTINCT id FROM dd_keys) h USING (id) GROUP BY ROLLUP (%D%(id))$q$, false),
('rollup over full join using', $q$SELECT (%D%(id)).node_id, count(*) FROM dd_keys k FULL JOIN dd_other o USING (id) GROUP BY ROLLUP (%D%(id))$q$, false),
('distinct', $q$SELECT DISTINCT (%D%(id)).node_id FROM dd_keys$q$, false),
('distinct on', $q$SELECT DISTINCT ON ((%D%(id)).node_id) (%D%(id)).node_id, id FROM dd_keys ORDER BY (%D%(id)).node_id, id$q$, true),
('window', $q$SELECT id, rank() OVER (PARTITION BY (%D%(id)).node_id ORDER BY (%D%(id)).ts, id), sum((%D%(id)).sequence) OVER (PARTITION BY grp) FROM dd_keys$q$, false),
('order by limit', $q$SELECT id FROM dd_keys ORDER BY (%D%(id)).ts DESC NULLS LAST, id LIMIT 20$q$, true),
('union', $q$SELECT (%D%(id)).node_id FROM dd_keys UNION SELECT (%D%(id)).node_id FROM dd_other$q$, false),
-- joins and sub-selects
('outer join', $q$SELECT k.id, o.id FROM dd_keys k LEFT JOIN dd_other o ON (%D%(k.id)).node_id = (%D%(o.id)).node_id AND (%D%(o.id)).sequence < 5$q$, false),
('lateral subquery', $q$SELECT k.id, s.* FROM dd_keys k, LATERAL (SELECT (%D%(k.id)).ts, d.node_id FROM %D%(k.id + 1) d) s$q$, false),
('scalar sublink', $q$SELECT k.id, (SELECT max((%D%(o.id)).ts) FROM dd_other o WHERE (%D%(o.id)).node_id = (%D%(k.id)).node_id) FROM dd_keys k$q$, false),
('exists and in', $q$SELECT id FROM dd_keys k WHERE EXISTS (SELECT FROM dd_other o WHERE (%D%(o.id)).node_id = (%D%(k.id)).node_id) AND (%D%(id)).sequence IN (SELECT (%D%(o.id)).sequence FROM dd_other o)$q$, false),
('cte materialized', $q$WITH c AS MATERIALIZED (SELECT d.* FROM dd_keys k, %D%(k.id) d) SELECT node_id, max(ts) FROM c GROUP BY node_id$q$, false),
('cte as argument', $q$WITH c AS (SELECT id FROM dd_keys WHERE id IS NOT NULL ORDER BY id DESC LIMIT 1) SELECT d.* FROM %D%((SELECT id FROM c)) d$q$, false),
-- arguments with side effects: evaluated once per call of the function
('volatile argument of a field', $q$SELECT (%D%(4096 + nextval('dd_seq'))).node_id FROM generate_series(1, 3)$q$, false),
('volatile argument of two fields', $q$SELECT (%D%(4096 + nextval('dd_seq'))).node_id, (%D%(4096 + nextval('dd_seq'))).sequence FROM generate_series(1, 3)$q$, false),
('sub-select argument of a field', $q$SELECT (%D%((SELECT 4096 * 2 + nextval('dd_seq')))).sequence FROM generate_series(1, 3)$q$, false),
('generator as argument of a field', $q$SELECT count((%D%(snowflake_nextval())).node_id) FROM generate_series(1, 10)$q$, false),
('generator as argument in from', $q$SELECT snowflake_compose(d.ts, d.node_id, d.sequence) = snowflake_lastval() FROM %D%(snowflake_nextval()) d$q$, false),
('volatile argument in from', $q$SELECT d.sequence FROM generate_series(1, 3) g, %D%(4096 + nextval('dd_seq')) d$q$, false),
('stable argument', $q$SELECT d.node_id FROM %D%(snowflake_min_id(now())) d$q$, false),
('expensive argument', $q$SELECT k.id, d.* FROM dd_keys k, %D%(((((k.id + 1) - 1) * 2) / 2 + 0 - 0 + 1 - 1) * 1 / 1 + 0) d$q$, false),
-- prepared statements, PL/pgSQL, views, SQL functions
('prepared', $q$EXECUTE dd_prep%S%(12345678901234, NULL)$q$, false),
('prepared keys', $q$EXECUTE dd_prep_keys%S%(3)$q$, false),
('prepared, invalid parameter, no row', $q$EXECUTE dd_prep_bad%S%(-1)$q$, false),
('plpgsql', $q$SELECT * FROM dd_plpgsql%S%(4)$q$, false),
('view', $q$SELECT * FROM dd_view%S% WHERE node_id < 3$q$, false),
('sql function', $q$SELECT id, dd_node%S%(id) FROM dd_keys$q$, false),
('sql function, whole row', $q$SELECT id, dd_json%S%(id) FROM dd_keys$q$, false),
('sql set-returning function', $q$SELECT count(*), min(id) FROM dd_since%S%('2024-01-20')$q$, false),
('row-level security', $q$SELECT id, (%D%(id)).ts FROM dd_rls%S%$q$, false),
-- errors
('error in a field', $q$SELECT (%D%(id - 1)).ts FROM dd_keys WHERE id = 0$q$, false),
('error in from', $q$SELECT d.node_id FROM dd_keys k, %D%(k.id - 1) d WHERE k.id = 0$q$, false),
('error, no column read', $q$SELECT count(*) FROM dd_bad k, %D%(k.id) d$q$, false),
('error, column in a case not taken', $q$SELECT k.note, CASE WHEN k.id >= 0 THEN d.ts END FROM dd_bad k, %D%(k.id) d$q$, false),
('error, column under coalesce', $q$SELECT coalesce(k.note, d.node_id::text) FROM dd_bad k, %D%(k.id) d$q$, false),
('error, column only in a sub-select', $q$SELECT k.note, (SELECT d.ts WHERE k.id >= 0) FROM dd_bad k, %D%(k.id) d$q$, false),
('no error, constant under a false qual', $q$SELECT (%D%(-1)).ts FROM dd_keys WHERE false$q$, false),
('error of a layout', $q$SELECT (%D%(id, 'nonsense')).ts FROM dd_keys$q$, false),
('error past the largest timestamp, node', $q$SELECT (%D%(v.id, 'epoch=9999-12-31; unit=86400000ms; fields=timestamp:63')).node_id FROM (VALUES (9223372036854775807::bigint)) v(id)$q$, false),
('error past the largest timestamp, from', $q$SELECT d.sequence FROM (VALUES (9223372036854775807::bigint)) v(id), %D%(v.id, 'epoch=9999-12-31; unit=86400000ms; fields=timestamp:63') d$q$, false),
-- plans: an index, a partial index, statistics, partitions, CHECK
-- constraints, in the decode form
('expression index', $q$SELECT id FROM dd_idx%S% WHERE (%D%(id)).ts >= '2024-03-01' AND (%D%(id)).ts < '2024-03-01 12:00'$q$, false),
('expression index, order by limit', $q$SELECT id FROM dd_idx%S% WHERE (%D%(id)).ts >= '2024-03-01' ORDER BY (%D%(id)).ts LIMIT 10$q$, true),
('expression index, max', $q$SELECT max((%D%(id)).ts) FROM dd_idx%S%$q$, false),
('expression index, from', $q$SELECT k.id FROM dd_idx%S% k, %D%(k.id) d WHERE d.ts >= '2024-03-01' AND d.ts < '2024-03-01 12:00'$q$, false),
('partial index', $q$SELECT id FROM dd_idx%S% WHERE (%D%(id)).node_id = 3 AND id < 100000000000000$q$, false),
('statistics', $q$SELECT count(*) FROM dd_idx%S% WHERE (%D%(id)).node_id = 3 AND grp = 0$q$, false),
('statistics, group by', $q$SELECT (%D%(id)).node_id, grp, count(*) FROM dd_idx%S% GROUP BY 1, 2$q$, false),
('partition key', $q$SELECT count(*) FROM dd_part%S% WHERE (%D%(id)).ts >= '2024-02-01' AND (%D%(id)).ts < '2024-02-15'$q$, false),
('partition key, view', $q$SELECT count(*) FROM dd_part_view%S% WHERE ts >= '2024-02-01' AND ts < '2024-02-15'$q$, false),
('partition key, prepared', $q$EXECUTE dd_part_since%S%('2024-02-10')$q$, false),
('partition key, sql function', $q$SELECT count(*) FROM dd_part_since%S%('2024-02-10')$q$, false),
('partition key, from', $q$SELECT count(*) FROM dd_part%S% p, %D%(p.id) d WHERE d.ts >= '2024-02-01' AND d.ts < '2024-02-15'$q$, false),
('check constraint exclusion', $q$SELECT count(*) FROM dd_ev%S% WHERE (%D%(id)).ts >= '2024-02-10'$q$, false);

SELECT n, name, c.*
  FROM dd_corpus, regress.dd_compare(q, ordered) c
 ORDER BY n;

-- The same for a role the row-level security policy applies to.
CREATE ROLE regress_decode_rls;
GRANT SELECT, UPDATE ON SEQUENCE dd_seq TO regress_decode_rls;
SET ROLE regress_decode_rls;
SELECT c.* FROM regress.dd_compare(
    $q$SELECT id, (%D%(id)).ts, d.sequence FROM dd_rls%S% r, %D%(r.id) d WHERE d.sequence > 3$q$,
    false) c;
RESET ROLE;
REVOKE ALL ON SEQUENCE dd_seq FROM regress_decode_rls;
DROP ROLE regress_decode_rls;

-- The summary: no query differs.
SELECT count(*) AS queries,
       count(*) FILTER (WHERE NOT (c.same_rows AND c.same_effects AND c.same_plan AND c.same_estimates)
                               OR c.same_order IS FALSE) AS differ
  FROM dd_corpus, regress.dd_compare(q, ordered) c;

-- Three of the plans in full: an index on ((snowflake_decode(id)).ts) serves
-- a query written the same way, and a table partitioned by it prunes; in
-- FROM, the function scan's column d.ts matches neither.
SELECT regress.dd_plan(q, 'x') AS plan
  FROM dd_corpus WHERE name IN ('expression index', 'partition key', 'expression index, from')
 ORDER BY n;
-- The statistics object applies: 2,500 rows (node 3 has only group 0),
-- where the two columns alone would give 1,250.
SELECT regress.dd_estimates(q, 'x') AS estimates
  FROM dd_corpus WHERE name = 'statistics';

--
-- The scalar decoders compute what the fields do: over every key and an
-- invalid one, in the SELECT list and in FROM, the same values and errors.
-- One exception, by design: an ID whose timestamp field is past the
-- largest timestamp (a layout with a wide field can hold one) has no row,
-- so snowflake_decode raises 22008 for it, where snowflake_node_id and
-- snowflake_sequence still decode their fields.
--
CREATE TABLE dd_pairs (n serial, name text, decode_form text, scalar_form text);
INSERT INTO dd_pairs (name, decode_form, scalar_form) VALUES
('fields', $q$SELECT id, (snowflake_decode(id)).ts, (snowflake_decode(id)).node_id, (snowflake_decode(id)).sequence FROM dd_keys$q$,
           $q$SELECT id, snowflake_timestamp(id), snowflake_node_id(id), snowflake_sequence(id) FROM dd_keys$q$),
('star', $q$SELECT id, (snowflake_decode(id)).* FROM dd_keys$q$,
         $q$SELECT id, snowflake_timestamp(id), snowflake_node_id(id), snowflake_sequence(id) FROM dd_keys$q$),
('from', $q$SELECT k.id, d.* FROM dd_keys k, snowflake_decode(k.id) d$q$,
         $q$SELECT k.id, snowflake_timestamp(k.id), snowflake_node_id(k.id), snowflake_sequence(k.id) FROM dd_keys k$q$),
('layout', $q$SELECT id, (snowflake_decode(id, 'twitter')).ts, (snowflake_decode(id, 'twitter')).node_id, (snowflake_decode(id, 'twitter')).sequence FROM dd_keys$q$,
           $q$SELECT id, snowflake_timestamp(id, 'twitter'), snowflake_node_id(id, 'twitter'), snowflake_sequence(id, 'twitter') FROM dd_keys$q$),
('invalid ID', $q$SELECT (snowflake_decode(id)).ts FROM dd_bad$q$,
               $q$SELECT snowflake_timestamp(id) FROM dd_bad$q$),
('invalid ID, node', $q$SELECT (snowflake_decode(id)).node_id FROM dd_bad$q$,
                     $q$SELECT snowflake_node_id(id) FROM dd_bad$q$),
('past the largest timestamp, node', $q$SELECT (snowflake_decode(v.id, 'epoch=9999-12-31; unit=86400000ms; fields=timestamp:63')).node_id FROM (VALUES (9223372036854775807::bigint)) v(id)$q$,
                                     $q$SELECT snowflake_node_id(v.id, 'epoch=9999-12-31; unit=86400000ms; fields=timestamp:63') FROM (VALUES (9223372036854775807::bigint)) v(id)$q$);
SELECT n, name, cardinality(a) - 2 AS results, a[1] AS decode_first, b[1] AS scalar_first,
       a = b AS same
  FROM dd_pairs,
       LATERAL (SELECT regress.dd_run(decode_form, 'x') a, regress.dd_run(scalar_form, 'x') b) r
 ORDER BY n;

DO $$
DECLARE
    d text;
BEGIN
    FOR d IN SELECT regress.dd_for(s, side)
               FROM unnest(ARRAY['DEALLOCATE dd_prep%S%', 'DEALLOCATE dd_prep_keys%S%',
                                 'DEALLOCATE dd_prep_bad%S%', 'DEALLOCATE dd_part_since%S%',
                                 'DROP VIEW dd_view%S%, dd_part_view%S%',
                                 'DROP FUNCTION dd_node%S%, dd_json%S%, dd_since%S%, dd_plpgsql%S%, dd_part_since%S%',
                                 'DROP TABLE dd_idx%S%, dd_part%S%, dd_rls%S%',
                                 'DROP TABLE dd_ev%S% CASCADE']) s,
                    unnest(ARRAY['x', 't']) side LOOP
        EXECUTE d;
    END LOOP;
END
$$;
DROP FUNCTION regress.dd_run(text, text), regress.dd_compare(text, boolean),
    regress.dd_plan(text, text), regress.dd_estimates(text, text), regress.dd_for(text, text);
DROP TABLE dd_keys, dd_other, dd_bad, dd_objects, dd_corpus, dd_pairs;
DROP SEQUENCE dd_seq;
DROP SCHEMA twin CASCADE;
