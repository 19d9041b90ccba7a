import { describe, expect, it } from "vitest";
import { parseChatLine } from "../../client/src/cli/chat-commands.ts";
import { chainLine, chainOf } from "../../client/src/cli/chat-views.ts";
import { Interrupts } from "../../client/src/cli/interrupts.ts";

/** What a line typed in `relay chat` asks for (pure: no Relay needed). */

describe("parseChatLine", () => {
  it("a line that is not a command is a message, as typed", () => {
    expect(parseChatLine("I was charged twice")).toEqual({ kind: "message", text: "I was charged twice" });
    expect(parseChatLine("mail me at a@b.c")).toEqual({ kind: "message", text: "mail me at a@b.c" });
  });

  it("// and @@ send a message that starts with / or @", () => {
    expect(parseChatLine("//etc/hosts is broken")).toEqual({ kind: "message", text: "/etc/hosts is broken" });
    expect(parseChatLine("@@home I am")).toEqual({ kind: "message", text: "@home I am" });
  });

  it("/quit, /exit and /help", () => {
    expect(parseChatLine("/quit")).toEqual({ kind: "quit" });
    expect(parseChatLine("/exit")).toEqual({ kind: "quit" });
    expect(parseChatLine("/help")).toEqual({ kind: "help" });
  });

  it("@auto: the text, quoted or not, and a strategy in either spelling", () => {
    expect(parseChatLine('@auto "I was charged twice"')).toEqual({ kind: "auto", text: "I was charged twice" });
    expect(parseChatLine("@auto I was charged twice")).toEqual({ kind: "auto", text: "I was charged twice" });
    expect(parseChatLine('@auto "refund, please" --strategy=llm')).toEqual({
      kind: "auto",
      text: "refund, please",
      strategy: "llm",
    });
    expect(parseChatLine("@auto --strategy rule refund please")).toEqual({
      kind: "auto",
      text: "refund please",
      strategy: "rule",
    });
    // A quoted piece is kept as typed, even when it looks like an option.
    expect(parseChatLine('@auto "--strategy=llm  is my text"')).toEqual({
      kind: "auto",
      text: "--strategy=llm  is my text",
    });
  });

  it("@<agent>: the agent and the message", () => {
    expect(parseChatLine('@billing "where is my refund?"')).toEqual({
      kind: "to",
      agent: "billing",
      text: "where is my refund?",
    });
    expect(parseChatLine("@billing where is my refund?")).toEqual({
      kind: "to",
      agent: "billing",
      text: "where is my refund?",
    });
    expect(parseChatLine("@billing “curly quotes”")).toEqual({ kind: "to", agent: "billing", text: "curly quotes" });
  });

  it("/agents config: every value, one value, or one set", () => {
    expect(parseChatLine("/agents config routing")).toEqual({ kind: "config" });
    expect(parseChatLine("/agents config")).toEqual({ kind: "config" });
    expect(parseChatLine("/agents config routing.threshold")).toEqual({ kind: "config", key: "routing.threshold" });
    expect(parseChatLine("/agents config routing.threshold 70")).toEqual({
      kind: "config",
      key: "routing.threshold",
      value: "70",
    });
  });

  it("/agents route, trace and handoff-chain", () => {
    expect(parseChatLine('/agents route "I was charged twice"')).toEqual({
      kind: "route",
      text: "I was charged twice",
    });
    expect(parseChatLine("/agents route refund --strategy=hybrid")).toEqual({
      kind: "route",
      text: "refund",
      strategy: "hybrid",
    });
    expect(parseChatLine("/agents trace")).toEqual({ kind: "trace" });
    expect(parseChatLine("/agents handoff-chain")).toEqual({ kind: "handoff-chain" });
  });

  it.each([
    ["/frobnicate", /^unknown command \/frobnicate; \/help lists the commands/],
    ["/agents", /^\/agents needs one of config, route, trace, handoff-chain/],
    ["/agents dance", /^unknown command \/agents dance;/],
    ["/agents trace now", /^\/agents trace takes nothing after it$/],
    ["/agents config threshold 70", /^\/agents config shows routing\.<key>; got "threshold"$/],
    ["/agents config routing 70", /^to set a value name it: \/agents config routing\.<key> <value>$/],
    ["/agents route", /^\/agents route needs the text/],
    ["@auto", /^@auto needs the text: @auto "…"$/],
    ['@auto "never closed', /^@auto: a quote is not closed/],
    ["@auto refund --strategy=magic", /^--strategy is one of rule, llm, hybrid \(got "magic"\)$/],
    ["@auto refund --strategy", /^@auto: --strategy needs a value$/],
    ["@auto refund --fast=yes", /^@auto takes --strategy only \(got --fast\)$/],
    ["@billing", /^@billing needs a message: @billing "…"$/],
    ["@billing --loud hi", /^@billing takes no options/],
    ["@Billing hello", /^@Billing is not an agent's name/],
  ])("%s is refused with a hint", (line, message) => {
    const parsed = parseChatLine(line);
    expect(parsed.kind).toBe("refused");
    expect((parsed as { message: string }).message).toMatch(message);
  });
});

describe("the handoff chain from a session's audit records", () => {
  const record = (action: string, handoff_id: string | null, details: Record<string, unknown>) => ({
    action,
    at: "2026-11-29T10:00:00.000Z",
    handoff_id,
    details,
  });

  it("one link per handoff, in order: its last status, the request's reason, a failure's code", () => {
    const chain = chainOf([
      record("session.created", null, { agent: "triage" }),
      record("handoff.initiated", "hof_1", {
        to: "initiated",
        source: "triage",
        target: "billing",
        reason: "double charge",
      }),
      record("handoff.completed", "hof_1", { to: "completed", source: "triage", target: "billing" }),
      record("handoff.failed", "hof_2", {
        to: "failed",
        source: "billing",
        target: "sales",
        reason: "upsell",
        error_code: "HANDOFF_NOT_ALLOWED",
      }),
      record("handoff.initiated", "hof_3", {
        to: "initiated",
        source: "billing",
        target: null,
        mode: "return",
        reason: "done",
      }),
      record("handoff.completed", "hof_3", { to: "completed", source: "billing", target: "triage", mode: "return" }),
    ]);
    expect(chain.map(chainLine)).toEqual([
      "triage → billing: double charge",
      "billing → sales failed (HANDOFF_NOT_ALLOWED): upsell",
      "billing → triage: done",
    ]);
    expect(chain[2]).toMatchObject({ mode: "return", status: "completed" });
  });
});

describe("Interrupts", () => {
  it("a press nobody claimed aborts the signal", () => {
    const interrupts = new Interrupts();
    interrupts.press();
    expect(interrupts.signal.aborted).toBe(true);
  });

  it("a claim takes one press; the next one aborts", () => {
    const interrupts = new Interrupts();
    let claimed = 0;
    interrupts.claim(() => claimed++);
    interrupts.press();
    expect([claimed, interrupts.signal.aborted]).toEqual([1, false]);
    interrupts.press();
    expect([claimed, interrupts.signal.aborted]).toEqual([1, true]);
  });

  it("a released claim takes nothing", () => {
    const interrupts = new Interrupts();
    let claimed = 0;
    const release = interrupts.claim(() => claimed++);
    release();
    interrupts.press();
    expect([claimed, interrupts.signal.aborted]).toEqual([0, true]);
  });
});
