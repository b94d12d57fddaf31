--
-- foreign: decoding IDs minted by other systems, through a layout argument
-- (a preset or a spelled-out layout).  Each preset is checked against
-- examples published by its owner, in its documentation or its source code
-- (cited at each), then by round trips over the edges of every field.
--
SET timezone = 'UTC';

--
-- Twitter.  twitter-archive/snowflake, src/main/scala/com/twitter/service/
-- snowflake/IdWorker.scala: twepoch = 1288834974657L, 5 datacenter bits,
-- 5 worker bits, 12 sequence bits, and nextId() =
-- ((timestamp - twepoch) << 22) | (datacenterId << 17) | (workerId << 12) | sequence.
-- IdWorkerSpec.scala masks the fields with workerMask = 0x1F000,
-- datacenterMask = 0x3E0000 and timestampMask = 0xFFFFFFFFFFC00000 and checks
-- ((id & timestampMask) >> 22) = t - twepoch.  node_id is the whole 10-bit
-- field, datacenter << 5 | worker.
--
SELECT snowflake_compose(to_timestamp(1288834974.657), 31, 0, 'twitter') = x'1F000'::bigint AS worker_31_is_worker_mask,
       snowflake_compose(to_timestamp(1288834974.657), 31 << 5, 0, 'twitter') = x'3E0000'::bigint AS datacenter_31_is_datacenter_mask,
       snowflake_compose(to_timestamp(1288834974.657), 0, 4095, 'twitter') = 4095 AS sequence_is_low_12_bits;
SELECT snowflake_compose(to_timestamp(1288834974.657) + 1234567890123 * interval '1 ms', 0, 0, 'twitter') >> 22 AS t_minus_twepoch,
       (snowflake_compose(to_timestamp(1288834974.657) + 1234567890123 * interval '1 ms', 0, 0, 'twitter')
         & x'FFFFFFFFFFC00000'::bigint) >> 22 = 1234567890123 AS timestamp_mask_agrees;
-- An ID of datacenter 4, worker 4 (IdWorkerSpec's "roll over sequence id"
-- worker), decoded into the named parts.
SELECT * FROM snowflake_decode((1234567890123::bigint << 22) | (4 << 17) | (4 << 12) | 4095, 'twitter');
-- Cross-check with ClickHouse's documentation of snowflakeToDateTime, which
-- reads Twitter's epoch: 1426860702823350272 is 2021-08-15 10:57:56 UTC.
SELECT snowflake_timestamp(1426860702823350272, 'twitter');

--
-- Discord.  Discord developer documentation, "Reference", "Snowflakes":
-- epoch 1420070400000 (2015-01-01), timestamp bits 63 to 22, internal worker
-- id bits 21 to 17, internal process id bits 16 to 12, increment bits 11 to 0.
-- Its example, 175928847299117063, has timestamp 41944705796 (that is
-- 1462015105796, 2016-04-30 11:18:25.796 UTC), worker 1, process 0,
-- increment 7.
--
SELECT * FROM snowflake_decode(175928847299117063, 'discord');
SELECT snowflake_timestamp(175928847299117063, 'discord') = to_timestamp(1462015105.796) AS docs_timestamp,
       (snowflake_decode(175928847299117063, 'discord')).node_fields = '{"worker": 1, "process": 0}' AS docs_worker_process,
       snowflake_sequence(175928847299117063, 'discord') = 7 AS docs_increment,
       snowflake_compose('2016-04-30 11:18:25.796+00', 1 << 5, 7, 'discord') = 175928847299117063 AS composes_back;

