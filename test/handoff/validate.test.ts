import { describe, expect, it } from "vitest";
import { returnTarget } from "../../src/handoff/chain";
import { type HandoffValidationInput, type SessionSnapshot, validateHandoff } from "../../src/handoff/validate";
import { AgentDefinition, type AgentDefinitionInput } from "../../src/schemas/agent";
import { HandoffRequest, type HandoffRequestInput } from "../../src/schemas/handoff";

const agent = (def: AgentDefinitionInput) => AgentDefinition.parse(def);

const AGENTS = Object.fromEntries(
  [
    agent({
      name: "triage",
      handoffs: [
        "billing",
        { to: "support", condition: "user.tier == 'gold'" },
        { to: "tech", include_context: false },
        { to: "sales", filter: { max_history: 4, redact_pii: true } },
        "ghost",
      ],
    }),
    agent({
      name: "billing",
      capabilities: [
        { name: "refunds", proficiency: 0.9 },
        { name: "invoices", proficiency: 0.6 },
      ],
      handoffs: ["triage", "tech", { to: "triage-2", when: "auto" }],
    }),
    agent({
      name: "support",
      capabilities: [
        { name: "refunds", proficiency: 0.7 },
        { name: "shipping", proficiency: 1 },
      ],
    }),
    agent({
      name: "tech",
      capabilities: [{ name: "debugging", proficiency: 1, tags: ["refunds"] }],
      handoffs: [{ to: "billing", filter: { remove_tool_items: true } }],
    }),
    agent({ name: "sales", enabled: false, capabilities: [{ name: "refunds", proficiency: 1 }] }),
    agent({ name: "loner" }),
  ].map((a) => [a.name, a]),
);

const session = (stack: string[], state: Record<string, unknown> = { user: { tier: "silver" } }): SessionSnapshot => ({
  current_agent: stack.at(-1) ?? null,
  handoff_stack: stack,
  state,
});

const request = (overrides: Partial<HandoffRequestInput> = {}) =>
  HandoffRequest.parse({
    session_id: "s1",
    source_agent: "triage",
    target_agent: "billing",
    reason: "refund question",
    ...overrides,
  });

/**
 * Builds the input the way the Durable Object does: the source, and the named target, the
 * agent a return goes back to, or (by capability) every agent in the source's whitelist.
 */
function input(
  req: HandoffRequest,
  snap: SessionSnapshot,
  extra: Partial<HandoffValidationInput> = {},
): HandoffValidationInput {
  const source = AGENTS[req.source_agent] ?? null;
  const load = (name: string | null | undefined) => (name == null ? null : (AGENTS[name] ?? null));
  if (req.mode === "transfer" && req.target_agent === undefined) {
    const candidates = (source?.handoffs ?? []).map((h) => AGENTS[h.to]).filter((a) => a !== undefined);
    return { request: req, source, candidates, session: snap, ...extra };
  }
  const target = req.mode === "return" ? load(returnTarget(snap.handoff_stack)) : load(req.target_agent);
  return { request: req, source, target, session: snap, ...extra };
}

const codeOf = (i: HandoffValidationInput) => {
  const result = validateHandoff(i);
  return result.ok ? "OK" : result.error.code;
};

describe("validateHandoff: a valid transfer", () => {
  it("pushes the target and carries the whitelist entry's filters", () => {
    const result = validateHandoff(
      input(request({ target_agent: "sales" }), session(["triage"]), {
        source: AGENTS.triage!,
        target: { ...AGENTS.sales!, enabled: true },
      }),
    );
    expect(result).toEqual({
      ok: true,
      value: {
        mode: "transfer",
        source: "triage",
        target: "sales",
        entry: expect.objectContaining({ to: "sales" }),
        include_context: true,
        filter: { max_history: 4, redact_pii: true, remove_tool_items: false, history: "full" },
        chain: ["triage", "sales"],
        depth: 1,
        match: null,
      },
    });
  });

  it("passes include_context: false through", () => {
    const result = validateHandoff(input(request({ target_agent: "tech" }), session(["triage"])));
    expect(result.ok && result.value).toMatchObject({ target: "tech", include_context: false, filter: {} });
  });
});

