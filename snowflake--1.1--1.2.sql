/* snowflake--1.1--1.2.sql: update an installed 1.1 to 1.2 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.2'" to load this file. \quit

-- Each SQL object is written once: there is no snowflake--1.2.sql.  A fresh
-- CREATE EXTENSION snowflake runs snowflake--1.0.sql, snowflake--1.0--1.1.sql
-- and then this script (see the head of snowflake--1.0--1.1.sql for the
-- rules every update script follows: qualify every name, add objects or
-- CREATE OR REPLACE them, never drop one that users' objects may depend on).

-- snowflake.node_id_span (1.2): a server and its standbys take node ids
-- node_id .. node_id + node_id_span - 1 in turn, one per timeline.  The stats
-- row gains the node id this server's IDs carry now and the span, appended
-- after stats_reset as the 1.1 script describes, and the time of the last
-- reservation write of the server's life (for the Prometheus metrics of
-- monitoring/: a timestamp, from which "seconds since" is computed), and
-- where the node id came from: 'snowflake.node_id', or derived from the
-- host name or an environment variable (snowflake.node_id_from, 1.2), as
-- 'hostname pg-2' or 'env:POD_NAME db-2'.

ALTER TYPE @extschema@.snowflake_stats_row
    ADD ATTRIBUTE node_id_in_use pg_catalog.int4,
    ADD ATTRIBUTE node_id_span pg_catalog.int4,
    ADD ATTRIBUTE last_reservation_write pg_catalog.timestamptz,
    ADD ATTRIBUTE node_id_source pg_catalog.text;

CREATE OR REPLACE VIEW @extschema@.snowflake_stats AS
SELECT s.status, s.node_id, s.epoch, s.timestamp_bits, s.node_bits, s.sequence_bits,
       s.last_timestamp, s.lead_ms, s.ids_issued, s.borrowed_ms,
       s.clock_regressions, s.max_clock_regression_ms, s.waits, s.wait_ms,
       s.refused, s.reserved_until, s.reservation_writes, s.stats_reset,
       -- 1.1
       s.background_writes, s.caller_writes, s.caller_wait_ms,
       -- 1.2
       s.node_id_in_use, s.node_id_span, s.last_reservation_write, s.node_id_source
  FROM @extschema@.snowflake_stats_all() s;

-- A node id derived from the host name or an environment variable (1.2)
-- that differs from the one the state file records for this data
-- directory's IDs refuses generation, until a superuser adopts it
-- deliberately, as snowflake_adopt_layout() adopts a layout.
CREATE FUNCTION @extschema@.snowflake_adopt_node_id()
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'snowflake_adopt_node_id'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.snowflake_adopt_node_id() IS
'accept a derived node id that differs from the one of the IDs recorded in the state file, record it there, and return the node id IDs carry from now on (superuser only)';

REVOKE ALL ON FUNCTION @extschema@.snowflake_adopt_node_id() FROM PUBLIC;

-- Node id claims across a Citus cluster (1.2).  On Citus every node mints
-- with its own node id (the coordinator for rows routed through it, each
-- worker for statements it runs), and each node's snowflake_node_claims is
-- a table of its own: a claim recorded on one node is not seen by another.
-- So where the citus extension is installed in this database, a claim first
-- asks every node of the cluster (run_command_on_all_nodes, through Citus's
-- own connections) for its node id, epoch, layout and the claims it holds,
-- and is refused when another server mints with this server's node id or
-- has claimed it (23505, as the guard refuses a claim), or mints with
-- another epoch or layout (55000): decoders and snowflake_min_id() run on
-- the workers, so every node must read IDs alike.  The node ids and layouts
-- are postmaster settings, fixed for each server's life, so two claims made
-- at the same time each see the other's server.  Without Citus the claim is
-- what it was.  Nothing here is on the path of snowflake_nextval().
--
-- Who may claim: a claim records this server's own node id and system
-- identifier, nothing a caller chooses but the name.  The function runs as
-- its owner (SECURITY DEFINER, with a fixed search_path), so that the role
-- that created the extension may be granted it without being granted the
-- claims table; below, that role (when it is not a superuser: the owner of
-- a trusted install on a managed cluster) receives EXECUTE, and SELECT on
-- the table to read the claims.  It gets no DELETE on the table: the table
-- also holds the claims other servers of the fleet replicated in, and they
-- are the fleet's guard against a shared node id, which one database
-- owner must not be able to remove.  It removes this server's own claims
-- with snowflake_unclaim_node() (below).
-- With snowflake.node_id_span of N (1.2), a claim covers every node id of
-- the span, node_id .. node_id + N - 1, all or none: the standbys of the
-- server that claims share its system identifier and mint with the other
-- node ids of the span once promoted.  On Citus, the spans of two servers
-- must not overlap.
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
        probe := format($q$SELECT pg_catalog.json_build_object(
                'sysid', c.system_identifier::pg_catalog.text,
                'name', coalesce(nullif(pg_catalog.current_setting('cluster_name'), ''), c.system_identifier::pg_catalog.text),
                'node_id', s.node_id,
                'last_id', s.node_id + s.node_id_span - 1,
                'epoch', pg_catalog.to_char(s.epoch AT TIME ZONE 'UTC', 'YYYY-MM-DD HH24:MI:SS.MS') || '+00',
                'layout', pg_catalog.concat_ws('/', s.timestamp_bits, s.node_bits, s.sequence_bits),
                'claim', (SELECT pg_catalog.json_build_object('node_id', k.node_id,
                                                              'sysid', k.system_identifier::pg_catalog.text,
                                                              'name', k.server_name,
                                                              'at', k.claimed_at::pg_catalog.text)
                            FROM %1$I.snowflake_node_claims k
                           WHERE k.node_id BETWEEN %2$s AND %3$s AND k.system_identifier <> %4$s
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

COMMENT ON FUNCTION @extschema@.snowflake_claim_node(pg_catalog.text) IS
'record in snowflake_node_claims that this server (its system identifier) mints with its node id, and with the next ones of snowflake.node_id_span; fails if another server claimed one of them, or on Citus if another node mints with one of them or with another epoch or layout (superuser and the extension''s owner)';

-- Removing this server's own claims (1.2): a server that retires a node
-- id, or moved to another one, removes its claim, and the removal
-- replicates as that of its own row only (the key is the node id and the
-- system identifier together).  "Own" is what a claim records: this
-- server's system identifier, shared by its standbys (which take over its
-- node ids, the span's included), as snowflake_claim_node() records it; a
-- claim of another server, of any node id, is never touched.  SECURITY
-- DEFINER with a fixed search_path and every name qualified, so that the
-- role that created the extension may be granted it (below) without DELETE
-- on the table.  node_id NULL: every claim of this server.  Returns how
-- many claims it removed.  Needs no library: only pg_control_system().
CREATE FUNCTION @extschema@.snowflake_unclaim_node(node_id pg_catalog.int4 DEFAULT NULL)
RETURNS pg_catalog.int4
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    sysid pg_catalog.int8;
    removed pg_catalog.int4;
BEGIN
    SELECT c.system_identifier INTO sysid FROM pg_catalog.pg_control_system() c;
    DELETE FROM @extschema@.snowflake_node_claims k
     WHERE k.system_identifier OPERATOR(pg_catalog.=) sysid
       AND (snowflake_unclaim_node.node_id IS NULL
            OR k.node_id OPERATOR(pg_catalog.=) snowflake_unclaim_node.node_id);
    GET DIAGNOSTICS removed = ROW_COUNT;
    RETURN removed;
END
$$;

COMMENT ON FUNCTION @extschema@.snowflake_unclaim_node(pg_catalog.int4) IS
'remove from snowflake_node_claims this server''s own claim of a node id (its system identifier''s), or all of them without an argument; never another server''s; returns how many were removed (superuser and the extension''s owner)';

REVOKE ALL ON FUNCTION @extschema@.snowflake_unclaim_node(pg_catalog.int4) FROM PUBLIC;

-- The role that created the extension, unless a superuser: EXECUTE on the
-- claim and on the removal of this server's own claims, SELECT on the
-- claims (no DELETE: see above).  Granted while the script runs, these are
-- the extension's initial privileges (pg_init_privs), which pg_dump leaves
-- to CREATE EXTENSION.
DO $grant$
DECLARE
    owner name;
BEGIN
    SELECT r.rolname INTO owner
      FROM pg_catalog.pg_extension e
      JOIN pg_catalog.pg_roles r ON r.oid = e.extowner
     WHERE e.extname = 'snowflake' AND NOT r.rolsuper;
    IF owner IS NOT NULL THEN
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION @extschema@.snowflake_claim_node(pg_catalog.text) TO %I', owner);
        EXECUTE pg_catalog.format('GRANT EXECUTE ON FUNCTION @extschema@.snowflake_unclaim_node(pg_catalog.int4) TO %I', owner);
        EXECUTE pg_catalog.format('GRANT SELECT ON @extschema@.snowflake_node_claims TO %I', owner);
    END IF;
END
$grant$;

-- The last key this session minted (1.2), for code that cannot use
-- RETURNING, like lastval() for sequences.  VOLATILE and PARALLEL UNSAFE as
-- lastval() is: its value is the backend's own, so a query that calls it
-- runs in the leader alone, with every snowflake_nextval() of that query.
--
-- And the generators are PARALLEL RESTRICTED from 1.2 (1.0 declared them
-- PARALLEL SAFE): snowflake_lastval() is backend-local state, and an ID a
-- parallel worker minted would be its last value, never the leader's, so
-- after CREATE TABLE ... AS SELECT snowflake_nextval() FROM a large table
-- the session's last value was the one from before the statement.
-- Restricted, as setseed() and random() are for their backend-local seed,
-- they run in the leader only while the scan below them still runs in
-- parallel (the leader evaluates them above the Gather).  Not UNSAFE, as
-- nextval() is: nextval() writes the sequence's relation, which parallel
-- mode forbids even in the leader; the generator writes only shared memory
-- and its own state file, which the leader may.
ALTER FUNCTION @extschema@.snowflake_nextval() PARALLEL RESTRICTED;
ALTER FUNCTION @extschema@.snowflake_nextval_batch(pg_catalog.int4) PARALLEL RESTRICTED;
CREATE FUNCTION @extschema@.snowflake_lastval()
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_lastval'
LANGUAGE C VOLATILE PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.snowflake_lastval() IS
'the last ID snowflake_nextval() or snowflake_nextval_batch() handed to this session (of a batch, its largest); an error before the first';

-- Text forms of IDs (1.2): snowflake_to_<form>(id [, prefix]) and
-- snowflake_from_<form>(text [, prefix]) for base32 (Crockford), base62,
-- base58 (Bitcoin's alphabet), base36 and hex; src/textfunctions.c and
-- src/textform.c, docs/text-forms.md.  One C function serves each name with
-- and without the prefix.  The prefix is written as given ('ord_'), and the
-- decoders require it, byte for byte.  IMMUTABLE: the result depends on the
-- arguments alone, so the text can be a generated column or an index
-- expression.

CREATE FUNCTION @extschema@.snowflake_to_base32(id pg_catalog.int8)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'snowflake_to_base32'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_to_base32(pg_catalog.int8) IS
'an ID as Crockford base32, 13 characters, upper case (sorts as the number)';

CREATE FUNCTION @extschema@.snowflake_to_base32(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'snowflake_to_base32'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_to_base32(pg_catalog.int8, pg_catalog.text) IS
'an ID as Crockford base32, 13 characters, upper case (sorts as the number), after the prefix';

CREATE FUNCTION @extschema@.snowflake_from_base32(id_text pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_from_base32'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_from_base32(pg_catalog.text) IS
'the ID written in Crockford base32 (13 digits; any case, I and L read as 1, O as 0, hyphens ignored)';

CREATE FUNCTION @extschema@.snowflake_from_base32(id_text pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_from_base32'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_from_base32(pg_catalog.text, pg_catalog.text) IS
'the ID written in Crockford base32 (13 digits; any case, I and L read as 1, O as 0, hyphens ignored) after the prefix, which must be there';

CREATE FUNCTION @extschema@.snowflake_to_base62(id pg_catalog.int8)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'snowflake_to_base62'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_to_base62(pg_catalog.int8) IS
'an ID as base62 (0-9A-Za-z), 11 characters (sorts as the number under the C collation)';

CREATE FUNCTION @extschema@.snowflake_to_base62(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'snowflake_to_base62'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_to_base62(pg_catalog.int8, pg_catalog.text) IS
'an ID as base62 (0-9A-Za-z), 11 characters (sorts as the number under the C collation), after the prefix';

CREATE FUNCTION @extschema@.snowflake_from_base62(id_text pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_from_base62'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_from_base62(pg_catalog.text) IS
'the ID written in base62 (exactly 11 digits of 0-9A-Za-z)';

CREATE FUNCTION @extschema@.snowflake_from_base62(id_text pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_from_base62'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_from_base62(pg_catalog.text, pg_catalog.text) IS
'the ID written in base62 (exactly 11 digits of 0-9A-Za-z) after the prefix, which must be there';

CREATE FUNCTION @extschema@.snowflake_to_base58(id pg_catalog.int8)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'snowflake_to_base58'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_to_base58(pg_catalog.int8) IS
'an ID as base58 (Bitcoin alphabet), no padding';

CREATE FUNCTION @extschema@.snowflake_to_base58(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'snowflake_to_base58'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_to_base58(pg_catalog.int8, pg_catalog.text) IS
'an ID as base58 (Bitcoin alphabet), no padding, after the prefix';

CREATE FUNCTION @extschema@.snowflake_from_base58(id_text pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_from_base58'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_from_base58(pg_catalog.text) IS
'the ID written in base58 (Bitcoin alphabet, no leading 1)';

CREATE FUNCTION @extschema@.snowflake_from_base58(id_text pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_from_base58'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_from_base58(pg_catalog.text, pg_catalog.text) IS
'the ID written in base58 (Bitcoin alphabet, no leading 1) after the prefix, which must be there';

CREATE FUNCTION @extschema@.snowflake_to_base36(id pg_catalog.int8)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'snowflake_to_base36'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_to_base36(pg_catalog.int8) IS
'an ID as base36 (0-9a-z), no padding';

CREATE FUNCTION @extschema@.snowflake_to_base36(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'snowflake_to_base36'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_to_base36(pg_catalog.int8, pg_catalog.text) IS
'an ID as base36 (0-9a-z), no padding, after the prefix';

CREATE FUNCTION @extschema@.snowflake_from_base36(id_text pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_from_base36'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_from_base36(pg_catalog.text) IS
'the ID written in base36 (any case, no leading 0)';

CREATE FUNCTION @extschema@.snowflake_from_base36(id_text pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_from_base36'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_from_base36(pg_catalog.text, pg_catalog.text) IS
'the ID written in base36 (any case, no leading 0) after the prefix, which must be there';

CREATE FUNCTION @extschema@.snowflake_to_hex(id pg_catalog.int8)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'snowflake_to_hex'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_to_hex(pg_catalog.int8) IS
'an ID as hexadecimal, 16 characters, lower case (sorts as the number)';

CREATE FUNCTION @extschema@.snowflake_to_hex(id pg_catalog.int8, prefix pg_catalog.text)
RETURNS pg_catalog.text
AS 'MODULE_PATHNAME', 'snowflake_to_hex'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_to_hex(pg_catalog.int8, pg_catalog.text) IS
'an ID as hexadecimal, 16 characters, lower case (sorts as the number), after the prefix';

CREATE FUNCTION @extschema@.snowflake_from_hex(id_text pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_from_hex'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_from_hex(pg_catalog.text) IS
'the ID written in hexadecimal (exactly 16 digits, any case)';

CREATE FUNCTION @extschema@.snowflake_from_hex(id_text pg_catalog.text, prefix pg_catalog.text)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'snowflake_from_hex'
LANGUAGE C IMMUTABLE STRICT PARALLEL SAFE;

COMMENT ON FUNCTION @extschema@.snowflake_from_hex(pg_catalog.text, pg_catalog.text) IS
'the ID written in hexadecimal (exactly 16 digits, any case) after the prefix, which must be there';

-- The safeguard of snowflake.confirm_restore (1.2): after a start
-- from a restore, a server whose node id is the one its state file records
-- mints nothing until a superuser confirms the node id here (or it is
-- restarted with another one).  The argument must be the node id the
-- server mints with: confirming is a deliberate act, not a reflex.
CREATE FUNCTION @extschema@.snowflake_confirm_restore(node_id pg_catalog.int4)
RETURNS pg_catalog.int4
AS 'MODULE_PATHNAME', 'snowflake_confirm_restore'
LANGUAGE C VOLATILE STRICT PARALLEL UNSAFE;

COMMENT ON FUNCTION @extschema@.snowflake_confirm_restore(pg_catalog.int4) IS
'confirm, after a restore refused generation (snowflake.confirm_restore), that this server mints with this node id (superuser only)';

REVOKE ALL ON FUNCTION @extschema@.snowflake_confirm_restore(pg_catalog.int4) FROM PUBLIC;
