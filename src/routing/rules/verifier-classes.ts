/**
 * Character classes of the pattern verifier (`pattern-verifier.ts`), shared by all patterns of a
 * registry: one row per distinct class — 128 ASCII member bits, folded to lower case (what a
 * case-insensitive `u` regex compares), then "holds `\s`" (non-ASCII whitespace) and "negated".
 */

/** Entries per class row. */
export const CLASS_ROW = 130;

/** What a class row is interned from. */
export interface ClassSpec {
  members: string;
  spaces: boolean;
  negated: boolean;
}

/** Interns classes (`\d`-like escapes and bracket classes) into rows. */
export class ClassTable {
  private readonly rows: number[] = [];
  private readonly ids = new Map<string, number>();
  /** What each id was interned from, in id order (an agent's part carries these to the link). */
  readonly specs: ClassSpec[] = [];

  /** The id of a class: ASCII members (any case), whether it holds `\s`, whether it is negated. */
  intern(members: string, spaces: boolean, negated: boolean): number {
    const bits = [0, 0, 0, 0];
    for (const c of members) {
      const code = c.toLowerCase().charCodeAt(0);
      bits[code >>> 5]! |= 1 << (code & 31);
    }
    const key = `${bits.join(",")},${spaces ? 1 : 0}${negated ? 1 : 0}`;
    let id = this.ids.get(key);
    if (id === undefined) {
      id = this.ids.size;
      this.ids.set(key, id);
      this.specs.push({ members, spaces, negated });
      for (let i = 0; i < 128; i++) this.rows.push((bits[i >>> 5]! >>> (i & 31)) & 1);
      this.rows.push(spaces ? 1 : 0, negated ? 1 : 0);
    }
    return id;
  }

  toArray(): Uint8Array {
    return Uint8Array.from(this.rows);
  }
}

/**
 * The predicates of the matcher: one-code-point classes the ASCII rows cannot describe (a
 * non-ASCII literal, `\p{…}`, a bracket holding more than ASCII), each a V8 regex of that one
 * class anchored at both ends, flags `iu`, tested on one code point: constant time, exactly
 * V8's case folding and Unicode properties, and nothing that could backtrack.
 */
export class PredicateTable {
  /** The interned sources, in id order. */
  readonly sources: string[] = [];
  private readonly ids = new Map<string, number>();

  /** The id of a class given as `u`-mode source. */
  intern(source: string): number {
    let id = this.ids.get(source);
    if (id === undefined) {
      id = this.sources.length;
      this.ids.set(source, id);
      this.sources.push(source);
    }
    return id;
  }

  get size(): number {
    return this.sources.length;
  }

  toArray(): RegExp[] {
    return predicateRegExps(this.sources);
  }
}

/** The predicates' regexes from their sources (what a stored router keeps instead of RegExp objects). */
export function predicateRegExps(sources: readonly string[]): RegExp[] {
  return sources.map((source) => new RegExp(`^(?:${source})$`, "iu"));
}
