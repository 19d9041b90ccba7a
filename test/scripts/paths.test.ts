import { describe, expect, it } from "vitest";
import { resolveUserPath } from "../../scripts/lib/paths";

describe("a path the user typed", () => {
  it("stays as it is when absolute, wherever the command ran", () => {
    expect(resolveUserPath("/abs/agents", { cwd: "/repo", initCwd: "/home/me/work" })).toBe("/abs/agents");
    expect(resolveUserPath("/abs/agents/../team", { cwd: "/repo" })).toBe("/abs/team");
  });

  it("is read from where the command was typed (INIT_CWD), not the package root npm runs scripts in", () => {
    expect(resolveUserPath("my-agents", { cwd: "/repo", initCwd: "/home/me/work" })).toBe("/home/me/work/my-agents");
    expect(resolveUserPath("../agents", { cwd: "/repo", initCwd: "/repo/src" })).toBe("/repo/agents");
  });

  it("falls back to the working directory when no INIT_CWD is set (run with tsx directly)", () => {
    expect(resolveUserPath("agents", { cwd: "/repo" })).toBe("/repo/agents");
    expect(resolveUserPath("agents", { cwd: "/repo", initCwd: "" })).toBe("/repo/agents");
  });
});