--
-- Instagram.  Instagram Engineering, "Sharding & IDs at Instagram" (2012):
-- next_id() uses our_epoch = 1314220021721, (now_millis - our_epoch) << 23,
-- shard_id << 10 and nextval() % 1024.  Its worked example: 1387263000 ms
-- after the epoch, logical shard 31341 % 2000 = 1341, sequence 5001 % 1024.
--
SELECT snowflake_compose(to_timestamp(1314220021.721) + 1387263000 * interval '1 ms', 1341, 5001 % 1024, 'instagram') AS blog_example,
       snowflake_compose(to_timestamp(1314220021.721) + 1387263000 * interval '1 ms', 1341, 5001 % 1024, 'instagram')
         = ((1387263000::bigint << 23) | (1341 << 10) | (5001 % 1024)) AS as_next_id_computes;
SELECT * FROM snowflake_decode((1387263000::bigint << 23) | (1341 << 10) | (5001 % 1024), 'instagram');

--
-- Sonyflake.  sony/sonyflake, sonyflake.go: BitLenTime = 39 (units of
-- 10 msec), BitLenSequence = 8, BitLenMachineID = 16, default StartTime
-- 2014-09-01 00:00:00 UTC, and toID() = elapsedTime << 24 | sequence << 16 |
-- machineID: the sequence lies above the machine id.  v2/sonyflake_test.go's
-- TestComposeAndDecompose composes the zero values, the max sequence
-- (1 << bitsSequence - 1) and the max machine id (1 << bitsMachine - 1).
--
SELECT snowflake_compose('2014-09-01 00:00:00+00', 0, 0, 'sonyflake') AS zero_values,
       snowflake_compose('2014-09-01 00:00:00+00', 0, 255, 'sonyflake') = 255 << 16 AS max_sequence,
       snowflake_compose('2014-09-01 00:00:00+00', 65535, 0, 'sonyflake') = 65535 AS max_machine_id,
       snowflake_compose('2014-09-01 00:00:00.010+00', 0, 0, 'sonyflake') = 1 << 24 AS one_time_unit_is_10ms,
       snowflake_compose('2014-09-01 00:00:00.019+00', 0, 0, 'sonyflake') = 1 << 24 AS rounded_down_to_the_unit;
SELECT * FROM snowflake_decode((5::bigint << 24) | (3 << 16) | 258, 'sonyflake');
-- The 10 ms unit in the bounds: a unit's IDs, from its first millisecond to
-- its last.
SELECT snowflake_min_id('2014-09-01 00:00:00.050+00', 'sonyflake') = 5::bigint << 24 AS min_id,
       snowflake_max_id('2014-09-01 00:00:00.059+00', 'sonyflake') = (6::bigint << 24) - 1 AS max_id;
-- TestNextIDError: after 174 years (2^39 units of 10 ms) the time is over.
SELECT snowflake_max_id(timestamptz '2014-09-01 00:00:00+00' + ((2^39)::bigint * 10 - 1) * interval '1 ms', 'sonyflake')
       = 9223372036854775807 AS last_unit_holds_the_largest_id;
SELECT snowflake_min_id(timestamptz '2014-09-01 00:00:00+00' + (2^39)::bigint * 10 * interval '1 ms', 'sonyflake');

