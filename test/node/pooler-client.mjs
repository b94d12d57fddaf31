// Copyright: see LICENSE
//
// test/node/pooler-client.mjs
//	node-postgres through PgBouncer in transaction mode, for
//	test/t/045_pgbouncer.pl: CLIENTS connections at once, each running
//	TXNS transactions that insert a row of table drv keyed by DEFAULT
//	snowflake_nextval() (parameterized, unnamed: node-postgres prepares a
//	named statement only for a query given a "name", which a transaction
//	pooler does not carry over).  Prints "ok N failed M" and, for each
//	failure, "error SQLSTATE".
//
//	node pooler-client.mjs HOST PORT DB CLIENTS TXNS
import pg from 'pg';

const [host, port, database, clients, txns] = process.argv.slice(2);
let ok = 0;
const errors = [];
await Promise.all(Array.from({ length: Number(clients) }, async (_, c) => {
  const client = new pg.Client({ host, port: Number(port), database });
  await client.connect();
  for (let n = 0; n < Number(txns); n++) {
    try {
      await client.query('BEGIN');
      await client.query('INSERT INTO drv (driver, client, n) VALUES ($1, $2, $3) RETURNING id',
        ['node-postgres', c, n]);
      await client.query('COMMIT');
      ok++;
    } catch (e) {
      errors.push(e.code ?? String(e));
      await client.query('ROLLBACK').catch(() => {});
    }
  }
  await client.end();
}));
process.stdout.write(`ok ${ok} failed ${errors.length}\n` + errors.map((e) => `error ${e}\n`).join(''));
