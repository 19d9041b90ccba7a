import { beforeAll, describe, expect, it } from "vitest";
import { relay, testClient } from "./run-cli";

/** `relay memory` as a process against `wrangler dev`: a session's facts, listed, written and deleted. */

const client = testClient();
let sid = "";

beforeAll(async () => {
  const session = await client.api.POST("/v1/sessions", { body: { agent: "triage" } });
  sid = session.data!.id;
});

describe("relay memory", () => {
  it("says an empty memory is empty, and how to write to it", async () => {
    const ran = await relay(["memory", sid]);
    expect(ran).toMatchObject({ code: 0, stdout: "" });
    expect(ran.stderr).toBe(`The session's memory holds no facts: relay memory ${sid} set <key> <value> writes one.\n`);
  });

  it("set writes a fact from the words after its key; a second set replaces it; the list shows who wrote each", async () => {
    expect(await relay(["memory", sid, "set", "customer", "Ada", "Lovelace"])).toMatchObject({
      code: 0,
      stdout: "remembered customer\n",
    });
    const replaced = await relay(["memory", sid, "set", "order.id", "A-1042", "--json"]);
    expect(JSON.parse(replaced.stdout)).toMatchObject({ key: "order.id", value: "A-1042", agent: null });
    await relay(["memory", sid, "set", "order.id", "A-2001"]);

    const listed = await relay(["memory", sid]);
    expect(listed.code).toBe(0);
    const lines = listed.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^key\s+value\s+written by\s+updated$/);
    expect(lines[1]).toMatch(/^customer\s+Ada Lovelace\s+a person\s+\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ$/);
    expect(lines[2]).toMatch(/^order\.id\s+A-2001\s+a person\s+/);
    expect(listed.stderr).toBe(
      `2 of 50 facts, ${"customer".length + 12 + "order.id".length + 6} of 8000 characters.\n`,
    );
    const json = JSON.parse((await relay(["memory", sid, "--json"])).stdout);
    expect(json.facts.map((f: { key: string }) => f.key)).toEqual(["customer", "order.id"]);
  });

  it("rm deletes a fact; one the memory does not hold is exit 4 (NOT_FOUND)", async () => {
    await relay(["memory", sid, "set", "plan", "pro"]);
    expect(await relay(["memory", sid, "rm", "plan"])).toMatchObject({ code: 0, stdout: "forgot plan\n" });
    const again = await relay(["memory", sid, "rm", "plan"]);
    expect(again.code).toBe(4);
    expect(again.stderr).toMatch(/^relay: NOT_FOUND: /);
  });

  it("answers Relay's refusals with their codes: a bad key (exit 1), an unknown session (exit 4)", async () => {
    const bad = await relay(["memory", sid, "set", "no spaces?", "v"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^relay: VALIDATION_FAILED: /);
    const unknown = await relay(["memory", "ses_nope"]);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toMatch(/^relay: SESSION_NOT_FOUND: /);
  });

  it("refuses a command line it cannot send: exit 2, nothing sent", async () => {
    for (const args of [
      ["memory"],
      ["memory", sid, "put", "k", "v"],
      ["memory", sid, "set"],
      ["memory", sid, "set", "k"],
      ["memory", sid, "set", "k", "  "],
      ["memory", sid, "rm"],
      ["memory", sid, "rm", "a", "b"],
    ]) {
      const ran = await relay(args);
      expect(ran.code, args.join(" ")).toBe(2);
      expect(ran.stderr, args.join(" ")).toMatch(/^relay: USAGE: memory/);
    }
    const { data } = await client.api.GET("/v1/sessions/{id}/memory", { params: { path: { id: sid } } });
    expect(data!.facts.map((f) => f.key)).not.toContain("k");
  });
});
