--
-- convert: snowflake_convert_column() turns serial and identity keys into
-- snowflake keys, widening every referencing column, in the caller's
-- transaction, without touching a stored value.
--
SET timezone = 'UTC';
-- Error context would show line numbers inside the function: leave it out.
\set SHOW_CONTEXT never

-- A serial key with a chain of foreign keys: customers <- profiles (whose
-- key is also a foreign key) <- photos, and orders; a smallint reference too.
CREATE TABLE customers (id serial PRIMARY KEY, name text);
CREATE TABLE profiles (customer_id integer PRIMARY KEY REFERENCES customers, bio text);
CREATE TABLE photos (id bigserial PRIMARY KEY,
                     customer_id integer NOT NULL REFERENCES profiles);
CREATE TABLE orders (id serial PRIMARY KEY, customer_id integer REFERENCES customers,
                     rep smallint REFERENCES customers);
INSERT INTO customers (name) VALUES ('ann'), ('bob'), ('cy');
INSERT INTO profiles VALUES (1, 'hi'), (2, 'yo');
INSERT INTO photos (customer_id) VALUES (1), (1), (2);
INSERT INTO orders (customer_id, rep) VALUES (1, 3), (2, 3), (3, NULL);
CREATE TEMP TABLE before AS
    SELECT 'customers'::text AS t, id::bigint AS a, NULL::bigint AS b FROM customers
    UNION ALL SELECT 'profiles', customer_id, NULL FROM profiles
    UNION ALL SELECT 'photos', id, customer_id FROM photos
    UNION ALL SELECT 'orders', id, customer_id FROM orders;

-- The integer columns of the four tables, with their types and defaults
-- (a view on the catalogs only: a view on a converted column would block
-- the conversion).
CREATE TEMP VIEW integer_columns AS
SELECT c.relname, a.attname, format_type(a.atttypid, a.atttypmod) AS type,
       pg_get_expr(d.adbin, d.adrelid) AS "default"
  FROM pg_class c
  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attnum > 0
  LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
 WHERE c.relname IN ('customers', 'profiles', 'photos', 'orders')
   AND a.atttypid IN ('int2'::regtype, 'int4'::regtype, 'int8'::regtype);

-- A dry run lists the statements and changes nothing.
SELECT * FROM snowflake_convert_column('customers', 'id', dry_run => true);
SELECT * FROM integer_columns ORDER BY 1, 2;
SELECT to_regclass('customers_id_seq') IS NOT NULL AS sequence_kept;

-- A view on a column that would be widened blocks the conversion: the
-- error names it and nothing changes.
CREATE VIEW photo_owners AS SELECT DISTINCT customer_id FROM photos;
CREATE TABLE settings (customer_id integer REFERENCES customers,
                       doubled integer GENERATED ALWAYS AS (customer_id * 2) STORED);
SELECT * FROM snowflake_convert_column('customers', 'id');
DROP VIEW photo_owners;
DROP TABLE settings;

-- The conversion, in a transaction: it takes ACCESS EXCLUSIVE locks on the
-- tables it changes and holds them to the end of the caller's transaction.
BEGIN;
SELECT * FROM snowflake_convert_column('customers', 'id');
SELECT c.relname, l.mode
  FROM pg_locks l JOIN pg_class c ON c.oid = l.relation
 WHERE l.pid = pg_backend_pid() AND l.locktype = 'relation'
   AND c.relkind IN ('r', 'p') AND l.mode = 'AccessExclusiveLock'
 ORDER BY 1;
-- A rollback undoes it all.
ROLLBACK;
SELECT format_type(atttypid, atttypmod) AS customers_id_type
  FROM pg_attribute WHERE attrelid = 'customers'::regclass AND attname = 'id';

SELECT * FROM snowflake_convert_column('customers', 'id');
SELECT * FROM integer_columns ORDER BY 1, 2;
SELECT to_regclass('customers_id_seq') IS NULL AS sequence_dropped;
-- Every stored value is unchanged.
(SELECT * FROM before
 EXCEPT ALL
 (SELECT 'customers'::text, id, NULL::bigint FROM customers
  UNION ALL SELECT 'profiles', customer_id, NULL FROM profiles
  UNION ALL SELECT 'photos', id, customer_id FROM photos
  UNION ALL SELECT 'orders', id, customer_id FROM orders))
