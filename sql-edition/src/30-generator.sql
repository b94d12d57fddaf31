-- Generation: snowflake_nextval(), snowflake_nextval_batch(),
-- snowflake_lastval(), and the administrator's snowflake_set_node_id().
--
-- The last key taken is the value of _snowflake._snowflake_id_seq
-- (00-state.sql).  A call reads the clock once, reads the generator's
-- state (_snowflake_state_seq: the node id, or a move under way), takes
-- the next value with nextval(), and returns it when it carries the node
-- id and a time no earlier than the clock's and at most @MAX_LEAD_MS@ ms
-- later: one nextval() and integer arithmetic, what a sequence costs.
-- Otherwise the sequence must move (a call finds it behind the clock, in
-- another node field because more keys were taken in a millisecond than
-- the sequence field holds, in a new server life, or the state says a
-- move is under way): the call takes the generator's lock
-- (_snowflake_next).  Under it, where the last key taken is not behind
-- the clock (another call moved the sequence while it waited for the
-- lock), it takes the next value if that fits now; else it moves the
-- sequence: it sets the state to the node id plus @MOVING@ (a
-- move under way), takes the sequence's next value, L, sets it with
-- setval() to T, the first key above L + B that carries the node id and a
-- time no earlier than the clock's, where B is how many server processes
-- there can be (_snowflake_max_backends), and sets the state back to the
-- node id.  That is the move: a few statements, by one call; the calls
-- that need the lock meanwhile wait for those statements.
--
-- Why a move never sets the sequence back.  setval() is neither
-- transactional nor conditional, and the calls that take keys without the
-- lock do not wait for it; yet no value is taken twice, and every value
-- handed out lies below T or is taken after the setval():
--  * moves are made one at a time, under the lock, and each one sets the
--    state to "a move under way" before it takes L;
--  * a call takes a key without the lock only when it read the state as
--    the node id before its nextval() (a call that holds the lock takes
--    one so only while the state is the node id: no move is under way,
--    and none can start before it lets the lock go).  A nextval() that
--    comes after the move's own, and before its setval(), therefore
--    belongs to a call that read the state before the move set it: a call
--    that was under way at that moment.  A server process makes one call
--    at a time, and its next call reads the state again and goes for the
--    lock; a call that waits for the lock, or was refused or cancelled
--    meanwhile, takes no key without it until its process reads the state
--    again.  So at most one such nextval() per server process: at most B
--    of them;
--  * nextval() hands out every value once, in order: those at most B
--    values are L + 1 ... L + B at most, all below T.  Every value taken
--    before the setval() is below T, every value taken after it above T:
--    the sequence never goes back past a value taken, whoever took it.
-- The same holds for a batch (its keys from T on, the sequence set to the
-- last of them), for snowflake_set_node_id() (under the lock it sets the
-- node id, and the state to a move owed, so that the next call moves the
-- sequence to the new node id's keys), and for the switch to the C
-- extension (under the lock it sets the state to -1, so that every call
-- waits for the lock, and waits until the clock has passed L + B).  A move
-- that stops half-way (an error, a cancel, a crash) leaves the state at
-- "a move under way": every call then goes for the lock, and the next one
-- makes the move anew from the sequence's value at that time.
-- test/t/093_sql_edition_move.pl holds a call inside a move, after it took
-- L (it waits for a lock the test holds on _snowflake_life_seq, which the
-- move reads next), while other calls take keys, then lets it go on.
--
-- The lock is a row lock on _snowflake._snowflake_lock (00-state.sql),
-- taken inside a subtransaction that the move rolls back at its end: held
-- for the move's few statements, never to the end of the caller's
-- transaction, released by any error or cancel.  No other role can take
-- it, queue for it, or take any lock it conflicts with.  A call waits for
-- it at most @MAX_LOCK_WAIT_MS@ ms (lock_timeout), then fails with 55P03,
-- having issued nothing.
--
-- PostgreSQL's lastval() returns the key a call handed out: the last
-- nextval() of the session is on the key sequence, and a move's setval()
-- on it (which lastval() then returns) comes after one; every other
-- sequence is only read, or set with setval(), which lastval() ignores.
--
-- Durability: nextval() writes a WAL record covering the next 32 values
-- before it returns the first, setval() one at once; the record precedes
-- the commit record of any transaction that stores a key it covers, so a
-- key stored by a committed transaction (synchronous_commit on) is never
-- issued again.  Keys handed out without such a commit (a transaction in
-- progress at a crash, a SELECT, an unflushed asynchronous commit, WAL a
-- standby had not received) lie at most @MAX_LEAD_MS@ ms ahead of the clock
-- of their time; the first move in each new server life
-- (_snowflake_life_marker: a restart, crash recovery, a promotion, a
-- restored backup) places the next key that far past the clock, above all
-- of them.  A session takes keys without the lock only once it has seen,
-- under the lock, the server life the sequence was last moved in.
--
-- The switch to the C extension (switch-to-c.sql) moves these functions
-- aside, creates the C extension's in their place, then takes the lock and
-- sets the state to -1 until it commits; a call that waited for the lock
-- then finds snowflake_nextval() to be the C extension's
-- (_snowflake_switched), and hands out the key the C extension gives it.
--
-- Every operator of a SQL-standard body here is written
-- OPERATOR(pg_catalog.x) (which takes the precedence of any other
-- operator: hence the parentheses), and snowflake_nextval(),
-- which has no search_path of its own (one would cost every call), uses
-- none: SQL-standard bodies are bound when they are created, PL/pgSQL at
-- run time under the caller's search_path unless the function sets one.

-- Milliseconds since the epoch, now.
CREATE FUNCTION @extschema@._snowflake_clock_ms()
RETURNS pg_catalog.int8
LANGUAGE sql VOLATILE PARALLEL UNSAFE
RETURN pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp())
                        OPERATOR(pg_catalog.*) 1000::pg_catalog.float8)::pg_catalog.int8
       OPERATOR(pg_catalog.-) @EPOCH_MS@::pg_catalog.int8;

