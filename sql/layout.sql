--
-- layout: the exact bit layout, on hand-computed vectors (default layout
-- 41/10/12, epoch 2024-01-01 00:00:00+00).
--
SET timezone = 'UTC';

-- id = (ms << 22) | (node << 12) | sequence
SELECT snowflake_compose('2024-01-01 00:00:00+00', 0, 0) AS zero,
       snowflake_compose('2024-01-01 00:00:00+00', 0, 1) AS seq_1,
       snowflake_compose('2024-01-01 00:00:00+00', 1, 0) AS node_1,       -- 1 << 12
       snowflake_compose('2024-01-01 00:00:00.001+00', 0, 0) AS ms_1,     -- 1 << 22
       snowflake_compose('2024-01-01 00:00:01+00', 7, 5) AS one_second;  -- 1000 << 22 | 7 << 12 | 5

-- The last millisecond the 41-bit field holds, (2^41 - 1) ms after the epoch,
-- with every other bit set: the largest bigint.
SELECT timestamptz '2024-01-01 00:00:00+00' + 2199023255551 * interval '1 millisecond' AS last_ms;
SELECT snowflake_compose('2093-09-06 15:47:35.551+00', 1023, 4095) AS all_ones,
       snowflake_compose('2093-09-06 15:47:35.551+00', 1023, 4095) = 9223372036854775807 AS is_max_bigint;

-- Decoding the same vectors.
SELECT * FROM snowflake_decode(0);
SELECT * FROM snowflake_decode(4194332677);
SELECT * FROM snowflake_decode(9223372036854775807);
SELECT snowflake_timestamp(4194332677),
       snowflake_node_id(4194332677),
       snowflake_sequence(4194332677);

-- Sub-millisecond parts are rounded down, times in any zone are the same
-- instant.
SELECT snowflake_compose('2024-01-01 00:00:00.0019+00', 0, 0) = 4194304 AS rounded_down,
       snowflake_compose('2024-01-01 05:30:00+05:30', 0, 0) = 0 AS zone_respected;

-- min_id/max_id bound the IDs of the millisecond containing ts.
SELECT snowflake_min_id('2024-01-01 00:00:01.0005+00') AS min_id,
       snowflake_max_id('2024-01-01 00:00:01.0005+00') AS max_id,
       snowflake_max_id('2024-01-01 00:00:01+00') - snowflake_min_id('2024-01-01 00:00:01+00') + 1 AS ids_per_ms;
SELECT snowflake_min_id('2024-01-01 00:00:00+00') AS first_possible,
       snowflake_max_id('2093-09-06 15:47:35.551+00') AS last_possible;
-- Every ID composed within a millisecond lies between its bounds, and the
-- next millisecond starts right after.
SELECT bool_and(snowflake_compose(t, n, s) BETWEEN snowflake_min_id(t) AND snowflake_max_id(t)) AS within,
       bool_and(snowflake_max_id(t) + 1 = snowflake_min_id(t + interval '1 millisecond')) AS adjacent
  FROM generate_series(timestamptz '2025-06-01 12:00:00+00', '2025-06-01 12:00:00.050+00', interval '1 millisecond') t,
       (VALUES (0), (511), (1023)) AS nodes(n),
       (VALUES (0), (4095)) AS seqs(s);

-- Round trip: decode(compose(ts, node, seq)) gives back ts (to the
-- millisecond), node and seq, over a spread of times and values.
SELECT count(*) AS cases,
       bool_and(d.ts = date_trunc('milliseconds', c.ts)
                AND d.node_id = c.node AND d.sequence = c.seq) AS round_trips
  FROM (SELECT timestamptz '2024-01-01 00:00:00+00'
               + (g::bigint * 219902321 % 2199023255) * interval '1 second'
               + (g % 1000) * interval '1 millisecond'
               + (g % 10) * interval '1 microsecond' AS ts,
               g * 37 % 1024 AS node,
               g * 101 % 4096 AS seq
          FROM generate_series(0, 9999) g) c,
       snowflake_decode(snowflake_compose(c.ts, c.node, c.seq)) d;

-- And compose(decode(id)) gives back the id.
SELECT bool_and(snowflake_compose(d.ts, d.node_id, d.sequence) = i.id) AS ids_round_trip
  FROM (SELECT (g::numeric * 92233720368547 % 9223372036854775807)::bigint AS id
          FROM generate_series(0, 9999) g) i,
       snowflake_decode(i.id) d;

-- IDs sort by time: a later millisecond always gives a larger ID, whatever
-- the node and sequence.
SELECT snowflake_compose('2025-01-01 00:00:00.001+00', 0, 0) >
       snowflake_compose('2025-01-01 00:00:00+00', 1023, 4095) AS time_sorted;
