// Copyright: see LICENSE
//
// orm-run.mjs
//	Run one ORM recipe of docs/adoption/javascript.md and print what
//	JavaScript holds of its keys, as JSON, for test/t/047_js_orms.pl to
//	check against the server's own text of each key.
//
//	node orm-run.mjs MODULE    (MODULE exports placeOrders(); connection
//	                            from DATABASE_URL)
import { pathToFileURL } from 'node:url';

const { placeOrders } = await import(pathToFileURL(process.argv[2]).href);
const r = await placeOrders();

// typeof, and the value as JavaScript writes it: a rounded number would
// show here as other digits than the server's.
const key = (row) => ({ type: typeof row.id, id: String(row.id), customer: row.customer });
process.stdout.write(JSON.stringify({
  first: key(r.first),
  more: r.more.map(key),
  all: r.all.map(key),
  made: { ts: r.made.ts.toISOString(), node_id: r.made.node_id },
  // The first key's text form and the row found again by it.
  text: { publicId: r.publicId, found: key(r.found) },
}) + '\n');
// The recipes keep their pools open, as an application does.
process.exit(0);