COMMENT ON FUNCTION @extschema@._snowflake_clock_ms() IS
'milliseconds since the snowflake epoch, now (internal)';

-- Whether a call can take a key without the lock: the state is a node id
-- (0 to @MAX_NODE@: no bit above the node field; no move under way or
-- owed, 00-state.sql), the transaction can advance a
-- sequence, and this session has seen the server life the sequence was
-- last moved in (the setting is set only by _snowflake_next, and only ever
-- skips this check: the move checks the life again itself).
CREATE FUNCTION @extschema@._snowflake_ready(state pg_catalog.int8)
RETURNS pg_catalog.bool
LANGUAGE sql VOLATILE PARALLEL UNSAFE
RETURN (state OPERATOR(pg_catalog.&) -@MOVING@::pg_catalog.int8) OPERATOR(pg_catalog.=) 0::pg_catalog.int8
   AND pg_catalog.current_setting('transaction_read_only') OPERATOR(pg_catalog.=) 'off'::pg_catalog.text
   AND pg_catalog.current_setting('snowflake_edition.life', true) OPERATOR(pg_catalog.<>) ''::pg_catalog.text;

COMMENT ON FUNCTION @extschema@._snowflake_ready(pg_catalog.int8) IS
'whether a call may take a key without the lock (internal)';

-- Whether a key taken can be handed out: it carries the node id, and a time
-- no earlier than the clock's and at most @MAX_LEAD_MS@ ms ahead of it.
-- now_ms appears once, so that a volatile argument (the clock) leaves the
-- function inlined: a SQL function called as such is planned anew in each
-- transaction.
CREATE FUNCTION @extschema@._snowflake_fits(id pg_catalog.int8, node pg_catalog.int8, now_ms pg_catalog.int8)
RETURNS pg_catalog.bool
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ((id OPERATOR(pg_catalog.>>) @SEQUENCE_BITS@) OPERATOR(pg_catalog.&) @MAX_NODE@::pg_catalog.int8)
       OPERATOR(pg_catalog.=) node
   AND ((id OPERATOR(pg_catalog.>>) @SHIFT@) OPERATOR(pg_catalog.-) now_ms)
       OPERATOR(pg_catalog.<@) '[0,@MAX_LEAD_MS@]'::pg_catalog.int8range;

COMMENT ON FUNCTION @extschema@._snowflake_fits(pg_catalog.int8, pg_catalog.int8, pg_catalog.int8) IS
'whether a key taken may be handed out as it is (internal)';

