import fc from "fast-check";

/**
 * Invalid and boundary input for the API fuzz suite, guided by the OpenAPI document: a valid
 * body per operation is taken apart site by site — every value in it replaced by a wrong type,
 * an empty or oversized string, NUL, a lone surrogate, deep JSON, a number out of range — and
 * whole bodies are replaced by what is not JSON, too deep or too large.
 */

type Schema = Record<string, any>;
type Path = (string | number)[];

/** A request body as sent: text or raw bytes, and its Content-Type (null: none). */
export interface BodyCase {
  what: string;
  body: string | Uint8Array | null;
  contentType: string | null;
}

export interface Site {
  path: Path;
  schema: Schema | null;
}

const nested = (depth: number, open: string, close: string, inner = "0") =>
  JSON.parse(open.repeat(depth) + inner + close.repeat(depth));

/** Strings every text field should survive: empty, blank, NUL, lone surrogates, direction marks, long. */
export const NASTY_STRINGS = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "\ud800",
  "x\udfffy\ud83d",
  "\u202eevil\u0301",
  "🙂🙂🙂",
  "null",
  "__proto__",
  "constructor",
  "'\"\\",
  "x".repeat(70_000),
];

const NASTY_NUMBERS = [-1, -0, 0.5, 1e308, -1e308, 2 ** 53 + 1, 1e-320, Number.MAX_SAFE_INTEGER];

/** The schema a value sits under, `$ref`s followed and union branches chosen by the value. */
export function resolve(
  schema: Schema | undefined,
  components: Record<string, Schema>,
  value?: unknown,
): Schema | null {
  let s: Schema | undefined = schema;
  for (let hops = 0; s && hops < 20; hops++) {
    if (typeof s.$ref === "string") {
      s = components[s.$ref.split("/").pop()!];
      continue;
    }
    const branches: Schema[] | undefined = s.anyOf ?? s.oneOf ?? s.allOf;
    if (!branches) return s;
    s = pickBranch(branches, components, value) ?? branches[0];
  }
  return s ?? null;
}

function pickBranch(branches: Schema[], components: Record<string, Schema>, value: unknown): Schema | undefined {
  const type = Array.isArray(value) ? "array" : value === null ? "null" : typeof value;
  const resolved = branches.map((b) => resolve(b, components, value)).filter((b): b is Schema => b !== null);
  const tag = (value as Record<string, unknown> | null)?.type;
  return (
    resolved.find((b) => b.properties?.type?.const !== undefined && b.properties.type.const === tag) ??
    resolved.find((b) => b.type === type || (type === "number" && b.type === "integer"))
  );
}

/** Every place in `value` a mutation can go: each value (with its schema, when known). */
export function sitesOf(
  value: unknown,
  schema: Schema | null,
  components: Record<string, Schema>,
  path: Path = [],
): Site[] {
  const here = resolve(schema ?? undefined, components, value);
  const out: Site[] = path.length > 0 ? [{ path, schema: here }] : [];
  if (Array.isArray(value)) {
    for (const [i, item] of value.slice(0, 2).entries())
      out.push(...sitesOf(item, here?.items ?? null, components, [...path, i]));
  } else if (value !== null && typeof value === "object") {
    for (const [key, child] of Object.entries(value))
      out.push(...sitesOf(child, here?.properties?.[key] ?? null, components, [...path, key]));
  }
  return out;
}

/** Values that break, or sit just on, what `schema` allows. */
export function invalidValue(schema: Schema | null): fc.Arbitrary<unknown> {
  const values: unknown[] = [null, true, 0, -1, 1.5, "", "x", [], [null], {}, { zz: 1 }, nested(70, "[", "]")];
  values.push(...NASTY_STRINGS, ...NASTY_NUMBERS);
  if (schema) {
    if (typeof schema.maxLength === "number")
      values.push("x".repeat(schema.maxLength + 1), "y".repeat(schema.maxLength));
    if (typeof schema.minLength === "number" && schema.minLength > 0) values.push("z".repeat(schema.minLength - 1));
    for (const bound of ["minimum", "exclusiveMinimum"])
      if (typeof schema[bound] === "number") values.push(schema[bound] - 1, schema[bound]);
    for (const bound of ["maximum", "exclusiveMaximum"])
      if (typeof schema[bound] === "number") values.push(schema[bound] + 1, schema[bound]);
    if (typeof schema.maxItems === "number") values.push(Array.from({ length: schema.maxItems + 1 }, () => "x"));
    if (Array.isArray(schema.enum))
      values.push(`${schema.enum[0]}x`, String(schema.enum[0]).toUpperCase(), ` ${schema.enum[0]}`);
    if (schema.type === "object")
      values.push(JSON.parse('{"__proto__":null,"constructor":{"prototype":1}}'), nested(40, '{"a":', "}"));
  }
  return fc.oneof(
    { weight: 6, arbitrary: fc.constantFrom(...values) },
    { weight: 1, arbitrary: fc.string({ unit: "binary", maxLength: 40 }) },
    { weight: 1, arbitrary: fc.oneof(fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true })) },
    { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
  );
}

function clone<T>(value: T): T {
  return JSON.parse(JSON.stringify(value));
}

