/* snowflake--1.2--1.3.sql: update an installed 1.2 to 1.3 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.3'" to load this file. \quit

-- Each SQL object is written once: there is no snowflake--1.3.sql.  A fresh
-- CREATE EXTENSION snowflake runs snowflake--1.0.sql and the update scripts
-- up to this one (see the head of snowflake--1.0--1.1.sql for the rules
-- every update script follows: qualify every name, add objects or CREATE OR
-- REPLACE them, never drop one that users' objects may depend on).

-- Public IDs (1.3, docs/public-ids.md): a keyed permutation of the 63-bit
-- IDs, FF1 (NIST SP 800-38G) on AES from OpenSSL's libcrypto, so that an
-- ID can be shown without telling when it was made or how many came
-- before it.  Every ID maps to exactly one public ID, 0 to 2^63 - 1, and
-- back.
--
-- With the key as an argument (16, 24 or 32 bytes: AES-128, -192, -256):
-- IMMUTABLE, the result depends on the arguments alone.
CREATE FUNCTION @extschema@.snowflake_encrypt_id(id pg_catalog.int8, key pg_catalog.bytea)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_encrypt_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_encrypt_id(pg_catalog.int8, pg_catalog.bytea) IS
'the public ID of a snowflake ID under an AES key of 16, 24 or 32 bytes: FF1 (NIST SP 800-38G) over its 63 bits';

CREATE FUNCTION @extschema@.snowflake_decrypt_id(public_id pg_catalog.int8, key pg_catalog.bytea)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_decrypt_id'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_decrypt_id(pg_catalog.int8, pg_catalog.bytea) IS
'the snowflake ID of a public ID made by snowflake_encrypt_id() under the same key';

-- With a configured key, named by its id (0 to 31), from the key file that
-- the setting snowflake.public_keys_file names: STABLE, the keys can
-- change between statements.  PARALLEL RESTRICTED: the leader reads the
-- file once for the statement (src/keyring.c); a parallel worker would
-- read it anew at its own first call, and could find other keys there if
-- the file was replaced meanwhile, so these run in the leader only (the
-- scan below them still runs in parallel).
CREATE FUNCTION @extschema@.snowflake_to_public(id pg_catalog.int8, key_id pg_catalog.int4)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_to_public'
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.snowflake_to_public(pg_catalog.int8, pg_catalog.int4) IS
'the public ID of a snowflake ID under the configured key key_id (0 to 31)';

CREATE FUNCTION @extschema@.snowflake_from_public(public_id pg_catalog.int8, key_id pg_catalog.int4)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_from_public'
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.snowflake_from_public(pg_catalog.int8, pg_catalog.int4) IS
'the snowflake ID of a public ID made by snowflake_to_public() with the configured key key_id';

-- The public text form: the prefix, the key id as one Crockford base32
-- digit, and the public ID's 13 (the base32 text form's): made with the key
-- marked current, read with the key the text names, so that texts made
-- before a new key became current still read.
CREATE FUNCTION @extschema@.snowflake_to_public_base32(id pg_catalog.int8)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'snowflake_to_public_base32'
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.snowflake_to_public_base32(pg_catalog.int8) IS
'the public text of a snowflake ID: the current key''s id and the public ID under it, 14 Crockford base32 digits';

CREATE FUNCTION @extschema@.snowflake_to_public_base32(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'snowflake_to_public_base32'
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.snowflake_to_public_base32(pg_catalog.int8, pg_catalog.text) IS
'the public text of a snowflake ID after a prefix: the current key''s id and the public ID under it, 14 Crockford base32 digits';

CREATE FUNCTION @extschema@.snowflake_from_public_base32(public_text pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_from_public_base32'
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.snowflake_from_public_base32(pg_catalog.text) IS
'the snowflake ID of a public text made by snowflake_to_public_base32(), under the configured key it names';

CREATE FUNCTION @extschema@.snowflake_from_public_base32(public_text pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_from_public_base32'
LANGUAGE C STABLE STRICT PARALLEL RESTRICTED;

COMMENT ON FUNCTION @extschema@.snowflake_from_public_base32(pg_catalog.text, pg_catalog.text) IS
'the snowflake ID of a public text made by snowflake_to_public_base32() with that prefix, under the configured key it names';

-- Converting a key (1.3): snowflake_convert_column() rewrites and checks
-- every table of the key's chain (the tables whose foreign keys reference
-- it, their partitions and children) as the role that runs it, so it ran
-- what the owners of those tables wrote into them (a CHECK constraint, an
-- index expression) as that role: a superuser converting a table of its
-- own ran another role's code as a superuser.  It now refuses, naming
-- them, when a table of the chain belongs to another role, superusers
-- included (test/t/090_hostile_objects.pl, sql/convert.sql).  The rest is
-- 1.1's.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_convert_column(tbl pg_catalog.regclass, col pg_catalog.name,
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
    chain_rels oid[];
    others text;
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
    ),
    -- (1.3) Every table the statements change or check again: the key's
    -- table, the referencing ones (their foreign keys are made anew), and
    -- their partitions and inheritance children.
    chain(relid) AS (
        SELECT r.relid FROM refs r
      UNION
        SELECT i.inhrelid FROM chain c JOIN pg_catalog.pg_inherits i ON i.inhparent = c.relid
    )
    SELECT (SELECT pg_catalog.array_agg(t.relid) FROM tree t), (SELECT pg_catalog.array_agg(t.attnum) FROM tree t),
           (SELECT pg_catalog.array_agg(t.depth) FROM tree t), (SELECT pg_catalog.array_agg(t.root) FROM tree t),
           (SELECT pg_catalog.array_agg(c.relid) FROM chain c)
      INTO w_rel, w_att, w_depth, w_root, chain_rels;

    -- (1.3) The statements rewrite and check those tables as the role that
    -- runs them, so running what their owners wrote into them (CHECK
    -- constraints, index expressions, defaults) as that role: one that
    -- belongs to another role is refused, for superusers too, before
    -- anything changes.  Its owner converts it.
    SELECT pg_catalog.string_agg(format('Table %s belongs to role %I.', c.oid::regclass, r.rolname),
                                 E'\n' ORDER BY c.oid::regclass::text)
      INTO others
      FROM pg_catalog.pg_class c JOIN pg_catalog.pg_roles r ON r.oid = c.relowner
     WHERE c.oid = ANY (chain_rels) AND r.rolname <> CURRENT_USER;
    IF others IS NOT NULL THEN
        RAISE EXCEPTION USING ERRCODE = '42501',
            MESSAGE = format('permission denied to convert column "%s" of table "%s"', col, tbl_name),
            DETAIL = others,
            HINT = 'Converting rewrites and checks each table of the chain as the role that runs it, running what its owner wrote into it. Convert it as the role that owns every table named (SET ROLE), or give them one owner first.';
    END IF;

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

-- Fleets: node id claims.  A server claims its node id once with
-- snowflake_claim_node(); the claims table is published with the fleet's
-- data, and a claim of a node id that another server (another system
-- identifier) holds already fails, locally or where replication applies it.
-- Nothing here is on the path of snowflake_nextval().

-- Node id claims under Citus (1.3): the query sent to every node, run
-- there in a new session of a superuser under the database's default
-- search_path, qualifies every name and operator (test/t/090_hostile_objects.pl
-- runs it so).  The rest is 1.2's.
CREATE OR REPLACE FUNCTION @extschema@.snowflake_claim_node(server_name pg_catalog.text DEFAULT NULL)
RETURNS pg_catalog.int4
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    nsp name;
    me record;
    sysid bigint;
    myname text;
    probe text;
    other record;
    them jsonb;
    shared_id integer;
BEGIN
    SELECT n.nspname INTO nsp
      FROM pg_catalog.pg_extension e
      JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'snowflake';
    -- snowflake_stats_all() raises 55000 when the library is not preloaded.
    -- The epoch in UTC, to the millisecond, whatever the session's TimeZone.
    EXECUTE format($q$SELECT node_id, node_id + node_id_span - 1 AS last_id,
                             to_char(epoch AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') || '+00' AS epoch,
                             timestamp_bits || '/' || node_bits || '/' || sequence_bits AS layout
                        FROM %I.snowflake_stats_all()$q$, nsp) INTO me;
    IF me.node_id IS NULL THEN
        RAISE EXCEPTION USING
            ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = 'parameter "snowflake.node_id" is not set',
            HINT = 'Set "snowflake.node_id" in postgresql.conf and restart the server before claiming a node id.';
    END IF;
    SELECT c.system_identifier INTO sysid FROM pg_catalog.pg_control_system() c;
    myname := coalesce(server_name, nullif(pg_catalog.current_setting('cluster_name'), ''), sysid::text);

    IF EXISTS (SELECT FROM pg_catalog.pg_extension WHERE extname = 'citus') THEN
        -- What every node of the Citus cluster (this one included) mints
        -- with (its node ids, from node_id to last_id), and a claim of one
        -- of this server's node ids by another server if it holds one.  The
        -- same extension schema on every node: Citus creates the extension
        -- on the workers as it is on the coordinator.
        -- (1.3) Every name and operator qualified: Citus runs it on each node
        -- in a session of its own, as a superuser, with the database's
        -- default search_path, which a database owner sets (public first,
        -- say, where any role may have put an operator of these very types).
        probe := format($q$SELECT pg_catalog.json_build_object(
                'sysid', c.system_identifier::pg_catalog.text,
                'name', CASE WHEN pg_catalog.current_setting('cluster_name') OPERATOR(pg_catalog.=) ''::pg_catalog.text
                             THEN c.system_identifier::pg_catalog.text
                             ELSE pg_catalog.current_setting('cluster_name') END,
                'node_id', s.node_id,
                'last_id', s.node_id OPERATOR(pg_catalog.+) s.node_id_span OPERATOR(pg_catalog.-) 1,
                'epoch', pg_catalog.to_char(s.epoch AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS')
                         OPERATOR(pg_catalog.||) '+00'::pg_catalog.text,
                'layout', pg_catalog.concat_ws('/', s.timestamp_bits, s.node_bits, s.sequence_bits),
                'claim', (SELECT pg_catalog.json_build_object('node_id', k.node_id,
                                                              'sysid', k.system_identifier::pg_catalog.text,
                                                              'name', k.server_name,
                                                              'at', k.claimed_at::pg_catalog.text)
                            FROM %1$I.snowflake_node_claims k
                           WHERE k.node_id OPERATOR(pg_catalog.>=) %2$s::pg_catalog.int4
                             AND k.node_id OPERATOR(pg_catalog.<=) %3$s::pg_catalog.int4
                             AND k.system_identifier OPERATOR(pg_catalog.<>) %4$s::pg_catalog.int8
                           ORDER BY k.node_id
                           LIMIT 1))
              FROM %1$I.snowflake_stats_all() s, pg_catalog.pg_control_system() c$q$,
            nsp, me.node_id, me.last_id, sysid);
        FOR other IN EXECUTE
            'SELECT r.success, r.result, n.nodename || '':'' || n.nodeport AS addr
               FROM pg_catalog.run_command_on_all_nodes($1) r
               LEFT JOIN pg_catalog.pg_dist_node n ON n.nodeid = r.nodeid
              ORDER BY r.nodeid' USING probe
        LOOP
            IF NOT other.success THEN
                RAISE EXCEPTION USING
                    ERRCODE = 'object_not_in_prerequisite_state',
                    MESSAGE = format('cannot read the snowflake settings of Citus node %s', other.addr),
                    DETAIL = format('The node answered: %s', other.result),
                    HINT = 'Every node of the Citus cluster must be reachable and run snowflake (preloaded, with its node id) before a node id is claimed.';
            END IF;
            them := other.result::jsonb;
            CONTINUE WHEN them->>'sysid' = sysid::text;
            IF them->'claim' IS NOT NULL AND them->'claim' <> 'null'::jsonb THEN
                RAISE EXCEPTION USING
                    ERRCODE = 'unique_violation',
                    MESSAGE = format('snowflake node id %s is claimed by two servers', them->'claim'->>'node_id'),
                    DETAIL = format('Server "%s" (system identifier %s) claimed it at %s, as Citus node %s records; server "%s" (system identifier %s) claims it too.',
                                    them->'claim'->>'name', them->'claim'->>'sysid', them->'claim'->>'at',
                                    other.addr, myname, sysid),
                    HINT = 'Give every server that mints IDs its own "snowflake.node_id", and remove the wrong claim once no server mints with it.';
            END IF;
            -- The two ranges of node ids overlap: name the first shared one.
            shared_id := greatest((them->>'node_id')::pg_catalog.int4, me.node_id);
            IF shared_id <= least((them->>'last_id')::pg_catalog.int4, me.last_id) THEN
                RAISE EXCEPTION USING
                    ERRCODE = 'unique_violation',
                    MESSAGE = format('snowflake node id %s is claimed by two servers', shared_id),
                    DETAIL = format('Server "%s" (system identifier %s), Citus node %s, mints with it; server "%s" (system identifier %s) claims it too.',
                                    them->>'name', them->>'sysid', other.addr, myname, sysid),
                    HINT = 'Give every server that mints IDs its own "snowflake.node_id", and remove the wrong claim once no server mints with it.';
            END IF;
            IF them->>'epoch' <> me.epoch OR them->>'layout' <> me.layout THEN
                RAISE EXCEPTION USING
                    ERRCODE = 'object_not_in_prerequisite_state',
                    MESSAGE = 'snowflake epoch or layout differs between the servers of the Citus cluster',
                    DETAIL = format('Server "%s" (system identifier %s), Citus node %s, mints with epoch %s and layout %s; server "%s" (system identifier %s) with epoch %s and layout %s.',
                                    them->>'name', them->>'sysid', other.addr, them->>'epoch', them->>'layout',
                                    myname, sysid, me.epoch, me.layout),
                    HINT = 'Give every node of the Citus cluster the same "snowflake.epoch", "snowflake.timestamp_bits", "snowflake.node_bits" and "snowflake.sequence_bits": decoders and snowflake_min_id() run on any node.';
            END IF;
        END LOOP;
    END IF;

    FOR i IN me.node_id .. me.last_id LOOP
        EXECUTE format('INSERT INTO %I.snowflake_node_claims (node_id, system_identifier, server_name) VALUES ($1, $2, $3)', nsp)
            USING i, sysid, myname;
    END LOOP;
    RETURN me.node_id;
END
$$;