-- The key sequence's next value, if a call may take it without the lock
-- (the generator's state read before it), else NULL.
CREATE FUNCTION @extschema@._snowflake_take(state pg_catalog.int8)
RETURNS pg_catalog.int8
LANGUAGE sql VOLATILE PARALLEL UNSAFE
RETURN CASE WHEN @extschema@._snowflake_ready(state)
            THEN pg_catalog.nextval('_snowflake._snowflake_id_seq'::pg_catalog.regclass) END;

COMMENT ON FUNCTION @extschema@._snowflake_take(pg_catalog.int8) IS
'the next value of the key sequence where the state lets a call take it without the lock, else NULL (internal)';

-- How many server processes there can be that may call the generator:
-- client backends (max_connections, the reserved ones among them),
-- background workers and WAL senders (which can run SQL), with room to
-- spare; autovacuum workers run no such code.  At most this many calls can
-- take a key without the lock while a move is under way (see above).  The
-- settings are fixed while the server runs, and no session can change them.
CREATE FUNCTION @extschema@._snowflake_max_backends()
RETURNS pg_catalog.int8
LANGUAGE sql STABLE PARALLEL SAFE
RETURN pg_catalog.current_setting('max_connections')::pg_catalog.int8
       OPERATOR(pg_catalog.+) pg_catalog.current_setting('max_worker_processes')::pg_catalog.int8
       OPERATOR(pg_catalog.+) pg_catalog.current_setting('max_wal_senders')::pg_catalog.int8
       OPERATOR(pg_catalog.+) 64::pg_catalog.int8;

COMMENT ON FUNCTION @extschema@._snowflake_max_backends() IS
'how many server processes that may call the generator there can be, with room to spare (internal)';

-- The server life, as a number: the postmaster's start time (a restart, a
-- promoted standby, a restored backup start another postmaster) and the
-- time the cumulative statistics were reset, which crash recovery does (as
-- pg_stat_reset_shared('bgwriter') does, which only costs a move).
CREATE FUNCTION @extschema@._snowflake_life_marker()
RETURNS pg_catalog.int8
LANGUAGE sql STABLE PARALLEL SAFE
RETURN pg_catalog.hashint8extended(
    (pg_catalog.date_part('epoch', pg_catalog.pg_postmaster_start_time())
     OPERATOR(pg_catalog.*) 1000000::pg_catalog.float8)::pg_catalog.int8,
    coalesce((pg_catalog.date_part('epoch', pg_catalog.pg_stat_get_bgwriter_stat_reset_time())
              OPERATOR(pg_catalog.*) 1000000::pg_catalog.float8)::pg_catalog.int8, 0::pg_catalog.int8));

COMMENT ON FUNCTION @extschema@._snowflake_life_marker() IS
'a number that changes with every server life: restart, crash recovery, promotion (internal)';

-- Why a call must refuse to generate, before it takes anything: 1 during
-- recovery, 2 in a read-only transaction, 3 while the node id is unset, 4
-- with the clock before the epoch, 5 past the timestamp field; 0 when it
-- may go on.
CREATE FUNCTION @extschema@._snowflake_refusal(node pg_catalog.int8, now_ms pg_catalog.int8)
RETURNS pg_catalog.int4
LANGUAGE sql VOLATILE PARALLEL UNSAFE
RETURN CASE WHEN pg_catalog.pg_is_in_recovery() THEN 1
            WHEN pg_catalog.current_setting('transaction_read_only') OPERATOR(pg_catalog.=) 'on'::pg_catalog.text THEN 2
            WHEN node IS NULL THEN 3
            WHEN now_ms OPERATOR(pg_catalog.<) 0::pg_catalog.int8 THEN 4
            WHEN now_ms OPERATOR(pg_catalog.>) @MAX_MS@::pg_catalog.int8 THEN 5
            ELSE 0 END;

COMMENT ON FUNCTION @extschema@._snowflake_refusal(pg_catalog.int8, pg_catalog.int8) IS
'why generation must refuse now, 0 if it need not (internal)';

-- The error of a refusal (_snowflake_refusal): 25006, 55000 or 22003.
CREATE FUNCTION @extschema@._snowflake_refuse(refusal pg_catalog.int4, now_ms pg_catalog.int8)
RETURNS pg_catalog.void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF refusal = 1 THEN
        RAISE EXCEPTION USING ERRCODE = 'read_only_sql_transaction',
            MESSAGE = 'cannot generate snowflake IDs during recovery',
            HINT = 'Generate IDs on the primary: a standby generates none until it is promoted.';
    ELSIF refusal = 2 THEN
        RAISE EXCEPTION USING ERRCODE = 'read_only_sql_transaction',
            MESSAGE = 'cannot generate snowflake IDs in a read-only transaction',
            DETAIL = 'The SQL edition of snowflake takes its IDs from a sequence, which a read-only transaction cannot advance.';
    ELSIF refusal = 3 THEN
        RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
            MESSAGE = 'snowflake node id is not set',
            HINT = 'The owner of the snowflake objects sets it once for this database with SELECT snowflake_set_node_id(N), N between 0 and @MAX_NODE@ and used by no other database or server that mints IDs.';
    ELSIF refusal = 4 THEN
        RAISE EXCEPTION USING ERRCODE = 'numeric_value_out_of_range',
            MESSAGE = 'current time is before the snowflake epoch',
            DETAIL = format('The epoch, %s, is %s ms in the future.',
                            @extschema@._snowflake_format_ms(@EPOCH_MS@::pg_catalog.int8), -now_ms);
    ELSIF refusal = 5 THEN
        RAISE EXCEPTION USING ERRCODE = 'numeric_value_out_of_range',
            MESSAGE = 'current time is past the last millisecond the snowflake timestamp field can hold',
            DETAIL = format('With a @TIMESTAMP_BITS@-bit timestamp field the last representable time is %s.',
                            @extschema@._snowflake_format_ms(@EPOCH_MS@ + @MAX_MS@));
    ELSIF refusal = 6 THEN
        RAISE EXCEPTION USING ERRCODE = 'numeric_value_out_of_range',
            MESSAGE = 'snowflake timestamp field exhausted',
            DETAIL = format('With a @TIMESTAMP_BITS@-bit timestamp field no millisecond after %s can be represented.', @MAX_MS@);
    END IF;
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_refuse(pg_catalog.int4, pg_catalog.int8) IS
'raise the error of a refusal (internal)';

