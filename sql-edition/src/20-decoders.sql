-- Decoders, bounds and compose: the C extension's functions of the same
-- names and signatures (snowflake--1.0.sql and snowflake--1.0--1.1.sql),
-- with the same results and errors (src/functions.c).
--
-- The scalar decoders are SQL functions with a standard SQL body (RETURN):
-- their names are resolved once, when they are created, and the planner
-- inlines them into the calling query, where a constant layout is parsed
-- once and what depends on it folded to constants; decoding a row then
-- costs a few operators, as reading a column does.  They are not declared
-- STRICT, which would keep the planner from inlining a body that checks
-- for a negative ID; NULL in gives NULL out all the same, as the C
-- functions' STRICT does.  What is rarely called per row (bounds, compose,
-- the layout parser, the errors) is PL/pgSQL.

-- Errors, raised where a CASE of the inlined bodies reaches them.

-- A negative ID (22023); NULL when the ID or the layout is NULL, which the
-- callers turn into their result's type (a NULL bigint into a NULL integer
-- or timestamptz).  Not polymorphic (1.2's took a value of the result's
-- type): a call of a polymorphic function is not an exact match, and a
-- function of the same name with concrete types in the same schema (any
-- role's, where any role may create, such as public) would be bound
-- instead when the callers are created.
CREATE FUNCTION @extschema@._snowflake_negative_id(id pg_catalog.int8, layout pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    IF id IS NULL OR layout IS NULL THEN
        RETURN NULL;
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
        MESSAGE = 'snowflake ID must not be negative',
        DETAIL = format('The value %s has the sign bit set, which no snowflake ID has.', id);
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_negative_id(pg_catalog.int8, pg_catalog.text) IS
'the error of a negative ID (internal)';

-- An ID's timestamp field past the largest timestamptz (22008).
CREATE FUNCTION @extschema@._snowflake_ts_error(units pg_catalog.int8, f @extschema@._snowflake_layout)
RETURNS pg_catalog.timestamptz
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'datetime_field_overflow',
        MESSAGE = 'timestamp out of range',
        DETAIL = format('The ID''s timestamp field, %s ms after the epoch, is past the largest timestamp.',
                        CASE WHEN units > 9223372036854775807 / f.unit_ms THEN 9223372036854775807
                             ELSE units * f.unit_ms END);
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_ts_error(pg_catalog.int8, @extschema@._snowflake_layout) IS
'the error of an ID whose time is past the largest timestamp (internal)';

-- Milliseconds since 2000-01-01 00:00:00 UTC as a timestamptz, exactly:
-- interval * float8 is exact while the product of 1000 microseconds and the
-- milliseconds stays below 2^53 (about 285 years either side of 2000);
-- beyond, whole hours (two halves, each an int4) and the rest.
--
-- Every operator here, and in every SQL function with a standard body, has
-- operands of exactly its argument types (a literal written with its type
-- where it would be another): such a body is bound to its operators when
-- it is created, under the search_path of the script that creates it, and
-- an operator that pg_catalog reaches only through an implicit cast would
-- lose to one of those exact types in any schema of that path (the
-- extension's own, when it is public) for good (test/t/091_sql_edition_hostile.pl).
CREATE FUNCTION @extschema@._snowflake_ms_timestamptz(ms pg_catalog.int8)
RETURNS pg_catalog.timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN pg_catalog.timezone('UTC',
    CASE WHEN ms BETWEEN -9000000000000 AND 9000000000000
         THEN timestamp '2000-01-01 00:00:00' + interval '1 millisecond' * ms::pg_catalog.float8
         ELSE timestamp '2000-01-01 00:00:00'
              + pg_catalog.make_interval(hours => (ms / 7200000)::pg_catalog.int4)
              + pg_catalog.make_interval(hours => (ms / 3600000 - ms / 7200000)::pg_catalog.int4,
                                         secs => (ms % 3600000::pg_catalog.int8)::pg_catalog.float8
                                                 / 1000::pg_catalog.float8)
    END);

COMMENT ON FUNCTION @extschema@._snowflake_ms_timestamptz(pg_catalog.int8) IS
'milliseconds since 2000-01-01 UTC as a timestamptz (internal)';

-- The fields of an ID in a layout, as the bits say (the timestamp field is
-- not masked: an ID of a wider layout decodes to the time its bits spell).
-- The caller rejects negative IDs.

CREATE FUNCTION @extschema@._snowflake_ts(id pg_catalog.int8, f @extschema@._snowflake_layout)
RETURNS pg_catalog.timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE
    -- The last millisecond a timestamptz holds (END_TIMESTAMP), less the
    -- epoch's offset from 2000: compared before multiplying and adding.
    WHEN (id >> (f.node_bits + f.sequence_bits))
         > (9223371331200000 - (f.epoch_ms - 946684800000) - 1) / f.unit_ms
    THEN @extschema@._snowflake_ts_error(id >> (f.node_bits + f.sequence_bits), f)
    ELSE @extschema@._snowflake_ms_timestamptz(
        (id >> (f.node_bits + f.sequence_bits)) * f.unit_ms + (f.epoch_ms - 946684800000))
END;

COMMENT ON FUNCTION @extschema@._snowflake_ts(pg_catalog.int8, @extschema@._snowflake_layout) IS
'the time of an ID in a layout (internal)';

CREATE FUNCTION @extschema@._snowflake_node(id pg_catalog.int8, f @extschema@._snowflake_layout)
RETURNS pg_catalog.int4
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ((id >> CASE WHEN f.sequence_above_node THEN 0 ELSE f.sequence_bits END)
        & ((1::pg_catalog.int8 << f.node_bits) - 1))::pg_catalog.int4;

COMMENT ON FUNCTION @extschema@._snowflake_node(pg_catalog.int8, @extschema@._snowflake_layout) IS
'the node field of an ID in a layout (internal)';

CREATE FUNCTION @extschema@._snowflake_seq(id pg_catalog.int8, f @extschema@._snowflake_layout)
RETURNS pg_catalog.int4
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN ((id >> CASE WHEN f.sequence_above_node THEN f.node_bits ELSE 0 END)
        & ((1::pg_catalog.int8 << f.sequence_bits) - 1))::pg_catalog.int4;

COMMENT ON FUNCTION @extschema@._snowflake_seq(pg_catalog.int8, @extschema@._snowflake_layout) IS
'the sequence field of an ID in a layout (internal)';

-- The named parts of a node field, {"worker": 1, ...}; {} without (at
-- most four parts, whose names need no escaping).  Written as text and
-- read as jsonb: jsonb_build_object() is only STABLE, which would keep the
-- planner from inlining this.
CREATE FUNCTION @extschema@._snowflake_node_fields(node pg_catalog.int8, f @extschema@._snowflake_layout)
RETURNS pg_catalog.jsonb
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN (CASE pg_catalog.cardinality(f.part_names)
    WHEN 0 THEN '{}'
    WHEN 1 THEN '{"' || f.part_names[1] || '": ' || node::pg_catalog.text || '}'
    WHEN 2 THEN '{"' || f.part_names[1] || '": ' || (node >> f.part_bits[2])::pg_catalog.text
        || ', "' || f.part_names[2] || '": '
        || (node & ((1::pg_catalog.int8 << f.part_bits[2]) - 1))::pg_catalog.text || '}'
    WHEN 3 THEN '{"' || f.part_names[1] || '": '
        || (node >> (f.part_bits[2] + f.part_bits[3]))::pg_catalog.text
        || ', "' || f.part_names[2] || '": '
        || ((node >> f.part_bits[3]) & ((1::pg_catalog.int8 << f.part_bits[2]) - 1))::pg_catalog.text
        || ', "' || f.part_names[3] || '": '
        || (node & ((1::pg_catalog.int8 << f.part_bits[3]) - 1))::pg_catalog.text || '}'
    WHEN 4 THEN '{"' || f.part_names[1] || '": '
        || (node >> (f.part_bits[2] + f.part_bits[3] + f.part_bits[4]))::pg_catalog.text
        || ', "' || f.part_names[2] || '": '
        || ((node >> (f.part_bits[3] + f.part_bits[4])) & ((1::pg_catalog.int8 << f.part_bits[2]) - 1))::pg_catalog.text
        || ', "' || f.part_names[3] || '": '
        || ((node >> f.part_bits[4]) & ((1::pg_catalog.int8 << f.part_bits[3]) - 1))::pg_catalog.text
        || ', "' || f.part_names[4] || '": '
        || (node & ((1::pg_catalog.int8 << f.part_bits[4]) - 1))::pg_catalog.text || '}'
END)::pg_catalog.jsonb;

COMMENT ON FUNCTION @extschema@._snowflake_node_fields(pg_catalog.int8, @extschema@._snowflake_layout) IS
'the named parts of a node field as a jsonb object (internal)';

-- An ID that is not negative, or the error (22023).
CREATE FUNCTION @extschema@._snowflake_id(id pg_catalog.int8)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN id >= 0 THEN id ELSE @extschema@._snowflake_negative_id(id, ''::pg_catalog.text) END;

COMMENT ON FUNCTION @extschema@._snowflake_id(pg_catalog.int8) IS
'an ID checked not to be negative (internal)';

-- Unix milliseconds as "YYYY-MM-DD HH:MM:SS.fff+00", for messages, as the
-- C extension writes them (config.c, snowflake_format_ms): the microseconds
-- since 2000 in 64-bit arithmetic that wraps, the Julian day and time of
-- day as PostgreSQL's timestamp2tm() computes them, or a count of
-- milliseconds for a day no date can be.
CREATE FUNCTION @extschema@._snowflake_format_ms(unix_ms pg_catalog.int8)
RETURNS pg_catalog.text
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    wide numeric := (unix_ms::numeric - 946684800000) * 1000;
    t int8;
    jd int8;
    julian int8;
    quad int8;
    extra int8;
    y int8;
    mon int8;
    mday int8;
BEGIN
    wide := wide + 9223372036854775808;
    wide := wide - 18446744073709551616 * floor(wide / 18446744073709551616);
    t := (wide - 9223372036854775808)::int8;
    jd := t / 86400000000;
    t := t - jd * 86400000000;
    IF t < 0 THEN
        t := t + 86400000000;
        jd := jd - 1;
    END IF;
    jd := jd + 2451545;
    IF jd < 0 OR jd > 2147483647 THEN
        RETURN format('%s ms after 1970-01-01 00:00:00+00', unix_ms);
    END IF;
    -- j2date()
    julian := jd + 32044;
    quad := julian / 146097;
    extra := (julian - quad * 146097) * 4 + 3;
    julian := julian + 60 + quad * 3 + extra / 146097;
    quad := julian / 1461;
    julian := julian - quad * 1461;
    y := julian * 4 / 1461;
    julian := CASE WHEN y <> 0 THEN (julian + 305) % 365 ELSE (julian + 306) % 366 END + 123;
    y := y + quad * 4 - 4800;
    quad := julian * 2141 / 65536;
    mday := julian - 7834 * quad / 256;
    mon := (quad + 10) % 12 + 1;
    RETURN format('%s-%s-%s %s:%s:%s.%s+00',
                  CASE WHEN y < 0 THEN '-' || lpad((-y)::text, greatest(3, length((-y)::text)), '0')
                       ELSE lpad(y::text, greatest(4, length(y::text)), '0') END,
                  lpad(mon::text, 2, '0'), lpad(mday::text, 2, '0'),
                  lpad((t / 3600000000)::text, 2, '0'),
                  lpad((t / 60000000 % 60)::text, 2, '0'),
                  lpad((t / 1000000 % 60)::text, 2, '0'),
                  lpad((t % 1000000 / 1000)::text, 3, '0'));
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_format_ms(pg_catalog.int8) IS
'Unix milliseconds written for a message, as the C extension writes them (internal)';

-- The time unit of ts (rounded down) after the layout's epoch, or 22003
-- when the timestamp field cannot carry it.
CREATE FUNCTION @extschema@._snowflake_units(ts pg_catalog.timestamptz, f @extschema@._snowflake_layout)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    max_units int8 := 9223372036854775807 >> (63 - f.timestamp_bits);
    ms int8;
    span int8;
    last_ms int8;
BEGIN
    IF isfinite(ts) THEN
        -- extract(epoch FROM ts) rounds near the end of timestamptz; an
        -- interval's is exact.
        ms := floor(extract(epoch FROM ts - timestamptz '2000-01-01 00:00:00+00') * 1000)::int8
              + 946684800000 - f.epoch_ms;
        IF ms >= 0 AND ms / f.unit_ms <= max_units THEN
            RETURN ms / f.unit_ms;
        END IF;
    END IF;
    -- The last millisecond of the last unit, within what can be written.
    span := CASE WHEN max_units > 9223372036854775807 / f.unit_ms THEN 9223372036854775807
                 ELSE max_units * f.unit_ms END;
    IF span > 9223372036854775807 / 2 - f.epoch_ms - f.unit_ms THEN
        last_ms := 9223372036854775807 / 2;
    ELSE
        last_ms := f.epoch_ms + span + f.unit_ms - 1;
    END IF;
    RAISE EXCEPTION USING ERRCODE = 'numeric_value_out_of_range',
        MESSAGE = 'timestamp out of range for snowflake IDs',
        DETAIL = format('Snowflake IDs carry times from %s to %s.',
                        @extschema@._snowflake_format_ms(f.epoch_ms),
                        @extschema@._snowflake_format_ms(last_ms));
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_units(pg_catalog.timestamptz, @extschema@._snowflake_layout) IS
'the time unit of ts after the layout''s epoch, range-checked (internal)';

-- The smallest (or, with max, the largest) ID of a layout that can carry
-- the time unit containing ts.
CREATE FUNCTION @extschema@._snowflake_min_max(ts pg_catalog.timestamptz, f @extschema@._snowflake_layout,
                                               max pg_catalog.bool)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    shift int := f.node_bits + f.sequence_bits;
BEGIN
    RETURN (@extschema@._snowflake_units(ts, f) << shift)
        | CASE WHEN max THEN (1::int8 << shift) - 1 ELSE 0 END;
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_min_max(pg_catalog.timestamptz, @extschema@._snowflake_layout, pg_catalog.bool) IS
'the smallest or largest ID of a layout that can carry a time (internal)';

-- An ID from its fields, each range-checked (22003).
CREATE FUNCTION @extschema@._snowflake_compose(ts pg_catalog.timestamptz, node_id pg_catalog.int4,
                                               sequence pg_catalog.int4, f @extschema@._snowflake_layout)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    units int8 := @extschema@._snowflake_units(ts, f);
    max_node int8 := (1::int8 << f.node_bits) - 1;
    max_seq int8 := (1::int8 << f.sequence_bits) - 1;
BEGIN
    IF node_id < 0 OR node_id > max_node THEN
        RAISE EXCEPTION USING ERRCODE = 'numeric_value_out_of_range',
            MESSAGE = 'snowflake ID field out of range',
            DETAIL = format('The node id must be between 0 and %s.', max_node);
    END IF;
    IF sequence < 0 OR sequence > max_seq THEN
        RAISE EXCEPTION USING ERRCODE = 'numeric_value_out_of_range',
            MESSAGE = 'snowflake ID field out of range',
            DETAIL = format('The sequence must be between 0 and %s.', max_seq);
    END IF;
    RETURN (units << (f.node_bits + f.sequence_bits))
        | (node_id::int8 << CASE WHEN f.sequence_above_node THEN 0 ELSE f.sequence_bits END)
        | (sequence::int8 << CASE WHEN f.sequence_above_node THEN f.node_bits ELSE 0 END);
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_compose(pg_catalog.timestamptz, pg_catalog.int4, pg_catalog.int4, @extschema@._snowflake_layout) IS
'an ID of a layout from its fields, each range-checked (internal)';

-- The server's layout.

CREATE FUNCTION @extschema@.snowflake_timestamp(id pg_catalog.int8)
RETURNS pg_catalog.timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN id >= 0
            THEN @extschema@._snowflake_ts(id, @extschema@._snowflake_server_layout())
            ELSE @extschema@._snowflake_ms_timestamptz(@extschema@._snowflake_negative_id(id, ''::pg_catalog.text)) END;

COMMENT ON FUNCTION @extschema@.snowflake_timestamp(pg_catalog.int8) IS
'the time an ID was minted, to the millisecond';

CREATE FUNCTION @extschema@.snowflake_node_id(id pg_catalog.int8)
RETURNS pg_catalog.int4
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN id >= 0
            THEN @extschema@._snowflake_node(id, @extschema@._snowflake_server_layout())
            ELSE @extschema@._snowflake_negative_id(id, ''::pg_catalog.text)::pg_catalog.int4 END;

COMMENT ON FUNCTION @extschema@.snowflake_node_id(pg_catalog.int8) IS
'the node id of the server that minted an ID';

CREATE FUNCTION @extschema@.snowflake_sequence(id pg_catalog.int8)
RETURNS pg_catalog.int4
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN id >= 0
            THEN @extschema@._snowflake_seq(id, @extschema@._snowflake_server_layout())
            ELSE @extschema@._snowflake_negative_id(id, ''::pg_catalog.text)::pg_catalog.int4 END;

COMMENT ON FUNCTION @extschema@.snowflake_sequence(pg_catalog.int8) IS
'the sequence number of an ID within its millisecond';

CREATE FUNCTION @extschema@.snowflake_decode(id pg_catalog.int8,
    OUT ts pg_catalog.timestamptz, OUT node_id pg_catalog.int4, OUT sequence pg_catalog.int4)
RETURNS pg_catalog.record
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
BEGIN
    -- Only qualified functions, whose bodies were bound when they were
    -- created: no search_path of its own is needed (nor paid for).
    ts := @extschema@.snowflake_timestamp(id);
    node_id := @extschema@.snowflake_node_id(id);
    sequence := @extschema@.snowflake_sequence(id);
END
$$;

COMMENT ON FUNCTION @extschema@.snowflake_decode(pg_catalog.int8) IS
'split an ID into its time, node id and sequence number';

CREATE FUNCTION @extschema@.snowflake_min_id(ts pg_catalog.timestamptz)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN @extschema@._snowflake_min_max(ts, @extschema@._snowflake_server_layout(), false);

COMMENT ON FUNCTION @extschema@.snowflake_min_id(pg_catalog.timestamptz) IS
'smallest ID that can carry the millisecond containing ts: WHERE id >= snowflake_min_id(...)';

CREATE FUNCTION @extschema@.snowflake_max_id(ts pg_catalog.timestamptz)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN @extschema@._snowflake_min_max(ts, @extschema@._snowflake_server_layout(), true);

COMMENT ON FUNCTION @extschema@.snowflake_max_id(pg_catalog.timestamptz) IS
'largest ID that can carry the millisecond containing ts';

CREATE FUNCTION @extschema@.snowflake_compose(ts pg_catalog.timestamptz, node_id pg_catalog.int4,
                                              sequence pg_catalog.int4)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN @extschema@._snowflake_compose(ts, node_id, sequence, @extschema@._snowflake_server_layout());

COMMENT ON FUNCTION @extschema@.snowflake_compose(pg_catalog.timestamptz, pg_catalog.int4, pg_catalog.int4) IS
'build an ID from its fields, each range-checked: the inverse of snowflake_decode';

-- Other layouts: the same, with a layout as the last argument.  A layout
-- that is not a constant is parsed again for every row.

CREATE FUNCTION @extschema@.snowflake_timestamp(id pg_catalog.int8, layout pg_catalog.text)
RETURNS pg_catalog.timestamptz
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN id >= 0
            THEN @extschema@._snowflake_ts(id, @extschema@._snowflake_layout(layout))
            ELSE @extschema@._snowflake_ms_timestamptz(@extschema@._snowflake_negative_id(id, layout)) END;

COMMENT ON FUNCTION @extschema@.snowflake_timestamp(pg_catalog.int8, pg_catalog.text) IS
'the time an ID of the given layout was minted';

CREATE FUNCTION @extschema@.snowflake_node_id(id pg_catalog.int8, layout pg_catalog.text)
RETURNS pg_catalog.int4
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN id >= 0
            THEN @extschema@._snowflake_node(id, @extschema@._snowflake_layout(layout))
            ELSE @extschema@._snowflake_negative_id(id, layout)::pg_catalog.int4 END;

COMMENT ON FUNCTION @extschema@.snowflake_node_id(pg_catalog.int8, pg_catalog.text) IS
'the node field of an ID of the given layout (all its parts together)';

CREATE FUNCTION @extschema@.snowflake_sequence(id pg_catalog.int8, layout pg_catalog.text)
RETURNS pg_catalog.int4
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN id >= 0
            THEN @extschema@._snowflake_seq(id, @extschema@._snowflake_layout(layout))
            ELSE @extschema@._snowflake_negative_id(id, layout)::pg_catalog.int4 END;

COMMENT ON FUNCTION @extschema@.snowflake_sequence(pg_catalog.int8, pg_catalog.text) IS
'the sequence field of an ID of the given layout';

CREATE FUNCTION @extschema@.snowflake_decode(id pg_catalog.int8, layout pg_catalog.text,
    OUT ts pg_catalog.timestamptz, OUT node_id pg_catalog.int4, OUT sequence pg_catalog.int4,
    OUT node_fields pg_catalog.jsonb)
RETURNS pg_catalog.record
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
DECLARE
    f @extschema@._snowflake_layout;
    checked pg_catalog.int8 := @extschema@._snowflake_id(id);
BEGIN
    -- The layout parsed once per call (the ID checked first, as the C
    -- extension does).
    f := @extschema@._snowflake_layout(layout);
    ts := @extschema@._snowflake_ts(checked, f);
    node_id := @extschema@._snowflake_node(checked, f);
    sequence := @extschema@._snowflake_seq(checked, f);
    node_fields := @extschema@._snowflake_node_fields(node_id::pg_catalog.int8, f);
END
$$;

COMMENT ON FUNCTION @extschema@.snowflake_decode(pg_catalog.int8, pg_catalog.text) IS
'split an ID of the given layout into its time, node id, sequence number and named node fields';

CREATE FUNCTION @extschema@.snowflake_min_id(ts pg_catalog.timestamptz, layout pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN @extschema@._snowflake_min_max(ts, @extschema@._snowflake_layout(layout), false);

COMMENT ON FUNCTION @extschema@.snowflake_min_id(pg_catalog.timestamptz, pg_catalog.text) IS
'smallest ID of the given layout that can carry the time unit containing ts';

CREATE FUNCTION @extschema@.snowflake_max_id(ts pg_catalog.timestamptz, layout pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN @extschema@._snowflake_min_max(ts, @extschema@._snowflake_layout(layout), true);

COMMENT ON FUNCTION @extschema@.snowflake_max_id(pg_catalog.timestamptz, pg_catalog.text) IS
'largest ID of the given layout that can carry the time unit containing ts';

CREATE FUNCTION @extschema@.snowflake_compose(ts pg_catalog.timestamptz, node_id pg_catalog.int4,
                                              sequence pg_catalog.int4, layout pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN @extschema@._snowflake_compose(ts, node_id, sequence, @extschema@._snowflake_layout(layout));

COMMENT ON FUNCTION @extschema@.snowflake_compose(pg_catalog.timestamptz, pg_catalog.int4, pg_catalog.int4, pg_catalog.text) IS
'build an ID of the given layout from its fields, each range-checked';
