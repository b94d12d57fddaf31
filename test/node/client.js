// Copyright: see LICENSE
//
// client.js
//	Read snowflake IDs through node-postgres (the npm "pg" package) and print
//	what JavaScript made of them, as JSON, for test/t/041_node_client.pl to
//	check against the server's own text of each ID.
//
//	node client.js default|js-safe    (connection from the PG* variables)
'use strict';

const { Client, types } = require('pg');
const { parseIdAsBigInt, parseIdAsNumber, idsAsStrings } = require('./snippet');

const QUERY = 'SELECT id, id::text AS text FROM snowflake_nextval_batch(200) AS id';

function clientWith(int8Parser) {
  if (!int8Parser) return new Client();
  return new Client({
    types: {
      getTypeParser: (oid, format) =>
        oid === types.builtins.INT8 ? int8Parser : types.getTypeParser(oid, format),
    },
  });
}

async function read(int8Parser) {
  const client = clientWith(int8Parser);
  await client.connect();
  try {
    const { rows } = await client.query(QUERY);
    return rows;
  } finally {
    await client.end();
  }
}

async function main(mode) {
  const out = { mode };
  if (mode === 'default') {
    const plain = await read(null);
    out.plain = plain.map((r) => ({ type: typeof r.id, id: r.id, text: r.text }));
    const big = await read(parseIdAsBigInt);
    out.bigint = big.map((r) => ({ type: typeof r.id, id: r.id.toString(), text: r.text }));
    // BigInt through JSON, as the snippet says: strings.
    const json = JSON.stringify({ ids: big.map((r) => r.id) }, idsAsStrings);
    out.bigint_json = JSON.parse(json).ids;
    out.bigint_json_back_equal = JSON.parse(json).ids.every((s, i) => BigInt(s) === big[i].id);
    try {
      JSON.stringify({ id: big[0].id });
      out.plain_stringify_of_bigint = 'no error';
    } catch (e) {
      out.plain_stringify_of_bigint = e.constructor.name;
    }
  } else if (mode === 'js-safe') {
    const rows = await read(parseIdAsNumber);
    out.number = rows.map((r) => ({ type: typeof r.id, safe: Number.isSafeInteger(r.id),
                                    id: String(r.id), text: r.text }));
    const json = JSON.stringify({ ids: rows.map((r) => r.id) });
    out.json = json;
    out.json_back_equal = JSON.parse(json).ids.every((n, i) => n === rows[i].id);
    // An ID above 2^53 is refused, not rounded.
    const client = clientWith(parseIdAsNumber);
    await client.connect();
    try {
      await client.query('SELECT 9007199254740993::bigint AS id');
      out.unsafe = 'accepted';
    } catch (e) {
      out.unsafe = `${e.constructor.name}: ${e.message}`;
    } finally {
      await client.end();
    }
  } else {
    throw new Error(`unknown mode ${mode}`);
  }
  process.stdout.write(JSON.stringify(out) + '\n');
}

main(process.argv[2]).catch((e) => {
  process.stderr.write(`${e.stack}\n`);
  process.exit(1);
});