-- Sleep until the key whose time is id_ms leads the clock by at most
-- @MAX_LEAD_MS@ ms, for at most @MAX_WAIT_MS@ ms in all; if that cannot be
-- enough, 58000 (the key is not handed out).  behind: the clock stepped
-- back (else keys ran ahead in a burst).
CREATE FUNCTION @extschema@._snowflake_wait(id_ms pg_catalog.int8, now_ms pg_catalog.int8,
                                            behind pg_catalog.bool)
RETURNS pg_catalog.void
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    deadline int8 := now_ms + @MAX_WAIT_MS@;
BEGIN
    WHILE id_ms - now_ms > @MAX_LEAD_MS@ LOOP
        IF id_ms - @MAX_LEAD_MS@ > deadline THEN
            IF behind THEN
                RAISE EXCEPTION USING ERRCODE = 'system_error',
                    MESSAGE = format('system clock is %s ms behind the last issued snowflake ID', id_ms - now_ms),
                    DETAIL = 'IDs may lead the clock by @MAX_LEAD_MS@ ms and a call may wait @MAX_WAIT_MS@ ms; no ID was issued.',
                    HINT = 'Generation resumes by itself once the clock catches up. Check the server''s time synchronisation.';
            END IF;
            RAISE EXCEPTION USING ERRCODE = 'system_error',
                MESSAGE = format('snowflake IDs are %s ms ahead of the system clock after a burst', id_ms - now_ms),
                DETAIL = 'More IDs were asked for than the sequence field holds per millisecond, and the time borrowed from the future exceeds what IDs may lead the clock by, @MAX_LEAD_MS@ ms, plus what a call may wait, @MAX_WAIT_MS@ ms; no ID was issued.',
                HINT = 'Ask for fewer IDs at once.';
        END IF;
        PERFORM pg_sleep((id_ms - @MAX_LEAD_MS@ - now_ms) / 1000.0);
        now_ms := @extschema@._snowflake_clock_ms();
    END LOOP;
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_wait(pg_catalog.int8, pg_catalog.int8, pg_catalog.bool) IS
'wait until a key leads the clock by no more than it may, or fail (internal)';

-- The key n places after the key first, counting keys of the node id only
-- (the sequence field carries into the millisecond).
CREATE FUNCTION @extschema@._snowflake_after(first pg_catalog.int8, node pg_catalog.int8, n pg_catalog.int8)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ((((((first OPERATOR(pg_catalog.>>) @SHIFT@) OPERATOR(pg_catalog.<<) @SEQUENCE_BITS@)
           OPERATOR(pg_catalog.|) (first OPERATOR(pg_catalog.&) @MAX_SEQUENCE@::pg_catalog.int8))
          OPERATOR(pg_catalog.+) n) OPERATOR(pg_catalog.>>) @SEQUENCE_BITS@) OPERATOR(pg_catalog.<<) @SHIFT@)
       OPERATOR(pg_catalog.|) (node OPERATOR(pg_catalog.<<) @SEQUENCE_BITS@)
       OPERATOR(pg_catalog.|) (((((first OPERATOR(pg_catalog.>>) @SHIFT@) OPERATOR(pg_catalog.<<) @SEQUENCE_BITS@)
                                 OPERATOR(pg_catalog.|) (first OPERATOR(pg_catalog.&) @MAX_SEQUENCE@::pg_catalog.int8))
                                OPERATOR(pg_catalog.+) n) OPERATOR(pg_catalog.&) @MAX_SEQUENCE@::pg_catalog.int8);

COMMENT ON FUNCTION @extschema@._snowflake_after(pg_catalog.int8, pg_catalog.int8, pg_catalog.int8) IS
'the key some places after another, of one node id (internal)';