UNION ALL
SELECT 'rows', count(*), NULL FROM before;
-- New rows get snowflake IDs, above the old ones, and the foreign keys hold.
WITH c AS (INSERT INTO customers (name) VALUES ('dee') RETURNING id)
INSERT INTO profiles SELECT id, 'new' FROM c;
SELECT count(*) AS new_rows,
       bool_and(snowflake_node_id(id) = 7) AS minted_here,
       bool_and(id > 3) AS above_old
  FROM customers WHERE name = 'dee';
INSERT INTO photos (customer_id) SELECT id FROM customers WHERE name = 'dee';
-- The smallint that referenced customers holds a snowflake ID now.
INSERT INTO orders (customer_id, rep) SELECT id, id FROM customers WHERE name = 'dee';
SELECT count(*) AS orders_of_dee FROM orders o JOIN customers c ON c.id = o.rep
 WHERE c.name = 'dee' AND o.customer_id = c.id;

-- bigserial: nothing to widen, no table rewrite; the sequence goes.
CREATE TABLE events (id bigserial PRIMARY KEY, what text);
INSERT INTO events (what) VALUES ('a'), ('b');
SELECT relfilenode AS events_file FROM pg_class WHERE relname = 'events' \gset
SELECT * FROM snowflake_convert_column('events', 'id');
SELECT relfilenode = :events_file AS not_rewritten FROM pg_class WHERE relname = 'events';
INSERT INTO events (what) VALUES ('c');
SELECT what, id < 3 AS old_id FROM events ORDER BY id;

-- IDENTITY ALWAYS, referenced by its own table: the identity goes, the
-- column keeps its values and gets the default.
CREATE TABLE tree (id integer GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
                   parent_id integer REFERENCES tree, label text);
INSERT INTO tree (parent_id, label) VALUES (NULL, 'root'), (1, 'leaf');
SELECT * FROM snowflake_convert_column('tree', 'id');
SELECT attidentity = '' AS no_identity, format_type(atttypid, atttypmod) AS type
  FROM pg_attribute WHERE attrelid = 'tree'::regclass AND attname = 'id';
INSERT INTO tree (parent_id, label) VALUES (2, 'new leaf');
SELECT label, id <= 2 AS old_id, parent_id FROM tree WHERE id <= 2 ORDER BY id;
SELECT count(*) AS new_leaves FROM tree WHERE parent_id = 2 AND id > 2;
SELECT count(*) AS identity_sequences FROM pg_class WHERE relname = 'tree_id_seq';

-- IDENTITY BY DEFAULT on a smallint.
CREATE TABLE tags (id smallint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY, tag text);
INSERT INTO tags (tag) VALUES ('x');
SELECT * FROM snowflake_convert_column('tags', 'id', true);

-- A partitioned table (the key is not in the partition key), referenced by
-- a composite foreign key: partitions follow their parent.
CREATE TABLE readings (id serial, at date, value float8, PRIMARY KEY (id, at))
    PARTITION BY RANGE (at);
CREATE TABLE readings_2024 PARTITION OF readings
    FOR VALUES FROM ('2024-01-01') TO ('2025-01-01');
CREATE TABLE readings_rest PARTITION OF readings DEFAULT;
CREATE TABLE notes (reading_id integer, reading_at date, note text,
                    FOREIGN KEY (reading_id, reading_at) REFERENCES readings);
INSERT INTO readings (at, value) VALUES ('2024-05-01', 1), ('2026-05-01', 2);
INSERT INTO notes VALUES (1, '2024-05-01', 'n');
SELECT * FROM snowflake_convert_column('readings', 'id');
SELECT c.relname, format_type(a.atttypid, a.atttypmod) AS type,
       pg_get_expr(d.adbin, d.adrelid) AS "default"
  FROM pg_class c
  JOIN pg_attribute a ON a.attrelid = c.oid AND a.attname IN ('id', 'reading_id')
  LEFT JOIN pg_attrdef d ON d.adrelid = c.oid AND d.adnum = a.attnum
 WHERE c.relname IN ('readings', 'readings_2024', 'readings_rest', 'notes')
 ORDER BY 1;