describe("validateHandoff: one code per rule", () => {
  it("AGENT_NOT_FOUND for a missing source", () => {
    const result = validateHandoff(input(request({ source_agent: "nobody" }), session(["nobody"])));
    expect(result).toMatchObject({
      ok: false,
      error: { code: "AGENT_NOT_FOUND", details: { agent: "nobody", role: "source" } },
    });
  });

  it("NOT_CURRENT_AGENT when the source does not hold the session", () => {
    expect(validateHandoff(input(request(), session(["billing"])))).toMatchObject({
      ok: false,
      error: { code: "NOT_CURRENT_AGENT", details: { agent: "triage", current_agent: "billing" } },
    });
    expect(codeOf(input(request(), session([])))).toBe("NOT_CURRENT_AGENT");
  });

  it("NOTHING_TO_RETURN for a return with nobody below", () => {
    const result = validateHandoff(input(request({ mode: "return", target_agent: undefined }), session(["triage"])));
    expect(result).toMatchObject({
      ok: false,
      error: { code: "NOTHING_TO_RETURN", details: { handoff_stack: ["triage"] } },
    });
  });

  it("AGENT_NOT_FOUND for a missing target, before the whitelist is consulted", () => {
    const result = validateHandoff(input(request({ target_agent: "ghost" }), session(["triage"])));
    expect(result).toMatchObject({
      ok: false,
      error: { code: "AGENT_NOT_FOUND", details: { agent: "ghost", role: "target" } },
    });
    expect(codeOf(input(request({ target_agent: "nowhere" }), session(["triage"])))).toBe("AGENT_NOT_FOUND");
  });

  it("AGENT_NOT_FOUND when the agent a return goes back to is gone", () => {
    const snap = session(["vanished", "billing"]);
    expect(
      validateHandoff(input(request({ source_agent: "billing", mode: "return", target_agent: undefined }), snap)),
    ).toMatchObject({
      ok: false,
      error: { code: "AGENT_NOT_FOUND", details: { agent: "vanished", role: "target" } },
    });
  });

  it("HANDOFF_NOT_ALLOWED names the allowed targets", () => {
    const result = validateHandoff(
      input(request({ source_agent: "tech", target_agent: "support" }), session(["tech"])),
    );
    expect(result).toMatchObject({
      ok: false,
      error: {
        code: "HANDOFF_NOT_ALLOWED",
        details: { source: "tech", target: "support", allowed_targets: ["billing"] },
      },
    });
    expect(result.ok || result.error.message).toContain("allowed: billing");
  });

  it("HANDOFF_NOT_ALLOWED for a return to someone other than the agent that handed over", () => {
    const result = validateHandoff(
      input(request({ source_agent: "billing", mode: "return", target_agent: "tech" }), session(["triage", "billing"])),
    );
    expect(result).toMatchObject({
      ok: false,
      error: { code: "HANDOFF_NOT_ALLOWED", details: { allowed_targets: ["triage"] } },
    });
  });

  it("HANDOFF_NOT_ALLOWED by capability from an agent that may hand off to nobody", () => {
    const req = request({ source_agent: "loner", target_agent: undefined, required_capabilities: ["refunds"] });
    expect(validateHandoff(input(req, session(["loner"])))).toMatchObject({
      ok: false,
      error: { code: "HANDOFF_NOT_ALLOWED", details: { allowed_targets: [] } },
    });
  });

  it("CONDITION_NOT_MET for the whitelist entry's condition, with the values it read", () => {
    const result = validateHandoff(input(request({ target_agent: "support" }), session(["triage"])));
    expect(result).toMatchObject({
      ok: false,
      error: {
        code: "CONDITION_NOT_MET",
        details: { condition: "user.tier == 'gold'", origin: "whitelist", values: { "user.tier": "silver" } },
      },
    });
    expect(codeOf(input(request({ target_agent: "support" }), session(["triage"], { user: { tier: "gold" } })))).toBe(
      "OK",
    );
  });

  it("CONDITION_NOT_MET for the request's condition, checked first; missing values read as null", () => {
    const req = request({ target_agent: "support", condition: "cart.total > 100" });
    const result = validateHandoff(input(req, session(["triage"], { user: { tier: "gold" } })));
    expect(result).toMatchObject({
      ok: false,
      error: { code: "CONDITION_NOT_MET", details: { origin: "request", values: { "cart.total": null } } },
    });
    expect(codeOf(input(req, session(["triage"], { user: { tier: "gold" }, cart: { total: 101 } })))).toBe("OK");
  });

  it("INVALID_CONDITION when a condition does not parse", () => {
    const result = validateHandoff(input(request({ condition: "cart.total >" }), session(["triage"])));
    expect(result).toMatchObject({ ok: false, error: { code: "INVALID_CONDITION", details: { position: 12 } } });
  });

  it("a conditional policy needs a condition somewhere", () => {
    expect(validateHandoff(input(request({ policy: "conditional" }), session(["triage"])))).toMatchObject({
      ok: false,
      error: { code: "VALIDATION_FAILED", details: { issues: [{ path: "condition" }] } },
    });
    expect(codeOf(input(request({ policy: "conditional", condition: "true" }), session(["triage"])))).toBe("OK");
    const gold = session(["triage"], { user: { tier: "gold" } });
    expect(codeOf(input(request({ policy: "conditional", target_agent: "support" }), gold))).toBe("OK");
  });

  it("MAX_DEPTH_EXCEEDED at the default of 5, and configurable", () => {
    const deep = (n: number) => [...Array.from({ length: n }, (_, i) => `a${i}`), "triage"];
    expect(codeOf(input(request(), session(deep(4))))).toBe("OK"); // depth 4 → 5
    const result = validateHandoff(input(request(), session(deep(5)))); // depth 5 → 6
    expect(result).toMatchObject({
      ok: false,
      error: { code: "MAX_DEPTH_EXCEEDED", details: { depth: 6, max_depth: 5 } },
    });
    expect(codeOf(input(request(), session(["triage"]), { maxDepth: 0 }))).toBe("MAX_DEPTH_EXCEEDED");
    expect(codeOf(input(request(), session(deep(8)), { maxDepth: 10 }))).toBe("OK");
  });

  it("CIRCULAR_HANDOFF for a transfer back down the stack, with the chain", () => {
    const result = validateHandoff(
      input(request({ source_agent: "billing", target_agent: "triage" }), session(["triage", "billing"])),
    );
    expect(result).toMatchObject({
      ok: false,
      error: { code: "CIRCULAR_HANDOFF", details: { chain: ["triage", "billing", "triage"], target: "triage" } },
    });
  });

  it("CAPABILITY_MISMATCH when no allowed agent has every requirement, with each candidate's report", () => {
    const req = request({
      source_agent: "triage",
      target_agent: undefined,
      required_capabilities: ["refunds", "telepathy"],
    });
    const result = validateHandoff(input(req, session(["triage"])));
    expect(result).toMatchObject({
      ok: false,
      error: {
        code: "CAPABILITY_MISMATCH",
        details: {
          required_capabilities: ["refunds", "telepathy"],
          candidates: [
            { agent: "billing", score: 0.45, matched: ["refunds"], missing: ["telepathy"] },
            { agent: "support", excluded: "condition_false" },
            { agent: "tech", score: 0.4, missing: ["telepathy"] },
            { agent: "sales", excluded: "disabled" },
            { agent: "ghost", excluded: "not_found" },
          ],
        },
      },
    });
  });

  it("AGENT_UNAVAILABLE for a disabled target", () => {
    expect(validateHandoff(input(request({ target_agent: "sales" }), session(["triage"])))).toMatchObject({
      ok: false,
      error: { code: "AGENT_UNAVAILABLE", details: { agent: "sales", reason: "disabled" } },
    });
  });
});

