import fc from "fast-check";
import { MAX_SECRET_BYTES } from "../../src/schemas/vault";
import { BETA_SECRETS, FIXTURE_HOOKED_AGENT, FIXTURE_MCP_TOOL, type Fixtures, nothing, SECRETS } from "./fixtures";
import { type BodyCase, garbageSegment, json } from "./inputs";
import { MARKER, markedValue } from "./leaks";

/**
 * Per operation, by its operationId: a valid body the fuzzer takes apart, and the path
 * parameters it aims at — alpha's own objects, beta's (another tenant's), ids of nothing, and
 * garbage. A new operation with a body fails the suite until it has a baseline here.
 */

export const BASELINES: Record<string, (f: Fixtures) => unknown> = {
  putAgentsName: () => ({
    name: "fz-new",
    description: "Fuzzed",
    triggers: { keywords: ["fuzz"], patterns: ["fu+zz"], priority: 40 },
    capabilities: [{ name: "fuzzing", proficiency: 0.5 }],
    handoffs: [
      "w1",
      { to: "w2", when: "conditional", condition: "n > 0", trigger: { type: "condition", expression: "n > 1" } },
    ],
    tools: { allow: ["lookup"], confirmation: { require: [], timeout_s: 30 } },
    max_concurrent_sessions: 3,
    timeout_s: 30,
  }),
  // An http tool naming alpha's vault: a name taken apart is one the vault lacks (UNKNOWN_SECRET) or no name at all.
  putToolsName: () => ({
    name: "fz_tool",
    description: "An http tool",
    kind: "http",
    url: "https://tools.fuzz.test/fz",
    parameters: { type: "object", properties: { q: { type: "string" } } },
    headers: { Authorization: SECRETS.token },
    signing_secret: SECRETS.hook,
  }),
  putSecretsName: () => ({ value: markedValue("put") }),
  // The fuzz calls with tenant keys: the operator's routes answer 401 to every case.
  putOperatorTenantsTenantQuotas: () => ({ runs_per_minute: 5, tools: null }),
  putOperatorTenantsTenantShard: () => ({ shard: 0 }),
  postRoute: () => ({ input: "is it going to rain tomorrow?", strategy: "rule", config: { threshold: 50 } }),
  postRouteReplay: () => ({
    draft: { config: { threshold: 60 } },
    inputs: [{ input: "is it going to rain tomorrow?" }],
  }),
  putConfigRouting: () => ({ enabled: true, strategy: "rule", threshold: 60, default_agent: "w1" }),
  putConfigEvents: () => ({ url: "https://hooks.fuzz.test/relay", types: ["handoff.completed", "run.*"] }),
  postConfigSigningSecretRotate: () => ({ grace_s: 3600 }),
  postWebhooksSource: (f) => ({
    type: "session.event",
    data: { session_id: f.alpha.session, name: "nothing-listens", data: { a: 1 } },
  }),
  postSessions: () => ({ agent: "w1", metadata: { k: "v" }, ttl_s: 3600, max_turns: 3, after_turn: "stay" }),
  postSessionsIdMessages: () => ({ role: "user", content: "what's the weather?", run: false }),
  postSessionsIdToolOutputs: (f) => ({
    run_id: f.alpha.run ?? nothing.run(f.alpha.session),
    outputs: [{ tool_call_id: "call_1", output: "42" }],
  }),
  patchSessionsIdState: () => ({ set: { n: 2, nested: { a: [1, 2] } }, unset: ["tier"] }),
  putSessionsIdMemoryKey: () => ({ value: "Ada Quill, account 5521" }),
  postSessionsIdAgentStatus: () => ({ agent: "sup", status: "busy" }),
  postSessionsIdEvents: () => ({ name: "nothing-listens", data: { a: 1 } }),
  postSessionsIdTriggers: () => ({ target: "w2" }),
  postSessionsIdFanOut: () => ({
    decomposition: {
      original_query: "weather and refunds",
      tasks: [{ task_id: "a", agent: "w1", instruction: "weather?" }],
      requires_aggregation: false,
    },
  }),
  postHandoffs: (f) => ({
    session_id: f.alpha.session,
    source_agent: "sup",
    target_agent: "w2",
    reason: "fuzz",
    policy: "conditional",
    condition: "n > 0",
    context: { k: "v" },
    timeout_s: 60,
  }),
  postInboxIdResolve: () => ({ reply: "yes" }),
  postCollaborations: () => ({ initiator: "sup", participants: ["w1"], context: { topic: "fz" } }),
  postCollaborationsIdMessages: () => ({
    type: "request",
    from: "sup",
    to: "w1",
    subject: "s",
    payload: { q: 1 },
    priority: "high",
  }),
  postCollaborationsIdMessagesMessageIdResolve: () => ({ reply: "ok", by: "me" }),
  postCollaborationsIdComplete: () => ({ outcome: "cancelled", result: { a: 1 } }),
  // A2A JSON-RPC: a read of a task that is nobody's, so no mutation of it writes anything.
  postA2a: () => ({ jsonrpc: "2.0", id: 1, method: "GetTask", params: { id: "run_nothing", historyLength: 2 } }),
  postA2aAgent: () => ({ jsonrpc: "2.0", id: "a", method: "GetTask", params: { id: "run_nothing" } }),
  // MCP (2025-11-25, stateless): a read of one of alpha's sessions; no tool a mutation reaches writes.
  postMcp: (f) => ({
    jsonrpc: "2.0",
    id: 1,
    method: "tools/call",
    params: { name: "get_session", arguments: { session_id: f.alpha.session } },
  }),
  putConfigMcp: () => ({ expose: ["w1", "sup"] }),
  // A header naming alpha's vault: a name taken apart is one the vault lacks (UNKNOWN_SECRET).
  putConfigTelemetry: () => ({
    endpoint: "https://otel.fuzz.test/v1/traces",
    headers: { Authorization: SECRETS.token },
    sample_ratio: 0.5,
    capture_content: false,
  }),
};