--
-- Mastodon.  mastodon/mastodon, lib/mastodon/snowflake.rb: timestamp_id()
-- returns (milliseconds since 1970 << 16) | tail, tail 16 bits ("6 bytes
-- (48 bits) of millisecond-level timestamp, 2 bytes (16 bits) of sequence
-- data"); id_at(timestamp, with_random: false) is timestamp.to_i * 1000 << 16.
-- A bigint holds the low 47 bits of the timestamp (until the year 6429).
--
SELECT snowflake_compose('2017-04-01 12:00:00+00', 0, 0, 'mastodon')
       = (extract(epoch FROM timestamptz '2017-04-01 12:00:00+00')::bigint * 1000) << 16 AS id_at_without_random,
       snowflake_compose('2017-04-01 12:00:00.123+00', 0, 65535, 'mastodon')
       = ((extract(epoch FROM timestamptz '2017-04-01 12:00:00.123+00') * 1000)::bigint << 16) | 65535 AS timestamp_id_with_tail;
SELECT * FROM snowflake_decode((1491048000123::bigint << 16) | 40911, 'mastodon');

--
-- pgEdge.  pgEdge/snowflake, snowflake.c: SNOWFLAKE_EPOCH_OFFSET 1672531200
-- (2023-01-01), SNOWFLAKE_MSEC_SHIFT 22 (41 bits), SNOWFLAKE_NODE_SHIFT 12
-- (10 bits), SNOWFLAKE_COUNT_SHIFT 0 (12 bits).  Its documentation
-- (docs/snowflake_functions.md) shows 136169504773242881 with get_epoch
-- 1704996539.845, that is 2024-01-11 18:08:59.845 UTC (to_timestamp shows
-- 13:08:59.845-05).  The same page gives node 1 and count 0 or 3, which
-- matches its README's older description (count in bits 10-21, node in bits
-- 0-9) but not the shifts of the current source, which give node 0, count 1:
-- the preset follows the source.
--
SELECT snowflake_timestamp(136169504773242881, 'pgedge') AS docs_timestamp,
       snowflake_timestamp(136169504773242881, 'pgedge') = to_timestamp(1704996539.845) AS docs_get_epoch;
SELECT * FROM snowflake_decode(136169504773242881, 'pgedge');
SELECT snowflake_compose('2024-01-11 18:08:59.845+00', 1023, 4095, 'pgedge')
       = ((32465339845::bigint << 22) | (1023 << 12) | 4095) AS source_shifts;

--
-- Round trips over the edges of every field of every preset: the first and
-- the last time unit, node 0 and the largest, sequence 0 and the largest;
-- compose then decode gives each back, and the ID lies within the bounds of
-- its time.  The last unit is 2^bits - 1 units after the epoch, bits being
-- what a bigint holds: Discord, Instagram and Mastodon spell 64 bits, so
-- their 42-, 41- and 48-bit timestamps keep 41, 40 and 47.
--
-- ts + ms milliseconds, exactly: multiplying an interval goes through a
-- float8, which would round millions of years in microseconds.
CREATE FUNCTION pg_temp.plus_ms(ts timestamptz, ms bigint) RETURNS timestamptz
    AS $$ SELECT ts + (ms / 86400000) * interval '1 day' + (ms % 86400000) * interval '1 ms' $$
    LANGUAGE sql IMMUTABLE STRICT;
CREATE TEMP TABLE presets (name text, epoch timestamptz, ts_bits int, unit_ms int,
                           max_node int, max_seq int) ;
INSERT INTO presets VALUES
    ('twitter',   to_timestamp(1288834974.657),   41,  1,  1023, 4095),
    ('discord',   to_timestamp(1420070400),       41,  1,  1023, 4095),
    ('instagram', to_timestamp(1314220021.721),   40,  1,  8191, 1023),
    ('sonyflake', '2014-09-01 00:00:00+00',       39, 10, 65535,  255),
    ('mastodon',  '1970-01-01 00:00:00+00',       47,  1,     0, 65535),
    ('pgedge',    '2023-01-01 00:00:00+00',       41,  1,  1023, 4095);
CREATE TEMP TABLE corners AS
SELECT p.name, p.epoch, p.unit_ms, t.ts, n.node, s.seq
  FROM presets p,
       LATERAL (VALUES (p.epoch),
                       (p.epoch + (p.unit_ms - 1) * interval '1 ms'),
                       (pg_temp.plus_ms(p.epoch, ((2::numeric ^ p.ts_bits - 1) * p.unit_ms)::bigint)),
                       (pg_temp.plus_ms(p.epoch, ((2::numeric ^ p.ts_bits) * p.unit_ms - 1)::bigint))) AS t(ts),
       LATERAL (VALUES (0), (p.max_node)) AS n(node),
       LATERAL (VALUES (0), (p.max_seq)) AS s(seq);
