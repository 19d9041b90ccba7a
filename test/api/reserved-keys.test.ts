import { beforeAll, describe, expect, it } from "vitest";
import { call } from "./helpers";

/**
 * `__proto__`, `constructor` and `prototype` as a condition's path or a state key: a coded
 * 400 naming where, and nothing changed — never a 500, never a key silently dropped.
 */

beforeAll(async () => {
  for (const agent of [
    { name: "front", description: "Front desk", handoffs: ["back"] },
    { name: "back", description: "Back office" },
  ]) {
    const res = await call("PUT", `/v1/agents/${agent.name}`, agent);
    if (res.status >= 300) throw new Error(JSON.stringify(res.json));
  }
});

/** What a refused call must leave as it was: the session's view and its audit trail. */
async function observed(id: string) {
  const view = (await call("GET", `/v1/sessions/${id}`)).json;
  const audit = (await call("GET", `/v1/sessions/${id}/audit?limit=200`)).json.items;
  return { view, audit: audit.map((r: { id: string }) => r.id) };
}

async function session(): Promise<string> {
  const id = (await call("POST", "/v1/sessions", { agent: "front" })).json.id;
  expect((await call("PATCH", `/v1/sessions/${id}/state`, { set: { tier: "gold", nested: { a: 1 } } })).status).toBe(
    200,
  );
  return id;
}

describe("condition paths", () => {
  it.each([
    ["handoffs.0.condition", { to: "back", condition: "__proto__ == 1" }, "__proto__"],
    ["handoffs.0.condition", { to: "back", condition: "user.constructor.name == 'Object'" }, "constructor"],
    [
      "handoffs.0.trigger.expression",
      { to: "back", when: "auto", trigger: { type: "condition", expression: "a.prototype != null" } },
      "prototype",
    ],
  ])(
    "an agent whose %s names a reserved key is refused (400 INVALID_EXPRESSION) and not stored",
    async (path, entry, name) => {
      const res = await call("PUT", "/v1/agents/proto-agent", {
        name: "proto-agent",
        description: "d",
        handoffs: [entry],
      });
      expect(res.status).toBe(400);
      expect(res.json.error).toMatchObject({ code: "INVALID_EXPRESSION", details: { path, found: `'${name}'` } });
      expect((await call("GET", "/v1/agents/proto-agent")).status).toBe(404);
    },
  );

  it("a handoff request whose condition names __proto__ is 400 INVALID_CONDITION, and the session records nothing", async () => {
    const id = await session();
    const before = await observed(id);
    for (const condition of ["__proto__ == null", "nested.__proto__.a == 1", "constructor"]) {
      const res = await call("POST", "/v1/handoffs", {
        session_id: id,
        source_agent: "front",
        target_agent: "back",
        reason: "r",
        condition,
      });
      expect(res.status, condition).toBe(400);
      expect(res.json.error.code, condition).toBe("INVALID_CONDITION");
    }
    expect(await observed(id)).toEqual(before);
  });
});

describe("state keys", () => {
  it.each([
    ['{"set":{"__proto__":{"polluted":true}}}', "set.__proto__"],
    ['{"set":{"__proto__":{"polluted":true},"ok":1}}', "set.__proto__"],
    ['{"set":{"constructor":1}}', "set.constructor"],
    ['{"set":{"prototype":{}}}', "set.prototype"],
    ['{"set":{"nested":{"__proto__":{"x":1}}}}', "set.nested.__proto__"],
    ['{"set":{"nested":{"deeper":[{"constructor":"x"}]}}}', "set.nested.deeper.0.constructor"],
    ['{"unset":["constructor"]}', "unset.0"],
  ])("PATCH state %s is 400 VALIDATION_FAILED at %s, the state untouched", async (body, path) => {
    const id = await session();
    const before = await observed(id);
    const res = await call("PATCH", `/v1/sessions/${id}/state`, body);
    expect(res.status).toBe(400);
    expect(res.json.error.code).toBe("VALIDATION_FAILED");
    expect(res.json.error.details.issues.map((i: { path: string }) => i.path)).toContain(path);
    expect(await observed(id)).toEqual(before);
    expect(before.view.state).toEqual({ tier: "gold", nested: { a: 1 } });
  });

  it("a __proto__ key anywhere else in a body is refused too, not dropped", async () => {
    const res = await call("POST", "/v1/sessions", '{"agent":"front","metadata":{"__proto__":{"admin":true}}}');
    expect(res.status).toBe(400);
    expect(res.json.error).toMatchObject({
      code: "VALIDATION_FAILED",
      details: { issues: [{ path: "metadata.__proto__" }] },
    });
  });
});