-- Whether the database has switched to the C extension: snowflake_nextval()
-- of this schema is no longer this edition's PL/pgSQL function
-- (switch-to-c.sql moves the edition's functions aside and creates the C
-- extension's in their place).  Read under the lock, which the switch held.
CREATE FUNCTION @extschema@._snowflake_switched()
RETURNS pg_catalog.bool
LANGUAGE sql STABLE PARALLEL SAFE
RETURN coalesce((SELECT l.lanname OPERATOR(pg_catalog.<>) 'plpgsql'::pg_catalog.name
                   FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_language l ON l.oid OPERATOR(pg_catalog.=) p.prolang
                  WHERE p.oid OPERATOR(pg_catalog.=) pg_catalog.to_regprocedure('@extschema@.snowflake_nextval()')::pg_catalog.oid), true);

COMMENT ON FUNCTION @extschema@._snowflake_switched() IS
'whether snowflake_nextval() is the C extension''s now (internal)';

-- Everything but the common path of snowflake_nextval() (taken: the key
-- it took without the lock, or NULL; state: the generator's state it
-- read) and snowflake_nextval_batch() (count keys, taken and state NULL):
-- the refusals, then the generator's lock, and under it the move (see
-- above): the state set to a move under way, L taken; if L carries the node
-- id and a time no earlier than the clock's (count 1, no move owed, the
-- same server life: another call moved the sequence while this one waited for the lock, or
-- the clock stepped back), L itself, the sequence untouched; else the first
-- of count keys above L + B that carry the node id and a time no earlier
-- than the clock's (ahead of it where the sequence was moved a moment ago,
-- @MAX_LEAD_MS@ ms ahead in a new server life), the sequence set to the
-- last of them; then the state set back to the node id.  The node id is
-- read under the lock.  A key that leads the clock too far waits for it,
-- after the lock is released.  Returns the first key; once the database
-- has switched to the C extension, the C extension's key (count 1) or
-- NULL.  A call waits for the lock, or for a lock on one of the edition's
-- sequences, at most @MAX_LOCK_WAIT_MS@ ms (lock_timeout) and fails with
-- 55P03.  Runs as the edition's owner.  Each statement of a PL/pgSQL
-- function is set up once per transaction: at everyday rates, where every
-- call moves the sequence, their number is the cost, and the statements
-- that such calls need not run are in branches.
CREATE FUNCTION @extschema@._snowflake_next(taken pg_catalog.int8, state pg_catalog.int8, count pg_catalog.int4)
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
AS $$
DECLARE
    -- No search_path of its own (a SET clause costs every call that moves
    -- the sequence some 20,000 instructions): every name is qualified and
    -- every operator is OPERATOR(pg_catalog.x) (which takes the precedence
    -- of any other operator: hence the parentheses), as in
    -- snowflake_nextval(), which calls it and runs as the owner.
    now_ms pg_catalog.int8 := @extschema@._snowflake_clock_ms();
    marker pg_catalog.int8 := @extschema@._snowflake_life_marker();
    refusal pg_catalog.int4 := 0;
    behind pg_catalog.bool := false;
    new_life pg_catalog.bool;
    node pg_catalog.int8;
    last pg_catalog.int8;
    first pg_catalog.int8;
    g pg_catalog.int8;
    t pg_catalog.int8;
    done pg_catalog.text;
