/** Bytes of some sections together. */
export const sum = (sections: readonly Uint8Array[]) => sections.reduce((n, s) => n + s.byteLength, 0);

export const encoder = new TextEncoder();

/** JSON arrays (UTF-8) joined into one: their items between one pair of brackets. */
export function joinArrays(arrays: readonly Uint8Array[]): Uint8Array {
  const items = arrays.filter((a) => a.byteLength > 2).map((a) => a.subarray(1, a.byteLength - 1));
  const out = new Uint8Array(2 + sum(items) + Math.max(0, items.length - 1));
  out[0] = 0x5b;
  let at = 1;
  items.forEach((item, i) => {
    if (i > 0) out[at++] = 0x2c;
    out.set(item, at);
    at += item.byteLength;
  });
  out[at] = 0x5d;
  return out;
}
