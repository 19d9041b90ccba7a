/**
 * Aho–Corasick over UTF-16 code units, built once per registry version. Every keyword and every
 * literal factor of every agent is one entry, so one pass over the input finds all of them.
 *
 * Alphabet: compressed to the code units that occur in entries. Class 0 is any other unit (it
 * always leads back to the root) and class 1 is whitespace: every `\s` unit, so the scanner can
 * collapse whitespace runs without a second table. The class map also folds what the scanner
 * must treat as equal without lower-casing the input: ASCII upper case, `ſ`→`s` and `K`→`k`
 * (what a case-insensitive `u` regex equates with ASCII letters) and `ς`→`σ`.
 *
 * Transitions: states are numbered breadth-first, and the first `denseStates` of them (the
 * shallow ones, where a scan spends nearly all its time) get a full DFA row within a memory
 * budget. Deeper states keep sorted child lists and fall back along failure links until they
 * reach a dense row. Values in the table are "codes": the target's row offset (`state ×
 * classCount`, no multiply on the hot path) or, for deep states, an id past the dense region;
 * bit-inverted (negative) when the target ends an entry, so one load tells the scanner both.
 *
 * Unpacked (what a router holds), the arrays are 16-bit when their values fit (docs/scaling.md,
 * "Memory"): a shard of a large registry has a few thousand states, and its codes fit 16 bits
 * once its dense rows are trimmed by the few states that would overflow them.
 */
import { WHITESPACE } from "./text";

/** The built automaton; entry ids are indexes into the `entries` given to {@link buildAutomaton}. */
export interface Automaton {
  /**
   * Code unit → class (0 = in no entry, 1 = whitespace). Unpacked, it ends after the last unit
   * of an entry's class but the Kelvin sign (past it, a unit is whitespace by WHITESPACE, the
   * Kelvin sign `kelvinClass`, else class 0; see {@link classOfUnit}) and is a Uint8Array when
   * the classes fit.
   */
  readonly classOf: Uint8Array | Uint16Array;
  /**
   * The class of U+212A (K, folded into k): kept apart, since a map reaching it would be 8 KiB
   * for every shard whose entries hold a k.
   */
  readonly kelvinClass: number;
  readonly classCount: number;
  readonly stateCount: number;
  /** States 0 … denseStates − 1 have a row in `dense`. */
  readonly denseStates: number;
  /** `dense[code + class]` is the next state's code (negative = bit-inverted, the state has output). */
  readonly dense: Int16Array | Int32Array;
  readonly fail: Int16Array | Int32Array;
  /**
   * State s's children are the states childStart[s] + 1 … childStart[s + 1] (breadth-first
   * numbering makes them a contiguous run), on the classes childClass[childStart[s] …].
   */
  readonly childStart: Int16Array | Int32Array;
  readonly childClass: Uint16Array;
  /** The entry ending exactly at a state, or −1. */
  readonly stateEntry: Int16Array | Int32Array;
  /** The nearest state on the failure chain that ends an entry, or −1. */
  readonly dictLink: Int16Array | Int32Array;
  /** First state of a state's output chain (itself or its dictionary link), or −1. */
  readonly outFirst: Int16Array | Int32Array;
  /** Entry length in code units. */
  readonly entryLength: Int16Array | Int32Array;
  readonly memoryBytes: number;
}

/** Class of every whitespace unit. */
export const SPACE_CLASS = 1;
/** Dense rows beyond this many cells (4 bytes each) are not built; deeper states stay sparse. */
export const DENSE_CELL_LIMIT = 2_000_000;

/** The Kelvin sign, U+212A. */
export const KELVIN = 0x212a;

const FOLDED_INTO: ReadonlyArray<[from: number, to: number]> = [
  [0x017f, 0x73], // ſ → s
  [0x212a, 0x6b], // K (Kelvin) → k
  [0x03c2, 0x03c3], // ς → σ
];