BEGIN
    IF taken IS NULL THEN
        -- Not ready for a key without the lock: why, if it must refuse.
        -- (Only what runs is set up, once per transaction: so the
        -- statements that everyday calls need not run are in branches.)
        refusal := @extschema@._snowflake_refusal(0::pg_catalog.int8, now_ms);
        IF refusal OPERATOR(pg_catalog.<>) 0 THEN
            PERFORM @extschema@._snowflake_refuse(refusal, now_ms);
        END IF;
    END IF;

    -- The lock, held until this block is rolled back (SFREL), by its end
    -- or by an error; lock_timeout set in it is undone with it.
    BEGIN
        -- The lock, and under it (the outer query reads what the inner
        -- one locked): the node id, the state and the last key taken.
        -- lock_timeout is set before the lock is waited for, in the scan's
        -- condition.
        SELECT pg_catalog.pg_sequence_last_value('_snowflake._snowflake_node_seq'::pg_catalog.regclass),
               pg_catalog.pg_sequence_last_value('_snowflake._snowflake_state_seq'::pg_catalog.regclass),
               pg_catalog.pg_sequence_last_value('_snowflake._snowflake_id_seq'::pg_catalog.regclass)
          INTO node, state, last
          FROM (SELECT FROM _snowflake._snowflake_lock
                 WHERE pg_catalog.set_config('lock_timeout', '@MAX_LOCK_WAIT_MS@', true) IS NOT NULL
                   FOR UPDATE) l;
        IF NOT FOUND THEN
            RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
                MESSAGE = 'the snowflake generator''s lock is missing',
                DETAIL = 'The table _snowflake._snowflake_lock has no row; no ID was issued.',
                HINT = 'The owner of the snowflake objects puts it back: INSERT INTO _snowflake._snowflake_lock DEFAULT VALUES.';
        END IF;
        IF (state OPERATOR(pg_catalog.=) -1) OR node IS NULL THEN
            IF node IS NULL THEN
                refusal := 3;
                RAISE SQLSTATE 'SFREL';
            END IF;
            IF @extschema@._snowflake_switched() THEN
                RAISE SQLSTATE 'SFSWI';
            END IF;
        END IF;

        -- No move under way or owed (the state is the node id, and only
        -- a holder of the lock changes it), and the last key taken carries
        -- the node id and a time no earlier than the clock's: another call
        -- moved the sequence while this one waited for the lock.  The next
        -- value, taken as a call without the lock takes it, is handed out
        -- if it fits (in the same server life), and the state is left
        -- alone: the call takes a key and goes, and sends no call behind it
        -- to the lock.  (No move can be under way meanwhile: this call
        -- holds the lock.)  Where the last key lies behind the clock (a
        -- call at an everyday rate, the sequence last moved a while ago), so
        -- does the next: the call moves the sequence at once.
        IF (count OPERATOR(pg_catalog.=) 1) AND (state OPERATOR(pg_catalog.=) node)
           AND (((last OPERATOR(pg_catalog.>>) @SEQUENCE_BITS@) OPERATOR(pg_catalog.&) @MAX_NODE@::pg_catalog.int8)
                OPERATOR(pg_catalog.=) node)
           AND ((last OPERATOR(pg_catalog.>>) @SHIFT@) OPERATOR(pg_catalog.>=) now_ms) THEN
            last := pg_catalog.nextval('_snowflake._snowflake_id_seq'::pg_catalog.regclass);
            IF @extschema@._snowflake_fits(last, node, now_ms)
               AND coalesce(pg_catalog.pg_sequence_last_value('_snowflake._snowflake_life_seq'::pg_catalog.regclass)
                            OPERATOR(pg_catalog.=) marker, false) THEN
                first := last;
                RAISE SQLSTATE 'SFREL';
            END IF;
        END IF;

        -- The state says a move is under way before L is taken (the
        -- argument above): setval() first, then nextval(), which has the
        -- session's lastval() follow the key sequence.
        last := pg_catalog.nextval(
            CASE WHEN pg_catalog.setval('_snowflake._snowflake_state_seq'::pg_catalog.regclass,
                                        node OPERATOR(pg_catalog.+) @MOVING@) IS NOT NULL
                 THEN '_snowflake._snowflake_id_seq'::pg_catalog.regclass END);
        new_life := coalesce(pg_catalog.pg_sequence_last_value('_snowflake._snowflake_life_seq'::pg_catalog.regclass)
                             OPERATOR(pg_catalog.<>) marker, true);
        IF NOT new_life AND (count OPERATOR(pg_catalog.=) 1) AND (state OPERATOR(pg_catalog.=) node)
           AND (((last OPERATOR(pg_catalog.>>) @SEQUENCE_BITS@) OPERATOR(pg_catalog.&) @MAX_NODE@::pg_catalog.int8)
                OPERATOR(pg_catalog.=) node)
           AND ((last OPERATOR(pg_catalog.>>) @SHIFT@) OPERATOR(pg_catalog.>=) now_ms) THEN
            -- No move owed, and L carries the node id and a time no earlier
            -- than the clock's: another call moved the sequence while this
            -- one waited for the lock, or the key only leads the clock too
            -- far, which means that the clock stepped back (it waits
            -- below).
            first := last;
            behind := true;
        ELSE
            -- The first key above L + B with the node id and a time no
            -- earlier than the floor: a second past the clock in a new
            -- server life; @MOVE_AHEAD_MS@ ms past it where the sequence
            -- was moved less than that long ago (more than a call every
            -- @MOVE_AHEAD_MS@ ms), so that the calls of the next
            -- milliseconds take theirs without a move; else the clock.  g
            -- is the lowest value above L + B at the floor or later (B
            -- matters only where L lies within PostgreSQL's largest number
            -- of processes, 262143, of the floor: not behind the clock), t
            -- the slot of the node id in its millisecond, or in the next one
            -- where g lies past it.
            g := (now_ms OPERATOR(pg_catalog.+)
                  CASE WHEN new_life THEN @MAX_LEAD_MS@
                       WHEN (last OPERATOR(pg_catalog.>>) @SHIFT@)
                            OPERATOR(pg_catalog.>=) (now_ms OPERATOR(pg_catalog.-) @MOVE_AHEAD_MS@)
                       THEN @MOVE_AHEAD_MS@
                       ELSE 0 END) OPERATOR(pg_catalog.<<) @SHIFT@;
            IF (last OPERATOR(pg_catalog.+) 262143) OPERATOR(pg_catalog.>=) g THEN
                g := greatest((last OPERATOR(pg_catalog.+) @extschema@._snowflake_max_backends())
                              OPERATOR(pg_catalog.+) 1, g);
            END IF;
            t := ((g OPERATOR(pg_catalog.>>) @SHIFT@) OPERATOR(pg_catalog.<<) @NODE_BITS@) OPERATOR(pg_catalog.|) node;
            first := greatest(g, (t OPERATOR(pg_catalog.+)
                                  CASE WHEN t OPERATOR(pg_catalog.<) (g OPERATOR(pg_catalog.>>) @SEQUENCE_BITS@)
                                       THEN @MOVING@ ELSE 0 END) OPERATOR(pg_catalog.<<) @SEQUENCE_BITS@);
            IF count OPERATOR(pg_catalog.=) 1 THEN
                last := first;
            ELSE
                last := @extschema@._snowflake_after(first, node, (count OPERATOR(pg_catalog.-) 1)::pg_catalog.int8);
            END IF;
            IF (last OPERATOR(pg_catalog.>>) @SHIFT@)
               OPERATOR(pg_catalog.<=) least(@MAX_MS@, (now_ms OPERATOR(pg_catalog.+) @MAX_LEAD_MS@) OPERATOR(pg_catalog.+) @MAX_WAIT_MS@) THEN
                g := pg_catalog.setval('_snowflake._snowflake_id_seq'::pg_catalog.regclass, last);
                IF new_life THEN
                    g := pg_catalog.setval('_snowflake._snowflake_life_seq'::pg_catalog.regclass, marker);
                END IF;
            ELSIF (last OPERATOR(pg_catalog.>>) @SHIFT@) OPERATOR(pg_catalog.>) @MAX_MS@ THEN
                refusal := 6;
            END IF;
        END IF;
        g := pg_catalog.setval('_snowflake._snowflake_state_seq'::pg_catalog.regclass, node);
        RAISE SQLSTATE 'SFREL';
    EXCEPTION
        WHEN SQLSTATE 'SFREL' THEN
            NULL;
        WHEN SQLSTATE 'SFSWI' THEN
            -- Switched to the C extension while this call waited.
            IF count OPERATOR(pg_catalog.=) 1 THEN
                RETURN @extschema@.snowflake_nextval();
            END IF;
            RETURN NULL;
        WHEN lock_not_available THEN
            RAISE EXCEPTION USING ERRCODE = 'lock_not_available',
                MESSAGE = 'could not move the snowflake key sequence',
                DETAIL = 'Another call held the snowflake generator''s lock, or one of its sequences, for @MAX_LOCK_WAIT_MS@ ms; no ID was issued.',
                HINT = 'Only a move of the key sequence, or the switch to the C extension, holds it, each for a few statements: look in pg_stat_activity for a session that stopped inside one.';
    END;

    -- Refused under the lock, raised without it; a key that leads the
    -- clock by more than it may waits for it.
    IF (refusal OPERATOR(pg_catalog.<>) 0)
       OR (((last OPERATOR(pg_catalog.>>) @SHIFT@) OPERATOR(pg_catalog.-) now_ms) OPERATOR(pg_catalog.>) @MAX_LEAD_MS@) THEN
        IF refusal OPERATOR(pg_catalog.<>) 0 THEN
            PERFORM @extschema@._snowflake_refuse(refusal, now_ms);
        END IF;
        PERFORM @extschema@._snowflake_wait(last OPERATOR(pg_catalog.>>) @SHIFT@, now_ms, behind);
    END IF;
    IF taken IS NULL THEN
        -- This session has seen this server life under the lock: its next
        -- calls may take their keys without it.
        IF pg_catalog.current_setting('snowflake_edition.life', true) IS NULL THEN
            done := pg_catalog.set_config('snowflake_edition.life', 'seen', false);
        END IF;
    END IF;
    RETURN first;
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_next(pg_catalog.int8, pg_catalog.int8, pg_catalog.int4) IS
'snowflake_nextval() where a key taken without the lock cannot be handed out as it is, and the batches: the next key under the generator''s lock, moving the key sequence where it must (internal)';

