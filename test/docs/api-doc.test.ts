import { describe, expect, it } from "vitest";
import apiDoc from "../../docs/api.md?raw";
import { OPERATIONS } from "../../src/api/spec/operations";
import { ERROR_STATUS } from "../../src/errors/codes";

/**
 * docs/api.md cannot drift from the code: every error code has a row in its tables, and every
 * route the API serves has a row in its routes table (`METHOD /path/:param`).
 */

const rows = apiDoc.split("\n").filter((line) => line.startsWith("| `"));

describe("docs/api.md", () => {
  it("has a row for every error code", () => {
    const documented = new Set(
      rows.flatMap((row) => [...row.split("|")[1]!.matchAll(/`([A-Z][A-Z0-9_]+)`/g)].map((m) => m[1])),
    );
    expect(Object.keys(ERROR_STATUS).filter((code) => !documented.has(code))).toEqual([]);
  });

  it("has a row for every route", () => {
    const documented = new Set(
      rows.flatMap((row) =>
        row
          .split("|")[1]!
          .split(/`,\s*`/)
          .map((cell) => cell.replace(/`/g, "").trim().replace(/\?.*$/, "")),
      ),
    );
    const missing = OPERATIONS.map((op) => `${op.method.toUpperCase()} ${op.path.replace(/\{(\w+)\}/g, ":$1")}`).filter(
      (route) => !documented.has(route),
    );
    expect(missing).toEqual([]);
  });
});