function buildClassMap(entries: readonly string[]): { classOf: Uint16Array; classCount: number } {
  const classOf = new Uint16Array(65536);
  for (let unit = 0; unit < 65536; unit++) if (WHITESPACE[unit] === 1) classOf[unit] = SPACE_CLASS;
  let classCount = 2;
  for (const entry of entries) {
    for (let i = 0; i < entry.length; i++) {
      const unit = entry.charCodeAt(i);
      if (classOf[unit] === 0) classOf[unit] = classCount++;
    }
  }
  if (classCount > 65535) throw new RangeError("too many distinct characters in keywords");
  for (let unit = 0x61; unit <= 0x7a; unit++) if (classOf[unit] !== 0) classOf[unit - 32] = classOf[unit]!;
  for (const [from, to] of FOLDED_INTO) if (classOf[to] !== 0) classOf[from] = classOf[to]!;
  return { classOf, classCount };
}

/** The trie in insertion order, then renumbered breadth-first with class-sorted child lists. */
function buildTrie(entries: readonly string[], classOf: Uint16Array, classCount: number) {
  const edges = new Map<number, number>();
  const parentOf: number[] = [-1];
  const classIn: number[] = [0];
  const entryAt: number[] = [-1];
  const entryLength = new Int32Array(entries.length);
  entries.forEach((entry, id) => {
    let state = 0;
    for (let i = 0; i < entry.length; i++) {
      const cls = classOf[entry.charCodeAt(i)]!;
      const key = state * classCount + cls;
      let next = edges.get(key);
      if (next === undefined) {
        next = parentOf.length;
        edges.set(key, next);
        parentOf.push(state);
        classIn.push(cls);
        entryAt.push(-1);
      }
      state = next;
    }
    entryAt[state] = id;
    entryLength[id] = entry.length;
  });
  const stateCount = parentOf.length;
  // Children grouped by parent (insertion ids), then a BFS gives the new numbering.
  const firstChild = new Int32Array(stateCount + 1);
  for (let s = 1; s < stateCount; s++) firstChild[parentOf[s]! + 1]!++;
  for (let s = 0; s < stateCount; s++) firstChild[s + 1]! += firstChild[s]!;
  const cursor = firstChild.slice(0, stateCount);
  const children = new Int32Array(Math.max(0, stateCount - 1));
  for (let s = 1; s < stateCount; s++) children[cursor[parentOf[s]!]!++] = s;
  const order = new Int32Array(stateCount);
  let tail = 1;
  for (let head = 0; head < tail; head++) {
    const old = order[head]!;
    const kids = Array.from(children.subarray(firstChild[old]!, firstChild[old + 1]!)).sort(
      (x, y) => classIn[x]! - classIn[y]!,
    );
    for (const kid of kids) order[tail++] = kid;
  }
  const childStart = new Int32Array(stateCount + 1);
  const childClass = new Uint16Array(stateCount - 1);
  const stateEntry = new Int32Array(stateCount);
  // BFS numbering makes each state's children a contiguous, class-sorted run: the ids after its
  // predecessors' children.
  let next = 1;
  for (let s = 0; s < stateCount; s++) {
    const old = order[s]!;
    stateEntry[s] = entryAt[old]!;
    childStart[s] = next - 1;
    const count = firstChild[old + 1]! - firstChild[old]!;
    for (let k = 0; k < count; k++, next++) childClass[next - 1] = classIn[order[next]!]!;
  }
  childStart[stateCount] = stateCount - 1;
  return { stateCount, childStart, childClass, stateEntry, entryLength };
}

/** Builds the automaton for distinct, non-empty entries (already normalised by the caller). */
export function buildAutomaton(entries: readonly string[], denseCellLimit = DENSE_CELL_LIMIT): Automaton {
  const { classOf, classCount } = buildClassMap(entries);
  const { stateCount, childStart, childClass, stateEntry, entryLength } = buildTrie(entries, classOf, classCount);
  const partial = { childStart, childClass };
  const fail = new Int32Array(stateCount);
  for (let state = 0; state < stateCount; state++) {
    for (let c = childStart[state]!; c < childStart[state + 1]!; c++) {
      const child = c + 1;
      if (state !== 0) {
        let f = fail[state]!;
        let target = childOf(partial, f, childClass[c]!);
        while (target < 0 && f !== 0) {
          f = fail[f]!;
          target = childOf(partial, f, childClass[c]!);
        }
        fail[child] = Math.max(target, 0);
      }
    }
  }
  const denseStates = Math.max(1, Math.min(stateCount, Math.floor(denseCellLimit / classCount)));
  return withDerived(
    {
      classOf,
      kelvinClass: classOf[KELVIN]!,
      classCount,
      stateCount,
      denseStates,
      fail,
      childStart,
      childClass,
      stateEntry,
      entryLength,
    },
    false,
  );
}

