import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CODE, EXIT } from "../../client/src/cli/exit.ts";
import { ROOT } from "./run-cli";

/** docs/cli.md has a row for each of relay's own error codes and each exit code, so it cannot drift from them. */

const doc = readFileSync(join(ROOT, "docs", "cli.md"), "utf8");
/** The table rows of the section under `heading`. */
function rows(heading: string): string[] {
  const section = doc.split(/^## /m).find((s) => s.startsWith(`${heading}\n`)) ?? "";
  return section.split("\n").filter((line) => line.startsWith("| "));
}

describe("docs/cli.md", () => {
  it("has a row in Errors for each of relay's own codes", () => {
    const errors = rows("Errors");
    for (const code of Object.values(CODE))
      expect(
        errors.some((r) => r.includes(`\`${code}\``)),
        code,
      ).toBe(true);
  });

  it("has a row in Exit codes for each exit code", () => {
    const exits = rows("Exit codes");
    for (const [name, code] of Object.entries(EXIT))
      expect(
        exits.some((r) => r.startsWith(`| ${code} |`)),
        name,
      ).toBe(true);
  });
});
