-- Generation: snowflake_nextval(), snowflake_nextval_batch(),
-- snowflake_lastval(), and the administrator's snowflake_set_node_id().
--
-- The last key taken is the value of _snowflake._snowflake_id_seq
-- (00-state.sql).  A call takes the next one with nextval(), and returns it
-- when it carries this database's node id and a time no earlier than the
-- clock's and at most @MAX_LEAD_MS@ ms later.  Otherwise the sequence must
-- move: a call that finds it behind the clock, in another node field (4096
-- keys taken in one millisecond carried into the node field) or in a new
-- server life takes the generator's lock (_snowflake_move), takes the next
-- value under it, and if that does not fit either, sets the sequence to the
-- first key above it that carries the node id and a time no earlier than
-- the clock's.  So every key is above every key taken before it, whichever
-- session took it, and no interleaving of calls can set the sequence back:
--  * moves are made one at a time, under the lock;
--  * a call that takes a key without the lock reads _snowflake_move_seq
--    before and after its nextval(), and hands the key out only if no move
--    was under way before and none began meanwhile (the value even and
--    unchanged); a move makes it odd before it reads the sequence and even
--    again after its setval().  A key handed out without the lock was
--    therefore taken entirely before a move read the sequence (the move
--    sets it above that key) or entirely after its setval (the key is above
--    what the move set).
--
-- The lock is a table lock on _snowflake._snowflake_lock, in a schema no
-- other role may use (00-state.sql): no other role can take it, queue for
-- it, or take any lock a call waits for.  A move takes it inside a
-- subtransaction and rolls the subtransaction back at its end, so that it
-- is held for the move's few statements, never to the end of the caller's
-- transaction, and released by any error or cancel; it needs no
-- transaction id.  A call that finds it taken (NOWAIT) does not queue: the
-- move under way makes the next value fit, and the call takes it without
-- the lock again, for up to a millisecond; then it waits for the lock, at
-- most @MAX_LOCK_WAIT_MS@ ms (lock_timeout), and fails with 55P03, having
-- issued nothing (a batch waits at once).
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
-- of them.
--
-- The switch to the C extension (switch-to-c.sql) moves these functions
-- aside, creates the C extension's in their place, then takes the lock and
-- sets _snowflake_move_seq to -1 until it commits; a call that waited for
-- the lock then finds snowflake_nextval() to be the C extension's
-- (_snowflake_switched), and hands out the key the C extension gives it.

-- Milliseconds since the epoch, now.
CREATE FUNCTION @extschema@._snowflake_clock_ms()
RETURNS pg_catalog.int8
LANGUAGE sql VOLATILE PARALLEL UNSAFE
RETURN pg_catalog.floor(pg_catalog.date_part('epoch', pg_catalog.clock_timestamp()) * 1000::pg_catalog.float8)::pg_catalog.int8
       - @EPOCH_MS@;

COMMENT ON FUNCTION @extschema@._snowflake_clock_ms() IS
'milliseconds since the snowflake epoch, now (internal)';

-- Whether a call can take a key without the lock: the node id is set, the
-- transaction can advance a sequence, this session has seen the server
-- life the sequence was last moved in (the flag is set only by
-- _snowflake_move and only ever skips this check: the move checks the life
-- again itself), no move is under way (moving even), and the last key
-- taken is not behind the clock (else the call moves the sequence at once:
-- at everyday rates, every call).  (bigint % integer is pg_catalog's only
-- through a cast: OPERATOR(pg_catalog.%), as every operator of a standard
-- body takes operands of exactly its types, 20-decoders.sql.)
CREATE FUNCTION @extschema@._snowflake_ready(node pg_catalog.int8, moving pg_catalog.int8,
                                             now_ms pg_catalog.int8)
RETURNS pg_catalog.bool
LANGUAGE sql VOLATILE PARALLEL UNSAFE
RETURN node IS NOT NULL
   AND coalesce(moving, 0) OPERATOR(pg_catalog.%) 2 = 0
   AND pg_catalog.current_setting('transaction_read_only') = 'off'
   AND pg_catalog.current_setting('snowflake_edition.life', true) <> ''
   AND pg_catalog.pg_sequence_last_value('_snowflake._snowflake_id_seq'::pg_catalog.regclass) >> @SHIFT@ >= now_ms;

COMMENT ON FUNCTION @extschema@._snowflake_ready(pg_catalog.int8, pg_catalog.int8, pg_catalog.int8) IS
'whether a call may take a key without moving the sequence (internal)';

