
-- Switch one database from the SQL edition of snowflake to the C
-- extension, as a superuser, on a server where the C extension is
-- installed, its library preloaded (or PostgreSQL 17 and later) and
-- snowflake.node_id set to the edition's node id:
--
--   psql -v ON_ERROR_STOP=1 -d DATABASE -f snowflake-switch-to-c.sql
--
-- (not with psql -1: its two parts must commit one after the other).  The
-- edition may be a plain install or an extension (pg_tle, database.dev:
-- "HANDLE@snowflake"); it must be at this script's version (update it
-- first).  If the server mints with another node id than the edition, the
-- switch refuses; to mint with the server's from now on, say so first:
--
--   PGOPTIONS='-c snowflake_switch.node_id=17' psql -v ON_ERROR_STOP=1 -d DATABASE -f snowflake-switch-to-c.sql
--
-- Calls of the edition that run meanwhile wait for the switch, then hand
-- out the C extension's keys: none fails.  Every key the C extension
-- issues is above every key the edition issued.
--
-- Part 1, one transaction: the edition's functions move aside, into the
-- schema _snowflake_switch (in-flight statements keep calling them by
-- OID), and the C extension is created in the edition's schema; the
-- edition's generators become functions that call the C extension's.  At
-- its end it takes the edition's lock (a call that must move the key
-- sequence waits for it), marks the edition switched (every call then
-- goes for the lock), reads the edition's last key, waits until the clock
-- has passed its time (at most a second or two), and checks that the C
-- extension's first key is above it and above the keys that calls under
-- way may still take.  Before that, it checks that the C
-- extension's key file holds the edition's keys of public IDs, the same
-- one current (docs/deployment/sql-edition.md, "Public IDs"), so that the
-- public IDs handed out still read.  Anything that fails rolls it all
-- back, the edition intact.  After the commit, a call that waited finds
-- snowflake_nextval() to be the C extension's and hands out its key.
--
-- Part 2, one transaction, once every transaction older than it has
-- ended (it waits up to 10 s, else it stops and says which): tables whose
-- defaults, generated columns or indexes use the edition's functions are
-- locked (SHARE, a writer waits at most a moment), and each of the
-- edition's functions becomes the C extension's function of the same
-- signature, in place (CREATE OR REPLACE keeps the OID, which those
-- defaults, indexes, generated columns, views and SQL-standard function
-- bodies refer to), and joins the extension, whose objects are then those
-- of a fresh install; the edition's other objects are dropped.  If it
-- stops, everything works (through the functions aside) and running this
-- script again finishes it.
--
-- It resolves no name through the caller's search_path (a database's
-- default one, public first, say: its first line sets its own), finds the
-- edition exactly (the schema of the snowflake_set_node_id(integer) of the
-- owner of the schema _snowflake), moves, replaces and drops only the
-- edition's own functions (this version's, of that owner), never another
-- role's snowflake_... function beside them, and calls no function of the
-- edition: its owner could have replaced one, and a superuser runs this
-- (the version is read from its definition, the keys of public IDs are
-- compared with the C extension's snowflake_encrypt_id()).

SET search_path = pg_catalog, pg_temp;
SET lock_timeout = '5s';

DO $switch$
DECLARE
    found name[];
    target name;
    owner regrole;
    edition regprocedure[];
    ext name;
    version text;
    obj record;
    f record;
    node int8;
    c_node int4;
    accepted text := pg_catalog.current_setting('snowflake_switch.node_id', true);
    same_layout bool;
    last_key int8;
    first_key int8;
    bound int8;
    waited int := 0;
    k record;
    c_public int8;
    same_key bool;
BEGIN
    IF NOT (SELECT rolsuper FROM pg_catalog.pg_roles WHERE rolname = current_user) THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = 'permission denied to switch to the snowflake C extension',
            DETAIL = 'The C extension''s functions take the place of the SQL edition''s, which only a superuser may do.';
    END IF;
    IF pg_catalog.to_regnamespace('_snowflake_switch') IS NOT NULL THEN
        RAISE NOTICE 'the switch to the snowflake C extension is done; finishing it';
        RETURN;
    END IF;

    -- The edition: its state is the schema _snowflake, which only the
    -- edition's owner may use; its functions are in the schema of that
    -- owner's snowflake_set_node_id(integer).
    SELECT s.nspowner::regrole INTO owner FROM pg_catalog.pg_namespace s WHERE s.nspname = '_snowflake';
    SELECT pg_catalog.array_agg(n.nspname ORDER BY n.nspname) INTO found
      FROM pg_catalog.pg_proc p
      JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
      JOIN pg_catalog.pg_language l ON l.oid = p.prolang
     WHERE p.proname = 'snowflake_set_node_id' AND p.proargtypes = '23'::pg_catalog.oidvector
       AND l.lanname = 'plpgsql' AND p.proowner = owner;
    IF found IS NULL AND owner IS NULL THEN
        -- 1.2 kept its sequences beside its functions, with no _snowflake.
        SELECT pg_catalog.array_agg(n.nspname ORDER BY n.nspname) INTO found
          FROM pg_catalog.pg_proc p
          JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
          JOIN pg_catalog.pg_class c ON c.relnamespace = n.oid AND c.relname = '_snowflake_node_seq'
                                    AND c.relkind = 'S' AND c.relowner = p.proowner
         WHERE p.proname = 'snowflake_set_node_id' AND p.proargtypes = '23'::pg_catalog.oidvector;
        IF found IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
                MESSAGE = pg_catalog.format('the snowflake SQL edition in schema "%s" is at version 1.2, this switch at @VERSION@',
                                            pg_catalog.array_to_string(found, ', ')),
                HINT = 'Update the edition to @VERSION@ first (docs/deployment/sql-edition.md, "Updating the edition").';
        END IF;
    END IF;
    IF found IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'undefined_object',
            MESSAGE = 'no SQL edition of snowflake in this database',
            HINT = 'Connect to the database the edition is installed in.';
    END IF;
    IF pg_catalog.cardinality(found) > 1 THEN
        RAISE EXCEPTION USING ERRCODE = 'duplicate_object',
            MESSAGE = pg_catalog.format('the SQL edition of snowflake is installed in more than one schema: %s',
                                        pg_catalog.array_to_string(found, ', '));
    END IF;
    target := found[1];
    -- Its functions: those of this version, in that schema, of that owner.
    SELECT pg_catalog.array_agg(p.oid::regprocedure) INTO edition
      FROM pg_catalog.unnest(@EDITION_FUNCTIONS@) e(sig)
      JOIN pg_catalog.pg_proc p
        ON p.oid = pg_catalog.to_regprocedure(pg_catalog.replace(e.sig, '@extschema@', pg_catalog.quote_ident(target)))
     WHERE p.proowner = owner;
    SELECT pg_catalog.substring(pg_catalog.pg_get_functiondef(p.oid), 'RETURN ''([0-9.]+)''') INTO version
      FROM pg_catalog.pg_proc p
     WHERE p.oid = pg_catalog.to_regprocedure(pg_catalog.format('%I._snowflake_edition_version()', target))
       AND p.oid = ANY (edition);
    version := coalesce(version, '1.2');
    IF version <> '@VERSION@' THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = pg_catalog.format('the snowflake SQL edition in schema "%s" is at version %s, this switch at @VERSION@', target, version),
            HINT = 'Update the edition to @VERSION@ first (docs/deployment/sql-edition.md, "Updating the edition").';
    END IF;
    node := pg_catalog.pg_sequence_last_value('_snowflake._snowflake_node_seq'::pg_catalog.regclass);

    -- Installed as an extension (pg_tle, database.dev): its objects out of
    -- it, the empty extension dropped, and pg_tle's copy of it removed, so
    -- that CREATE EXTENSION snowflake finds the C extension.
    SELECT e.extname INTO ext
      FROM pg_catalog.pg_depend d JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
     WHERE d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass
       AND d.objid = '_snowflake._snowflake_id_seq'::pg_catalog.regclass
       AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e';
    IF ext IS NOT NULL THEN
        -- (An array type goes with its element type, a table's row type
        -- with its table, members or not.)
        FOR obj IN
            SELECT i.type, i.identity
              FROM pg_catalog.pg_depend d, pg_catalog.pg_identify_object(d.classid, d.objid, d.objsubid) i
             WHERE d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
               AND d.refobjid = (SELECT oid FROM pg_catalog.pg_extension WHERE extname = ext) AND d.deptype = 'e'
               AND NOT (d.classid = 'pg_catalog.pg_type'::pg_catalog.regclass
                        AND EXISTS (SELECT FROM pg_catalog.pg_type t
                                     WHERE t.oid = d.objid
                                       AND (t.typcategory = 'A'
                                            OR t.typrelid IN (SELECT c.oid FROM pg_catalog.pg_class c
                                                               WHERE c.relkind <> 'c'))))
        LOOP
            EXECUTE pg_catalog.format('ALTER EXTENSION %I DROP %s %s', ext,
                                      CASE obj.type WHEN 'composite type' THEN 'TYPE' ELSE pg_catalog.upper(obj.type) END,
                                      obj.identity);
        END LOOP;
        EXECUTE pg_catalog.format('DROP EXTENSION %I', ext);
        IF pg_catalog.to_regprocedure(pg_catalog.format('pgtle.%I()', ext || '.control')) IS NOT NULL THEN
            EXECUTE 'SELECT pgtle.uninstall_extension($1)' USING ext;
        END IF;
    END IF;

    -- The edition's functions of the C extension's names, aside; the C
    -- extension in their place.
    CREATE SCHEMA _snowflake_switch;
    FOR f IN
        SELECT p.oid::pg_catalog.regprocedure AS sig
          FROM pg_catalog.pg_proc p
         WHERE p.oid = ANY (edition) AND p.proname LIKE 'snowflake\_%'
    LOOP
        EXECUTE pg_catalog.format('ALTER FUNCTION %s SET SCHEMA _snowflake_switch', f.sig);
    END LOOP;
    EXECUTE pg_catalog.format('CREATE EXTENSION snowflake SCHEMA %I', target);
    -- The C extension can mint (preloaded, a node id set): its errors
    -- stop the switch here, the edition untouched.
    EXECUTE pg_catalog.format('SELECT %I.snowflake_nextval()', target);

    -- The same epoch and layout (the C extension's settings), and the node
    -- id it mints with.
    EXECUTE pg_catalog.format('SELECT (extract(epoch FROM epoch) * 1000)::int8 = @EPOCH_MS@
                                      AND timestamp_bits = @TIMESTAMP_BITS@ AND node_bits = @NODE_BITS@
                                      AND sequence_bits = @SEQUENCE_BITS@, node_id
                                 FROM %I.snowflake_stats', target) INTO same_layout, c_node;
    IF NOT same_layout THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = 'the snowflake C extension mints with another epoch or layout than the SQL edition',
            HINT = 'Set snowflake.epoch, snowflake.timestamp_bits, snowflake.node_bits and snowflake.sequence_bits to the edition''s (its script''s header names them) and restart the server.';
    END IF;
    IF c_node IS DISTINCT FROM node AND accepted IS DISTINCT FROM c_node::text THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = pg_catalog.format('the snowflake C extension mints with node id %s, the SQL edition with %s', c_node, node),
            DETAIL = 'The keys minted after the switch would carry another node id than this database''s keys so far.',
            HINT = pg_catalog.format('To keep node id %s, set snowflake.node_id = %s in the server''s configuration and restart it. To mint with %s from now on, run the switch with snowflake_switch.node_id = %s (PGOPTIONS=''-c snowflake_switch.node_id=%s'').',
                                     node, node, c_node, c_node, c_node);
    END IF;

    -- The edition's keys of public IDs (docs/public-ids.md) must be the C
    -- extension's, read from its key file, or the public IDs and texts
    -- already handed out would no longer read: each key's public ID of one
    -- ID, and which key is current, compared (each key's by the C
    -- extension's FF1, with the key as an argument).  (The table goes with
    -- the schema _snowflake, in part 2: until then the edition's functions
    -- aside still read it.)
    FOR k IN EXECUTE pg_catalog.format(
        'SELECT key_id, current,
                %I.snowflake_encrypt_id(4242424242, pg_catalog.decode(key, ''hex'')) AS public_id
           FROM _snowflake._snowflake_public_keys ORDER BY key_id', target)
    LOOP
        BEGIN
            EXECUTE pg_catalog.format('SELECT %I.snowflake_to_public(4242424242, %s)', target, k.key_id) INTO c_public;
            IF k.current THEN
                EXECUTE pg_catalog.format('SELECT pg_catalog.left(%I.snowflake_to_public_base32(4242424242), 1)
                                                  = pg_catalog.substr(''0123456789ABCDEFGHJKMNPQRSTVWXYZ'', %s, 1)',
                                          target, k.key_id + 1)
                  INTO same_key;
                c_public := CASE WHEN same_key THEN c_public END;
            END IF;
        EXCEPTION WHEN OTHERS THEN
            c_public := NULL;
        END;
        IF c_public IS DISTINCT FROM k.public_id THEN
            RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
                MESSAGE = pg_catalog.format('the snowflake C extension does not have the SQL edition''s public ID key %s%s',
                                            k.key_id, CASE WHEN k.current THEN ' as its current key' ELSE '' END),
                DETAIL = 'The public IDs made with it would no longer read after the switch.',
                HINT = 'Write the edition''s keys into the key file that snowflake.public_keys_file names (docs/deployment/sql-edition.md, "Public IDs"), then run the switch again.';
        END IF;
    END LOOP;

    -- The edition's generators, aside, call the C extension's: defaults
    -- and statements that refer to them by OID get its keys.
    EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION _snowflake_switch.snowflake_nextval() RETURNS int8
        LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
        AS $f$ BEGIN RETURN %I.snowflake_nextval(); END $f$', target);
    EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION _snowflake_switch.snowflake_nextval_batch(count int4) RETURNS SETOF int8
        LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY INVOKER ROWS 1000
        AS $f$ BEGIN RETURN QUERY SELECT * FROM %I.snowflake_nextval_batch(count); END $f$', target);
    EXECUTE pg_catalog.format('CREATE OR REPLACE FUNCTION _snowflake_switch.snowflake_lastval() RETURNS int8
        LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY INVOKER
        AS $f$ BEGIN RETURN %I.snowflake_lastval(); END $f$', target);

    -- Stop the edition: its lock (a row lock, held to the commit), and its
    -- state set so that every call goes for the lock.  The calls that read
    -- the state before, at most one per server process, may still take a
    -- key without the lock: up to last_key plus their number.
    PERFORM FROM _snowflake._snowflake_lock FOR UPDATE;
    PERFORM pg_catalog.setval('_snowflake._snowflake_state_seq'::pg_catalog.regclass, -1);
    last_key := coalesce(pg_catalog.pg_sequence_last_value('_snowflake._snowflake_id_seq'::pg_catalog.regclass), 0);
    bound := last_key OPERATOR(pg_catalog.+) pg_catalog.current_setting('max_connections')::pg_catalog.int8
             OPERATOR(pg_catalog.+) pg_catalog.current_setting('max_worker_processes')::pg_catalog.int8
             OPERATOR(pg_catalog.+) pg_catalog.current_setting('max_wal_senders')::pg_catalog.int8
             OPERATOR(pg_catalog.+) coalesce(pg_catalog.current_setting('autovacuum_worker_slots', true),
                                             pg_catalog.current_setting('autovacuum_max_workers'))::pg_catalog.int8
             OPERATOR(pg_catalog.+) 16::pg_catalog.int8;

    -- The C extension's keys start above the edition's last: once the clock
    -- has passed its millisecond (it may have led the clock by a second or
    -- two, after a batch).
    WHILE (pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp())
                            OPERATOR(pg_catalog.*) 1000::pg_catalog.float8)::pg_catalog.int8
           OPERATOR(pg_catalog.-) @EPOCH_MS@::pg_catalog.int8)
          OPERATOR(pg_catalog.<=) (bound OPERATOR(pg_catalog.>>) @SHIFT@) LOOP
        IF waited >= 2500 THEN
            RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
                MESSAGE = 'the clock is behind the last snowflake key of the SQL edition',
                DETAIL = pg_catalog.format('The last key, %s, carries a time %s ms after the epoch.', last_key,
                                           last_key >> @SHIFT@),
                HINT = 'Check the server''s time synchronisation, and run the switch again.';
        END IF;
        PERFORM pg_catalog.pg_sleep(0.005);
        waited := waited + 5;
    END LOOP;
    EXECUTE pg_catalog.format('SELECT %I.snowflake_nextval()', target) INTO first_key;
    IF first_key OPERATOR(pg_catalog.<=) bound THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = 'the snowflake C extension issued a key below the SQL edition''s last',
            DETAIL = pg_catalog.format('Its first key is %s, the edition''s last %s.', first_key, last_key),
            HINT = 'Use the epoch and layout the edition was generated with, and check the server''s clock.';
    END IF;
    RAISE NOTICE 'switched to the snowflake C extension: the SQL edition''s last key was %, the first of the C extension is %, node id %',
        last_key, first_key, c_node;
END
$switch$;

DO $finish$
DECLARE
    target name;
    owner regrole;
    since timestamptz := pg_catalog.now();
    older text;
    tables text;
    locked bool := false;
    f record;
    c_oid regprocedure;
    c_def text;
    c_comment text;
    c_owner name;
    edition_only text[] := '{}';
    internal text;
    waited int := 0;
BEGIN
    IF pg_catalog.to_regnamespace('_snowflake_switch') IS NULL THEN
        RETURN;
    END IF;
    SELECT n.nspname INTO target
      FROM pg_catalog.pg_extension e JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
     WHERE e.extname = 'snowflake';
    SELECT s.nspowner::regrole INTO owner FROM pg_catalog.pg_namespace s WHERE s.nspname = '_snowflake';

    -- Every transaction older than this one has ended: none can still be
    -- running a statement planned with the edition's functions.
    LOOP
        -- (pg_stat_activity is read once per transaction unless told.)
        PERFORM pg_catalog.pg_stat_clear_snapshot();
        SELECT pg_catalog.string_agg(a.pid::text, ', ') INTO older
          FROM pg_catalog.pg_stat_activity a
         WHERE a.datname = pg_catalog.current_database() AND a.pid <> pg_catalog.pg_backend_pid()
           AND a.backend_type = 'client backend' AND a.xact_start < since;
        EXIT WHEN older IS NULL;
        IF waited >= 10000 THEN
            RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
                MESSAGE = 'the switch to the snowflake C extension is done, but not finished',
                DETAIL = pg_catalog.format('The sessions of process ids %s have been in a transaction since before it.', older),
                HINT = 'Keys come from the C extension already. Run the script again once those transactions have ended, to finish.';
        END IF;
        PERFORM pg_catalog.pg_sleep(0.01);
        waited := waited + 10;
    END LOOP;

    -- The tables whose defaults, generated columns, indexes or constraints
    -- use the functions aside: no write to them while the functions change
    -- (a writer waits at most a moment: the lock is tried for 100 ms at a
    -- time, so that no deadlock with a transaction that writes to two of
    -- them can form).
    waited := 0;
    SELECT pg_catalog.string_agg(DISTINCT r.oid::pg_catalog.regclass::text, ', ') INTO tables
      FROM pg_catalog.pg_depend d
      JOIN pg_catalog.pg_proc p ON d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND p.oid = d.refobjid
      LEFT JOIN pg_catalog.pg_attrdef ad ON d.classid = 'pg_catalog.pg_attrdef'::pg_catalog.regclass AND ad.oid = d.objid
      LEFT JOIN pg_catalog.pg_index ix ON d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND ix.indexrelid = d.objid
      LEFT JOIN pg_catalog.pg_constraint co ON d.classid = 'pg_catalog.pg_constraint'::pg_catalog.regclass AND co.oid = d.objid
      JOIN pg_catalog.pg_class r ON r.oid = coalesce(ad.adrelid, ix.indrelid, co.conrelid)
     WHERE p.pronamespace = '_snowflake_switch'::pg_catalog.regnamespace;
    WHILE tables IS NOT NULL AND NOT locked LOOP
        BEGIN
            PERFORM pg_catalog.set_config('lock_timeout', '100ms', true);
            EXECUTE 'LOCK TABLE ' || tables || ' IN SHARE MODE';
            locked := true;
        EXCEPTION WHEN lock_not_available THEN
            IF waited >= 10000 THEN
                RAISE EXCEPTION USING ERRCODE = 'lock_not_available',
                    MESSAGE = 'the switch to the snowflake C extension is done, but not finished',
                    DETAIL = pg_catalog.format('Writes to %s went on for 10 s without a pause of 100 ms.', tables),
                    HINT = 'Keys come from the C extension already. Run the script again at a quieter moment, to finish.';
            END IF;
            PERFORM pg_catalog.pg_sleep(0.02);
            waited := waited + 120;
        END;
    END LOOP;
    PERFORM pg_catalog.set_config('lock_timeout', '5s', true);

    -- Indexes keep their expressions and predicates in every session's
    -- cache with the SQL functions they call inlined (the edition's
    -- decoders, hence its internal functions, which go below): renamed
    -- and named back, each index is read anew by every session.
    FOR f IN
        SELECT DISTINCT c.oid, n.nspname, c.relname
          FROM pg_catalog.pg_depend d
          JOIN pg_catalog.pg_class c ON d.classid = 'pg_catalog.pg_class'::pg_catalog.regclass AND c.oid = d.objid
          JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         WHERE c.relkind IN ('i', 'I') AND d.refclassid = 'pg_catalog.pg_proc'::pg_catalog.regclass
           AND d.refobjid IN (SELECT p.oid FROM pg_catalog.pg_proc p
                               WHERE p.pronamespace = '_snowflake_switch'::pg_catalog.regnamespace)
    LOOP
        EXECUTE pg_catalog.format('ALTER INDEX %I.%I RENAME TO %I', f.nspname, f.relname, '_snowflake_switch_' || f.oid);
        EXECUTE pg_catalog.format('ALTER INDEX %I.%I RENAME TO %I', f.nspname, '_snowflake_switch_' || f.oid, f.relname);
    END LOOP;

    -- Each of them becomes the C extension's function of its signature.
    FOR f IN
        SELECT p.oid, p.proname, pg_catalog.oidvectortypes(p.proargtypes) AS args
          FROM pg_catalog.pg_proc p
         WHERE p.pronamespace = '_snowflake_switch'::pg_catalog.regnamespace
         ORDER BY p.proname, p.oid
    LOOP
        c_oid := pg_catalog.to_regprocedure(pg_catalog.format('%I.%I(%s)', target, f.proname, f.args));
        IF c_oid IS NULL THEN
            edition_only := edition_only || f.oid::pg_catalog.regprocedure::text;
            CONTINUE;
        END IF;
        c_def := pg_catalog.pg_get_functiondef(c_oid);
        c_comment := pg_catalog.obj_description(c_oid, 'pg_proc');
        SELECT r.rolname INTO c_owner
          FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_roles r ON r.oid = p.proowner WHERE p.oid = c_oid;
        EXECUTE pg_catalog.format('ALTER EXTENSION snowflake DROP FUNCTION %s', c_oid);
        EXECUTE pg_catalog.format('DROP FUNCTION %s', c_oid);
        EXECUTE pg_catalog.format('ALTER FUNCTION %s SET SCHEMA %I', f.oid::pg_catalog.regprocedure, target);
        EXECUTE c_def;
        EXECUTE pg_catalog.format('ALTER FUNCTION %s OWNER TO %I', f.oid::pg_catalog.regprocedure, c_owner);
        EXECUTE pg_catalog.format('COMMENT ON FUNCTION %s IS %L', f.oid::pg_catalog.regprocedure, c_comment);
        EXECUTE pg_catalog.format('ALTER EXTENSION snowflake ADD FUNCTION %s', f.oid::pg_catalog.regprocedure);
    END LOOP;

    -- What remains of the edition: its functions of its own (a user's
    -- object that still depends on one stops the switch here), its type,
    -- its state.
    IF pg_catalog.cardinality(edition_only) > 0 THEN
        EXECUTE 'DROP FUNCTION ' || pg_catalog.array_to_string(edition_only, ', ');
    END IF;
    DROP SCHEMA _snowflake_switch;
    SELECT pg_catalog.string_agg(p.oid::pg_catalog.regprocedure::text, ', ') INTO internal
      FROM pg_catalog.unnest(@EDITION_FUNCTIONS@) e(sig)
      JOIN pg_catalog.pg_proc p
        ON p.oid = pg_catalog.to_regprocedure(pg_catalog.replace(e.sig, '@extschema@', pg_catalog.quote_ident(target)))
     WHERE p.proname LIKE '\_snowflake\_%' AND p.proowner = owner;
    IF internal IS NOT NULL THEN
        EXECUTE 'DROP FUNCTION ' || internal;
    END IF;
    EXECUTE pg_catalog.format('DROP TYPE %I._snowflake_layout', target);
    DROP SCHEMA _snowflake CASCADE;
    RAISE NOTICE 'the switch to the snowflake C extension is finished: the SQL edition is gone';
END
$finish$;

RESET lock_timeout;
RESET search_path;
