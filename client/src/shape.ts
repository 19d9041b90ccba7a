import { RelayReplyError } from "./errors.ts";

/**
 * Checks of the part of an answer a caller reads, so that a body of another shape (a URL that
 * is not Relay, a Relay of another version) is a RelayReplyError naming the first field that
 * is off, instead of a TypeError deep in the caller. The types stay the generated ones: a
 * check names only the fields its caller reads, and fields it does not name are not looked
 * at, so a newer Relay may add any.
 */

/** A check: null when `value` fits, else what is wrong with it, starting with where (`at`). */
export type Shape = (value: unknown, at: string) => string | null;

function kindOf(value: unknown): string {
  if (value === null) return "null";
  if (Array.isArray(value)) return "an array";
  if (typeof value === "object") return "an object";
  if (typeof value === "string") return "a string";
  if (typeof value === "number") return "a number";
  if (typeof value === "boolean") return "a boolean";
  return String(value);
}

const where = (at: string) => at || "the body";
const expected = (what: string, value: unknown, at: string) => `${where(at)}: expected ${what}, got ${kindOf(value)}`;

/** Any value at all (a field the caller passes on without reading). */
export const unknownValue: Shape = () => null;
export const string: Shape = (v, at) => (typeof v === "string" ? null : expected("a string", v, at));
export const number: Shape = (v, at) =>
  typeof v === "number" && Number.isFinite(v) ? null : expected("a number", v, at);
export const boolean: Shape = (v, at) => (typeof v === "boolean" ? null : expected("a boolean", v, at));

/** The shape, or null. */
export const nullable =
  (shape: Shape): Shape =>
  (v, at) =>
    v === null ? null : shape(v, at);

/** The shape, or absent. */
export const optional =
  (shape: Shape): Shape =>
  (v, at) =>
    v === undefined ? null : shape(v, at);

/** The shape, null or absent: for a field the caller reads only when it is there. */
export const maybe =
  (shape: Shape): Shape =>
  (v, at) =>
    v === undefined || v === null ? null : shape(v, at);

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === "object" && v !== null && !Array.isArray(v);
}

/** A JSON object whose named fields fit their shapes (other fields are not looked at). */
export const object =
  (fields: Record<string, Shape>): Shape =>
  (v, at) => {
    if (!isObject(v)) return expected("an object", v, at);
    for (const [name, shape] of Object.entries(fields)) {
      const problem = shape(v[name], at ? `${at}.${name}` : name);
      if (problem) return problem;
    }
    return null;
  };

/** A JSON object whose every value fits `shape`. */
export const recordOf =
  (shape: Shape): Shape =>
  (v, at) => {
    if (!isObject(v)) return expected("an object", v, at);
    for (const [name, value] of Object.entries(v)) {
      const problem = shape(value, at ? `${at}.${name}` : name);
      if (problem) return problem;
    }
    return null;
  };

/** An array whose every item fits `shape`. */
export const arrayOf =
  (shape: Shape): Shape =>
  (v, at) => {
    if (!Array.isArray(v)) return expected("an array", v, at);
    for (let i = 0; i < v.length; i++) {
      const problem = shape(v[i], `${where(at)}[${i}]`);
      if (problem) return problem;
    }
    return null;
  };

/** The first of the shapes that fits; when none does, what the last one said. */
export const anyOf =
  (...shapes: Shape[]): Shape =>
  (v, at) => {
    let problem: string | null = null;
    for (const shape of shapes) {
      problem = shape(v, at);
      if (problem === null) return null;
    }
    return problem;
  };

/** An object told apart by its `kind` (or another field): the shape of that kind; an unknown kind is off. */
export const byField =
  (field: string, cases: Record<string, Shape>): Shape =>
  (v, at) => {
    if (!isObject(v)) return expected("an object", v, at);
    const kind = v[field];
    const path = at ? `${at}.${field}` : field;
    if (typeof kind !== "string" || !Object.hasOwn(cases, kind))
      return `${path}: expected one of ${Object.keys(cases).join(", ")}, got ${typeof kind === "string" ? JSON.stringify(kind) : kindOf(kind)}`;
    return cases[kind]!(v, at);
  };

/**
 * `value` as the caller's type once it fits `shape`, or a RelayReplyError saying where it does
 * not: `const page = checked<Page<Agent>>(data, PAGE, url, "GET /v1/agents")`. `at` names the
 * value when it is a part of the body (`item 3`, `data`).
 */
export function checked<T>(value: unknown, shape: Shape, url: string, request: string, at = ""): T {
  const problem = shape(value, at);
  if (problem) throw new RelayReplyError(url, request, `JSON of another shape than this client reads (${problem})`);
  return value as T;
}