describe("validateHandoff: rule order", () => {
  it("reports the first broken rule, in the documented order", () => {
    // One request broken every way at once; each step repairs the rule just reported.
    let i: HandoffValidationInput = {
      request: request({ source_agent: "triage", target_agent: "support", condition: "ok == true" }),
      source: null,
      target: null,
      session: {
        current_agent: "billing",
        handoff_stack: ["a", "b", "c", "d", "e", "support", "billing"],
        state: { ok: false },
      },
    };
    const seen: string[] = [];
    const steps: Record<string, () => void> = {
      AGENT_NOT_FOUND: () => {
        i = i.source
          ? { ...i, target: { ...AGENTS.support!, enabled: false } }
          : { ...i, source: { ...AGENTS.triage!, handoffs: [] } };
      },
      NOT_CURRENT_AGENT: () =>
        (i = {
          ...i,
          session: {
            ...i.session,
            current_agent: "triage",
            handoff_stack: [...i.session.handoff_stack.slice(0, -1), "triage"],
          },
        }),
      HANDOFF_NOT_ALLOWED: () => (i = { ...i, source: AGENTS.triage! }),
      CONDITION_NOT_MET: () => (i = { ...i, session: { ...i.session, state: { ok: true, user: { tier: "gold" } } } }),
      MAX_DEPTH_EXCEEDED: () => (i = { ...i, session: { ...i.session, handoff_stack: ["support", "triage"] } }),
      CIRCULAR_HANDOFF: () => (i = { ...i, session: { ...i.session, handoff_stack: ["triage"] } }),
      AGENT_UNAVAILABLE: () => (i = { ...i, target: AGENTS.support! }),
    };
    for (let n = 0; n < 10; n++) {
      const result = validateHandoff(i);
      if (result.ok) break;
      seen.push(result.error.code);
      steps[result.error.code]!();
    }
    expect(seen).toEqual([
      "AGENT_NOT_FOUND",
      "NOT_CURRENT_AGENT",
      "AGENT_NOT_FOUND",
      "HANDOFF_NOT_ALLOWED",
      "CONDITION_NOT_MET",
      "MAX_DEPTH_EXCEEDED",
      "CIRCULAR_HANDOFF",
      "AGENT_UNAVAILABLE",
    ]);
    expect(validateHandoff(i).ok).toBe(true);
  });
});

