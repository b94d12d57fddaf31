// Copyright: see LICENSE
//
// orm-pitfalls.mjs
//	What docs/adoption/javascript.md warns of, shown against a real server
//	for test/t/047_js_orms.pl, which checks the JSON this prints.  The
//	connection comes from DATABASE_URL; the database has the extension.
//
//	node orm-pitfalls.mjs drizzle-number
//	    1,000 keys made in one statement, read through a Drizzle column
//	    of mode 'number': {"keys": distinct keys on the server,
//	    "numbers": distinct numbers JavaScript holds}
//	node orm-pitfalls.mjs sequelize-no-default
//	    Sequelize model whose bigint primary key has no defaultValue:
//	    {"code": the SQLSTATE of the failed create()}
//	node orm-pitfalls.mjs mikroorm-autoincrement
//	    MikroORM entity whose bigint primary key has defaultRaw but not
//	    autoincrement: false, its table created by the schema generator:
//	    {"column": the column's type and default as the server has them}
import { sql } from 'drizzle-orm';
import { drizzle } from 'drizzle-orm/node-postgres';
import { bigint, pgTable } from 'drizzle-orm/pg-core';
import { EntitySchema, MikroORM } from '@mikro-orm/postgresql';
import { DataTypes, Sequelize } from 'sequelize';

const url = process.env.DATABASE_URL;
const out = (o) => process.stdout.write(JSON.stringify(o) + '\n');

async function drizzleNumber() {
  const db = drizzle(url);
  await db.execute(sql`CREATE TABLE drizzle_numbers (id bigint PRIMARY KEY DEFAULT snowflake_nextval())`);
  await db.execute(sql`INSERT INTO drizzle_numbers SELECT FROM generate_series(1, 1000)`);
  const t = pgTable('drizzle_numbers', { id: bigint('id', { mode: 'number' }).primaryKey() });
  const rows = await db.select().from(t);
  const { rows: [server] } = await db.execute(sql`SELECT count(DISTINCT id) AS n FROM drizzle_numbers`);
  out({ keys: Number(server.n), rows: rows.length, numbers: new Set(rows.map((r) => r.id)).size });
}

async function sequelizeNoDefault() {
  const sequelize = new Sequelize(url, { logging: false });
  const Order = sequelize.define('Order', {
    id: { type: DataTypes.BIGINT, primaryKey: true },
  }, { tableName: 'sequelize_no_default', timestamps: false });
  await sequelize.query('CREATE TABLE sequelize_no_default (id bigint PRIMARY KEY DEFAULT snowflake_nextval())');
  try {
    await Order.create({});
    out({ code: 'none' });
  } catch (e) {
    out({ code: e.parent?.code ?? String(e) });
  }
}

async function mikroormAutoincrement() {
  const Plain = new EntitySchema({
    name: 'Plain',
    tableName: 'mikro_plain',
    properties: { id: { type: 'bigint', primary: true, defaultRaw: 'snowflake_nextval()' } },
  });
  const orm = await MikroORM.init({ clientUrl: url, entities: [Plain] });
  await orm.schema.updateSchema({ safe: true });
  const [column] = await orm.em.execute(
    `SELECT format_type(atttypid, atttypmod) AS type, pg_get_expr(adbin, adrelid) AS "default"
       FROM pg_attribute JOIN pg_attrdef ON adrelid = attrelid AND adnum = attnum
      WHERE attrelid = 'mikro_plain'::regclass AND attname = 'id'`);
  out({ column: `${column.type} ${column.default}` });
}

const what = { 'drizzle-number': drizzleNumber, 'sequelize-no-default': sequelizeNoDefault,
  'mikroorm-autoincrement': mikroormAutoincrement }[process.argv[2]];
if (!what) throw new Error(`unknown: ${process.argv[2]}`);
await what();
process.exit(0);