-- The time decoded is the start of the unit: the epoch plus whole units.
SELECT c.name, count(*) AS corners,
       bool_and(d.ts = pg_temp.plus_ms(c.epoch, (floor(extract(epoch FROM c.ts - c.epoch) * 1000 / c.unit_ms)
                                                 * c.unit_ms)::bigint)) AS ts_round_trips,
       bool_and(d.node_id = c.node AND d.sequence = c.seq) AS fields_round_trip,
       bool_and(i.id BETWEEN snowflake_min_id(c.ts, c.name) AND snowflake_max_id(c.ts, c.name)) AS within_bounds,
       min(i.id) = 0 AS reaches_zero,
       max(i.id) = 9223372036854775807 AS reaches_largest_id
  FROM corners c,
       LATERAL (SELECT snowflake_compose(c.ts, c.node, c.seq, c.name) AS id) i,
       LATERAL snowflake_decode(i.id, c.name) d
 GROUP BY c.name ORDER BY c.name;
-- One unit past the last, and one node or sequence past the largest, are
-- refused: the edges above are the real ones.
SELECT p.name,
       snowflake_max_id(pg_temp.plus_ms(p.epoch, ((2::numeric ^ p.ts_bits) * p.unit_ms - 1)::bigint), p.name) AS last_max_id,
       snowflake_max_id(pg_temp.plus_ms(p.epoch, ((2::numeric ^ p.ts_bits) * p.unit_ms - 1)::bigint), p.name)
       = snowflake_max_id(pg_temp.plus_ms(p.epoch, ((2::numeric ^ p.ts_bits - 1) * p.unit_ms)::bigint), p.name) AS same_last_unit
  FROM presets p ORDER BY p.name;
SELECT p.name, snowflake_min_id(pg_temp.plus_ms(p.epoch, ((2::numeric ^ p.ts_bits) * p.unit_ms)::bigint), p.name)
  FROM presets p WHERE p.name = 'mastodon';
SELECT snowflake_compose(to_timestamp(1420070400) + (2::numeric ^ 41)::bigint * interval '1 ms', 0, 0, 'discord');
SELECT snowflake_compose(to_timestamp(1288834974.657), 1024, 0, 'twitter');
SELECT snowflake_compose(to_timestamp(1314220021.721), 0, 1024, 'instagram');
SELECT snowflake_compose('2014-09-01', 65536, 0, 'sonyflake');
SELECT snowflake_compose('1970-01-01', 1, 0, 'mastodon');
SELECT snowflake_compose('2022-12-31 23:59:59.999+00', 0, 0, 'pgedge');

-- The node parts of every preset, from the node field's two ends.
SELECT p.name, d.node_fields AS at_node_0, e.node_fields AS at_max_node
  FROM presets p,
       LATERAL snowflake_decode(snowflake_compose(p.epoch, 0, 0, p.name), p.name) d,
       LATERAL snowflake_decode(snowflake_compose(p.epoch, p.max_node, 0, p.name), p.name) e
 ORDER BY p.name;

-- Bounds bracket the documented IDs, and the next unit starts above them.
SELECT v.name, v.id BETWEEN snowflake_min_id(snowflake_timestamp(v.id, v.name), v.name)
                        AND snowflake_max_id(snowflake_timestamp(v.id, v.name), v.name) AS bracketed,
       snowflake_min_id(snowflake_timestamp(v.id, v.name) + p.unit_ms * interval '1 ms', v.name) > v.id AS next_unit_above
  FROM (VALUES ('twitter', 1426860702823350272),
               ('discord', 175928847299117063),
               ('instagram', 11637205501278089),
               ('pgedge', 136169504773242881)) AS v(name, id)
  JOIN presets p USING (name)
 ORDER BY v.name;