-- Whether a key taken can be handed out: it carries the node id, and a time
-- no earlier than the clock's and at most @MAX_LEAD_MS@ ms ahead of it.
CREATE FUNCTION @extschema@._snowflake_fits(id pg_catalog.int8, node pg_catalog.int8, now_ms pg_catalog.int8)
RETURNS pg_catalog.bool
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ((id >> @SEQUENCE_BITS@) & @MAX_NODE@::pg_catalog.int8) = node
   AND (id >> @SHIFT@) BETWEEN now_ms AND now_ms + @MAX_LEAD_MS@;

COMMENT ON FUNCTION @extschema@._snowflake_fits(pg_catalog.int8, pg_catalog.int8, pg_catalog.int8) IS
'whether a key taken may be handed out as it is (internal)';

-- The server life, as a number: the postmaster's start time (a restart, a
-- promoted standby, a restored backup start another postmaster) and the
-- time the cumulative statistics were reset, which crash recovery does (as
-- pg_stat_reset_shared('bgwriter') does, which only costs a move).
CREATE FUNCTION @extschema@._snowflake_life_marker()
RETURNS pg_catalog.int8
LANGUAGE sql STABLE PARALLEL SAFE
RETURN pg_catalog.hashtextextended(
    (pg_catalog.date_part('epoch', pg_catalog.pg_postmaster_start_time()) * 1000000::pg_catalog.float8)::pg_catalog.int8::pg_catalog.text
    || '/' || coalesce((pg_catalog.date_part('epoch', pg_catalog.pg_stat_get_bgwriter_stat_reset_time())
                        * 1000000::pg_catalog.float8)::pg_catalog.int8::pg_catalog.text, ''), 0);

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
            WHEN pg_catalog.current_setting('transaction_read_only') = 'on' THEN 2
            WHEN node IS NULL THEN 3
            WHEN now_ms < 0 THEN 4
            WHEN now_ms > @MAX_MS@ THEN 5
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

-- The first key above last that carries the node id and a time no earlier
-- than floor_ms: the key after a key whose sequence field is full, or that
-- lies in a higher node field, carries the next millisecond.
CREATE FUNCTION @extschema@._snowflake_first(last pg_catalog.int8, node pg_catalog.int8,
                                             floor_ms pg_catalog.int8)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    WHEN (greatest(last + 1, floor_ms << @SHIFT@) >> @SEQUENCE_BITS@) & @MAX_NODE@::pg_catalog.int8 > node
    THEN (((greatest(last + 1, floor_ms << @SHIFT@) >> @SHIFT@) + 1) << @SHIFT@) | (node << @SEQUENCE_BITS@)
    WHEN (greatest(last + 1, floor_ms << @SHIFT@) >> @SEQUENCE_BITS@) & @MAX_NODE@::pg_catalog.int8 < node
    THEN ((greatest(last + 1, floor_ms << @SHIFT@) >> @SHIFT@) << @SHIFT@) | (node << @SEQUENCE_BITS@)
    ELSE greatest(last + 1, floor_ms << @SHIFT@)
END;

COMMENT ON FUNCTION @extschema@._snowflake_first(pg_catalog.int8, pg_catalog.int8, pg_catalog.int8) IS
'the first key above another with the node id and a time no earlier than a floor (internal)';

-- The key n places after the key first, counting keys of the node id only
-- (the sequence field carries into the millisecond).
CREATE FUNCTION @extschema@._snowflake_after(first pg_catalog.int8, node pg_catalog.int8, n pg_catalog.int8)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ((((((first >> @SHIFT@) << @SEQUENCE_BITS@) | (first & @MAX_SEQUENCE@::pg_catalog.int8)) + n) >> @SEQUENCE_BITS@) << @SHIFT@)
       | (node << @SEQUENCE_BITS@)
       | (((((first >> @SHIFT@) << @SEQUENCE_BITS@) | (first & @MAX_SEQUENCE@::pg_catalog.int8)) + n)
          & @MAX_SEQUENCE@::pg_catalog.int8);

COMMENT ON FUNCTION @extschema@._snowflake_after(pg_catalog.int8, pg_catalog.int8, pg_catalog.int8) IS
'the key some places after another, of one node id (internal)';