describe("validateHandoff: returns", () => {
  it("pops back to the agent that handed over (A→B, B returns to A)", () => {
    const req = request({ source_agent: "billing", mode: "return", target_agent: undefined });
    const result = validateHandoff(input(req, session(["triage", "billing"])));
    expect(result.ok && result.value).toMatchObject({
      mode: "return",
      source: "billing",
      target: "triage",
      chain: ["triage"],
      depth: 0,
    });
  });

  it("accepts a target_agent that names the right agent, and ignores depth limits", () => {
    const req = request({ source_agent: "billing", mode: "return", target_agent: "triage" });
    expect(codeOf(input(req, session(["triage", "billing"]), { maxDepth: 0 }))).toBe("OK");
  });

  it("is not gated by the whitelist, but takes the source's filters for that target", () => {
    const req = request({ source_agent: "support", mode: "return", target_agent: undefined });
    expect(codeOf(input(req, session(["triage", "support"])))).toBe("OK");
    const back = validateHandoff(
      input(request({ source_agent: "tech", mode: "return", target_agent: undefined }), session(["billing", "tech"])),
    );
    expect(back.ok && back.value).toMatchObject({ target: "billing", filter: { remove_tool_items: true } });
  });

  it("still honours the request's condition and a conditional policy's need for one", () => {
    const snap = session(["triage", "billing"], { done: false });
    expect(
      codeOf(
        input(request({ source_agent: "billing", mode: "return", target_agent: undefined, condition: "done" }), snap),
      ),
    ).toBe("CONDITION_NOT_MET");
    expect(
      codeOf(
        input(
          request({ source_agent: "billing", mode: "return", target_agent: undefined, policy: "conditional" }),
          snap,
        ),
      ),
    ).toBe("VALIDATION_FAILED");
  });

  it("refuses to return to a disabled agent", () => {
    const snap = session(["sales", "billing"]);
    expect(codeOf(input(request({ source_agent: "billing", mode: "return", target_agent: undefined }), snap))).toBe(
      "AGENT_UNAVAILABLE",
    );
  });
});

