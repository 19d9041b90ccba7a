/**
 * Aho–Corasick over UTF-16 code units, built once per registry version. Every keyword and every
 * literal factor of every agent is one entry, so one pass over the input finds all of them.
 *
 * The alphabet is compressed to the code units that occur in entries (class 0 = any other unit,
 * which always leads back to the root). The class map also folds what the scanner must treat as
 * equal without lower-casing the input first: ASCII upper case, `ſ`→`s` and `K`→`k` (what a
 * case-insensitive `u` regex equates with ASCII letters), `ς`→`σ`, and every `\s` unit to the
 * space class. When states × classes fits the budget, transitions are a dense DFA table (one
 * read per input unit); otherwise sorted child lists with failure links (amortised ≤ 2 steps).
 */
import { WHITESPACE } from "./text";

/** The built automaton; entry ids are indexes into the `entries` given to {@link buildAutomaton}. */
export interface Automaton {
  /** Code unit → class (0 = not in any entry). */
  readonly classOf: Uint16Array;
  readonly classCount: number;
  readonly stateCount: number;
  /** Dense DFA: `dense[state * classCount + class]`, or null when the sparse form is used. */
  readonly dense: Int32Array | null;
  readonly fail: Int32Array;
  readonly childStart: Int32Array;
  readonly childClass: Uint16Array;
  readonly childTarget: Int32Array;
  /** The entry ending exactly at a state, or −1. */
  readonly stateEntry: Int32Array;
  /** The nearest state on the failure chain that ends an entry, or −1. */
  readonly dictLink: Int32Array;
  /** First state of a state's output chain (itself or its dictionary link), or −1: the scanner's only per-unit check. */
  readonly outFirst: Int32Array;
  /** Entry length in code units. */
  readonly entryLength: Int32Array;
  readonly memoryBytes: number;
}

/** Dense tables above this many cells (4 bytes each) fall back to the sparse form. */
export const DENSE_CELL_LIMIT = 2_000_000;

const FOLDED_INTO: ReadonlyArray<[from: number, to: number]> = [
  [0x017f, 0x73], // ſ → s
  [0x212a, 0x6b], // K (Kelvin) → k
  [0x03c2, 0x03c3], // ς → σ
];

function buildClassMap(entries: readonly string[]): { classOf: Uint16Array; classCount: number } {
  const classOf = new Uint16Array(65536);
  let classCount = 1;
  for (const entry of entries) {
    for (let i = 0; i < entry.length; i++) {
      const unit = entry.charCodeAt(i);
      if (classOf[unit] === 0) classOf[unit] = classCount++;
    }
  }
  if (classCount > 65535) throw new RangeError("too many distinct characters in keywords");
  for (let unit = 0x61; unit <= 0x7a; unit++) if (classOf[unit] !== 0) classOf[unit - 32] = classOf[unit]!;
  for (const [from, to] of FOLDED_INTO) if (classOf[to] !== 0) classOf[from] = classOf[to]!;
  const space = classOf[0x20]!;
  if (space !== 0) for (let unit = 0; unit < 65536; unit++) if (WHITESPACE[unit] === 1) classOf[unit] = space;
  return { classOf, classCount };
}