-- The common path is what a sequence costs: the state, one nextval(),
-- the clock and integer arithmetic (see above), in three statements (each
-- statement of a PL/pgSQL function is set up once per transaction).  The
-- clock is read after the key is taken: the key is no earlier than the
-- clock at the moment it is checked, so than the clock when the call
-- began (the C extension reads it before its spinlock; a later reading
-- only narrows what fits).
CREATE FUNCTION @extschema@.snowflake_nextval()
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
AS $$
DECLARE
    state pg_catalog.int8 := pg_catalog.pg_sequence_last_value('_snowflake._snowflake_state_seq'::pg_catalog.regclass);
    id pg_catalog.int8 := @extschema@._snowflake_take(state);
BEGIN
    -- Every name is qualified, and no operator is used (with no
    -- search_path of its own, which would cost every call): this runs as
    -- the edition's owner.  The state is read before the key is taken, as
    -- the argument above needs.
    IF @extschema@._snowflake_fits(id, state, @extschema@._snowflake_clock_ms()) THEN
        RETURN id;
    END IF;
    RETURN @extschema@._snowflake_next(id, state, 1);
END
$$;

COMMENT ON FUNCTION @extschema@.snowflake_nextval() IS
'next ID of this database''s generator: unique across nodes, increasing in this database';

CREATE FUNCTION @extschema@.snowflake_nextval_batch(count pg_catalog.int4)
RETURNS SETOF pg_catalog.int8
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
ROWS 1000
AS $$
DECLARE
    first int8;
    node int8;
    packed int8;