describe("validateHandoff: by capability", () => {
  const byCap = (required: string[], overrides: Partial<HandoffRequestInput> = {}) =>
    request({ target_agent: undefined, required_capabilities: required, ...overrides });

  it("chooses the best allowed agent that has every requirement", () => {
    const result = validateHandoff(input(byCap(["refunds"]), session(["triage"])));
    expect(result.ok && result.value).toMatchObject({
      target: "billing",
      chain: ["triage", "billing"],
      match: { agent: "billing", score: 0.9, matched: ["refunds"], missing: [] },
      entry: { to: "billing" },
    });
  });

  it("leaves out candidates whose whitelist condition is false, and lets them in when true", () => {
    const gold = session(["triage"], { user: { tier: "gold" } });
    expect(validateHandoff(input(byCap(["shipping"]), gold))).toMatchObject({ ok: true, value: { target: "support" } });
    expect(codeOf(input(byCap(["shipping"]), session(["triage"])))).toBe("CAPABILITY_MISMATCH");
  });

  it("leaves out agents on the stack and disabled ones", () => {
    const fromBilling = byCap(["debugging"], { source_agent: "billing" });
    expect(validateHandoff(input(fromBilling, session(["triage", "billing"])))).toMatchObject({
      ok: true,
      value: { target: "tech" },
    });
    const disabled = validateHandoff(
      input(fromBilling, session(["triage", "billing"]), {
        candidates: [AGENTS.triage!, { ...AGENTS.tech!, enabled: false }],
      }),
    );
    expect(disabled).toMatchObject({
      ok: false,
      error: {
        code: "CAPABILITY_MISMATCH",
        details: {
          candidates: [
            { agent: "triage", excluded: "on_stack" },
            { agent: "tech", excluded: "disabled" },
            { agent: "triage-2", excluded: "not_found" },
          ],
        },
      },
    });
  });

  it("lets a tag satisfy a requirement at reduced weight", () => {
    const result = validateHandoff(input(byCap(["refunds"], { source_agent: "billing" }), session(["billing"])));
    // triage has no capabilities, tech has refunds as a tag (1 × 0.8).
    expect(result.ok && result.value.match).toMatchObject({ agent: "tech", score: 0.8, hits: [{ via: "tag" }] });
  });

  it("marks a candidate with an unparsable whitelist condition", () => {
    const source = { ...AGENTS.triage!, handoffs: [{ ...AGENTS.triage!.handoffs[0]!, condition: "((" }] };
    const result = validateHandoff({ ...input(byCap(["refunds"]), session(["triage"])), source });
    expect(result).toMatchObject({
      ok: false,
      error: {
        code: "CAPABILITY_MISMATCH",
        details: { candidates: [{ agent: "billing", excluded: "invalid_condition" }] },
      },
    });
  });

  it("checks depth before choosing", () => {
    expect(codeOf(input(byCap(["refunds"]), session(["triage"]), { maxDepth: 0 }))).toBe("MAX_DEPTH_EXCEEDED");
  });
});
