import { describe, expect, it } from "vitest";

/**
 * The layout is the architecture (docs/architecture.md, "Layers and the import rule"):
 * imports run one way, and no non-test module imports itself back through a cycle. Read
 * from the source text, so a new file is checked the day it is added.
 */

const sources = {
  ...import.meta.glob("../src/**/*.ts", { query: "?raw", import: "default", eager: true }),
  ...import.meta.glob("../durable-objects/**/*.ts", { query: "?raw", import: "default", eager: true }),
} as Record<string, string>;

/** Repo-relative path of a glob key ("../src/a/b.ts" → "src/a/b.ts"). */
const rel = (key: string) => key.replace(/^\.\.\//, "");

function resolve(from: string, spec: string): string | null {
  if (!spec.startsWith(".")) return null;
  const parts = from.split("/").slice(0, -1);
  for (const piece of spec.split("/")) {
    if (piece === "..") parts.pop();
    else if (piece !== ".") parts.push(piece);
  }
  const base = parts.join("/");
  for (const candidate of [`${base}.ts`, `${base}/index.ts`])
    if (Object.hasOwn(sources, `../${candidate}`)) return candidate;
  return `${base}.ts`;
}

/** Every relative import and re-export of every module, type-only ones included. */
const graph = new Map<string, string[]>(
  Object.entries(sources).map(([key, text]) => {
    const file = rel(key);
    const specs = [...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"/gms)].map((m) => m[1]!);
    return [file, specs.map((s) => resolve(file, s)).filter((s): s is string => s !== null)];
  }),
);

const area = (file: string) =>
  file
    .split("/")
    .slice(0, file.startsWith("src/") ? 2 : 1)
    .join("/");

/**
 * Every folder of src/ by layer (docs/architecture.md, Layers and the import rule). A new
 * folder fails the first test below until it is placed here.
 */
const LAYER: Record<string, "entry" | "http" | "glue" | "pure" | "support" | "network"> = {
  "src/api": "http",
  "src/auth": "http",
  "src/services": "glue",
  "src/registry": "glue",
  "src/vault": "glue",
  "src/rpc": "glue",
  "src/routing": "pure",
  "src/handoff": "pure",
  "src/runtime": "pure",
  "src/memory": "pure",
  "src/collaboration": "pure",
  "src/triggers": "pure",
  "src/sessions": "pure",
  "src/interop": "pure",
  "src/schemas": "pure",
  "src/errors": "pure",
  "src/lib": "pure",
  "src/quotas": "pure",
  "src/usage": "pure",
  "src/telemetry": "pure",
  "src/audit": "support",
  "src/providers": "support",
  "src/outbound": "network",
};
const pure = Object.keys(LAYER).filter((folder) => LAYER[folder] === "pure");

/** A call to the outside world: fetch, or an SDK's client. */
const NETWORK = /(?<![\w.])fetch\(|from\s+"(@modelcontextprotocol\/client|@a2a-js\/sdk\/client)"/;
/** The modules of src/outbound that call nothing: the address policy and the redaction of secrets. */
const PURE_OUTBOUND = new Set(["src/outbound/policy.ts", "src/outbound/redact.ts"]);

describe("architecture", () => {
  it("reads the whole tree", () => {
    expect(graph.size).toBeGreaterThan(100);
    expect(graph.get("durable-objects/session/session.ts")).toContain("src/rpc/session.ts");
  });

  it("src/ imports nothing from durable-objects/, except the Worker entry that exports the classes", () => {
    const offending = [...graph].flatMap(([file, deps]) =>
      file.startsWith("src/") && file !== "src/index.ts"
        ? deps.filter((d) => d.startsWith("durable-objects/")).map((d) => `${file} → ${d}`)
        : [],
    );
    expect(offending).toEqual([]);
  });

  it("every folder of src/ is one of the layers", () => {
    const folders = new Set([...graph.keys()].filter((f) => /^src\/[^/]+\//.test(f)).map(area));
    expect([...folders].filter((f) => !Object.hasOwn(LAYER, f)).sort()).toEqual([]);
  });

  it("the pure domain folders import no runtime, HTTP layer or env", () => {
    const offending = [...graph].flatMap(([file, deps]) =>
      pure.includes(area(file))
        ? deps
            .filter(
              (d) =>
                ["src/api", "src/services", "src/rpc", "src/registry", "durable-objects"].includes(area(d)) ||
                d.startsWith("durable-objects/") ||
                d === "src/env.ts",
            )
            .map((d) => `${file} → ${d}`)
        : [],
    );
    const runtime = Object.entries(sources)
      .filter(([key, text]) => pure.includes(area(rel(key))) && /from\s+"(cloudflare:|hono)/.test(text))
      .map(([key]) => rel(key));
    expect(offending).toEqual([]);
    expect(runtime).toEqual([]);
  });

  it("the pure folders call no network: no fetch, no SDK client, no caller of src/outbound but its types and policy", () => {
    const calls = Object.entries(sources)
      .filter(([key, text]) => pure.includes(area(rel(key))) && NETWORK.test(text))
      .map(([key]) => rel(key));
    const callers = Object.entries(sources).flatMap(([key, text]) => {
      const file = rel(key);
      if (!pure.includes(area(file))) return [];
      return [...text.matchAll(/^\s*import\s+(?!type\s)[^;]*?from\s+"([^"]+)"/gms)]
        .map((m) => resolve(file, m[1]!))
        .filter((d): d is string => d !== null && area(d) === "src/outbound" && !PURE_OUTBOUND.has(d))
        .map((d) => `${file} → ${d}`);
    });
    expect(calls).toEqual([]);
    expect(callers).toEqual([]);
  });

  it("src/registry and src/vault do not import the HTTP layer", () => {
    const offending = [...graph].flatMap(([file, deps]) =>
      area(file) === "src/registry" || area(file) === "src/vault"
        ? deps.filter((d) => area(d) === "src/api").map((d) => `${file} → ${d}`)
        : [],
    );
    expect(offending).toEqual([]);
  });

  it("each Durable Object's folder imports its own files, durable-objects/shared and src/, never another object's", () => {
    const objectOf = (file: string) => (file.startsWith("durable-objects/") ? file.split("/")[1]! : null);
    const offending = [...graph].flatMap(([file, deps]) => {
      const own = objectOf(file);
      if (own === null) return [];
      return deps
        .filter((d) => {
          const other = objectOf(d);
          return other !== null && other !== own && other !== "shared";
        })
        .concat(own === "shared" ? deps.filter((d) => objectOf(d) !== null && objectOf(d) !== "shared") : [])
        .map((d) => `${file} → ${d}`);
    });
    expect(offending).toEqual([]);
  });

  it("the HTTP layer (src/api) is mounted by src/app.ts alone, and reaches the objects only through src/rpc", () => {
    const importsApi = [...graph].flatMap(([file, deps]) =>
      area(file) !== "src/api" && file !== "src/app.ts" && deps.some((d) => area(d) === "src/api") ? [file] : [],
    );
    const apiToObjects = [...graph].flatMap(([file, deps]) =>
      area(file) === "src/api" ? deps.filter((d) => d.startsWith("durable-objects/")).map((d) => `${file} → ${d}`) : [],
    );
    expect(importsApi).toEqual([]);
    expect(apiToObjects).toEqual([]);
  });

  it("the Standard Webhooks module imports nothing: the client runs it too, in Node as it is", () => {
    const text = sources["../src/lib/standard-webhooks.ts"] ?? "";
    expect(text).toContain("export async function verifyWebhook");
    expect([...text.matchAll(/^\s*(?:import|export)\s[^;]*?from\s+"([^"]+)"/gms)].map((m) => m[1])).toEqual([]);
    expect(text).not.toMatch(/\bimport\s*\(|\brequire\s*\(/);
  });

  it("no import cycles among non-test files", () => {
    const cycles: string[] = [];
    const state = new Map<string, "open" | "done">();
    const stack: string[] = [];
    const visit = (file: string) => {
      state.set(file, "open");
      stack.push(file);
      for (const dep of graph.get(file) ?? []) {
        if (state.get(dep) === "open") cycles.push([...stack.slice(stack.indexOf(dep)), dep].join(" → "));
        else if (!state.has(dep)) visit(dep);
      }
      stack.pop();
      state.set(file, "done");
    };
    for (const file of [...graph.keys()].sort()) if (!state.has(file)) visit(file);
    expect(cycles).toEqual([]);
  });
});
