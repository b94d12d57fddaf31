--
-- errors: the messages a user can reach in a running, preloaded server,
-- with their SQLSTATEs.  (Errors that need a restart, a stepped clock, a
-- standby or a broken state file are covered by the TAP tests in test/t.)
--
SET timezone = 'UTC';
SELECT snowflake_stats_reset();

-- Negative IDs are not snowflake IDs.
SELECT snowflake_decode(-1);
SELECT snowflake_timestamp(-9223372036854775808);
SELECT snowflake_node_id(-5);
SELECT snowflake_sequence(-5);

-- compose checks every field against the layout.
SELECT snowflake_compose('2023-12-31 23:59:59.999+00', 0, 0);
SELECT snowflake_compose('2093-09-06 15:47:35.552+00', 0, 0);
SELECT snowflake_compose('2025-01-01', 1024, 0);
SELECT snowflake_compose('2025-01-01', -1, 0);
SELECT snowflake_compose('2025-01-01', 0, 4096);
SELECT snowflake_compose('2025-01-01', 0, -1);
SELECT snowflake_compose('infinity', 0, 0);

-- min_id/max_id refuse times outside the timestamp field.
SELECT snowflake_min_id('2023-12-31 23:59:59.999+00');
SELECT snowflake_max_id('2093-09-06 15:47:35.552+00');
SELECT snowflake_min_id('-infinity');

-- Batch sizes.
SELECT count(*) FROM snowflake_nextval_batch(0);
SELECT count(*) FROM snowflake_nextval_batch(-1);
SELECT count(*) FROM snowflake_nextval_batch(1000001);

-- Their SQLSTATEs: 22023 for a bad argument, 22003 for a value outside a
-- field.
SELECT q AS statement, regress.sqlstate_of(q) AS sqlstate
  FROM (VALUES ('SELECT snowflake_decode(-1)'),
               ('SELECT snowflake_timestamp(-1)'),
               ('SELECT snowflake_compose(''2023-12-31 23:59:59.999+00'', 0, 0)'),
               ('SELECT snowflake_compose(''2025-01-01'', 1024, 0)'),
               ('SELECT snowflake_compose(''2025-01-01'', 0, 4096)'),
               ('SELECT snowflake_min_id(''-infinity'')'),
               ('SELECT snowflake_max_id(''2093-09-06 15:47:35.552+00'')'),
               ('SELECT count(*) FROM snowflake_nextval_batch(0)'),
               ('SELECT count(*) FROM snowflake_nextval_batch(1000001)'),
               ('SELECT snowflake_adopt_layout()'),
               ('SELECT snowflake_confirm_restore(1)')) AS t(q);

-- Nothing to adopt: the configured layout is the recorded one.
SELECT snowflake_adopt_layout();

-- Nothing to confirm: the server did not start from a restore (and
-- snowflake.confirm_restore is off).
SELECT snowflake_confirm_restore(1);

-- Privileges.
CREATE ROLE snowflake_regress_user;
SET ROLE snowflake_regress_user;
SELECT snowflake_stats_reset();
SELECT snowflake_adopt_layout();
SELECT regress.sqlstate_of('SELECT snowflake_stats_reset()') AS reset_sqlstate;
RESET ROLE;
-- Even with EXECUTE granted, only a superuser may adopt a layout.
GRANT EXECUTE ON FUNCTION snowflake_adopt_layout(boolean) TO snowflake_regress_user;
SET ROLE snowflake_regress_user;
SELECT snowflake_adopt_layout();
RESET ROLE;
REVOKE EXECUTE ON FUNCTION snowflake_adopt_layout(boolean) FROM snowflake_regress_user;
-- Nor confirm a restored server's node id.
SET ROLE snowflake_regress_user;
SELECT snowflake_confirm_restore(1);
RESET ROLE;
GRANT EXECUTE ON FUNCTION snowflake_confirm_restore(integer) TO snowflake_regress_user;
SET ROLE snowflake_regress_user;
SELECT snowflake_confirm_restore(1);
RESET ROLE;
REVOKE EXECUTE ON FUNCTION snowflake_confirm_restore(integer) FROM snowflake_regress_user;
SET ROLE snowflake_regress_user;
-- Generating and reading the stats need no privilege.
SELECT snowflake_nextval() > 0 AS generated;
SELECT status FROM snowflake_stats;
RESET ROLE;
DROP ROLE snowflake_regress_user;

-- Of all the calls above only one issued an ID; argument errors are raised
-- before the generator is reached, so none was refused by it.
SELECT status, ids_issued, refused FROM snowflake_stats;