--
-- Spelled-out layouts: the same as a preset when they say the same, a
-- preset with what differs, case and spaces ignored where harmless.
--
SELECT snowflake_decode(175928847299117063, 'epoch=1420070400000; fields=timestamp:42,worker:5,process:5,sequence:12')
       = snowflake_decode(175928847299117063, 'discord') AS spelled_discord,
       snowflake_decode(175928847299117063, ' Discord ') = snowflake_decode(175928847299117063, 'discord') AS case_and_spaces,
       snowflake_decode(175928847299117063, 'epoch = 2015-01-01T00:00:00Z ; fields = timestamp:42, worker:5, process:5, sequence:12 ;')
       = snowflake_decode(175928847299117063, 'discord') AS iso_epoch;
SELECT * FROM snowflake_decode(1 << 24, 'sonyflake; epoch=2020-01-01');
SELECT * FROM snowflake_decode((1::bigint << 26) | (5 << 16) | 3, 'epoch=2020-01-01; unit=1000ms; fields=timestamp:37,region:4,host:6,sequence:16');
-- Without a sequence field, and with the server's own widths.
SELECT * FROM snowflake_decode((1000::bigint << 8) | 200, 'epoch=2024-01-01; fields=timestamp:55,node:8');
SELECT (snowflake_decode(4194332677, 'epoch=2024-01-01; fields=timestamp:41,node:10,sequence:12')).ts
       = snowflake_timestamp(4194332677) AS same_as_server_layout;

-- The server's own layout (41/10/12 from 2024-01-01, node 7 in these
-- tests) with its node field split for display; it keeps its widths.
SELECT * FROM snowflake_decode(snowflake_compose('2024-06-01', (5 << 7) | 7, 9),
                               'server; fields=timestamp:41,region:3,host:7,sequence:12');
SELECT (snowflake_decode(i.id, ' SERVER ; fields=timestamp:41,region:3,host:7,sequence:12')).ts = snowflake_timestamp(i.id) AS same_ts,
       snowflake_node_id(i.id, 'server') = snowflake_node_id(i.id) AS same_node,
       snowflake_compose('2024-06-01', 1023, 4095, 'server') = snowflake_compose('2024-06-01', 1023, 4095) AS same_compose
  FROM (SELECT snowflake_nextval() AS id) i;
-- Empty items before "server" are skipped, as before any other item
-- (the fuzz target test/fuzz/layout_parse.c found it refused).
SELECT snowflake_node_id(snowflake_compose('2024-06-01', 5, 9), ' ; ;server') = 5 AS server_after_empty_items;

--
-- IMMUTABLE with a layout: index expressions and partition bounds.  The
-- one-argument forms keep their volatility.
--
SELECT p.oid::regprocedure, p.provolatile, p.proparallel, p.proisstrict
  FROM pg_proc p JOIN pg_depend d ON d.objid = p.oid AND d.classid = 'pg_proc'::regclass
 WHERE d.refobjid = (SELECT oid FROM pg_extension WHERE extname = 'snowflake')
   AND p.proname IN ('snowflake_decode', 'snowflake_timestamp', 'snowflake_node_id',
                     'snowflake_sequence', 'snowflake_min_id', 'snowflake_max_id',
                     'snowflake_compose')
 ORDER BY p.proname, p.pronargs;

CREATE TABLE messages (id bigint PRIMARY KEY, body text);
CREATE INDEX messages_sent_idx ON messages (snowflake_timestamp(id, 'discord'));
CREATE INDEX messages_worker_idx ON messages (((snowflake_decode(id, 'discord')).node_fields ->> 'worker'));
INSERT INTO messages
SELECT snowflake_compose(timestamptz '2016-04-30 00:00:00+00' + g * interval '1 minute', g % 1024, g % 4096, 'discord'), 'm' || g
  FROM generate_series(0, 2999) g;