BEGIN
    IF count < 1 OR count > 1000000 THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'batch size must be between 1 and 1000000',
            DETAIL = format('The requested batch size was %s.', count);
    END IF;
    first := @extschema@._snowflake_next(NULL::pg_catalog.int8, NULL::pg_catalog.int8, count);
    IF first IS NULL THEN
        -- Switched to the C extension while this call waited.
        RETURN QUERY SELECT * FROM @extschema@.snowflake_nextval_batch(count);
        RETURN;
    END IF;
    node := (first >> @SEQUENCE_BITS@) & @MAX_NODE@;
    packed := ((first >> @SHIFT@) << @SEQUENCE_BITS@) | (first & @MAX_SEQUENCE@);
    RETURN QUERY
        SELECT ((p >> @SEQUENCE_BITS@) << @SHIFT@) | (node << @SEQUENCE_BITS@) | (p & @MAX_SEQUENCE@)
          FROM generate_series(packed, packed + count - 1) p;
END
$$;

COMMENT ON FUNCTION @extschema@.snowflake_nextval_batch(pg_catalog.int4) IS
'count consecutive IDs (1 to 1000000), reserved all at once: issued whole or not at all';

-- The last key handed to this session: the sequence's currval(), which
-- nextval() and setval() set for the session that calls them, and DISCARD
-- ALL forgets.
CREATE FUNCTION @extschema@.snowflake_lastval()
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RETURN currval('_snowflake._snowflake_id_seq'::regclass);
EXCEPTION WHEN object_not_in_prerequisite_state THEN
    RAISE EXCEPTION USING ERRCODE = 'object_not_in_prerequisite_state',
        MESSAGE = 'snowflake_lastval is not yet defined in this session',
        HINT = 'Call it in the session that called snowflake_nextval() or snowflake_nextval_batch(), and behind a transaction pooler in the same transaction.';
END
$$;

COMMENT ON FUNCTION @extschema@.snowflake_lastval() IS
'the last ID snowflake_nextval() or snowflake_nextval_batch() handed to this session (of a batch, its largest); an error before the first';

-- The node id sequence, found by its OID: snowflake_set_node_id() runs as
-- its caller, who may have no USAGE on _snowflake (a name would need it).
CREATE FUNCTION @extschema@._snowflake_node_seq()
RETURNS pg_catalog.regclass
LANGUAGE sql STABLE PARALLEL SAFE
RETURN (SELECT c.oid::pg_catalog.regclass
          FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = '_snowflake' AND c.relname = '_snowflake_node_seq');

COMMENT ON FUNCTION @extschema@._snowflake_node_seq() IS
'the sequence that holds the node id (internal)';

-- The node id, set by an administrator: the owner of the edition's objects
-- (the role that installed it) or a superuser, who alone may change the
-- sequence that holds it.  Under the generator's lock, with the state set
-- to a move owed: the next call moves the key sequence to the new node
-- id's keys, above every key taken before (see above).
CREATE FUNCTION @extschema@.snowflake_set_node_id(node_id pg_catalog.int4)
RETURNS pg_catalog.int4
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    seq regclass := @extschema@._snowflake_node_seq();
    old int8;
    done int8;
BEGIN
    IF node_id < 0 OR node_id > @MAX_NODE@ THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = format('snowflake node id %s is out of range', node_id),
            DETAIL = 'A node id is between 0 and @MAX_NODE@.';
    END IF;
    IF NOT has_sequence_privilege(seq::oid, 'UPDATE') THEN
        RAISE EXCEPTION USING ERRCODE = 'insufficient_privilege',
            MESSAGE = 'permission denied to set the snowflake node id',
            DETAIL = 'Only the owner of the snowflake objects (the role that installed them) and superusers may set it.';
    END IF;
    -- The lock, held until this block is rolled back.
    BEGIN
        PERFORM FROM _snowflake._snowflake_lock FOR UPDATE;
        old := pg_sequence_last_value(seq);
        IF old <> node_id THEN
            RAISE NOTICE 'snowflake node id changed from % to %', old, node_id;
        END IF;
        done := setval(seq, node_id);
        IF old IS DISTINCT FROM node_id THEN
            done := setval('_snowflake._snowflake_state_seq'::regclass, node_id + @MOVING@);
        END IF;
        RAISE SQLSTATE 'SFREL';
    EXCEPTION WHEN SQLSTATE 'SFREL' THEN
        NULL;
    END;
    RETURN node_id;
END
$$;

COMMENT ON FUNCTION @extschema@.snowflake_set_node_id(pg_catalog.int4) IS
'set this database''s snowflake node id (0 to @MAX_NODE@), unique among the databases and servers that mint IDs (its owner and superusers only)';

REVOKE ALL ON FUNCTION @extschema@.snowflake_set_node_id(pg_catalog.int4) FROM PUBLIC;

-- The generator's internals run as the edition's owner, called from the
-- functions above with their search_path; no one else may call them.
REVOKE ALL ON FUNCTION @extschema@._snowflake_wait(pg_catalog.int8, pg_catalog.int8, pg_catalog.bool) FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@._snowflake_next(pg_catalog.int8, pg_catalog.int8, pg_catalog.int4) FROM PUBLIC;