/** `value` with the thing at `path` replaced (`replace`) or removed (`undefined`). */
export function setAt(value: unknown, path: Path, replace: unknown, remove = false): unknown {
  const copy = clone(value);
  let node = copy as Record<string | number, unknown>;
  for (const key of path.slice(0, -1)) node = node[key] as Record<string | number, unknown>;
  const last = path.at(-1)!;
  if (remove) {
    if (Array.isArray(node)) node.splice(last as number, 1);
    else delete node[last];
  } else if (last === "__proto__") Object.defineProperty(node, last, { value: replace, enumerable: true });
  else node[last] = replace;
  return copy;
}

/** A JSON body as sent. */
export const json = (what: string, value: unknown): BodyCase => ({
  what,
  body: JSON.stringify(value),
  contentType: "application/json",
});

/** Whole bodies that are not the operation's JSON at all. */
function wholeBodies(limitBytes: number): BodyCase[] {
  const raw = (what: string, body: string | Uint8Array | null, contentType: string | null = "application/json") => ({
    what,
    body,
    contentType,
  });
  return [
    raw("empty", ""),
    raw("no body", null),
    raw("null", "null"),
    raw("array", "[]"),
    raw("string", '"s"'),
    raw("number", "1e309"),
    raw("truncated", '{"a":'),
    raw("trailing garbage", "{}x"),
    raw("BOM", "\uFEFF{}"),
    raw("duplicate keys", '{"a":1,"a":2}'),
    raw("__proto__ key", '{"__proto__":{"polluted":true}}'),
    raw("deep 70", `${"[".repeat(70)}${"]".repeat(70)}`),
    raw("deep 100000", `${"[".repeat(100_000)}${"]".repeat(100_000)}`),
    raw("invalid UTF-8", new Uint8Array([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x3a, 0x31, 0x7d])),
    raw("text/plain", "hello", "text/plain"),
    raw("no content type", "{}", null),
    raw("over the limit", JSON.stringify({ input: "x".repeat(limitBytes + 16) })),
  ];
}

/**
 * Bodies for an operation whose valid body is `baseline`: the baseline itself, a site of it
 * replaced or removed, an unknown field added, a whole body that is no such thing, or (as
 * often as a whole body) one of the bodies `aimed` at what the operation must get right.
 */
export function bodyCases(
  baseline: unknown,
  schema: Schema | undefined,
  components: Record<string, Schema>,
  limitBytes: number,
  extra: BodyCase[] = [],
  aimed: BodyCase[] = [],
): fc.Arbitrary<BodyCase> {
  const sites = sitesOf(baseline, resolve(schema, components, baseline), components);
  const arbitraries: { weight: number; arbitrary: fc.Arbitrary<BodyCase> }[] = [
    { weight: 1, arbitrary: fc.constant(json("valid", baseline)) },
    { weight: 2, arbitrary: fc.constantFrom(...wholeBodies(limitBytes), ...extra) },
    {
      weight: 1,
      arbitrary: fc
        .tuple(
          fc.constantFrom(...sites.map((s) => s.path.slice(0, -1)), []),
          fc.constantFrom("zz", "constructor", "__proto__", ""),
        )
        .map(([path, key]) => json(`unknown field ${[...path, key].join(".")}`, setAt(baseline, [...path, key], 1))),
    },
  ];
  if (aimed.length > 0) arbitraries.push({ weight: 2, arbitrary: fc.constantFrom(...aimed) });
  if (sites.length > 0) {
    arbitraries.push(
      {
        weight: 6,
        arbitrary: fc
          .constantFrom(...sites)
          .chain((site) =>
            invalidValue(site.schema).map((v) =>
              json(`${site.path.join(".")} = ${preview(v)}`, setAt(baseline, site.path, v)),
            ),
          ),
      },
      {
        weight: 1,
        arbitrary: fc
          .constantFrom(...sites)
          .map((site) => json(`without ${site.path.join(".")}`, setAt(baseline, site.path, undefined, true))),
      },
    );
  }
  return fc.oneof(...arbitraries);
}

export function preview(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 80)}… (${text.length} chars)` : text;
}

/** Lone surrogates replaced (encodeURIComponent refuses them; raw bad bytes are in the constants). */
export const wellFormed = (s: string) =>
  s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, "\ufffd");

/** A path segment as a client could send it: odd text percent-encoded, and bytes no encoder makes. */
export const garbageSegment: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "%00",
    "%ED%A0%80",
    "%FF%FE",
    "%2F",
    "%2E%2E",
    "%20",
    "a".repeat(300),
    "A",
    "__proto__",
    "constructor",
    "%F0%9F%99%82",
    "-1",
    "1e309",
    "ses_",
    `ses_${"0".repeat(52)}`,
    `hof_${"0".repeat(26)}_ses_${"0".repeat(52)}`,
  ),
  fc.string({ unit: "binary", minLength: 1, maxLength: 40 }).map((s) => encodeURIComponent(wellFormed(s))),
);

/** A query value: valid-looking or not. */
export const garbageQueryValue: fc.Arbitrary<string> = fc.oneof(
  fc.constantFrom(
    "",
    "0",
    "-1",
    "1",
    "10",
    "201",
    "abc",
    "1e309",
    "99999999999999999999",
    "%00",
    "%ED%A0%80",
    "true",
    "null",
  ),
  fc.constantFrom("x".repeat(3000), "2026-13-45T99:99:99Z", "2020-01-01T00:00:00Z", "session.created", "sup"),
  fc.string({ unit: "binary", maxLength: 30 }).map((s) => encodeURIComponent(wellFormed(s))),
);