INSERT INTO messages VALUES (175928847299117063, 'from the docs');
ANALYZE messages;
SET enable_seqscan = off;
EXPLAIN (COSTS OFF)
SELECT body FROM messages
 WHERE snowflake_timestamp(id, 'discord') >= '2016-04-30 11:18' AND snowflake_timestamp(id, 'discord') < '2016-04-30 11:19';
SELECT body FROM messages
 WHERE snowflake_timestamp(id, 'discord') >= '2016-04-30 11:18' AND snowflake_timestamp(id, 'discord') < '2016-04-30 11:19'
 ORDER BY id;
EXPLAIN (COSTS OFF)
SELECT body FROM messages
 WHERE id >= snowflake_min_id('2016-04-30 11:18', 'discord') AND id <= snowflake_max_id('2016-04-30 11:18:59.999', 'discord');
SELECT count(*) AS worker_1_rows FROM messages
 WHERE (snowflake_decode(id, 'discord')).node_fields ->> 'worker' = '1';
RESET enable_seqscan;

CREATE TABLE tweets (id bigint NOT NULL, body text) PARTITION BY RANGE (id);
CREATE TABLE tweets_2021 PARTITION OF tweets
    FOR VALUES FROM (snowflake_min_id('2021-01-01', 'twitter')) TO (snowflake_min_id('2022-01-01', 'twitter'));
CREATE TABLE tweets_2022 PARTITION OF tweets
    FOR VALUES FROM (snowflake_min_id('2022-01-01', 'twitter')) TO (snowflake_min_id('2023-01-01', 'twitter'));
INSERT INTO tweets VALUES (1426860702823350272, 'august 2021'),
                          (snowflake_compose('2022-06-01', 1, 2, 'twitter'), 'june 2022');
SELECT tableoid::regclass AS partition, body FROM tweets ORDER BY id;
DROP TABLE messages, tweets;

--
-- A bad layout: 22023, the detail naming what is wrong.
--
SELECT count(*) AS bad_layouts,
       string_agg(DISTINCT regress.sqlstate_of(format('SELECT snowflake_timestamp(1, %L)', l)), ',') AS sqlstates
  FROM (VALUES ('bogus'),
       (''),
       (' ; '),
       ('twitter; discord'),
       ('twitter; size=3'),
       ('twitter; epoch=2020-01-01; epoch=2021-01-01'),
       ('fields=timestamp:41,sequence:22'),
       ('epoch=2020-01-01'),
       ('epoch=yesterday; fields=timestamp:41,sequence:22'),
       ('epoch=2020-02-30; fields=timestamp:41,sequence:22'),
       ('epoch=99999999999999999; fields=timestamp:41,sequence:22'),
       ('epoch=-99999999999999999; fields=timestamp:41,sequence:22'),
       ('sonyflake; unit=0'),
       ('sonyflake; unit=10s'),
       ('sonyflake; unit=86400001'),
       ('twitter; fields=timestamp:41,worker'),
       ('twitter; fields=timestamp:41,Worker:10'),
       ('twitter; fields=timestamp:41,worker:0'),
       ('twitter; fields=timestamp:41,worker:x'),
       ('twitter; fields=timestamp:65'),
       ('twitter; fields=worker:10,timestamp:41'),
       ('twitter; fields=timestamp:41,timestamp:1'),
       ('twitter; fields=timestamp:41,worker:5,worker:5'),
       ('twitter; fields=timestamp:41,sequence:5,sequence:5'),
       ('twitter; fields=timestamp:41,a:5,sequence:12,b:5'),
       ('twitter; fields=timestamp:30,a:1,b:1,c:1,d:1,e:1'),
       ('twitter; fields=timestamp:20,a:16,b:16'),
       ('twitter; fields=timestamp:40,node:12,sequence:13'),
       ('twitter; epoch=' || repeat('0', 390)),
       ('server; epoch=2020-01-01'),
       ('server; fields=timestamp:41,node:11,sequence:11'),
       ('server; fields=timestamp:41,sequence:12,node:10'),
       ('twitter; server'),
       ('serverx')) AS v(l);