/** What an automaton cannot cheaply recompute: the trie, its failure links and the class map. */
type Core = Pick<
  Automaton,
  | "classOf"
  | "kelvinClass"
  | "classCount"
  | "stateCount"
  | "denseStates"
  | "fail"
  | "childStart"
  | "childClass"
  | "stateEntry"
  | "entryLength"
>;

/** Int16Array when every value in lo … hi fits 16 bits (and `narrow`), else Int32Array. */
function signed(length: number, lo: number, hi: number, narrow: boolean): Int16Array | Int32Array {
  return narrow && lo >= -0x8000 && hi <= 0x7fff ? new Int16Array(length) : new Int32Array(length);
}

/** `a` as signed(…) would hold it. */
function narrowed(a: Int16Array | Int32Array, lo: number, hi: number, narrow: boolean): Int16Array | Int32Array {
  const out = signed(0, lo, hi, narrow);
  return out instanceof Int16Array && a instanceof Int32Array ? Int16Array.from(a) : a;
}

/**
 * The rest from the core, in one pass each: dictionary links and output chains (a state's
 * failure link is shallower, so numbered before it), and the dense rows (a row starts as a copy
 * of its failure link's row). The c-th child overall is state c + 1 (breadth-first numbering makes
 * a state's children the run after its predecessors' children), so child targets are not kept.
 * `narrow`: 16-bit arrays where the values fit (an unpacked automaton; the link's is packed as is).
 */
function withDerived(core: Core, narrow: boolean): Automaton {
  const { classCount, stateCount, denseStates, childClass } = core;
  const fail = narrowed(core.fail, 0, stateCount, narrow);
  const childStart = narrowed(core.childStart, 0, stateCount, narrow);
  const entries = core.entryLength.length;
  const stateEntry = narrowed(core.stateEntry, -1, entries, narrow);
  let longest = 0;
  for (let e = 0; e < entries; e++) longest = Math.max(longest, core.entryLength[e]!);
  const entryLength = narrowed(core.entryLength, 0, longest, narrow);
  const dictLink = signed(stateCount, -1, stateCount, narrow).fill(-1);
  const outFirst = signed(stateCount, -1, stateCount, narrow);
  for (let s = 0; s < stateCount; s++) {
    if (s > 0) {
      const suffix = fail[s]!;
      dictLink[s] = stateEntry[suffix]! >= 0 ? suffix : dictLink[suffix]!;
    }
    outFirst[s] = stateEntry[s]! >= 0 ? s : dictLink[s]!;
  }
  const denseEnd = denseStates * classCount;
  const code = (state: number): number => {
    const base = state < denseStates ? state * classCount : denseEnd + (state - denseStates);
    return outFirst[state]! >= 0 ? ~base : base;
  };
  // Codes run from ~(the largest base) to the largest base.
  const topBase = denseEnd + Math.max(0, stateCount - 1 - denseStates);
  const dense = signed(denseEnd, ~topBase, topBase, narrow);
  for (let state = 0; state < denseStates; state++) {
    const row = state * classCount;
    if (state !== 0) dense.copyWithin(row, fail[state]! * classCount, fail[state]! * classCount + classCount);
    for (let c = childStart[state]!; c < childStart[state + 1]!; c++) dense[row + childClass[c]!] = code(c + 1);
  }
  const arrays = [core.classOf, dense, fail, childStart, childClass, stateEntry, dictLink, outFirst, entryLength];
  const memoryBytes = arrays.reduce((sum, a) => sum + a.byteLength, 0);
  return { ...core, fail, childStart, stateEntry, entryLength, dense, dictLink, outFirst, memoryBytes };
}

