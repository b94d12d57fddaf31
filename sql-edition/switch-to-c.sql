-- Switch one database from the SQL edition of snowflake to the C extension,
-- in one transaction, as a superuser, on a server where the C extension is
-- installed, its library preloaded (or PostgreSQL 17 and later) and
-- snowflake.node_id set:
--
--   psql -v ON_ERROR_STOP=1 -d DATABASE -f switch-to-c.sql
--
-- Tables keep their defaults, indexes, views and generated columns their
-- expressions: those refer to the edition's functions by OID, so each of
-- them is not dropped but turned into the C extension's function of the
-- same signature, in place (CREATE OR REPLACE keeps the OID), and added to
-- the extension.  Every key the C extension issues afterwards is above every
-- key the edition issued: the switch stops the edition, waits until the
-- clock has passed the time of its last key, and checks the first key of
-- the C extension before it commits.  Anything that fails rolls it all
-- back, the edition intact.  Calls of the edition that were waiting for it
-- fail once it commits (its key sequence is gone).

BEGIN;
SET LOCAL lock_timeout = '10s';
SET LOCAL search_path = pg_catalog, pg_temp;

DO $switch$
DECLARE
    schema_name CONSTANT name := '@extschema@';
    aside CONSTANT name := '_snowflake_switch';
    ext record;
    obj record;
    f record;
    c_oid regprocedure;
    c_def text;
    c_comment text;
    c_owner name;
    last_key int8;
    first_key int8;
    waited int := 0;
    edition_only text[] := '{}';
    same_layout bool;
    k record;
    c_public int8;
