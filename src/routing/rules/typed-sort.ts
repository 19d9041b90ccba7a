/**
 * In-place ascending sort of a typed-array range, in plain JavaScript. V8's own
 * `TypedArray.prototype.sort` costs tens of ns per element on the few hundred numbers a route
 * sorts; a JIT-compiled quicksort costs a few. With `keepFrom`, only `[keepFrom, end)` is
 * guaranteed sorted (and to hold the largest values): partitions entirely below are left alone,
 * which is what a top-k query needs.
 */
export function sortRange(a: Float64Array | Int32Array, start: number, end: number, keepFrom = start): void {
  while (end - start > 16) {
    const mid = (start + end) >>> 1;
    const x = a[start]!;
    const y = a[mid]!;
    const z = a[end - 1]!;
    const pivot = x < y ? (y < z ? y : Math.max(x, z)) : x < z ? x : Math.max(y, z);
    let i = start;
    let j = end - 1;
    while (i <= j) {
      while (a[i]! < pivot) i++;
      while (a[j]! > pivot) j--;
      if (i <= j) {
        const swap = a[i]!;
        a[i++] = a[j]!;
        a[j--] = swap;
      }
    }
    // [start, j] ≤ pivot ≤ [i, end): recurse into the smaller side, loop on the other.
    if (j + 1 - start < end - i) {
      if (j + 1 > keepFrom) sortRange(a, start, j + 1, keepFrom);
      start = i;
    } else {
      if (end > keepFrom && i < end) sortRange(a, i, end, keepFrom);
      if (j + 1 <= keepFrom) return;
      end = j + 1;
    }
  }
  for (let i = start + 1; i < end; i++) {
    const value = a[i]!;
    let j = i - 1;
    while (j >= start && a[j]! > value) {
      a[j + 1] = a[j]!;
      j--;
    }
    a[j + 1] = value;
  }
}