-- Whether two values are the same, NULL being the same as NULL (a SQL
-- body, bound when it is created: the functions that call it use no
-- operator of their caller's search_path).
CREATE FUNCTION @extschema@._snowflake_same(a pg_catalog.int8, b pg_catalog.int8)
RETURNS pg_catalog.bool
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN a IS NOT DISTINCT FROM b;

COMMENT ON FUNCTION @extschema@._snowflake_same(pg_catalog.int8, pg_catalog.int8) IS
'whether two values are the same, NULL included (internal)';

-- Whether the database has switched to the C extension: snowflake_nextval()
-- of this schema is no longer this edition's PL/pgSQL function
-- (switch-to-c.sql moves the edition's functions aside and creates the C
-- extension's in their place).  Read under the lock, which the switch held.
CREATE FUNCTION @extschema@._snowflake_switched()
RETURNS pg_catalog.bool
LANGUAGE sql STABLE PARALLEL SAFE
RETURN coalesce((SELECT l.lanname <> 'plpgsql'
                   FROM pg_catalog.pg_proc p JOIN pg_catalog.pg_language l ON l.oid = p.prolang
                  WHERE p.oid OPERATOR(pg_catalog.=) pg_catalog.to_regprocedure('@extschema@.snowflake_nextval()')), true);

COMMENT ON FUNCTION @extschema@._snowflake_switched() IS
'whether snowflake_nextval() is the C extension''s now (internal)';

-- The key sequence's next value or a move, under the generator's lock:
-- the next value, if it fits (count 1, the same server life); else the
-- first key above the sequence's value that carries the node id and a time
-- no earlier than now_ms (in a new server life, @MAX_LEAD_MS@ ms later),
-- with room for count keys in all, the sequence set to the last of them.
-- Returns the first key, or NULL once the database has switched to the C
-- extension.  While another call holds the lock (it is moving the
-- sequence, and the keys after its move will fit), a call of one key does
-- not queue for it: it takes the next value without the lock again, as
-- snowflake_nextval() does, for up to a millisecond; then it waits for the
-- lock, at most @MAX_LOCK_WAIT_MS@ ms.  Runs as the edition's owner
-- (snowflake_nextval()'s slow path, and snowflake_nextval_batch()).
CREATE FUNCTION @extschema@._snowflake_move(node pg_catalog.int8, now_ms pg_catalog.int8,
                                            count pg_catalog.int4)
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
SET lock_timeout = @MAX_LOCK_WAIT_MS@
AS $$
DECLARE
    marker int8 := @extschema@._snowflake_life_marker();
    queue bool := count > 1;
    switched bool := false;
    new_life bool;
    moving int8;
    taken int8;
    floor_ms int8;
    first int8;
    last int8;
    done int8;
BEGIN
    LOOP
        -- The lock, held until this block is rolled back (SFREL), by its
        -- end or by an error.
        BEGIN
            IF queue THEN
                LOCK TABLE _snowflake._snowflake_lock IN SHARE UPDATE EXCLUSIVE MODE;
            ELSE
                LOCK TABLE _snowflake._snowflake_lock IN SHARE UPDATE EXCLUSIVE MODE NOWAIT;
            END IF;
            moving := coalesce(pg_sequence_last_value('_snowflake._snowflake_move_seq'::regclass), 0);
            IF moving < 0 AND @extschema@._snowflake_switched() THEN
                switched := true;
                RAISE SQLSTATE 'SFREL';
            END IF;
            IF moving % 2 <> 0 THEN
                -- Odd with the lock held: a move that failed half-way, a
                -- crash, or a switch that was rolled back.
                moving := moving + 1;
                done := setval('_snowflake._snowflake_move_seq'::regclass, moving);
            END IF;
            new_life := pg_sequence_last_value('_snowflake._snowflake_life_seq'::regclass) IS DISTINCT FROM marker;
            taken := nextval('_snowflake._snowflake_id_seq'::regclass);
            IF count = 1 AND NOT new_life
               AND @extschema@._snowflake_fits(taken, node, @extschema@._snowflake_clock_ms()) THEN
                first := taken;
                last := taken;
                RAISE SQLSTATE 'SFREL';
            END IF;
            -- A move: odd while the sequence is read and set.
            done := setval('_snowflake._snowflake_move_seq'::regclass, moving + 1);
            last := pg_sequence_last_value('_snowflake._snowflake_id_seq'::regclass);
            floor_ms := now_ms + CASE WHEN new_life THEN @MAX_LEAD_MS@ ELSE 0 END;
            -- Variables as the arguments: the planner inlines the arithmetic
            -- only where they are simple.
            first := @extschema@._snowflake_first(last, node, floor_ms);
            last := @extschema@._snowflake_after(first, node, (count - 1)::pg_catalog.int8);
            IF last >> @SHIFT@ <= @MAX_MS@ AND (last >> @SHIFT@) - now_ms <= @MAX_LEAD_MS@ + @MAX_WAIT_MS@ THEN
                done := setval('_snowflake._snowflake_id_seq'::regclass, last);
                IF new_life THEN
                    done := setval('_snowflake._snowflake_life_seq'::regclass, marker);
                END IF;
            END IF;
            done := setval('_snowflake._snowflake_move_seq'::regclass, moving + 2);
            RAISE SQLSTATE 'SFREL';
        EXCEPTION
            WHEN SQLSTATE 'SFREL' THEN
                EXIT;
            WHEN lock_not_available THEN
                IF queue THEN
                    RAISE EXCEPTION USING ERRCODE = 'lock_not_available',
                        MESSAGE = 'could not move the snowflake key sequence',
                        DETAIL = 'Another call held the snowflake generator''s lock for @MAX_LOCK_WAIT_MS@ ms; no ID was issued.',
                        HINT = 'Only a move of the key sequence, or the switch to the C extension, holds it, each for a few statements: look in pg_stat_activity for a session that stopped inside one.';
                END IF;
        END;

        -- Another call holds the lock: once its move is made (the second
        -- sequence even again), the next value fits.
        moving := pg_sequence_last_value('_snowflake._snowflake_move_seq'::regclass);
        IF coalesce(moving, 0) % 2 = 0
           AND pg_sequence_last_value('_snowflake._snowflake_life_seq'::regclass) = marker THEN
            taken := nextval('_snowflake._snowflake_id_seq'::regclass);
            IF @extschema@._snowflake_same(moving, pg_sequence_last_value('_snowflake._snowflake_move_seq'::regclass))
               AND @extschema@._snowflake_fits(taken, node, @extschema@._snowflake_clock_ms()) THEN
                IF current_setting('snowflake_edition.life', true) IS DISTINCT FROM marker::text THEN
                    PERFORM set_config('snowflake_edition.life', marker::text, false);
                END IF;
                RETURN taken;
            END IF;
        END IF;
        IF @extschema@._snowflake_clock_ms() > now_ms + 1 THEN
            queue := true;
        ELSE
            PERFORM pg_sleep(0.00005);
        END IF;
    END LOOP;
    IF switched THEN
        RETURN NULL;
    END IF;

    -- Refused under the lock, raised without it; a key that leads the
    -- clock by more than it may waits for it.
    IF last >> @SHIFT@ > @MAX_MS@ THEN
        PERFORM @extschema@._snowflake_refuse(6, now_ms);
    END IF;
    IF (last >> @SHIFT@) - now_ms > @MAX_LEAD_MS@ THEN
        PERFORM @extschema@._snowflake_wait(last >> @SHIFT@, now_ms, false);
    END IF;
    IF current_setting('snowflake_edition.life', true) IS DISTINCT FROM marker::text THEN
        PERFORM set_config('snowflake_edition.life', marker::text, false);
    END IF;
    RETURN first;
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_move(pg_catalog.int8, pg_catalog.int8, pg_catalog.int4) IS
'the next key under the generator''s lock, moving the key sequence to the clock, past a full millisecond or into a new server life where it must (internal)';

-- What snowflake_nextval() does when it cannot hand out the key it took
-- without the lock (taken, NULL when a move began meanwhile): the
-- refusals, a key that only leads the clock too far (the clock stepped
-- back: wait for it), or the lock; after the switch to the C extension,
-- the C extension's key.
CREATE FUNCTION @extschema@._snowflake_next(taken pg_catalog.int8, node pg_catalog.int8,
                                            now_ms pg_catalog.int8)
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    refusal int4 := @extschema@._snowflake_refusal(node, now_ms);
    id int8;
BEGIN
    IF refusal <> 0 THEN
        PERFORM @extschema@._snowflake_refuse(refusal, now_ms);
    END IF;
    IF (taken >> @SEQUENCE_BITS@) & @MAX_NODE@ = node AND taken >> @SHIFT@ > now_ms + @MAX_LEAD_MS@
       AND current_setting('snowflake_edition.life', true) <> '' THEN
        PERFORM @extschema@._snowflake_wait(taken >> @SHIFT@, now_ms, true);
        RETURN taken;
    END IF;
    id := @extschema@._snowflake_move(node, now_ms, 1);
    IF id IS NULL THEN
        RETURN @extschema@.snowflake_nextval();
    END IF;
    RETURN id;
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_next(pg_catalog.int8, pg_catalog.int8, pg_catalog.int8) IS
'snowflake_nextval() where a key taken without the lock cannot be handed out as it is (internal)';

CREATE FUNCTION @extschema@.snowflake_nextval()
RETURNS pg_catalog.int8
LANGUAGE plpgsql VOLATILE PARALLEL UNSAFE SECURITY DEFINER
AS $$
DECLARE
    node pg_catalog.int8 := pg_catalog.pg_sequence_last_value('_snowflake._snowflake_node_seq'::pg_catalog.regclass);
    moving pg_catalog.int8 := pg_catalog.pg_sequence_last_value('_snowflake._snowflake_move_seq'::pg_catalog.regclass);
    now_ms pg_catalog.int8 := @extschema@._snowflake_clock_ms();
    id pg_catalog.int8;
BEGIN
    -- Every name is qualified, and no operator is used (with no
    -- search_path of its own, which would cost every call): this runs as
    -- the edition's owner.  The clock is read before the key is taken, as
    -- the C extension reads it before its spinlock.
    IF @extschema@._snowflake_ready(node, moving, now_ms) THEN
        id := pg_catalog.nextval('_snowflake._snowflake_id_seq'::pg_catalog.regclass);
        IF NOT @extschema@._snowflake_same(moving, pg_catalog.pg_sequence_last_value('_snowflake._snowflake_move_seq'::pg_catalog.regclass)) THEN
            -- A move began meanwhile: this key may lie on either side of it.
            id := NULL;
        ELSIF @extschema@._snowflake_fits(id, node, now_ms) THEN
            RETURN id;
        END IF;
    END IF;
    RETURN @extschema@._snowflake_next(id, node, now_ms);
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
    node int8 := pg_sequence_last_value('_snowflake._snowflake_node_seq'::regclass);
    now_ms int8 := @extschema@._snowflake_clock_ms();
    refusal int4;
    first int8;
    packed int8;
BEGIN
    IF count < 1 OR count > 1000000 THEN
        RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
            MESSAGE = 'batch size must be between 1 and 1000000',
            DETAIL = format('The requested batch size was %s.', count);
    END IF;
    refusal := @extschema@._snowflake_refusal(node, now_ms);
    IF refusal <> 0 THEN
        PERFORM @extschema@._snowflake_refuse(refusal, now_ms);
    END IF;
    first := @extschema@._snowflake_move(node, now_ms, count);
    IF first IS NULL THEN
        -- Switched to the C extension while this call waited.
        RETURN QUERY SELECT * FROM @extschema@.snowflake_nextval_batch(count);
        RETURN;
    END IF;
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
-- sequence that holds it.
CREATE FUNCTION @extschema@.snowflake_set_node_id(node_id pg_catalog.int4)
RETURNS pg_catalog.int4
LANGUAGE plpgsql VOLATILE STRICT PARALLEL UNSAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    seq regclass := @extschema@._snowflake_node_seq();
    old int8;
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
    old := pg_sequence_last_value(seq);
    IF old <> node_id THEN
        RAISE NOTICE 'snowflake node id changed from % to %', old, node_id;
    END IF;
    PERFORM setval(seq, node_id);
    RETURN node_id;
END
$$;

COMMENT ON FUNCTION @extschema@.snowflake_set_node_id(pg_catalog.int4) IS
'set this database''s snowflake node id (0 to @MAX_NODE@), unique among the databases and servers that mint IDs (its owner and superusers only)';

REVOKE ALL ON FUNCTION @extschema@.snowflake_set_node_id(pg_catalog.int4) FROM PUBLIC;

-- The generator's internals run as the edition's owner, called from the
-- functions above with their search_path; no one else may call them (a
-- move trusts the node id it is given).
REVOKE ALL ON FUNCTION @extschema@._snowflake_wait(pg_catalog.int8, pg_catalog.int8, pg_catalog.bool) FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@._snowflake_move(pg_catalog.int8, pg_catalog.int8, pg_catalog.int4) FROM PUBLIC;
REVOKE ALL ON FUNCTION @extschema@._snowflake_next(pg_catalog.int8, pg_catalog.int8, pg_catalog.int8) FROM PUBLIC;
