const { types } = require('pg');

// bigint (int8) columns arrive as strings by default: exact, never rounded.
// A JavaScript number holds integers exactly only up to 2^53 - 1, and IDs of
// the default layout (41/10/12) are far above that.  So:
//
// - default layout: keep IDs as strings (the default), or parse them as
//   BigInt, and write them into JSON as strings;
// - JavaScript-safe layout (41/7/5, every ID below 2^53): parse them as
//   numbers, refusing any that is not a safe integer.
const parseIdAsBigInt = (text) => BigInt(text);
const parseIdAsNumber = (text) => {
  const n = Number(text);
  if (!Number.isSafeInteger(n)) {
    throw new RangeError(`bigint ${text} does not fit a JavaScript number`);
  }
  return n;
};
// JSON has no BigInt: JSON.stringify throws on one unless told what to write.
const idsAsStrings = (key, value) =>
  typeof value === 'bigint' ? value.toString() : value;

// Per client: new Client({ types: { getTypeParser: (oid, format) =>
//   oid === types.builtins.INT8 ? parseIdAsNumber : types.getTypeParser(oid, format) } })
// or for the whole process: types.setTypeParser(types.builtins.INT8, parseIdAsNumber);
module.exports = { parseIdAsBigInt, parseIdAsNumber, idsAsStrings };
