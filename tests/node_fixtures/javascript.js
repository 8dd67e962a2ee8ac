// What JavaScript itself says, for tests/test_javascript.py: reads one JSON request on stdin, answers on stdout.
//   {"numbers": [hex bit patterns of doubles]}      -> {"numbers": [String(x), ...]}
//   {"values": [JSON texts]}                        -> {"values": [[String(JSON.parse(t)), !!JSON.parse(t)], ...]}
//   {"parse": [texts]}                              -> {"parse": [true if JSON.parse accepts it, ...]}
//   {"pairs": [[a, b], ...]}                        -> {"pairs": [Math.sign(a.localeCompare(b)), ...]}
//   {"canonical": [JSON texts]}                     -> {"canonical": [JSON.stringify, every object's keys sorted, written out]}
//   {"mainline": [JSON texts]}                      -> {"mainline": [[maka's canonicalizeMainlineV1 text, sha256 of it], ...]}
//   {"stable": [JSON texts]}                        -> {"stable": [maka's stableJsonStringify text, ...]}
//   {"frames": [JSON texts of frame lists]}         -> {"frames": [sha256 of the frames as maka's boundary digests frame them, ...]}
const request = JSON.parse(require('fs').readFileSync(0, 'utf8'));
const answer = {};
const buffer = Buffer.alloc(8);
if (request.numbers) answer.numbers = request.numbers.map((hex) => { buffer.writeBigUInt64BE(BigInt('0x' + hex)); return String(buffer.readDoubleBE(0)); });
if (request.values) answer.values = request.values.map((text) => { const value = JSON.parse(text); return [String(value), !!value]; });
if (request.parse) answer.parse = request.parse.map((text) => { try { JSON.parse(text); return true; } catch { return false; } });
if (request.pairs) answer.pairs = request.pairs.map(([a, b]) => Math.sign(a.localeCompare(b)));
// (written out key by key: an object rebuilt in sorted order would put its array-index keys, "0", "1", first)
const canonical = (value) => Array.isArray(value) ? '[' + value.map(canonical).join(',') + ']'
  : value !== null && typeof value === 'object' ? '{' + Object.keys(value).sort().map((key) => JSON.stringify(key) + ':' + canonical(value[key])).join(',') + '}'
  : JSON.stringify(value);
if (request.canonical) answer.canonical = request.canonical.map((text) => canonical(JSON.parse(text)));
// maka's own (maka:packages/core/src/tool-args-identity.ts at f19eede03), verbatim but for its types.
function canonicalizeMainlineV1(value, parentKey) {
  if (value === null || typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') {
    return value;
  }
  if (Array.isArray(value)) {
    const items = value.map((item) => canonicalizeMainlineV1(item));
    return parentKey === 'required' || parentKey === 'enum'
      ? items.slice().sort((a, b) => JSON.stringify(canonicalizeMainlineV1(a)).localeCompare(JSON.stringify(canonicalizeMainlineV1(b))))
      : items;
  }
  const record = value;
  const result = {};
  for (const key of Object.keys(record).sort()) {
    if (key === '__proto__') continue;
    result[key] = canonicalizeMainlineV1(record[key], key);
  }
  return result;
}
const sha256 = (text) => 'sha256:' + require('crypto').createHash('sha256').update(text).digest('hex');
// maka's own (maka:packages/core/src/tool-args-identity.ts at f19eede03: stableJsonStringify, canonicalizeStrictJson
// without its checks of what JSON.parse never makes), verbatim but for its types.
function canonicalizeStrictJson(value) {
  if (value === null || typeof value === 'string' || typeof value === 'boolean' || typeof value === 'number') return value;
  if (Array.isArray(value)) return value.map(canonicalizeStrictJson);
  const result = Object.create(null);
  for (const key of Object.keys(value).sort()) result[key] = canonicalizeStrictJson(value[key]);
  return result;
}
const stableJsonStringify = (value) => JSON.stringify(canonicalizeStrictJson(value));
if (request.stable) answer.stable = request.stable.map((text) => stableJsonStringify(JSON.parse(text)));
// maka's framing (maka:packages/core/src/runtime-boundary.ts at f19eede03: updateLengthPrefixed, uint64be): a string
// length-prefixed, a number as 8 bytes big-endian, a list as its items in turn.
function uint64be(value) { const bytes = Buffer.allocUnsafe(8); bytes.writeBigUInt64BE(BigInt(value)); return bytes; }
function frame(hash, item) {
  if (Array.isArray(item)) { for (const inner of item) frame(hash, inner); return; }
  if (typeof item === 'number') { hash.update(uint64be(item)); return; }
  const bytes = Buffer.from(item, 'utf8');
  hash.update(uint64be(bytes.byteLength));
  hash.update(bytes);
}
if (request.frames) answer.frames = request.frames.map((text) => { const hash = require('crypto').createHash('sha256'); frame(hash, JSON.parse(text)); return 'sha256:' + hash.digest('hex'); });
if (request.mainline) answer.mainline = request.mainline.map((text) => { const body = JSON.stringify(canonicalizeMainlineV1(JSON.parse(text))); return [body, sha256(body)]; });
process.stdout.write(JSON.stringify(answer));
