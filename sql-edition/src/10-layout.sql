-- Layouts: the server's own, and those of IDs minted elsewhere, which the
-- decoders, bounds and compose take as their last argument: a preset
-- ('twitter', 'discord', 'instagram', 'sonyflake', 'mastodon', 'pgedge'), a
-- spelled-out layout ('epoch=2015-01-01; fields=timestamp:42,worker:5,
-- process:5,sequence:12'), or a preset followed by what differs from it.
-- The parser below is src/layout.c's, step for step, with its messages:
-- the decoders must accept, refuse and read every layout as the C
-- extension does (test/t/066_sql_edition_decoders.pl compares them).
--
-- A parsed layout.  epoch_ms is in Unix milliseconds; timestamp_bits is as
-- stored, at most 63 minus the other fields (a layout that spells 64 bits
-- keeps the IDs a bigint holds); the node field may be split into named
-- parts, most significant first.
CREATE TYPE @extschema@._snowflake_layout AS (
    epoch_ms pg_catalog.int8,
    unit_ms pg_catalog.int8,
    timestamp_bits pg_catalog.int4,
    node_bits pg_catalog.int4,
    sequence_bits pg_catalog.int4,
    sequence_above_node pg_catalog.bool,
    part_names pg_catalog.text[],
    part_bits pg_catalog.int4[]
);

COMMENT ON TYPE @extschema@._snowflake_layout IS
'a parsed snowflake layout (internal)';

-- This edition's own layout and epoch, fixed when its script was generated.
CREATE FUNCTION @extschema@._snowflake_server_layout()
RETURNS @extschema@._snowflake_layout
LANGUAGE sql IMMUTABLE STRICT PARALLEL SAFE
RETURN ROW(@EPOCH_MS@, 1, @TIMESTAMP_BITS@, @NODE_BITS@, @SEQUENCE_BITS@, false,
           '{}', '{}')::@extschema@._snowflake_layout;

COMMENT ON FUNCTION @extschema@._snowflake_server_layout() IS
'the layout and epoch this database mints with (internal)';

-- The presets, parsed: what src/layout.c's preset specifications parse to
-- (the sources of each are named there), fixed for good, as changing one
-- would change what immutable functions return, under indexes built with
-- them; NULL for another name.  "server" alone is the server's own layout.
-- name: lower case, trimmed.
CREATE FUNCTION @extschema@._snowflake_preset(name pg_catalog.text)
RETURNS @extschema@._snowflake_layout
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE name
    WHEN 'twitter' THEN ROW(1288834974657, 1, 41, 10, 12, false,
                            '{datacenter,worker}', '{5,5}')::@extschema@._snowflake_layout
    WHEN 'discord' THEN ROW(1420070400000, 1, 41, 10, 12, false,
                            '{worker,process}', '{5,5}')::@extschema@._snowflake_layout
    WHEN 'instagram' THEN ROW(1314220021721, 1, 40, 13, 10, false,
                              '{shard}', '{13}')::@extschema@._snowflake_layout
    WHEN 'sonyflake' THEN ROW(1409529600000, 10, 39, 16, 8, true,
                              '{machine}', '{16}')::@extschema@._snowflake_layout
    WHEN 'mastodon' THEN ROW(0, 1, 47, 0, 16, false, '{}', '{}')::@extschema@._snowflake_layout
    WHEN 'pgedge' THEN ROW(1672531200000, 1, 41, 10, 12, false,
                           '{node}', '{10}')::@extschema@._snowflake_layout
    WHEN 'server' THEN @extschema@._snowflake_server_layout()
END;

COMMENT ON FUNCTION @extschema@._snowflake_preset(pg_catalog.text) IS
'a preset layout by name (internal)';

-- The error of an invalid layout argument (22023), with the sentence that
-- says what is wrong as its detail (layout.c, snowflake_parse_format), as
-- the parsers below raise it, the layout text in hand: raised where it is
-- found, with no subtransaction to catch and reword it (a PARALLEL SAFE
-- function may start none).
CREATE FUNCTION @extschema@._snowflake_layout_error(layout pg_catalog.text, detail pg_catalog.text)
RETURNS pg_catalog.void
LANGUAGE plpgsql IMMUTABLE PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    RAISE EXCEPTION USING ERRCODE = 'invalid_parameter_value',
        -- The layout quoted up to 100 characters, as the C extension quotes it.
        MESSAGE = format('invalid snowflake layout "%s"',
                         CASE WHEN length(layout) > 100 THEN left(layout, 100) || '...' ELSE layout END),
        DETAIL = detail,
        HINT = 'Name a preset (twitter, discord, instagram, sonyflake, mastodon, pgedge), or spell a layout out, such as ''epoch=2015-01-01; fields=timestamp:42,worker:5,process:5,sequence:12''.';
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_layout_error(pg_catalog.text, pg_catalog.text) IS
'raise the error of an invalid layout argument (internal)';

-- A plain decimal integer, optionally signed and surrounded by white
-- space, with no leading zero: NULL for anything else, or outside int4
-- (layout.c, snowflake_parse_int).
CREATE FUNCTION @extschema@._snowflake_parse_int(t pg_catalog.text)
RETURNS pg_catalog.int4
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    m text[];
    v int8;
BEGIN
    m := regexp_match(t, '^[ \t\n\v\f\r]*([+-]?)([0-9]+)[ \t\n\v\f\r]*$');
    IF m IS NULL OR m[2] ~ '^0[0-9]' OR length(m[2]) > 10 THEN
        RETURN NULL;
    END IF;
    v := m[2]::int8;
    IF m[1] = '-' THEN
        v := -v;
    END IF;
    IF v < -2147483648 OR v > 2147483647 THEN
        RETURN NULL;
    END IF;
    RETURN v;
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_parse_int(pg_catalog.text) IS
'a layout''s integer, as the C extension reads it (internal)';

-- epoch=: Unix milliseconds, or a time as PostgreSQL's timestamptz input
-- reads it, in UTC unless it names a zone (layout.c, sf_parse_epoch_value;
-- config.c, snowflake_parse_epoch), or the error of the layout spec.  The
-- time input's own error is found by _snowflake_time_error()
-- (22-layout-errors.sql).
CREATE FUNCTION @extschema@._snowflake_parse_epoch(value pg_catalog.text, spec pg_catalog.text)
RETURNS pg_catalog.int8
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
SET TimeZone = 'UTC'
AS $$
DECLARE
    digits text := value;
    negative bool := false;
    v numeric;
    lowered text;
    word text;
    pos int;
    ts timestamptz;
    us numeric;
BEGIN
    IF left(digits, 1) = '-' THEN
        negative := true;
        digits := substr(digits, 2);
    END IF;
    IF digits ~ '^[0-9]+$' THEN
        v := digits::numeric;
        IF v > 253402300799999 OR (negative AND -v < -62167219200000) THEN
            PERFORM @extschema@._snowflake_layout_error(spec, 'The epoch in Unix milliseconds must lie between -62167219200000 and 253402300799999.');
        END IF;
        RETURN CASE WHEN negative THEN -v ELSE v END;
    END IF;

    -- Words the time input takes that name a moment relative to when they
    -- are read, as whole words (only where the first occurrence of each is).
    lowered := translate(left(value, 63), 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz');
    FOREACH word IN ARRAY ARRAY['now', 'today', 'tomorrow', 'yesterday'] LOOP
        pos := strpos(lowered, word);
        IF pos > 0 AND (pos = 1 OR substr(lowered, pos - 1, 1) !~ '[A-Za-z]')
           AND substr(lowered, pos + length(word), 1) !~ '[A-Za-z]' THEN
            PERFORM @extschema@._snowflake_layout_error(spec, format('The epoch must be a fixed time, not "%s".', word));
        END IF;
    END LOOP;

    word := @extschema@._snowflake_time_error(value);
    IF word IS NOT NULL THEN
        PERFORM @extschema@._snowflake_layout_error(spec, word || '.');
    END IF;
    ts := value::timestamptz;
    IF NOT isfinite(ts) THEN
        PERFORM @extschema@._snowflake_layout_error(spec, 'The epoch must be a finite time.');
    END IF;
    -- extract(epoch FROM ts) rounds near the end of timestamptz; an
    -- interval's is exact.
    us := extract(epoch FROM ts - timestamptz '2000-01-01 00:00:00+00') * 1000000 + 946684800000000;
    IF us % 1000 <> 0 THEN
        PERFORM @extschema@._snowflake_layout_error(spec, 'The epoch must be a whole number of milliseconds.');
    END IF;
    RETURN us / 1000;
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_parse_epoch(pg_catalog.text, pg_catalog.text) IS
'a layout''s epoch= in Unix milliseconds (internal)';

-- fields=: name:bits, most significant first: the timestamp, then the node
-- parts and the sequence in the order the IDs hold them (layout.c,
-- sf_parse_fields and the functions it calls).  Sets f's widths, order
-- and node parts.
CREATE FUNCTION @extschema@._snowflake_parse_fields(value pg_catalog.text,
                                                    f @extschema@._snowflake_layout,
                                                    spec pg_catalog.text)
RETURNS @extschema@._snowflake_layout
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws CONSTANT text := E' \t\n\013\f\r';
    item text;
    name text;
    colon int;
    bits int;
    max_bits int;
    nfields int := 0;
    ts_bits int := 0;
    node_bits int := 0;
    seq_bits int := 0;
    have_sequence bool := false;
    parts_before bool := false;
    parts_after bool := false;
BEGIN
    f.part_names := '{}';
    f.part_bits := '{}';
    FOREACH item IN ARRAY CASE WHEN value = '' THEN ARRAY[''] ELSE string_to_array(value, ',') END LOOP
        item := btrim(item, ws);
        colon := strpos(item, ':');
        IF colon = 0 THEN
            PERFORM @extschema@._snowflake_layout_error(spec, format('The field "%s" is not of the form name:bits.', left(item, 40)));
        END IF;
        name := btrim(left(item, colon - 1), ws);
        IF name !~ '^[a-z_][a-z0-9_]*$' OR octet_length(name) > 31 THEN
            PERFORM @extschema@._snowflake_layout_error(spec, format('The field name "%s" is not valid: names are lower-case letters, digits and underscores, at most 31 characters.',
                                 left(name, 40)));
        END IF;
        max_bits := CASE WHEN nfields = 0 THEN 64 ELSE 31 END;
        bits := @extschema@._snowflake_parse_int(substr(item, colon + 1));
        IF bits IS NULL OR bits < 1 OR bits > max_bits THEN
            PERFORM @extschema@._snowflake_layout_error(spec, format('The field "%s" must have between 1 and %s bits.', name, max_bits));
        END IF;

        IF nfields = 0 THEN
            IF name <> 'timestamp' THEN
                PERFORM @extschema@._snowflake_layout_error(spec, format('The first (most significant) field must be "timestamp", not "%s".', name));
            END IF;
            ts_bits := bits;
        ELSIF name = 'timestamp' OR (name = 'sequence' AND have_sequence) THEN
            PERFORM @extschema@._snowflake_layout_error(spec, format('The field "%s" appears twice.', name));
        ELSIF name = 'sequence' THEN
            have_sequence := true;
            seq_bits := bits;
        ELSE
            -- A named part of the node field: once, next to the other
            -- parts, at most four of them, a node id's bits in all.
            IF name = ANY (f.part_names) THEN
                PERFORM @extschema@._snowflake_layout_error(spec, format('The field "%s" appears twice.', name));
            END IF;
            IF have_sequence THEN
                parts_after := true;
            ELSE
                parts_before := true;
            END IF;
            IF parts_before AND parts_after THEN
                PERFORM @extschema@._snowflake_layout_error(spec, 'The node fields must be next to each other, not on both sides of "sequence".');
            END IF;
            IF cardinality(f.part_names) = 4 THEN
                PERFORM @extschema@._snowflake_layout_error(spec, 'A layout may split the node field into at most 4 parts.');
            END IF;
            f.part_names := f.part_names || name;
            f.part_bits := f.part_bits || bits;
            node_bits := node_bits + bits;
            IF node_bits > 31 THEN
                PERFORM @extschema@._snowflake_layout_error(spec, 'The node fields add up to more than 31 bits, the most a node id holds.');
            END IF;
        END IF;
        nfields := nfields + 1;
    END LOOP;

    IF ts_bits + node_bits + seq_bits > 64 THEN
        PERFORM @extschema@._snowflake_layout_error(spec, format('The fields add up to %s bits, but an ID has 64.', ts_bits + node_bits + seq_bits));
    END IF;
    f.timestamp_bits := least(ts_bits, 63 - node_bits - seq_bits);
    f.node_bits := node_bits;
    f.sequence_bits := seq_bits;
    f.sequence_above_node := parts_after;
    RETURN f;
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_parse_fields(pg_catalog.text, @extschema@._snowflake_layout, pg_catalog.text) IS
'a layout''s fields= (internal)';

-- A layout argument, or the error that says what is wrong with it
-- (layout.c, snowflake_parse_format and the functions it calls).  server: the argument starts from the server's own layout
-- ("server; fields=..."), which takes only fields= that split its node
-- field.
CREATE FUNCTION @extschema@._snowflake_parse_layout(spec pg_catalog.text, server pg_catalog.bool)
RETURNS @extschema@._snowflake_layout
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
DECLARE
    ws CONSTANT text := E' \t\n\013\f\r';
    preset_names CONSTANT text := 'twitter, discord, instagram, sonyflake, mastodon, pgedge';
    f @extschema@._snowflake_layout := ROW(0, 1, 0, 0, 0, false, '{}', '{}');
    s @extschema@._snowflake_layout := @extschema@._snowflake_server_layout();
    item text;
    folded text;
    key text;
    val text;
    eq int;
    m text[];
    first bool := true;
    from_preset bool := false;
    from_server bool := false;
    have_epoch bool := false;
    have_unit bool := false;
    have_fields bool := false;
BEGIN
    IF octet_length(spec) > 400 THEN
        PERFORM @extschema@._snowflake_layout_error(spec, 'A layout is at most 400 characters long.');
    END IF;
    FOREACH item IN ARRAY string_to_array(spec, ';') LOOP
        item := btrim(item, ws);
        CONTINUE WHEN item = '';
        eq := strpos(item, '=');
        IF eq = 0 THEN
            -- A preset's name (or "server"), allowed first only, which the
            -- items after it amend.
            IF NOT first THEN
                PERFORM @extschema@._snowflake_layout_error(spec, format('"%s" is not of the form key=value.', left(item, 40)));
            END IF;
            folded := translate(item, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz');
            IF folded <> 'server' OR server THEN
                f := @extschema@._snowflake_preset(folded);
                from_preset := f IS NOT NULL;
                from_server := folded = 'server';
            END IF;
            IF NOT from_preset THEN
                PERFORM @extschema@._snowflake_layout_error(spec, format('"%s" is not a preset (%s) and not of the form key=value.',
                                     left(item, 40), preset_names));
            END IF;
            first := false;
            CONTINUE;
        END IF;

        first := false;
        key := btrim(left(item, eq - 1), ws);
        val := btrim(substr(item, eq + 1), ws);
        folded := translate(key, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz');
        IF folded NOT IN ('epoch', 'unit', 'fields') THEN
            PERFORM @extschema@._snowflake_layout_error(spec, format('"%s" is not a layout key: the keys are epoch, unit and fields.', left(key, 40)));
        END IF;
        IF (folded = 'epoch' AND have_epoch) OR (folded = 'unit' AND have_unit)
           OR (folded = 'fields' AND have_fields) THEN
            PERFORM @extschema@._snowflake_layout_error(spec, format('The key "%s" appears twice.', key));
        END IF;
        IF folded = 'epoch' THEN
            have_epoch := true;
            f.epoch_ms := @extschema@._snowflake_parse_epoch(val, spec);
        ELSIF folded = 'unit' THEN
            have_unit := true;
            -- Whole milliseconds, optionally followed by "ms".
            m := regexp_match(val, '^([0-9]+)[ \t\n\v\f\r]*(ms)?$');
            IF m IS NULL OR m[1]::numeric NOT BETWEEN 1 AND 86400000 THEN
                PERFORM @extschema@._snowflake_layout_error(spec, 'The unit must be a whole number of milliseconds between 1 and 86400000, such as 10ms.');
            END IF;
            f.unit_ms := m[1]::int8;
        ELSE
            have_fields := true;
            f := @extschema@._snowflake_parse_fields(val, f, spec);
        END IF;
    END LOOP;

    IF first THEN
        PERFORM @extschema@._snowflake_layout_error(spec, format('The layout is empty: name a preset (%s) or spell one out.', preset_names));
    END IF;
    IF NOT from_preset AND (NOT have_epoch OR NOT have_fields) THEN
        PERFORM @extschema@._snowflake_layout_error(spec, 'A layout that names no preset needs both epoch= and fields=.');
    END IF;
    IF from_server AND (have_epoch OR have_unit
                        OR f.timestamp_bits <> s.timestamp_bits OR f.node_bits <> s.node_bits
                        OR f.sequence_bits <> s.sequence_bits
                        OR (f.sequence_above_node AND cardinality(f.part_names) > 0)) THEN
        PERFORM @extschema@._snowflake_layout_error(spec, format('The server''s layout only takes fields= that split its node field: timestamp:%s, node fields adding up to %s bits, then sequence:%s.',
                             s.timestamp_bits, s.node_bits, s.sequence_bits));
    END IF;
    RETURN f;
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_parse_layout(pg_catalog.text, pg_catalog.bool) IS
'a layout argument parsed, or the error saying what is wrong with it (internal)';

-- A layout argument parsed, or the error of an invalid layout (22023).
CREATE FUNCTION @extschema@._snowflake_layout_parse(layout pg_catalog.text)
RETURNS @extschema@._snowflake_layout
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
SET search_path = pg_catalog, pg_temp
AS $$
BEGIN
    -- "server", in any case, then the end or a semicolon, after white space.
    RETURN @extschema@._snowflake_parse_layout(
        layout, layout ~ '^[ \t\n\v\f\r]*[Ss][Ee][Rr][Vv][Ee][Rr][ \t\n\v\f\r]*(;|$)');
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_layout_parse(pg_catalog.text) IS
'a layout argument parsed; 22023 when it is invalid (internal)';

-- A preset's name alone (or "server"), in any case, with white space
-- around it: its layout; else NULL.
CREATE FUNCTION @extschema@._snowflake_preset_named(layout pg_catalog.text)
RETURNS @extschema@._snowflake_layout
LANGUAGE sql IMMUTABLE PARALLEL SAFE
RETURN CASE WHEN pg_catalog.octet_length(layout) <= 400
            THEN @extschema@._snowflake_preset(pg_catalog.btrim(
                     pg_catalog.translate(layout, 'ABCDEFGHIJKLMNOPQRSTUVWXYZ', 'abcdefghijklmnopqrstuvwxyz'),
                     E' \t\n\013\f\r')) END;

COMMENT ON FUNCTION @extschema@._snowflake_preset_named(pg_catalog.text) IS
'the layout of a preset named alone, or NULL (internal)';

-- A layout argument parsed, a preset's name alone looked up at once; 22023
-- when it is invalid.  STRICT, so that the planner can inline the STRICT
-- functions that call it, and then parse a constant layout once, when it
-- plans the query.
CREATE FUNCTION @extschema@._snowflake_layout(layout pg_catalog.text)
RETURNS @extschema@._snowflake_layout
LANGUAGE plpgsql IMMUTABLE STRICT PARALLEL SAFE
AS $$
BEGIN
    -- Qualified names only (no operator): no search_path is needed.
    RETURN coalesce(@extschema@._snowflake_preset_named(layout),
                    @extschema@._snowflake_layout_parse(layout));
END
$$;

COMMENT ON FUNCTION @extschema@._snowflake_layout(pg_catalog.text) IS
'a layout argument parsed; 22023 when it is invalid (internal)';
