/* snowflake--1.0--1.1.sql: update an installed 1.0 to 1.1 */

-- complain if script is sourced in psql, rather than via ALTER EXTENSION
\echo Use "ALTER EXTENSION snowflake UPDATE TO '1.1'" to load this file. \quit

-- Every object added here is added to snowflake--1.1.sql too: an update from
-- 1.0 must leave the same objects as a fresh install of 1.1.

-- Fleets: node id claims.  A server claims its node id once with
-- snowflake_claim_node(); the claims table is published with the fleet's
-- data, and a claim of a node id that another server (another system
-- identifier) holds already fails, locally or where replication applies it.
-- Nothing here is on the path of snowflake_nextval().

-- The key is the pair: a server that removes its own claim (a replicated
-- delete, found by the key) never removes another server's claim of the
-- same node id.  The guard keeps one server per node id.
CREATE TABLE snowflake_node_claims (
    node_id           integer NOT NULL CHECK (node_id >= 0),
    system_identifier bigint NOT NULL,
    server_name       text NOT NULL,
    claimed_at        timestamptz NOT NULL DEFAULT pg_catalog.now(),
    PRIMARY KEY (node_id, system_identifier)
);

COMMENT ON TABLE snowflake_node_claims IS
'node ids claimed by the servers of a fleet, one server (system identifier) per node id; publish it with the fleet''s data';

SELECT pg_catalog.pg_extension_config_dump('snowflake_node_claims', '');

CREATE FUNCTION snowflake_node_claims_guard()
RETURNS trigger
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

COMMENT ON FUNCTION snowflake_node_claims_guard() IS
'trigger of snowflake_node_claims: refuses a claim of a node id another server holds, also when replication applies it';

CREATE TRIGGER snowflake_node_claims_guard
    BEFORE INSERT OR UPDATE OF node_id, system_identifier ON snowflake_node_claims
    FOR EACH ROW EXECUTE FUNCTION snowflake_node_claims_guard();

-- Logical replication applies changes with session_replication_role =
-- replica: the guard must fire there too.
ALTER TABLE snowflake_node_claims ENABLE ALWAYS TRIGGER snowflake_node_claims_guard;

CREATE FUNCTION snowflake_claim_node(server_name text DEFAULT NULL)
RETURNS integer
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

COMMENT ON FUNCTION snowflake_claim_node(text) IS
'record in snowflake_node_claims that this server (its system identifier) mints with its node id; fails if another server claimed it (superuser only)';

REVOKE ALL ON FUNCTION snowflake_claim_node(text) FROM PUBLIC;