INSERT INTO readings (at, value) VALUES ('2024-06-01', 3), ('2027-01-01', 4);
SELECT value, id <= 2 AS old_id FROM readings ORDER BY value;

-- A partition's column is converted through its parent.
SELECT * FROM snowflake_convert_column('readings_2024', 'id');

-- A partition key cannot change type.
CREATE TABLE logs (id serial PRIMARY KEY) PARTITION BY RANGE (id);
SELECT * FROM snowflake_convert_column('logs', 'id');

-- A sequence something else uses is kept, with a notice.
CREATE TABLE shared (id serial PRIMARY KEY, copy integer);
ALTER TABLE shared ALTER COLUMN copy SET DEFAULT nextval('shared_id_seq');
SELECT * FROM snowflake_convert_column('shared', 'id');
SELECT to_regclass('shared_id_seq') IS NOT NULL AS sequence_kept;

-- Refusals, each changing nothing.
CREATE TABLE labels (code text PRIMARY KEY);
SELECT * FROM snowflake_convert_column('labels', 'code');
SELECT * FROM snowflake_convert_column('labels', 'nothing');
SELECT * FROM snowflake_convert_column('no_such_table', 'id');
CREATE VIEW customer_names AS SELECT id, name FROM customers;
SELECT * FROM snowflake_convert_column('customer_names', 'id');
-- A value at or above the IDs minted now would sort after new keys.
CREATE TABLE imported (id bigint PRIMARY KEY);
INSERT INTO imported VALUES (1), (9000000000000000000);
SELECT * FROM snowflake_convert_column('imported', 'id');
SELECT pg_get_expr(adbin, adrelid) AS imported_default
  FROM pg_attrdef WHERE adrelid = 'imported'::regclass;
-- It runs with the caller's privileges: a role that does not own the table
-- cannot convert it.
CREATE ROLE regress_convert_stranger;
CREATE ROLE regress_convert_owner;
GRANT SELECT ON imported TO regress_convert_stranger;
DELETE FROM imported WHERE id > 1;
ALTER TABLE imported OWNER TO regress_convert_owner;
SET ROLE regress_convert_stranger;
SELECT * FROM snowflake_convert_column('imported', 'id');
RESET ROLE;
SELECT pg_get_expr(adbin, adrelid) AS imported_default
  FROM pg_attrdef WHERE adrelid = 'imported'::regclass;
ALTER TABLE imported OWNER TO CURRENT_USER;
REVOKE SELECT ON imported FROM regress_convert_stranger;
DROP ROLE regress_convert_stranger, regress_convert_owner;
-- A table of another role in the key's chain (1.3): converting would
-- rewrite it, running what its owner wrote into it (a CHECK constraint)
-- as the caller, a superuser here: refused, naming it, before anything
-- changes, dry run or not.  Its owner converts it.
CREATE ROLE regress_convert_other;
GRANT CREATE ON SCHEMA public TO regress_convert_other;
CREATE TABLE vendors (id serial PRIMARY KEY, name text);
GRANT REFERENCES ON vendors TO regress_convert_other;
SET ROLE regress_convert_other;
CREATE TABLE vendor_notes (vendor_id integer REFERENCES vendors, note text CHECK (note <> ''));
RESET ROLE;
SELECT * FROM snowflake_convert_column('vendors', 'id');
SELECT * FROM snowflake_convert_column('vendors', 'id', dry_run => true);
SELECT attrelid::regclass, format_type(atttypid, NULL) FROM pg_attribute
 WHERE attrelid IN ('vendors'::regclass, 'vendor_notes'::regclass) AND attname IN ('id', 'vendor_id')
 ORDER BY 1;
ALTER TABLE vendors OWNER TO regress_convert_other;
SET ROLE regress_convert_other;
SELECT * FROM snowflake_convert_column('vendors', 'id');
RESET ROLE;
DROP TABLE vendor_notes, vendors;
REVOKE CREATE ON SCHEMA public FROM regress_convert_other;
DROP ROLE regress_convert_other;
-- NULL arguments: the function is STRICT and does nothing.
SELECT count(*) FROM snowflake_convert_column('imported', NULL);

DROP TABLE photos, profiles, orders, customers, events, tree, tags, notes,
    readings, logs, shared, labels, imported CASCADE;