const md = (what: string, body: string): BodyCase => ({
  what: `markdown: ${what}`,
  body,
  contentType: "text/markdown",
});

/** Bodies beyond JSON an operation takes: agents as Markdown files with YAML front matter. */
export const EXTRA_BODIES: Record<string, BodyCase[]> = {
  putAgentsName: [
    md("valid", "---\nname: fz-new\ndescription: Fuzzed\nhandoffs: [w1]\n---\nBe brief."),
    md("no front matter", "just instructions"),
    md("unclosed", "---\nname: fz-new\n"),
    md("bad YAML", "---\nname: [unclosed\n---\n"),
    md("a list, not a mapping", "---\n- a\n- b\n---\n"),
    md("__proto__ key", "---\nname: fz-new\n__proto__: {polluted: true}\n---\n"),
    md("reserved condition", "---\nname: fz-new\nhandoffs: [{to: w1, condition: 'constructor == 1'}]\n---\n"),
    md("deep", `---\nname: fz-new\nx: ${"[".repeat(80)}${"]".repeat(80)}\n---\n`),
    md(
      "alias bomb",
      `---\nname: fz-new\na: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: [*d, *d, *d, *d, *d, *d, *d, *d, *d]\n---\n`,
    ),
    md("NUL and lone surrogate", '---\nname: fz-new\ndescription: "a\\0b\\ud800"\n---\n'),
  ],
};

const raw = (what: string, body: string, contentType = "application/json"): BodyCase => ({ what, body, contentType });

/** A marked value of `bytes` UTF-8 bytes or, where `unit` does not divide the rest, the fewest more. */
const sized = (bytes: number, unit: string) => {
  const head = markedValue("sized");
  return head + unit.repeat(Math.ceil((bytes - head.length) / new TextEncoder().encode(unit).length));
};

/**
 * Bodies aimed at what an operation must get right, drawn as often as a whole body is: for the
 * vault, values at its limits and bodies that hold a value but are no body at all (an answer
 * quoting either would show it); for definitions, names of secrets the tenant's vault lacks —
 * another tenant's, the Worker's own — and a signing secret that holds no Standard Webhooks secret.
 */