/** Builds the automaton for distinct, non-empty entries (already normalised by the caller). */
export function buildAutomaton(entries: readonly string[], denseCellLimit = DENSE_CELL_LIMIT): Automaton {
  const { classOf, classCount } = buildClassMap(entries);
  const edges = new Map<number, number>();
  const edgeParent: number[] = [];
  const edgeClass: number[] = [];
  const edgeChild: number[] = [];
  const stateEntryList: number[] = [-1];
  let stateCount = 1;
  const entryLength = new Int32Array(entries.length);
  entries.forEach((entry, id) => {
    let state = 0;
    for (let i = 0; i < entry.length; i++) {
      const cls = classOf[entry.charCodeAt(i)]!;
      const key = state * classCount + cls;
      let next = edges.get(key);
      if (next === undefined) {
        next = stateCount++;
        edges.set(key, next);
        edgeParent.push(state);
        edgeClass.push(cls);
        edgeChild.push(next);
        stateEntryList.push(-1);
      }
      state = next;
    }
    stateEntryList[state] = id;
    entryLength[id] = entry.length;
  });

  // Children as sorted lists (CSR), for the BFS and for the sparse form.
  const childStart = new Int32Array(stateCount + 1);
  for (const parent of edgeParent) childStart[parent + 1]!++;
  for (let s = 0; s < stateCount; s++) childStart[s + 1]! += childStart[s]!;
  const fill = childStart.slice(0, stateCount);
  const childClass = new Uint16Array(edgeParent.length);
  const childTarget = new Int32Array(edgeParent.length);
  edgeParent.forEach((parent, e) => {
    const at = fill[parent]!++;
    childClass[at] = edgeClass[e]!;
    childTarget[at] = edgeChild[e]!;
  });
  sortChildren(childStart, childClass, childTarget, stateCount);

  const stateEntry = Int32Array.from(stateEntryList);
  const fail = new Int32Array(stateCount);
  const dictLink = new Int32Array(stateCount).fill(-1);
  const useDense = stateCount * classCount <= denseCellLimit;
  const dense = useDense ? new Int32Array(stateCount * classCount) : null;
  const queue = new Int32Array(stateCount);
  let head = 0;
  let tail = 0;
  queue[tail++] = 0;
  while (head < tail) {
    const state = queue[head++]!;
    if (dense !== null && state !== 0) dense.copyWithin(state * classCount, fail[state]! * classCount, (fail[state]! + 1) * classCount);
    for (let c = childStart[state]!; c < childStart[state + 1]!; c++) {
      const cls = childClass[c]!;
      const child = childTarget[c]!;
      if (dense !== null) dense[state * classCount + cls] = child;
      if (state !== 0) {
        let f = fail[state]!;
        let target = edges.get(f * classCount + cls);
        while (target === undefined && f !== 0) {
          f = fail[f]!;
          target = edges.get(f * classCount + cls);
        }
        fail[child] = target ?? 0;
      }
      const suffix = fail[child]!;
      dictLink[child] = stateEntry[suffix]! >= 0 ? suffix : dictLink[suffix]!;
      queue[tail++] = child;
    }
  }
  const outFirst = new Int32Array(stateCount);
  for (let s = 0; s < stateCount; s++) outFirst[s] = stateEntry[s]! >= 0 ? s : dictLink[s]!;

  const arrays = [classOf, dense, fail, childStart, childClass, childTarget, stateEntry, dictLink, outFirst, entryLength];
  const memoryBytes = arrays.reduce((sum, a) => sum + (a?.byteLength ?? 0), 0);
  return { classOf, classCount, stateCount, dense, fail, childStart, childClass, childTarget, stateEntry, dictLink, outFirst, entryLength, memoryBytes };
}

function sortChildren(start: Int32Array, classes: Uint16Array, targets: Int32Array, stateCount: number): void {
  for (let s = 0; s < stateCount; s++) {
    for (let i = start[s]! + 1; i < start[s + 1]!; i++) {
      const cls = classes[i]!;
      const target = targets[i]!;
      let j = i - 1;
      while (j >= start[s]! && classes[j]! > cls) {
        classes[j + 1] = classes[j]!;
        targets[j + 1] = targets[j]!;
        j--;
      }
      classes[j + 1] = cls;
      targets[j + 1] = target;
    }
  }
}

/** The child of `state` on `cls`, or −1 (binary search in the sorted child list). */
function childOf(a: Automaton, state: number, cls: number): number {
  let lo = a.childStart[state]!;
  let hi = a.childStart[state + 1]! - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = a.childClass[mid]!;
    if (c === cls) return a.childTarget[mid]!;
    if (c < cls) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** The next state after reading a unit of class `cls` (sparse form; the dense form reads the table). */
export function sparseNext(a: Automaton, state: number, cls: number): number {
  if (cls === 0) return 0;
  for (;;) {
    const child = childOf(a, state, cls);
    if (child >= 0) return child;
    if (state === 0) return 0;
    state = a.fail[state]!;
  }
}
