-- test/bench/bench.sql: the contenders and the timing helpers of the
-- benchmark suite, loaded by test/bench/run.sh into its throwaway server.
-- Nothing here needs an extension: run.sh has created snowflake's functions
-- (from a snapshot of the installed extension) before loading this file.

-- Contenders ---------------------------------------------------------------

CREATE SEQUENCE bench_seq_c1 CACHE 1;
CREATE SEQUENCE bench_seq_c32 CACHE 32;

-- An Instagram-style generator the way users write it in PL/pgSQL:
-- milliseconds since a custom epoch in the top 41 bits, a 13-bit shard id,
-- and a shared sequence modulo 1024 in the low 10 bits.
CREATE SEQUENCE bench_instagram_seq;

CREATE FUNCTION bench_instagram_id() RETURNS bigint
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    custom_epoch_ms constant bigint := 1704067200000;   -- 2024-01-01 UTC
    shard constant bigint := 1;
    seq bigint;
    now_ms bigint;
BEGIN
    SELECT nextval('bench_instagram_seq') % 1024 INTO seq;
    SELECT floor(extract(epoch FROM clock_timestamp()) * 1000) INTO now_ms;
    RETURN ((now_ms - custom_epoch_ms) << 23) | (shard << 10) | seq;
END
$$;

-- A UUIDv7 the way users write it without extensions: 48 bits of Unix
-- milliseconds, then the random bytes of a v4 UUID with the version nibble
-- set to 7 (the v4 variant bits are already the RFC 9562 ones).
CREATE FUNCTION bench_uuid_v7() RETURNS uuid
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    unix_ms bigint;
    bytes bytea;
BEGIN
    unix_ms := floor(extract(epoch FROM clock_timestamp()) * 1000);
    bytes := substring(int8send(unix_ms) FROM 3)
             || substring(uuid_send(gen_random_uuid()) FROM 7);
    bytes := set_byte(bytes, 6, (get_byte(bytes, 6) & 15) | 112);
    RETURN encode(bytes, 'hex')::uuid;
END
$$;

-- Timing helpers ------------------------------------------------------------
--
-- Every figure of the bulk, insert and micro sections is the server's own
-- clock_timestamp() difference around the measured statement(s): it leaves
-- out the client round trip and the call of the helper itself.  Beside it,
-- the backend's own time on a CPU and its time spent waiting for one (from
-- Linux's /proc/self/schedstat, NULL elsewhere), so that a figure disturbed
-- by other load on the machine shows it.

-- Nanoseconds this backend has run on a CPU, and waited in the run queue.
CREATE FUNCTION bench_schedstat(OUT cpu_ns bigint, OUT wait_ns bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    f text[];
BEGIN
    f := string_to_array(pg_read_file('/proc/self/schedstat'), ' ');
    cpu_ns := f[1]::bigint;
    wait_ns := f[2]::bigint;
EXCEPTION WHEN others THEN
    cpu_ns := NULL;
    wait_ns := NULL;
END
$$;

-- Let the generator's lead over the wall clock drain (bounded: at most
-- 5 s), then zero its counters.  Returns how long it waited, in ms.
CREATE FUNCTION bench_settle() RETURNS integer
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
    lead bigint;
BEGIN
    FOR i IN 1..250 LOOP
        SELECT coalesce(s.lead_ms, 0) INTO lead FROM snowflake_stats s;
        EXIT WHEN lead = 0;
        PERFORM pg_sleep(0.02);
    END LOOP;
    PERFORM snowflake_stats_reset();
    RETURN (extract(epoch FROM clock_timestamp() - t0) * 1000)::integer;
END
$$;

-- The generator's counters since the last bench_settle().
CREATE FUNCTION bench_counters(
    OUT lead_ms bigint, OUT borrowed_ms bigint, OUT waits bigint,
    OUT wait_ms bigint, OUT reservation_writes bigint, OUT ids_issued bigint)
LANGUAGE sql VOLATILE AS $$
    SELECT coalesce(s.lead_ms, 0), s.borrowed_ms, s.waits, s.wait_ms,
           s.reservation_writes, s.ids_issued
    FROM snowflake_stats s
$$;

-- Who wrote the reservation since the last bench_settle(): the background
-- writer (ahead of need) or callers that waited for the disk themselves.
CREATE FUNCTION bench_writer_counters(
    OUT ids_issued bigint, OUT reservation_writes bigint,
    OUT background_writes bigint, OUT caller_writes bigint,
    OUT caller_wait_ms float8)
LANGUAGE sql VOLATILE AS $$
    SELECT s.ids_issued, s.reservation_writes, s.background_writes,
           s.caller_writes, s.caller_wait_ms
    FROM snowflake_stats s
$$;

