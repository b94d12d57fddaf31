--
-- fleet: node id claims on one server (test/snowflake.conf sets node id 7).
-- Claims meeting through replication are tested in test/t/02*_fleet_*.pl.
--

-- Declarations: the claims table is dumped with the data, its guard fires
-- also when replication applies a row (tgenabled 'A'), and only superusers
-- may claim.
SELECT extconfig::pg_catalog.regclass[] FROM pg_catalog.pg_extension
 WHERE extname = 'snowflake';
SELECT tgname, tgenabled FROM pg_catalog.pg_trigger
 WHERE tgrelid = 'snowflake_node_claims'::pg_catalog.regclass;
SELECT has_function_privilege('public', 'snowflake_claim_node(text)', 'EXECUTE')
       AS public_execute;

-- A claim records this server's node id and system identifier.
SELECT snowflake_claim_node('regress');
SELECT node_id, server_name,
       system_identifier = (SELECT system_identifier FROM pg_catalog.pg_control_system())
         AS this_server
  FROM snowflake_node_claims;

-- Claiming again is harmless: the first claim stands.
SELECT snowflake_claim_node('again');
SELECT node_id, server_name FROM snowflake_node_claims;

-- Another server's claim of node id 7 (as replication would apply it) is
-- refused; of another node id, accepted.  (The detail, which names both
-- servers and their claim times, is matched in the TAP tests.)
\set VERBOSITY terse
INSERT INTO snowflake_node_claims VALUES (7, 42, 'other', '2026-01-01 00:00:00+00');
INSERT INTO snowflake_node_claims VALUES (8, 42, 'other', '2026-01-01 00:00:00+00');
UPDATE snowflake_node_claims SET system_identifier = 42 WHERE node_id = 7;
-- With another server holding node id 7, this server's claim is refused.
DELETE FROM snowflake_node_claims WHERE node_id = 7;
UPDATE snowflake_node_claims SET node_id = 7 WHERE node_id = 8;
SELECT snowflake_claim_node();
\set VERBOSITY default
SELECT node_id, system_identifier, server_name FROM snowflake_node_claims;
DELETE FROM snowflake_node_claims;

-- Only superusers may claim.
CREATE ROLE regress_fleet_user;
SET ROLE regress_fleet_user;
SELECT snowflake_claim_node();
RESET ROLE;
DROP ROLE regress_fleet_user;
