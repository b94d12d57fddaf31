/* snowflake--1.0--1.1.sql: update an installed 1.0 to 1.1 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.1'" to load this file. \quit

-- Each SQL object is written once: there is no snowflake--1.1.sql.  A fresh
-- CREATE EXTENSION snowflake runs snowflake--1.0.sql and then this script,
-- as PostgreSQL chains an install script and update scripts when the
-- version asked for has no install script of its own (as
-- contrib/pg_stat_statements ships).  So a fresh 1.1 and 1.0 updated to 1.1
-- are the same by construction; test/t/040_upgrade_dump.pl checks it.
--
-- Adding a version (1.2, say): write snowflake--1.1--1.2.sql beside this one
-- (the Makefile installs every snowflake--*.sql), raise default_version in
-- snowflake.control, and never edit a released script.  Add no install
-- script snowflake--1.2.sql: CREATE EXTENSION would prefer it to the chain.
-- In the update script, as here: qualify every name (pg_catalog.,
-- @extschema@.), since a database owner may run it (the extension is
-- trusted); add objects or CREATE OR REPLACE them, never drop or recreate
-- one that users' objects may depend on (see the snowflake_stats section
-- below for a row that gains columns).
--
-- snowflake--1.0.sql is released and frozen, and unqualified.  Run by a
-- trusted install, it is still safe: PostgreSQL runs extension scripts with
-- search_path = the target schema, pg_temp, and pg_catalog (searched first)
-- holds every type and built-in it names; the only other name it looks up is
-- its own snowflake_stats(), which this script replaces in the view.
-- test/t/026_trusted.pl installs both ways under a hostile search_path.

-- Decoding IDs of other layouts (1.1).  The same C functions as the
-- one-argument decoders, with a layout as the last argument: a preset
-- ('twitter', 'discord', 'instagram', 'sonyflake', 'mastodon', 'pgedge') or a
-- spelled-out layout.  IMMUTABLE: the result depends on the arguments alone
-- (the presets never change), so they serve in indexes and partition bounds.

CREATE FUNCTION @extschema@.snowflake_decode(id pg_catalog.int8, layout pg_catalog.text,
    OUT ts pg_catalog.timestamptz, OUT node_id pg_catalog.int4, OUT sequence pg_catalog.int4,
    OUT node_fields pg_catalog.jsonb)
RETURNS pg_catalog.record
AS 'MODULE_PATHNAME', 'snowflake_decode'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_decode(pg_catalog.int8, pg_catalog.text) IS
'split an ID of the given layout into its time, node id, sequence number and named node fields';

CREATE FUNCTION @extschema@.snowflake_timestamp(id pg_catalog.int8, layout pg_catalog.text)
RETURNS pg_catalog.timestamptz
AS 'MODULE_PATHNAME', 'snowflake_timestamp'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_timestamp(pg_catalog.int8, pg_catalog.text) IS
'the time an ID of the given layout was minted';

CREATE FUNCTION @extschema@.snowflake_node_id(id pg_catalog.int8, layout pg_catalog.text)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'snowflake_node_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_node_id(pg_catalog.int8, pg_catalog.text) IS
'the node field of an ID of the given layout (all its parts together)';

CREATE FUNCTION @extschema@.snowflake_sequence(id pg_catalog.int8, layout pg_catalog.text)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'snowflake_sequence'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_sequence(pg_catalog.int8, pg_catalog.text) IS
'the sequence field of an ID of the given layout';

CREATE FUNCTION @extschema@.snowflake_min_id(ts pg_catalog.timestamptz, layout pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_min_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_min_id(pg_catalog.timestamptz, pg_catalog.text) IS
'smallest ID of the given layout that can carry the time unit containing ts';

CREATE FUNCTION @extschema@.snowflake_max_id(ts pg_catalog.timestamptz, layout pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_max_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_max_id(pg_catalog.timestamptz, pg_catalog.text) IS
'largest ID of the given layout that can carry the time unit containing ts';

CREATE FUNCTION @extschema@.snowflake_compose(ts pg_catalog.timestamptz, node_id pg_catalog.int4, sequence pg_catalog.int4, layout pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_compose'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_compose(pg_catalog.timestamptz, pg_catalog.int4, pg_catalog.int4, pg_catalog.text) IS
'build an ID of the given layout from its fields, each range-checked';
-- Adoption

CREATE FUNCTION @extschema@.snowflake_convert_column(tbl pg_catalog.regclass, col pg_catalog.name,
                                         dry_run pg_catalog.bool DEFAULT false)
RETURNS SETOF pg_catalog.text
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $convert$
DECLARE
    ext_schema name;
    rel_kind "char";
    tbl_name name;
    key_att record;
    key_name text;
    nextval_sql text;
    owned_seq regclass;
    max_value bigint;
    min_next bigint;
    blockers text;
    seq_users text;
    locks text;
    stmt text;
    stmts text[] := '{}';
    w_rel oid[];
    w_att smallint[];
    w_depth integer[];
    w_root oid[];
BEGIN
    -- The default calls the generator in the schema the extension lives in,
    -- wherever that is, whatever the caller's search_path.
    SELECT n.nspname INTO ext_schema
      FROM pg_catalog.pg_extension e
      JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'snowflake';
    nextval_sql := format('%I.snowflake_nextval()', ext_schema);

    SELECT c.relkind, c.relname INTO rel_kind, tbl_name
      FROM pg_catalog.pg_class c WHERE c.oid = tbl;
    IF rel_kind NOT IN ('r', 'p') THEN
        RAISE EXCEPTION USING ERRCODE = '42809',
            MESSAGE = format('"%s" is not a table', tbl_name);
    END IF;

    SELECT a.attnum, a.atttypid, a.attidentity, a.attinhcount INTO key_att
      FROM pg_catalog.pg_attribute a
     WHERE a.attrelid = tbl AND a.attname = col AND a.attnum > 0
       AND NOT a.attisdropped;
    IF NOT FOUND THEN
        RAISE EXCEPTION USING ERRCODE = '42703',
            MESSAGE = format('column "%s" of relation "%s" does not exist', col, tbl_name);
    END IF;
    key_name := pg_catalog.pg_describe_object('pg_catalog.pg_class'::regclass, tbl, key_att.attnum);

    IF key_att.atttypid NOT IN ('pg_catalog.int2'::regtype, 'pg_catalog.int4'::regtype,
                                'pg_catalog.int8'::regtype) THEN
        RAISE EXCEPTION USING ERRCODE = '42804',
            MESSAGE = format('column "%s" of table "%s" is not an integer column', col, tbl_name),
            DETAIL = format('Its type is %s; only smallint, integer and bigint columns can hold snowflake IDs.',
                            pg_catalog.format_type(key_att.atttypid, NULL));
    END IF;
    IF key_att.attinhcount > 0 THEN
        RAISE EXCEPTION USING ERRCODE = '42P16',
            MESSAGE = format('column "%s" of table "%s" is inherited', col, tbl_name),
            HINT = 'Convert the column of the topmost parent table: its partitions and children follow.';
    END IF;

    -- The key and every column that references it through foreign keys,
    -- recursively; then those of them that are smallint or integer, together
    -- with the same columns of their partitions and inheritance children
    -- (ALTER TABLE recurses to them).
    WITH RECURSIVE refs(relid, attnum, depth) AS (
        SELECT tbl::oid, key_att.attnum, 0
      UNION
        SELECT c.conrelid, c.conkey[i], r.depth + 1
          FROM refs r
          JOIN pg_catalog.pg_constraint c
            ON c.contype = 'f' AND c.confrelid = r.relid AND c.conparentid = 0
          CROSS JOIN LATERAL pg_catalog.generate_subscripts(c.confkey, 1) AS i
         WHERE c.confkey[i] = r.attnum AND r.depth < 100
    ),
    widen AS (
        SELECT r.relid, r.attnum, min(r.depth) AS depth
          FROM refs r
          JOIN pg_catalog.pg_attribute a ON a.attrelid = r.relid AND a.attnum = r.attnum
         WHERE a.atttypid IN ('pg_catalog.int2'::regtype, 'pg_catalog.int4'::regtype)
         GROUP BY r.relid, r.attnum
    ),
    tree(relid, attnum, depth, root) AS (
        SELECT w.relid, w.attnum, w.depth, w.relid FROM widen w
      UNION
        SELECT i.inhrelid, ca.attnum, t.depth, t.root
          FROM tree t
          JOIN pg_catalog.pg_inherits i ON i.inhparent = t.relid
          JOIN pg_catalog.pg_attribute pa ON pa.attrelid = t.relid AND pa.attnum = t.attnum
          JOIN pg_catalog.pg_attribute ca ON ca.attrelid = i.inhrelid AND ca.attname = pa.attname
    )
    SELECT pg_catalog.array_agg(t.relid), pg_catalog.array_agg(t.attnum),
           pg_catalog.array_agg(t.depth), pg_catalog.array_agg(t.root)
      INTO w_rel, w_att, w_depth, w_root
      FROM tree t;

    -- What would make the type change fail: name all of it before changing
    -- anything.
    SELECT pg_catalog.string_agg(b.line, E'\n' ORDER BY b.line) INTO blockers
      FROM (SELECT DISTINCT format('%s depends on %s.',
                       pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid),
                       pg_catalog.pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid)) AS line
              FROM ROWS FROM (pg_catalog.unnest(w_rel), pg_catalog.unnest(w_att),
                             pg_catalog.unnest(w_depth), pg_catalog.unnest(w_root))
                   AS w(relid, attnum, depth, root)
              JOIN pg_catalog.pg_depend d
                ON d.refclassid = 'pg_catalog.pg_class'::regclass
               AND d.refobjid = w.relid AND d.refobjsubid = w.attnum
             WHERE (d.classid IN ('pg_catalog.pg_rewrite'::regclass,
                                  'pg_catalog.pg_trigger'::regclass,
                                  'pg_catalog.pg_policy'::regclass,
                                  'pg_catalog.pg_publication_rel'::regclass)
                    AND d.deptype = 'n')
                OR (d.classid = 'pg_catalog.pg_attrdef'::regclass
                    AND EXISTS (SELECT 1
                                  FROM pg_catalog.pg_attrdef ad
                                  JOIN pg_catalog.pg_attribute ga
                                    ON ga.attrelid = ad.adrelid AND ga.attnum = ad.adnum
                                 WHERE ad.oid = d.objid AND ga.attgenerated <> ''))
            UNION
            SELECT format('%s is part of the partition key of %s.',
                          pg_catalog.pg_describe_object('pg_catalog.pg_class'::regclass, w.relid, w.attnum),
                          pg_catalog.pg_describe_object('pg_catalog.pg_class'::regclass, w.relid, 0))
              FROM ROWS FROM (pg_catalog.unnest(w_rel), pg_catalog.unnest(w_att),
                             pg_catalog.unnest(w_depth), pg_catalog.unnest(w_root))
                   AS w(relid, attnum, depth, root)
              JOIN pg_catalog.pg_partitioned_table pt ON pt.partrelid = w.relid
             WHERE w.attnum = ANY (pt.partattrs)) b;
    IF blockers IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = '2BP01',
            MESSAGE = format('cannot widen column "%s" of table "%s" and the columns referencing it to bigint', col, tbl_name),
            DETAIL = blockers,
            HINT = 'Drop or change those objects, convert the column, then create them again, in one transaction.';
    END IF;

    -- Every table the statements change, locked before the values are read.
    SELECT pg_catalog.string_agg(t.relid::regclass::text, ', ' ORDER BY t.depth, t.relid::regclass::text)
      INTO locks
      FROM (SELECT tbl::oid AS relid, -1 AS depth
            UNION
            SELECT w.relid, min(w.depth)
              FROM ROWS FROM (pg_catalog.unnest(w_rel), pg_catalog.unnest(w_att),
                             pg_catalog.unnest(w_depth), pg_catalog.unnest(w_root))
                   AS w(relid, attnum, depth, root)
             WHERE w.relid = w.root AND w.relid <> tbl
             GROUP BY w.relid) t;
    stmt := format('LOCK TABLE %s IN ACCESS EXCLUSIVE MODE', locks);
    stmts := stmts || stmt;
    IF NOT dry_run THEN
        EXECUTE stmt;
    END IF;

    -- Existing values stay as they are: they must all sort below the IDs
    -- the generator hands out from now on.
    EXECUTE format('SELECT pg_catalog.max(%I)::bigint FROM %s', col, tbl) INTO max_value;
    EXECUTE format('SELECT %I.snowflake_min_id(pg_catalog.clock_timestamp())', ext_schema)
        INTO min_next;
    IF max_value >= min_next THEN
        RAISE EXCEPTION USING ERRCODE = '55000',
            MESSAGE = format('column "%s" of table "%s" holds values that are not below the next snowflake ID', col, tbl_name),
            DETAIL = format('Its largest value is %s, and the IDs minted now are smaller than that.', max_value),
            HINT = 'New keys must sort above the existing ones: renumber those rows, or keep the sequence.';
    END IF;

    IF key_att.attidentity <> '' THEN
        stmts := stmts || format('ALTER TABLE %s ALTER COLUMN %I DROP IDENTITY', tbl, col);
    END IF;

    -- One ALTER TABLE (one rewrite) per table, in the order of the chain.
    FOR stmt IN
        SELECT format('ALTER TABLE %s %s', w.relid::regclass,
                      pg_catalog.string_agg(format('ALTER COLUMN %I TYPE bigint', a.attname),
                                            ', ' ORDER BY w.attnum))
          FROM ROWS FROM (pg_catalog.unnest(w_rel), pg_catalog.unnest(w_att),
                             pg_catalog.unnest(w_depth), pg_catalog.unnest(w_root))
                   AS w(relid, attnum, depth, root)
          JOIN pg_catalog.pg_attribute a ON a.attrelid = w.relid AND a.attnum = w.attnum
         WHERE w.relid = w.root
         GROUP BY w.relid
         ORDER BY min(w.depth), w.relid::regclass::text
    LOOP
        stmts := stmts || stmt;
    END LOOP;

    stmts := stmts || format('ALTER TABLE %s ALTER COLUMN %I SET DEFAULT %s', tbl, col, nextval_sql);

    -- A serial column's sequence goes when nothing but this column (and the
    -- same column of its partitions and children) uses it.
    SELECT d.objid::regclass INTO owned_seq
      FROM pg_catalog.pg_depend d
      JOIN pg_catalog.pg_class s ON s.oid = d.objid AND s.relkind = 'S'
     WHERE d.classid = 'pg_catalog.pg_class'::regclass
       AND d.refclassid = 'pg_catalog.pg_class'::regclass
       AND d.refobjid = tbl AND d.refobjsubid = key_att.attnum AND d.deptype = 'a';
    IF owned_seq IS NOT NULL THEN
        WITH RECURSIVE tree(relid) AS (
            SELECT tbl::oid
          UNION
            SELECT i.inhrelid FROM tree t JOIN pg_catalog.pg_inherits i ON i.inhparent = t.relid
        )
        SELECT pg_catalog.string_agg(u.line, E'\n' ORDER BY u.line) INTO seq_users
          FROM (SELECT DISTINCT format('%s uses it.',
                           pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid)) AS line
                  FROM pg_catalog.pg_depend d
                 WHERE d.refclassid = 'pg_catalog.pg_class'::regclass
                   AND d.refobjid = owned_seq AND d.deptype = 'n'
                   AND NOT EXISTS (
                       SELECT 1
                         FROM pg_catalog.pg_attrdef ad
                         JOIN pg_catalog.pg_attribute a ON a.attrelid = ad.adrelid AND a.attnum = ad.adnum
                        WHERE d.classid = 'pg_catalog.pg_attrdef'::regclass AND ad.oid = d.objid
                          AND a.attname = col AND ad.adrelid IN (SELECT relid FROM tree))) u;
        IF seq_users IS NULL THEN
            stmts := stmts || format('DROP SEQUENCE %s', owned_seq);
        ELSE
            RAISE NOTICE USING
                MESSAGE = format('sequence "%s" is still used elsewhere and is kept', owned_seq),
                DETAIL = seq_users;
        END IF;
    END IF;

    FOREACH stmt IN ARRAY stmts LOOP
        IF NOT dry_run AND stmt NOT LIKE 'LOCK TABLE %' THEN
            EXECUTE stmt;
        END IF;
        RETURN NEXT stmt;
    END LOOP;
    RETURN;
END
$convert$;

COMMENT ON FUNCTION @extschema@.snowflake_convert_column(pg_catalog.regclass, pg_catalog.name, pg_catalog.bool) IS
'turn a serial or identity key into a snowflake key: widen it and its referencing columns to bigint, default snowflake_nextval(), drop the unused sequence; returns the statements (only returns them with dry_run)';
-- Fleets: node id claims.  A server claims its node id once with
-- snowflake_claim_node(); the claims table is published with the fleet's
-- data, and a claim of a node id that another server (another system
-- identifier) holds already fails, locally or where replication applies it.
-- Nothing here is on the path of snowflake_nextval().

-- The key is the pair: a server that removes its own claim (a replicated
-- delete, found by the key) never removes another server's claim of the
-- same node id.  The guard keeps one server per node id.
CREATE TABLE @extschema@.snowflake_node_claims (
    node_id           pg_catalog.int4 NOT NULL CHECK (node_id OPERATOR(pg_catalog.>=) 0),
    system_identifier pg_catalog.int8 NOT NULL,
    server_name       pg_catalog.text NOT NULL,
    claimed_at        pg_catalog.timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (node_id, system_identifier)
);

COMMENT ON TABLE @extschema@.snowflake_node_claims IS
'node ids claimed by the servers of a fleet, one server (system identifier) per node id; publish it with the fleet''s data';

SELECT pg_catalog.pg_extension_config_dump('@extschema@.snowflake_node_claims', '');

CREATE FUNCTION @extschema@.snowflake_node_claims_guard()
RETURNS pg_catalog.trigger
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    holder record;
BEGIN
    -- Claims of one node id are checked one at a time: a concurrent claim
    -- (a local one, or one another apply worker brings) waits for this one
    -- to commit or abort, then sees it.
    PERFORM pg_catalog.pg_advisory_xact_lock(pg_catalog.hashtext('snowflake_node_claims'),
                                             NEW.node_id);
    EXECUTE format('SELECT system_identifier, server_name, claimed_at FROM %s
                     WHERE node_id = $1 ORDER BY system_identifier = $2 LIMIT 1',
                   TG_RELID::regclass)
        INTO holder USING NEW.node_id, NEW.system_identifier;
    IF holder.system_identifier IS NULL THEN
        RETURN NEW;
    END IF;
    IF holder.system_identifier = NEW.system_identifier THEN
        IF TG_OP = 'INSERT' THEN
            -- The same server again (a repeated claim): the first claim stands.
            RETURN NULL;
        END IF;
        RETURN NEW;
    END IF;
    RAISE EXCEPTION USING
        ERRCODE = 'unique_violation',
        MESSAGE = format('snowflake node id %s is claimed by two servers', NEW.node_id),
        DETAIL = format('Server "%s" (system identifier %s) claimed it at %s; server "%s" (system identifier %s) claims it too.',
                        holder.server_name, holder.system_identifier, holder.claimed_at,
                        NEW.server_name, NEW.system_identifier, NEW.claimed_at),
        HINT = 'Give every server that mints IDs its own "snowflake.node_id", and remove the wrong claim once no server mints with it.';
END
$$;

COMMENT ON FUNCTION @extschema@.snowflake_node_claims_guard() IS
'trigger of snowflake_node_claims: refuses a claim of a node id another server holds, also when replication applies it';

CREATE TRIGGER snowflake_node_claims_guard
    BEFORE INSERT OR UPDATE OF node_id, system_identifier ON @extschema@.snowflake_node_claims
    FOR EACH ROW EXECUTE FUNCTION @extschema@.snowflake_node_claims_guard();

-- Logical replication applies changes with session_replication_role =
-- replica: the guard must fire there too.
ALTER TABLE @extschema@.snowflake_node_claims ENABLE ALWAYS TRIGGER snowflake_node_claims_guard;

CREATE FUNCTION @extschema@.snowflake_claim_node(server_name pg_catalog.text DEFAULT NULL)
RETURNS pg_catalog.int4
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp name;
    node integer;
    sysid bigint;
BEGIN
    SELECT n.nspname INTO nsp
      FROM pg_catalog.pg_extension e
      JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'snowflake';
    -- snowflake_stats() raises 55000 when the library is not preloaded.
    EXECUTE format('SELECT node_id FROM %I.snowflake_stats()', nsp) INTO node;
    IF node IS NULL THEN
        RAISE EXCEPTION USING
            ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = 'parameter "snowflake.node_id" is not set',
            HINT = 'Set "snowflake.node_id" in postgresql.conf and restart the server before claiming a node id.';
    END IF;
    SELECT c.system_identifier INTO sysid FROM pg_catalog.pg_control_system() c;
    EXECUTE format('INSERT INTO %I.snowflake_node_claims (node_id, system_identifier, server_name) VALUES ($1, $2, $3)', nsp)
        USING node, sysid,
              coalesce(server_name,
                       nullif(pg_catalog.current_setting('cluster_name'), ''),
                       sysid::text);
    RETURN node;
END
$$;

COMMENT ON FUNCTION @extschema@.snowflake_claim_node(pg_catalog.text) IS
'record in snowflake_node_claims that this server (its system identifier) mints with its node id; fails if another server claimed it (superuser only)';

REVOKE ALL ON FUNCTION @extschema@.snowflake_claim_node(pg_catalog.text) FROM PUBLIC;

-- 1.1 is trusted (snowflake.control): a database owner without superuser
-- may create and update it.  The update takes "trusted" and
-- "relocatable = false" from the control file.

-- The background writer (1.1): snowflake_stats tells the reservation writes
-- it made from those a caller waited for, and how long callers waited for
-- the disk: columns background_writes, caller_writes and caller_wait_ms.
--
-- How the stats row gains columns, in this version and every later one,
-- without dropping anything that users' views, functions or rules may
-- depend on:
--   * snowflake_stats() keeps 1.0's 18 columns for good (a function's OUT
--     columns cannot change without dropping it);
--   * snowflake_stats_all() returns the composite type snowflake_stats_row,
--     every column of the current version.  A later version appends its
--     columns with ALTER TYPE @extschema@.snowflake_stats_row ADD ATTRIBUTE,
--     which leaves the function and every object over it in place (only a
--     user's function declared to return the type whose body lists the
--     columns must then be changed to list the new ones too);
--   * the view snowflake_stats is replaced in place (CREATE OR REPLACE VIEW)
--     over snowflake_stats_all(): 1.0's columns first, in their order, then
--     each version's new columns appended at the end.
-- One C function, snowflake_stats, serves every definition: it fills as
-- many columns as the row type has (18 or 21 today), in the type's order,
-- where stats_reset comes after 1.1's three columns; columns of later
-- versions come after stats_reset.

CREATE TYPE @extschema@.snowflake_stats_row AS (
    status pg_catalog.text,
    node_id pg_catalog.int4,
    epoch pg_catalog.timestamptz,
    timestamp_bits pg_catalog.int4,
    node_bits pg_catalog.int4,
    sequence_bits pg_catalog.int4,
    last_timestamp pg_catalog.timestamptz,
    lead_ms pg_catalog.int8,
    ids_issued pg_catalog.int8,
    borrowed_ms pg_catalog.int8,
    clock_regressions pg_catalog.int8,
    max_clock_regression_ms pg_catalog.int8,
    waits pg_catalog.int8,
    wait_ms pg_catalog.int8,
    refused pg_catalog.int8,
    reserved_until pg_catalog.timestamptz,
    reservation_writes pg_catalog.int8,
    background_writes pg_catalog.int8,
    caller_writes pg_catalog.int8,
    caller_wait_ms pg_catalog.float8,
    stats_reset pg_catalog.timestamptz);

COMMENT ON TYPE @extschema@.snowflake_stats_row IS
'a row of snowflake_stats_all(): the state and counters of this server''s snowflake generator';

CREATE FUNCTION @extschema@.snowflake_stats_all()
RETURNS @extschema@.snowflake_stats_row
AS 'MODULE_PATHNAME', 'snowflake_stats'
LANGUAGE C VOLATILE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_stats_all() IS
'state and counters of this server''s snowflake generator, every column of this version (the view snowflake_stats shows them)';

COMMENT ON FUNCTION @extschema@.snowflake_stats() IS
'state and counters of this server''s snowflake generator, the columns of version 1.0 (snowflake_stats_all() has them all)';

CREATE OR REPLACE VIEW @extschema@.snowflake_stats AS
SELECT s.status, s.node_id, s.epoch, s.timestamp_bits, s.node_bits, s.sequence_bits,
       s.last_timestamp, s.lead_ms, s.ids_issued, s.borrowed_ms,
       s.clock_regressions, s.max_clock_regression_ms, s.waits, s.wait_ms,
       s.refused, s.reserved_until, s.reservation_writes, s.stats_reset,
       -- 1.1
       s.background_writes, s.caller_writes, s.caller_wait_ms
  FROM @extschema@.snowflake_stats_all() s;
