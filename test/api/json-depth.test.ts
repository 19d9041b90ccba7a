import { describe, expect, it } from "vitest";
import { jsonTextDepth, MAX_JSON_DEPTH, valueDepth } from "../../src/lib/json-depth";
import { yamlDepth } from "../../src/registry/agent-file";
import { loadAgents, newSession } from "./handoff-fixtures";
import { call } from "./helpers";

/** `n` nested arrays around a 1, as JSON (and YAML flow) text. */
const arrays = (n: number) => `${"[".repeat(n)}1${"]".repeat(n)}`;

function expectTooDeep(res: { status: number; json: any }, depth: number) {
  expect(res.status).toBe(400);
  expect(res.json.error.code).toBe("JSON_TOO_DEEP");
  expect(res.json.error.details).toMatchObject({ limit: MAX_JSON_DEPTH, depth });
}

describe("nesting depth, measured without recursion", () => {
  it("counts arrays and objects, not brackets inside strings", () => {
    expect(jsonTextDepth("1")).toBe(0);
    expect(jsonTextDepth("{}")).toBe(1);
    expect(jsonTextDepth('{"a":[{"b":[]}],"c":{}}')).toBe(4);
    expect(jsonTextDepth('{"a":"[[[[{{{{"}')).toBe(1);
    expect(jsonTextDepth('["\\"[[[", ["\\\\"], "]]]"]')).toBe(2);
    expect(jsonTextDepth(arrays(5000))).toBe(5000);
  });

  it("measures parsed values and YAML the same way", () => {
    expect(valueDepth({ a: [{ b: [] }], c: {} })).toBe(4);
    expect(valueDepth(JSON.parse(arrays(64)))).toBe(64);
    expect(valueDepth(JSON.parse(arrays(200)))).toBe(MAX_JSON_DEPTH + 1);
    expect(yamlDepth("a: {b: [c, {d: e}]}\nf:\n  - g: 1\n")).toBe(4);
    expect(yamlDepth(`x: ${arrays(5000)}`)).toBe(5001);
    let block = "";
    for (let i = 0; i < 5000; i++) block += `${" ".repeat(i)}k:\n`;
    expect(yamlDepth(block)).toBe(5000);
  });
});

describe("JSON bodies past the nesting limit", () => {
  it("refuses a 5,000-deep state patch with JSON_TOO_DEEP and stores nothing", async () => {
    await loadAgents();
    const session = await newSession();
    const res = await call("PATCH", `/v1/sessions/${session}/state`, `{"set":{"deep":${arrays(5000)}}}`);
    expectTooDeep(res, 5002);
    expect((await call("GET", `/v1/sessions/${session}`)).json.state).toEqual({});
    const audit = await call("GET", `/v1/sessions/${session}/audit`);
    expect(audit.json.items.map((r: { action: string }) => r.action)).toEqual(["session.created"]);
  });

  it("accepts a body exactly at the limit and refuses one level more", async () => {
    await loadAgents();
    const session = await newSession();
    const atLimit = await call(
      "PATCH",
      `/v1/sessions/${session}/state`,
      `{"set":{"deep":${arrays(MAX_JSON_DEPTH - 2)}}}`,
    );
    expect(atLimit.status).toBe(200);
    expect(valueDepth(atLimit.json.state.deep)).toBe(MAX_JSON_DEPTH - 2);
    const over = await call(
      "PATCH",
      `/v1/sessions/${session}/state`,
      `{"set":{"deeper":${arrays(MAX_JSON_DEPTH - 1)}}}`,
    );
    expectTooDeep(over, MAX_JSON_DEPTH + 1);
    expect(Object.keys((await call("GET", `/v1/sessions/${session}`)).json.state)).toEqual(["deep"]);
  });

  it("does not count brackets inside strings", async () => {
    await loadAgents();
    const session = await newSession();
    const res = await call("PATCH", `/v1/sessions/${session}/state`, { set: { text: "[{".repeat(5000) } });
    expect(res.status).toBe(200);
    expect(res.json.state.text).toHaveLength(10_000);
  });

  it("refuses a deep handoff body and starts no handoff", async () => {
    await loadAgents();
    const session = await newSession();
    const body = `{"session_id":"${session}","source_agent":"triage","target_agent":"billing","reason":"r","context":{"x":${arrays(5000)}}}`;
    expectTooDeep(await call("POST", "/v1/handoffs", body), 5002);
    expect((await call("GET", `/v1/sessions/${session}`)).json).toMatchObject({
      current_agent: "triage",
      in_flight_handoff: null,
    });
    const audit = await call("GET", `/v1/sessions/${session}/audit`);
    expect(audit.json.items.some((r: { action: string }) => r.action.startsWith("handoff."))).toBe(false);
  });

  it("refuses deep bodies on the other JSON routes too", async () => {
    expectTooDeep(await call("POST", "/v1/sessions", `{"agent":"triage","metadata":{"m":${arrays(5000)}}}`), 5002);
    expectTooDeep(await call("POST", "/v1/route", `{"input":"hi","config":${arrays(5000)}}`), 5001);
    expectTooDeep(await call("PUT", "/v1/config/routing", arrays(5000)), 5000);
  });
});

