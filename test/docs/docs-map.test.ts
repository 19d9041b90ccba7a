import { describe, expect, it } from "vitest";
import architecture from "../../docs/architecture.md?raw";
import readme from "../../README.md?raw";

/**
 * The maps of the code cannot drift from the tree: every folder of src/ has a row in
 * docs/architecture.md's folder table, every object's folder a section there and every file of
 * durable-objects/ a mention, and every path in the README's "Where is…" table exists.
 */

// Keys only: the modules are never loaded.
const files = Object.keys({
  ...import.meta.glob("../../src/**/*.ts"),
  ...import.meta.glob("../../durable-objects/**/*.ts"),
  ...import.meta.glob("../../client/src/**/*.ts"),
  ...import.meta.glob("../../public/**/*.{js,html,css}"),
}).map((key) => key.replace(/^\.\.\/\.\.\//, ""));

/** Every folder that holds one of the files, as "a/b/". */
const folders = new Set(
  files.flatMap((file) => {
    const parts = file.split("/").slice(0, -1);
    return parts.map((_, i) => `${parts.slice(0, i + 1).join("/")}/`);
  }),
);

const exists = (path: string) => (path.endsWith("/") ? folders.has(path) : files.includes(path));

/** The README's "Where is…" section, up to the next heading of its level or above. */
function whereIs(): string {
  const start = readme.indexOf("### Where is…");
  if (start < 0) return "";
  const end = readme.indexOf("\n## ", start);
  return readme.slice(start, end < 0 ? undefined : end);
}

describe("docs/architecture.md", () => {
  it("has a row for every folder of src/", () => {
    const srcFolders = [...folders].filter((f) => /^src\/[^/]+\/$/.test(f));
    expect(srcFolders.length).toBeGreaterThan(10);
    expect(srcFolders.filter((f) => !architecture.includes(`| \`${f}\` |`)).sort()).toEqual([]);
  });

  it("has a section for every object's folder and names every file in it", () => {
    const objectFolders = [...folders].filter((f) => /^durable-objects\/[^/]+\/$/.test(f));
    expect(objectFolders).toContain("durable-objects/session/");
    expect(objectFolders.filter((f) => !architecture.includes(`### \`${f}\``)).sort()).toEqual([]);
    const unnamed = files
      .filter((f) => f.startsWith("durable-objects/"))
      .filter((f) => !architecture.includes(`\`${f.split("/").at(-1)}\``) && !architecture.includes(f));
    expect(unnamed.sort()).toEqual([]);
  });
});

describe("README.md, Where is…", () => {
  const section = whereIs();
  const paths = [...section.matchAll(/`([^`\s]+\/[^`\s]*)`/g)].map((m) => m[1]!);

  it("is there, with the parts a newcomer looks for", () => {
    for (const part of ["handoff", "Runs", "Streaming", "Routing", "A2A", "MCP server", "vault", "CLI", "dashboard"])
      expect(section).toContain(part);
    expect(paths.length).toBeGreaterThan(20);
  });

  it("names only paths that exist", () => {
    expect(paths.filter((p) => !exists(p))).toEqual([]);
  });
});