/** The child of `state` on `cls`, or −1 (binary search in the sorted child list). */
function childOf(a: Pick<Automaton, "childStart" | "childClass">, state: number, cls: number): number {
  let lo = a.childStart[state]!;
  let hi = a.childStart[state + 1]! - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const c = a.childClass[mid]!;
    if (c === cls) return mid + 1;
    if (c < cls) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** The state a (non-negative) code stands for. */
export function stateOfCode(a: Automaton, code: number): number {
  const denseEnd = a.denseStates * a.classCount;
  return code < denseEnd ? code / a.classCount : a.denseStates + (code - denseEnd);
}

/** The code of the next state from a deep state's code (outside the dense rows). */
export function deepNext(a: Automaton, code: number, cls: number): number {
  let state = stateOfCode(a, code);
  while (state >= a.denseStates) {
    const child = childOf(a, state, cls);
    if (child >= 0) {
      const base =
        child < a.denseStates ? child * a.classCount : a.denseStates * a.classCount + (child - a.denseStates);
      return a.outFirst[child]! >= 0 ? ~base : base;
    }
    state = a.fail[state]!;
  }
  return a.dense[state * a.classCount + cls]!;
}

/**
 * The automaton as a stored router keeps it: the core only (the rest is rebuilt in linear time
 * when it is unpacked, and the dense rows are most of its bytes), with the class map as its
 * non-zero entries (it is mostly zeros).
 */
/** The class of a code unit (the scanner's hot loop inlines the same). */
export function classOfUnit(a: Pick<Automaton, "classOf" | "kelvinClass">, unit: number): number {
  if (unit < a.classOf.length) return a.classOf[unit]!;
  return unit === KELVIN ? a.kelvinClass : WHITESPACE[unit] === 1 ? SPACE_CLASS : 0;
}

export type PackedAutomaton = Omit<Core, "classOf" | "kelvinClass"> & {
  classUnits: Uint16Array;
  classIds: Uint16Array;
};

export function packAutomaton(a: Automaton): PackedAutomaton {
  const units: number[] = [];
  for (let unit = 0; unit < 65536; unit++) if (classOfUnit(a, unit) !== 0) units.push(unit);
  const { classCount, stateCount, denseStates, fail, childStart, childClass, stateEntry, entryLength } = a;
  return {
    classUnits: Uint16Array.from(units),
    classIds: Uint16Array.from(units, (u) => classOfUnit(a, u)),
    classCount,
    stateCount,
    denseStates,
    fail,
    childStart,
    childClass,
    stateEntry,
    entryLength,
  };
}

/** The automaton from its packed core; `denseStates` fewer than it was built with saves rebuilding rows. */
export function unpackAutomaton(p: PackedAutomaton, denseStates = p.denseStates): Automaton {
  // A full table per shard was 128 KiB: only as long as the last unit of an entry's class (the
  // whitespace past it is the shared WHITESPACE table's; the Kelvin sign is kept apart), and narrow.
  let end = 0;
  let kelvinClass = 0;
  for (let k = 0; k < p.classUnits.length; k++) {
    if (p.classUnits[k] === KELVIN) kelvinClass = p.classIds[k]!;
    else if (p.classIds[k] !== SPACE_CLASS) end = Math.max(end, p.classUnits[k]! + 1);
  }
  const classOf = p.classCount <= 256 ? new Uint8Array(end) : new Uint16Array(end);
  for (let k = 0; k < p.classUnits.length; k++) if (p.classUnits[k]! < end) classOf[p.classUnits[k]!] = p.classIds[k]!;
  const { classUnits: _units, classIds: _ids, ...core } = p;
  const rows = Math.max(1, Math.min(denseStates, p.denseStates));
  return withDerived({ ...core, classOf, kelvinClass, denseStates: fitted(rows, p.classCount, p.stateCount) }, true);
}

/**
 * `rows` dense states, or a few fewer when that lets every code fit 16 bits: the codes run up to
 * rows × classes + the deep states, and trimming the deepest dense rows (at most an eighth of
 * them) halves the table's bytes at the cost of a few more steps along child lists.
 */
function fitted(rows: number, classCount: number, stateCount: number): number {
  const topBase = (d: number) => d * classCount + Math.max(0, stateCount - 1 - d);
  if (topBase(rows) <= 0x7fff || classCount < 2) return rows;
  const fit = Math.floor((0x7fff - (stateCount - 1)) / (classCount - 1));
  return fit >= 1 && fit >= rows - Math.floor(rows / 8) ? fit : rows;
}