describe("agent definitions past the nesting limit", () => {
  const jsonAgent = (name: string, inner: number) =>
    `{"name":"${name}","handoffs":[{"to":"x","input_schema":{"a":${arrays(inner)}}}]}`;
  const markdownAgent = (name: string, schema: string) =>
    `---\nname: ${name}\nhandoffs:\n  - to: x\n    input_schema: ${schema}\n---\nInstructions.\n`;
  const markdown = (path: string, text: string) =>
    call("PUT", path, text, { headers: { "Content-Type": "text/markdown" } });

  it("refuses a deep JSON agent and stores nothing; accepts one at the limit", async () => {
    expectTooDeep(await call("PUT", "/v1/agents/deep-json", jsonAgent("deep-json", 5000)), 5004);
    expect((await call("GET", "/v1/agents/deep-json")).status).toBe(404);
    expectTooDeep(
      await call("PUT", "/v1/agents/deep-json", jsonAgent("deep-json", MAX_JSON_DEPTH - 3)),
      MAX_JSON_DEPTH + 1,
    );
    expect((await call("GET", "/v1/agents/deep-json")).status).toBe(404);
    expect((await call("PUT", "/v1/agents/edge-json", jsonAgent("edge-json", MAX_JSON_DEPTH - 4))).status).toBe(201);
  });

  it("refuses deep Markdown front matter (flow or block nesting) and stores nothing; accepts one at the limit", async () => {
    const flow = await markdown("/v1/agents/deep-md", markdownAgent("deep-md", `{"a": ${arrays(5000)}}`));
    expectTooDeep(flow, 5004);
    expect(flow.json.error.details.file).toBe("deep-md.md");
    let block = "---\nname: deep-md\nhandoffs:\n  - to: x\n    input_schema:\n";
    // Block nesting costs its indentation in bytes: 1,000 levels stay well under the body limit.
    for (let i = 0; i < 1000; i++) block += `${" ".repeat(6 + i)}k${i}:\n`;
    expectTooDeep(await markdown("/v1/agents/deep-md", `${block}---\n`), 1003);
    expect((await call("GET", "/v1/agents/deep-md")).status).toBe(404);

    expectTooDeep(
      await markdown("/v1/agents/deep-md", markdownAgent("deep-md", `{"a": ${arrays(MAX_JSON_DEPTH - 3)}}`)),
      MAX_JSON_DEPTH + 1,
    );
    const edge = await markdown("/v1/agents/edge-md", markdownAgent("edge-md", `{"a": ${arrays(MAX_JSON_DEPTH - 4)}}`));
    expect(edge.status).toBe(201);
    expect(valueDepth(edge.json.definition.handoffs[0].input_schema)).toBe(MAX_JSON_DEPTH - 3);
  });

  it("refuses front matter whose aliases nest deeper than its text", async () => {
    // Six chained anchors under 60 flow levels: the text nests 61 deep, the value 67.
    let text = "---\nname: alias-md\nx0: &a0 [1]\n";
    for (let i = 1; i < 6; i++) text += `x${i}: &a${i} [*a${i - 1}]\n`;
    text += `y: ${"[".repeat(60)}*a5${"]".repeat(60)}\n---\n`;
    const res = await markdown("/v1/agents/alias-md", text);
    expectTooDeep(res, MAX_JSON_DEPTH + 1);
    expect((await call("GET", "/v1/agents/alias-md")).status).toBe(404);
  });
});