BEGIN
    IF NOT (SELECT rolsuper FROM pg_roles WHERE rolname = current_user) THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = 'permission denied to switch to the snowflake C extension',
            DETAIL = 'The C extension''s functions take the place of the SQL edition''s, which only a superuser may do.';
    END IF;
    IF to_regclass(format('%I._snowflake_id_seq', schema_name)) IS NULL THEN
        RAISE EXCEPTION USING ERRCODE = 'undefined_object',
            MESSAGE = format('no SQL edition of snowflake in schema "%s"', schema_name),
            HINT = 'Generate this script for the schema the edition is in: sql-edition/build.pl --schema NAME.';
    END IF;

    -- Stop the edition: its calls wait for this lock, until the commit.
    PERFORM pg_advisory_xact_lock(1936617335, 1718378859);
    last_key := coalesce(pg_sequence_last_value(format('%I._snowflake_id_seq', schema_name)::regclass), 0);

    -- Installed as an extension (pg_tle, database.dev): take its objects out
    -- of it, then drop the empty extension.
    SELECT e.oid, e.extname INTO ext
      FROM pg_depend d JOIN pg_extension e ON e.oid = d.refobjid
     WHERE d.classid = 'pg_class'::regclass
       AND d.objid = format('%I._snowflake_id_seq', schema_name)::regclass
       AND d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e';
    IF FOUND THEN
        IF to_regprocedure(format('pgtle.%I()', ext.extname || '.control')) IS NOT NULL THEN
            RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
                MESSAGE = format('extension "%s" is installed through pg_tle', ext.extname),
                HINT = 'Take it out of pg_tle first, then run this script again; see docs/deployment/sql-edition.md.';
        END IF;
        -- (An array type goes with its element type, member or not, and a
        -- table's row type with its table: from PostgreSQL 17 on, ALTER
        -- EXTENSION ... DROP TABLE takes it out too.)
        FOR obj IN
            SELECT i.type, i.identity
              FROM pg_depend d, pg_identify_object(d.classid, d.objid, d.objsubid) i
             WHERE d.refclassid = 'pg_extension'::regclass AND d.refobjid = ext.oid AND d.deptype = 'e'
               AND NOT (d.classid = 'pg_type'::regclass
                        AND EXISTS (SELECT FROM pg_type t LEFT JOIN pg_class c ON c.oid = t.typrelid
                                     WHERE t.oid = d.objid AND (t.typcategory = 'A' OR c.relkind = 'r')))
        LOOP
            EXECUTE format('ALTER EXTENSION %I DROP %s %s', ext.extname,
                           CASE obj.type WHEN 'composite type' THEN 'TYPE' ELSE upper(obj.type) END,
                           obj.identity);
        END LOOP;
        EXECUTE format('DROP EXTENSION %I', ext.extname);
    END IF;

    -- The edition's functions of the C extension's names, aside.
    EXECUTE format('CREATE SCHEMA %I', aside);
    FOR f IN
        SELECT p.oid::regprocedure AS sig
          FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
         WHERE p.pronamespace = schema_name::regnamespace AND p.proname LIKE 'snowflake\_%'
           AND l.lanname IN ('sql', 'plpgsql')
    LOOP
        EXECUTE format('ALTER FUNCTION %s SET SCHEMA %I', f.sig, aside);
    END LOOP;

    EXECUTE format('CREATE EXTENSION snowflake SCHEMA %I', schema_name);

    -- Each of them becomes the C extension's function of its signature.
    FOR f IN
        SELECT p.oid, p.proname, oidvectortypes(p.proargtypes) AS args
          FROM pg_proc p
         WHERE p.pronamespace = aside::regnamespace
         ORDER BY p.proname, p.oid
    LOOP
        c_oid := to_regprocedure(format('%I.%I(%s)', schema_name, f.proname, f.args));
        IF c_oid IS NULL THEN
            edition_only := edition_only || f.oid::regprocedure::text;
            CONTINUE;
        END IF;
        c_def := pg_get_functiondef(c_oid);
        c_comment := obj_description(c_oid, 'pg_proc');
        SELECT r.rolname INTO c_owner FROM pg_proc p JOIN pg_roles r ON r.oid = p.proowner WHERE p.oid = c_oid;
        EXECUTE format('ALTER EXTENSION snowflake DROP FUNCTION %s', c_oid);
        EXECUTE format('DROP FUNCTION %s', c_oid);
        EXECUTE format('ALTER FUNCTION %s SET SCHEMA %I', f.oid::regprocedure, schema_name);
        EXECUTE c_def;
        EXECUTE format('ALTER FUNCTION %s OWNER TO %I', f.oid::regprocedure, c_owner);
        EXECUTE format('COMMENT ON FUNCTION %s IS %L', f.oid::regprocedure, c_comment);
        EXECUTE format('ALTER EXTENSION snowflake ADD FUNCTION %s', f.oid::regprocedure);
    END LOOP;

    -- The edition's keys of public IDs (docs/public-ids.md) must be the C
    -- extension's, read from its key file, or the public IDs and texts
    -- already handed out would no longer read: each key's public ID of one
    -- ID, and which key is current, compared; then the table goes.
    IF to_regclass(format('%I._snowflake_public_keys', schema_name)) IS NOT NULL THEN
        FOR k IN EXECUTE format(
            'SELECT key_id, current, %I._snowflake_ff1(4242424242, decode(key, ''hex''), decode(mac, ''hex''), true) AS public_id
               FROM %I._snowflake_public_keys ORDER BY key_id', schema_name, schema_name)
        LOOP
            BEGIN
                EXECUTE format('SELECT %I.snowflake_to_public(4242424242, %s)', schema_name, k.key_id) INTO c_public;
                IF k.current THEN
                    EXECUTE format('SELECT left(%I.snowflake_to_public_base32(4242424242), 1)
                                           = substr(''0123456789ABCDEFGHJKMNPQRSTVWXYZ'', %s, 1)', schema_name, k.key_id + 1)
                      INTO same_layout;
                    c_public := CASE WHEN same_layout THEN c_public END;
                END IF;
            EXCEPTION WHEN OTHERS THEN
                c_public := NULL;
            END;
            IF c_public IS DISTINCT FROM k.public_id THEN
                RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
                    MESSAGE = format('the snowflake C extension does not have the SQL edition''s public ID key %s%s',
                                     k.key_id, CASE WHEN k.current THEN ' as its current key' ELSE '' END),
                    DETAIL = 'The public IDs made with it would no longer read after the switch.',
                    HINT = 'Write the edition''s keys into the key file that snowflake.public_keys_file names (docs/deployment/sql-edition.md, "Public IDs"), then run the switch again.';
            END IF;
        END LOOP;
        EXECUTE format('DROP TABLE %I._snowflake_public_keys', schema_name);
    END IF;

    -- What remains of the edition: its functions of its own (a user's
    -- object that still depends on one stops the switch here), its type and
    -- its sequences.
    IF cardinality(edition_only) > 0 THEN
        EXECUTE 'DROP FUNCTION ' || array_to_string(edition_only, ', ');
    END IF;
    EXECUTE format('DROP SCHEMA %I', aside);
    SELECT string_agg(p.oid::regprocedure::text, ', ') INTO c_def
      FROM pg_proc p JOIN pg_language l ON l.oid = p.prolang
     WHERE p.pronamespace = schema_name::regnamespace AND p.proname LIKE '\_snowflake\_%'
       AND l.lanname IN ('sql', 'plpgsql');
    IF c_def IS NOT NULL THEN
        EXECUTE 'DROP FUNCTION ' || c_def;
    END IF;
    EXECUTE format('DROP TYPE %I._snowflake_layout', schema_name);
    EXECUTE format('DROP SEQUENCE %I._snowflake_id_seq, %I._snowflake_node_seq, %I._snowflake_life_seq',
                   schema_name, schema_name, schema_name);

    -- The same epoch and layout (the C extension's settings).
    EXECUTE format('SELECT (extract(epoch FROM epoch) * 1000)::int8 = @EPOCH_MS@
                           AND timestamp_bits = @TIMESTAMP_BITS@ AND node_bits = @NODE_BITS@
                           AND sequence_bits = @SEQUENCE_BITS@
                      FROM %I.snowflake_stats', schema_name) INTO same_layout;
    IF NOT same_layout THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = 'the snowflake C extension mints with another epoch or layout than the SQL edition',
            HINT = 'Set snowflake.epoch, snowflake.timestamp_bits, snowflake.node_bits and snowflake.sequence_bits to the edition''s (its script''s header names them) and restart the server.';
    END IF;

    -- The C extension's keys start above the edition's last: once the clock
    -- has passed its millisecond (it may have led the clock by a second).
    WHILE floor(date_part('epoch', clock_timestamp()) * 1000)::int8 - @EPOCH_MS@ <= last_key >> @SHIFT@ LOOP
        IF waited >= 5000 THEN
            RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
                MESSAGE = 'the clock is behind the last snowflake key of the SQL edition',
                DETAIL = format('The last key, %s, carries a time %s ms after the epoch.', last_key,
                                last_key >> @SHIFT@),
                HINT = 'Check the server''s time synchronisation, and run the switch again.';
        END IF;
        PERFORM pg_sleep(0.01);
        waited := waited + 10;
    END LOOP;
    EXECUTE format('SELECT %I.snowflake_nextval()', schema_name) INTO first_key;
    IF first_key <= last_key THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = 'the snowflake C extension issued a key below the SQL edition''s last',
            DETAIL = format('Its first key is %s, the edition''s last %s.', first_key, last_key),
            HINT = 'Use the epoch and layout the edition was generated with, and check the server''s clock.';
    END IF;
    RAISE NOTICE 'switched to the snowflake C extension: the SQL edition''s last key was %, the first of the C extension is %',
        last_key, first_key;
END
$switch$;

COMMIT;
