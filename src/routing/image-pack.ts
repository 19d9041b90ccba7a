/**
 * Plain data with typed arrays as one byte buffer (docs/scaling.md, "How a version is stored"):
 * the shape as JSON, each typed array's bytes after it. A stored router is mostly typed
 * arrays, and a buffer crosses storage and RPC as one copy, where structured clone walks every
 * object and string of the shape.
 *
 * - Unpacking copies each array out of the buffer: a view would keep the whole buffer alive (a
 *   shard's buffer is mostly its buckets, which a load copies into the classifier's arrays), and
 *   the arrays a head holds are small.
 * - Integer arrays whose values fit a narrower type travel narrow and are widened on unpacking
 *   (a copy, of arrays that are small: indexes and counts within one shard).
 * - NaN and ±Infinity survive (JSON alone would make them null); `undefined` properties are
 *   dropped, as Workers RPC drops them.
 */

type Typed = Int8Array | Uint8Array | Int16Array | Uint16Array | Int32Array | Uint32Array | Float32Array | Float64Array;

const TYPES = [Int8Array, Uint8Array, Int16Array, Uint16Array, Int32Array, Uint32Array, Float32Array, Float64Array];
const NARROWER: readonly (typeof TYPES)[number][] = [Uint8Array, Int8Array, Uint16Array, Int16Array];

const typeCode = (a: Typed): number => {
  const code = TYPES.findIndex((T) => a instanceof T);
  if (code < 0) throw new TypeError("unsupported typed array");
  return code;
};

/** The narrowest of NARROWER that holds every value of an Int32Array or Uint32Array, or null. */
function narrowType(a: Typed): number | null {
  if (!(a instanceof Int32Array || a instanceof Uint32Array) || a.length === 0) return null;
  let min = a[0]!;
  let max = min;
  for (let i = 1; i < a.length; i++) {
    const v = a[i]!;
    if (v < min) min = v;
    else if (v > max) max = v;
  }
  for (const T of NARROWER) {
    const bits = 8 * T.BYTES_PER_ELEMENT;
    const signed = T === Int8Array || T === Int16Array;
    const lo = signed ? -(2 ** (bits - 1)) : 0;
    const hi = signed ? 2 ** (bits - 1) - 1 : 2 ** bits - 1;
    if (min >= lo && max <= hi) return TYPES.indexOf(T);
  }
  return null;
}

const align8 = (n: number) => (n + 7) & ~7;

/** Where a typed array or a non-finite number stood in the value: its path, then what it was. */
type Patch = [path: (string | number)[], array: [code: number, stored: number, offset: number, count: number] | string];

/**
 * Packs plain data (objects, arrays, strings, numbers, booleans, null, typed arrays). The JSON
 * holds the value with null where a typed array or a non-finite number was, and a list of
 * patches saying what goes there, so unpacking parses without a reviver.
 */
export function packValue(value: unknown): Uint8Array {
  const arrays: { bytes: Uint8Array; offset: number }[] = [];
  const patches: Patch[] = [];
  let size = 0;
  const path: (string | number)[] = [];
  const walk = (v: unknown): unknown => {
    if (typeof v === "number" && !Number.isFinite(v)) {
      patches.push([[...path], String(v)]);
      return null;
    }
    if (v === null || typeof v !== "object") return v;
    if (ArrayBuffer.isView(v)) {
      const a = v as Typed;
      const narrow = narrowType(a);
      const stored = narrow === null ? a : new TYPES[narrow]!(a);
      arrays.push({ bytes: new Uint8Array(stored.buffer, stored.byteOffset, stored.byteLength), offset: size });
      patches.push([[...path], [typeCode(a), narrow ?? typeCode(a), size, a.length]]);
      size = align8(size + stored.byteLength);
      return null;
    }
    if (Array.isArray(v)) {
      // Arrays of strings (names, texts) are most of the shape and hold nothing to patch.
      if (v.every((x) => typeof x === "string")) return v;
      return v.map((x, i) => {
        path.push(i);
        const out = walk(x);
        path.pop();
        return out;
      });
    }
    const out: Record<string, unknown> = {};
    for (const [key, x] of Object.entries(v)) {
      if (x === undefined) continue;
      path.push(key);
      out[key] = walk(x);
      path.pop();
    }
    return out;
  };
  const shape = walk(value);
  const text = new TextEncoder().encode(JSON.stringify([shape, patches]));
  const start = align8(4 + text.byteLength);
  const out = new Uint8Array(start + size);
  new DataView(out.buffer).setUint32(0, text.byteLength, true);
  out.set(text, 4);
  for (const { bytes, offset } of arrays) out.set(bytes, start + offset);
  return out;
}

/** Unpacks what `packValue` packed; its typed arrays are copies, none a view on `bytes`. */
export function unpackValue<T>(bytes: Uint8Array): T {
  const length = new DataView(bytes.buffer, bytes.byteOffset, 4).getUint32(0, true);
  const start = align8(4 + length);
  const [shape, patches] = JSON.parse(new TextDecoder().decode(bytes.subarray(4, 4 + length))) as [unknown, Patch[]];
  let root = shape;
  for (const [path, what] of patches) {
    let value: unknown;
    if (typeof what === "string") value = Number(what);
    else {
      const [code, storedCode, offset, count] = what;
      const Stored = TYPES[storedCode]!;
      const view = new Stored(bytes.slice(start + offset, start + offset + count * Stored.BYTES_PER_ELEMENT).buffer);
      value = code === storedCode ? view : new TYPES[code]!(view);
    }
    if (path.length === 0) root = value;
    else {
      let parent = root as Record<string | number, unknown>;
      for (let i = 0; i < path.length - 1; i++) parent = parent[path[i]!] as Record<string | number, unknown>;
      parent[path[path.length - 1]!] = value;
    }
  }
  return root as T;
}