export const AIMED_BODIES: Record<string, BodyCase[]> = {
  putSecretsName: [
    json("value of the most bytes", { value: sized(MAX_SECRET_BYTES, "v") }),
    json("value a byte over", { value: sized(MAX_SECRET_BYTES + 1, "v") }),
    json("value of two-byte characters, the most bytes", { value: sized(MAX_SECRET_BYTES, "é") }),
    json("value of two-byte characters, just over", { value: sized(MAX_SECRET_BYTES + 1, "é") }),
    json("value with CR LF", { value: `${markedValue("crlf")}\r\nX-Injected: 1` }),
    json("value with NUL", { value: `${markedValue("nul")}\u0000` }),
    json("value with quotes and backslashes", { value: `${markedValue("quoted")}"'\\` }),
    json("value in an array", { value: [markedValue("array")] }),
    json("value in an object", { value: { v: markedValue("object") } }),
    json("a second field", { value: markedValue("first"), also: markedValue("second") }),
    raw("truncated", `{"value":"${markedValue("truncated")}`),
    raw("trailing garbage", `{"value":"${markedValue("trailing")}"}x`),
    raw("unquoted key", `{value:"${markedValue("unquoted")}"}`),
    raw("single quotes", `{'value':'${markedValue("single")}'}`),
    raw("raw control character", `{"value":"${markedValue("control")}\u0001"}`),
    raw("__proto__ beside it", `{"value":"${markedValue("proto")}","__proto__":{"value":"${MARKER}x"}}`),
    raw("deep beside it", `{"value":"${markedValue("deep")}","d":${"[".repeat(70)}${"]".repeat(70)}}`),
    raw("text/plain", JSON.stringify({ value: markedValue("plain") }), "text/plain"),
  ],
  putToolsName: [
    json("mcp tool naming the vault", { ...FIXTURE_MCP_TOOL, name: "fz_tool" }),
    json("naming another tenant's secret", {
      ...FIXTURE_MCP_TOOL,
      name: "fz_tool",
      headers: { "X-Key": BETA_SECRETS.kept },
    }),
    json("naming a Worker secret", { ...FIXTURE_MCP_TOOL, name: "fz_tool", headers: { "X-Key": "RELAY_VAULT_KEY" } }),
    json("signing secret that is no whsec", {
      name: "fz_tool",
      kind: "http",
      url: "https://tools.fuzz.test/fz",
      signing_secret: SECRETS.token,
    }),
    json("21 headers", {
      ...FIXTURE_MCP_TOOL,
      name: "fz_tool",
      headers: Object.fromEntries(Array.from({ length: 21 }, (_, i) => [`X-H${i}`, SECRETS.token])),
    }),
  ],
  putAgentsName: [
    json("webhook agent naming the vault", { ...FIXTURE_HOOKED_AGENT, name: "fz-new" }),
    json("naming another tenant's secret", {
      ...FIXTURE_HOOKED_AGENT,
      name: "fz-new",
      signing_secret: BETA_SECRETS.kept,
    }),
    json("naming a Worker secret", {
      ...FIXTURE_HOOKED_AGENT,
      name: "fz-new",
      headers: { "X-Key": "AGENT_SECRET_HOOK" },
    }),
    json("signing secret that is no whsec", { ...FIXTURE_HOOKED_AGENT, name: "fz-new", signing_secret: SECRETS.spare }),
  ],
};

/** Body limits the operations enforce, so the oversized case is just over each. */
export const BODY_LIMITS: Record<string, number> = {
  putAgentsName: 4 * 1024 * 1024,
  postWebhooksSource: 256 * 1024,
  putSecretsName: 16 * 1024,
};

/** Aimed values most of the time, garbage the rest. */
const aim = (...values: string[]) =>
  fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...values) }, { weight: 1, arbitrary: garbageSegment });

export function paramArbitrary(template: string, method: string, name: string, f: Fixtures): fc.Arbitrary<string> {
  const a = f.alpha;
  const b = f.beta;
  const resource = template.split("/")[2];
  switch (`${resource} ${name}`) {
    case "agents name":
      return method === "PUT"
        ? aim("fz-new", "fz-new", "w1", "beta-only")
        : aim("sup", "w3", FIXTURE_HOOKED_AGENT.name, "beta-only", "nobody");
    case "tools name":
      return method === "PUT"
        ? aim("fz_tool", "fz_tool", "lookup")
        : aim("lookup", "fz_tool", FIXTURE_MCP_TOOL.name, "nothing_here");
    // Alpha's secrets (named by its agent and tool, or by nothing), beta's, a Worker secret's name, a name of nothing.
    case "secrets name":
      return method === "PUT"
        ? aim(
            BETA_SECRETS.shadowed,
            "fz-new-secret",
            SECRETS.spare,
            SECRETS.token,
            "fz-new-secret",
            "AGENT_SECRET_HOOK",
          )
        : aim(SECRETS.token, SECRETS.hook, SECRETS.spare, BETA_SECRETS.kept, "RELAY_VAULT_KEY", nothing.secret());
    case "sessions id":
      return aim(a.session, a.session, a.session2, b.session, nothing.session());
    case "sessions run_id":
      return aim(a.run ?? nothing.run(a.session), nothing.run(a.session), b.run ?? nothing.run());
    case "sessions fanout_id":
      return aim(nothing.fanout());
    case "handoffs id":
      return aim(a.handoff, b.handoff, nothing.handoff(a.session2), nothing.handoff());
    case "inbox id":
      return aim(nothing.inbox(a.session), nothing.inbox());
    case "collaborations id":
      return aim(a.collaboration, a.collaboration, b.collaboration, nothing.collaboration());
    case "collaborations message_id":
      return aim(nothing.message());
    case "{agent} agent":
      return aim("w1", "sup", "beta-only", "nobody");
    case "webhooks source":
      return aim("crm", "crm", "desk", "nobody");
    case "operator tenant":
      return aim("alpha", "beta", "zeta");
    default:
      return aim("x");
  }
}