-- Run one statement and time it.  A SELECT must return one number (the
-- count of IDs made); any other statement reports its row count.
CREATE FUNCTION bench_time(query text, OUT seconds float8,
                           OUT cpu_seconds float8, OUT runq_seconds float8,
                           OUT n bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    s0 record;
    s1 record;
    t0 timestamptz;
BEGIN
    s0 := bench_schedstat();
    IF query ~* '^\s*select' THEN
        t0 := clock_timestamp();
        EXECUTE query INTO n;
        seconds := extract(epoch FROM clock_timestamp() - t0);
    ELSE
        t0 := clock_timestamp();
        EXECUTE query;
        seconds := extract(epoch FROM clock_timestamp() - t0);
        GET DIAGNOSTICS n = ROW_COUNT;
    END IF;
    s1 := bench_schedstat();
    cpu_seconds := (s1.cpu_ns - s0.cpu_ns) / 1e9;
    runq_seconds := (s1.wait_ns - s0.wait_ns) / 1e9;
END
$$;

-- calls statements of count(*) over snowflake_nextval_batch(batch), as an
-- application repeats them, with the plan cached (static SQL).  form 'from'
-- calls the function in FROM (a Function Scan, which materialises its rows
-- in a tuplestore), form 'select' in the SELECT list (a ProjectSet, which
-- streams them).
CREATE FUNCTION bench_batch(batch integer, calls integer, form text,
                            OUT seconds float8, OUT cpu_seconds float8,
                            OUT runq_seconds float8, OUT n bigint)
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    s0 record;
    s1 record;
    t0 timestamptz;
    c bigint;
BEGIN
    n := 0;
    s0 := bench_schedstat();
    IF form = 'from' THEN
        t0 := clock_timestamp();
        FOR i IN 1..calls LOOP
            SELECT count(*) INTO c FROM snowflake_nextval_batch(batch);
            n := n + c;
        END LOOP;
    ELSE
        t0 := clock_timestamp();
        FOR i IN 1..calls LOOP
            SELECT count(*) INTO c FROM (SELECT snowflake_nextval_batch(batch)) s;
            n := n + c;
        END LOOP;
    END IF;
    seconds := extract(epoch FROM clock_timestamp() - t0);
    s1 := bench_schedstat();
    cpu_seconds := (s1.cpu_ns - s0.cpu_ns) / 1e9;
    runq_seconds := (s1.wait_ns - s0.wait_ns) / 1e9;
END
$$;

-- One measured run: settle the generator, time the statement (or, with
-- batch given, bench_batch(batch, calls, form), and no statement), read the
-- counters.  One row, tab-separated by the caller's psql.
CREATE FUNCTION bench_run(query text,
    batch integer DEFAULT NULL, calls integer DEFAULT NULL, form text DEFAULT NULL,
    OUT seconds float8, OUT cpu_seconds float8, OUT runq_seconds float8,
    OUT n bigint, OUT lead_ms bigint,
    OUT borrowed_ms bigint, OUT waits bigint, OUT wait_ms bigint,
    OUT reservation_writes bigint)
LANGUAGE plpgsql VOLATILE AS $$
BEGIN
    PERFORM bench_settle();
    IF batch IS NULL THEN
        SELECT t.seconds, t.cpu_seconds, t.runq_seconds, t.n
          INTO seconds, cpu_seconds, runq_seconds, n
          FROM bench_time(query) t;
    ELSE
        SELECT t.seconds, t.cpu_seconds, t.runq_seconds, t.n
          INTO seconds, cpu_seconds, runq_seconds, n
          FROM bench_batch(batch, calls, form) t;
    END IF;
    SELECT c.lead_ms, c.borrowed_ms, c.waits, c.wait_ms, c.reservation_writes
      INTO lead_ms, borrowed_ms, waits, wait_ms, reservation_writes
      FROM bench_counters() c;
END
$$;

-- What the pgbench backends are doing, sampled every 10 ms: after a delay,
-- for the given time, one row per state with its number of backend samples
-- ('running', 'client' for a backend waiting for its client, or the wait
-- event, e.g. 'LWLock:snowflake' for the state-file lock, 'Timeout:SpinDelay'
-- for a spinlock that had to back off).
CREATE FUNCTION bench_sample_waits(delay float8, seconds float8,
                                   OUT what text, OUT samples bigint)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    t_end timestamptz;
    counts jsonb := '{}';
    r record;
BEGIN
    PERFORM pg_sleep(delay);
    t_end := clock_timestamp() + make_interval(secs => seconds);
    WHILE clock_timestamp() < t_end LOOP
        -- pg_stat_activity is otherwise one snapshot per transaction
        PERFORM pg_stat_clear_snapshot();
        FOR r IN
            SELECT CASE
                       WHEN a.state = 'active' AND a.wait_event IS NULL THEN 'running'
                       WHEN a.wait_event = 'ClientRead' THEN 'client'
                       WHEN a.wait_event IS NULL THEN 'client'
                       ELSE a.wait_event_type || ':' || a.wait_event
                   END AS w,
                   count(*) AS c
            FROM pg_stat_activity a
            WHERE a.application_name = 'pgbench'
            GROUP BY 1
        LOOP
            counts := jsonb_set(counts, ARRAY[r.w],
                                to_jsonb(coalesce((counts ->> r.w)::bigint, 0) + r.c));
        END LOOP;
        PERFORM pg_sleep(0.01);
    END LOOP;
    RETURN QUERY SELECT e.key, e.value::bigint FROM jsonb_each_text(counts) e;
END
$$;

-- The latency of a call that has to extend the reservation: sleep past the
-- reservation (written SNOWFLAKE_RESERVE_AHEAD_MS, 500 ms, ahead of need),
-- then time that call and the ordinary call after it, in microseconds.
CREATE FUNCTION bench_reservation_write(samples integer,
                                        OUT first_us float8, OUT next_us float8)
RETURNS SETOF record
LANGUAGE plpgsql VOLATILE AS $$
DECLARE
    t0 timestamptz;
    t1 timestamptz;
    t2 timestamptz;
    id bigint;
BEGIN
    FOR i IN 1..samples LOOP
        PERFORM pg_sleep(0.7);
        t0 := clock_timestamp();
        id := snowflake_nextval();
        t1 := clock_timestamp();
        id := snowflake_nextval();
        t2 := clock_timestamp();
        first_us := extract(epoch FROM t1 - t0) * 1e6;
        next_us := extract(epoch FROM t2 - t1) * 1e6;
        RETURN NEXT;
    END LOOP;
END
$$;