-- Each with its message.
SELECT snowflake_timestamp(1, 'bogus');
SELECT snowflake_timestamp(1, '');
SELECT snowflake_timestamp(1, ' ; ');
SELECT snowflake_timestamp(1, 'twitter; discord');
SELECT snowflake_timestamp(1, 'twitter; size=3');
SELECT snowflake_timestamp(1, 'twitter; epoch=2020-01-01; epoch=2021-01-01');
SELECT snowflake_timestamp(1, 'fields=timestamp:41,sequence:22');
SELECT snowflake_timestamp(1, 'epoch=2020-01-01');
SELECT snowflake_timestamp(1, 'epoch=yesterday; fields=timestamp:41,sequence:22');
SELECT snowflake_timestamp(1, 'epoch=2020-02-30; fields=timestamp:41,sequence:22');
SELECT snowflake_timestamp(1, 'epoch=99999999999999999; fields=timestamp:41,sequence:22');
SELECT snowflake_timestamp(1, 'epoch=-99999999999999999; fields=timestamp:41,sequence:22');
SELECT snowflake_timestamp(1, 'sonyflake; unit=0');
SELECT snowflake_timestamp(1, 'sonyflake; unit=10s');
SELECT snowflake_timestamp(1, 'sonyflake; unit=86400001');
SELECT snowflake_timestamp(1, 'twitter; fields=timestamp:41,worker');
SELECT snowflake_timestamp(1, 'twitter; fields=timestamp:41,Worker:10');
SELECT snowflake_timestamp(1, 'twitter; fields=timestamp:41,worker:0');
SELECT snowflake_timestamp(1, 'twitter; fields=timestamp:41,worker:x');
SELECT snowflake_timestamp(1, 'twitter; fields=timestamp:65');
SELECT snowflake_timestamp(1, 'twitter; fields=worker:10,timestamp:41');
SELECT snowflake_timestamp(1, 'twitter; fields=timestamp:41,timestamp:1');
SELECT snowflake_timestamp(1, 'twitter; fields=timestamp:41,worker:5,worker:5');
SELECT snowflake_timestamp(1, 'twitter; fields=timestamp:41,sequence:5,sequence:5');
SELECT snowflake_timestamp(1, 'twitter; fields=timestamp:41,a:5,sequence:12,b:5');
SELECT snowflake_timestamp(1, 'twitter; fields=timestamp:30,a:1,b:1,c:1,d:1,e:1');
SELECT snowflake_timestamp(1, 'twitter; fields=timestamp:20,a:16,b:16');
SELECT snowflake_timestamp(1, 'twitter; fields=timestamp:40,node:12,sequence:13');
SELECT snowflake_timestamp(1, 'twitter; epoch=' || repeat('0', 390));
SELECT snowflake_timestamp(1, 'server; epoch=2020-01-01');
SELECT snowflake_timestamp(1, 'server; fields=timestamp:41,node:11,sequence:11');
SELECT snowflake_timestamp(1, 'server; fields=timestamp:41,sequence:12,node:10');
SELECT snowflake_timestamp(1, 'twitter; server');
SELECT snowflake_timestamp(1, 'serverx');
-- STRICT: a NULL layout gives NULL.
SELECT snowflake_timestamp(1, NULL) IS NULL AS null_layout,
       snowflake_compose('2020-01-01', 0, 0, NULL) IS NULL AS null_compose;
-- Out-of-range arguments with a layout.
SELECT snowflake_timestamp(-1, 'twitter');
SELECT snowflake_min_id('2010-01-01', 'twitter');
SELECT snowflake_min_id('2014-08-31 23:59:59.999+00', 'sonyflake');
SELECT snowflake_timestamp(9223372036854775807, 'epoch=9999-12-31; unit=86400000ms; fields=timestamp:63');
