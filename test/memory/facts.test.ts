import { describe, expect, it } from "vitest";
import {
  applyFactChange,
  FORGET_TOOL,
  factCall,
  factsPrompt,
  factToolSpecs,
  memoryChars,
  memoryView,
  REMEMBER_TOOL,
} from "../../src/memory/facts";
import { MEMORY_LIMITS, type MemoryFact, MemoryKey } from "../../src/schemas/memory";

const now = Date.parse("2026-11-29T10:00:00.000Z");

const fact = (key: string, value: string, agent: string | null = "support"): MemoryFact => ({
  key,
  value,
  agent,
  updated_at: "2026-11-29T09:00:00.000Z",
});

/** `n` facts `k00`, `k01`, … of value `v` each. */
const facts = (n: number, value = "v"): MemoryFact[] =>
  Array.from({ length: n }, (_, i) => fact(`k${String(i).padStart(2, "0")}`, value));

const remember = (key: unknown, value: unknown) => JSON.stringify({ key, value });

describe("factToolSpecs", () => {
  it("offers remember {key, value} and forget {key}, in the function shape", () => {
    const [rememberSpec, forgetSpec] = factToolSpecs();
    expect(rememberSpec).toMatchObject({
      type: "function",
      function: { name: REMEMBER_TOOL, parameters: { type: "object", required: ["key", "value"] } },
    });
    expect(rememberSpec!.function.description).toMatch(/whole conversation/);
    expect(forgetSpec).toMatchObject({
      type: "function",
      function: { name: FORGET_TOOL, parameters: { type: "object", required: ["key"] } },
    });
  });

  it("tells the model the key rule the call is checked by", () => {
    const spec = factToolSpecs()[0]!.function.parameters as { properties: { key: { pattern: string } } };
    const pattern = new RegExp(spec.properties.key.pattern);
    for (const key of ["a", "order.id", "customer_name", "x-1", "A".repeat(64), "", "_a", "a b", "A".repeat(65), "ü"])
      expect(pattern.test(key), key).toBe(MemoryKey.safeParse(key).success);
  });
});

describe("factCall", () => {
  it("remembers a new key: the change and how full the memory is after it", () => {
    const call = factCall(REMEMBER_TOOL, remember("customer", "  Ada Lovelace "), [fact("order", "42")]);
    expect(call).toEqual({
      ok: true,
      change: { kind: "put", key: "customer", value: "Ada Lovelace" },
      output: `Remembered 'customer' (2 of 50 facts, ${"customer".length + 12 + "order".length + 2} of 8000 characters).`,
    });
  });

  it("replaces a key remembered again, counting the new value only", () => {
    const full = facts(MEMORY_LIMITS.facts);
    const call = factCall(REMEMBER_TOOL, remember("k00", "w"), full);
    expect(call).toMatchObject({ ok: true, change: { kind: "put", key: "k00", value: "w" } });
    expect(call.output).toContain("(50 of 50 facts");
  });

  it("refuses a 51st fact, saying the memory is full", () => {
    const call = factCall(REMEMBER_TOOL, remember("z", "v"), facts(MEMORY_LIMITS.facts));
    expect(call.ok).toBe(false);
    expect(call.output).toMatch(/^Error: .*holds 50 facts/);
  });

  it("refuses a value that would take keys and values past the characters allowed", () => {
    // 16 facts of key 3 + value 490 characters: 7,888; one more of 1 + 112 makes 8,001.
    const many = facts(16, "x".repeat(490));
    expect(memoryChars(many)).toBe(7888);
    const over = factCall(REMEMBER_TOOL, remember("z", "y".repeat(112)), many);
    expect(over.ok).toBe(false);
    expect(over.output).toMatch(/^Error: .*8001 characters.*8000/);
    expect(factCall(REMEMBER_TOOL, remember("z", "y".repeat(111)), many).ok).toBe(true);
  });

  it("counts a replaced value's new length, not old plus new", () => {
    const many = facts(16, "x".repeat(490));
    // Replacing k00's 490 characters with 500 adds 10: 7,898.
    expect(factCall(REMEMBER_TOOL, remember("k00", "y".repeat(500)), many).output).toContain("7898 of 8000");
  });

  it.each([
    ["a missing key", JSON.stringify({ value: "v" })],
    ["a key with a space", remember("a b", "v")],
    ["a key that is a number", remember(7, "v")],
    ["a key too long", remember("k".repeat(65), "v")],
  ])("refuses %s, quoting the key rule", (_what, args) => {
    const call = factCall(REMEMBER_TOOL, args, []);
    expect(call).toEqual({
      ok: false,
      output: expect.stringMatching(/^Error: 'key' must be .* at most 64 characters/),
    });
  });

  it.each([
    ["a missing value", JSON.stringify({ key: "k" })],
    ["an empty value", remember("k", "")],
    ["a value of spaces", remember("k", "   ")],
    ["a value too long", remember("k", "v".repeat(501))],
    ["a value that is not a string", remember("k", 42)],
  ])("refuses %s, without quoting it", (_what, args) => {
    const call = factCall(REMEMBER_TOOL, args, []);
    expect(call).toEqual({
      ok: false,
      output: "Error: 'value' must be a string of 1 to 500 characters (not only spaces).",
    });
  });

  it("refuses arguments that are not JSON, or not an object", () => {
    expect(factCall(REMEMBER_TOOL, "{key:", [])).toEqual({
      ok: false,
      output: "Error: the remember call's arguments are not JSON.",
    });
    expect(factCall(REMEMBER_TOOL, '["k", "v"]', []).output).toMatch(/^Error: 'key' must be/);
    expect(factCall(FORGET_TOOL, "null", []).output).toMatch(/^Error: 'key' must be/);
  });

  it("reads empty arguments as an empty object", () => {
    expect(factCall(FORGET_TOOL, "", []).output).toMatch(/^Error: 'key' must be/);
  });

  it("forgets a key the memory holds", () => {
    expect(factCall(FORGET_TOOL, JSON.stringify({ key: "order" }), [fact("order", "42")])).toEqual({
      ok: true,
      change: { kind: "delete", key: "order" },
      output: "Forgot 'order'.",
    });
  });

  it("refuses to forget a key the memory does not hold", () => {
    expect(factCall(FORGET_TOOL, JSON.stringify({ key: "nothing" }), [fact("order", "42")])).toEqual({
      ok: false,
      output: "Error: there is no fact 'nothing' to forget.",
    });
  });

  it("answers a call of another tool with an error, not a throw", () => {
    expect(factCall("lookup", "{}", [])).toEqual({
      ok: false,
      output: "Error: 'lookup' is not a memory tool (remember, forget).",
    });
  });
});

describe("applyFactChange", () => {
  it("adds a fact written by an agent, by key, with the time", () => {
    const after = applyFactChange(
      [fact("b", "2"), fact("d", "4")],
      { kind: "put", key: "c", value: "3" },
      "triage",
      now,
    );
    expect(after).toEqual({
      ok: true,
      value: [
        fact("b", "2"),
        { key: "c", value: "3", agent: "triage", updated_at: "2026-11-29T10:00:00.000Z" },
        fact("d", "4"),
      ],
    });
  });

  it("replaces a key written again, by a person (agent null)", () => {
    const after = applyFactChange([fact("a", "old")], { kind: "put", key: "a", value: " new " }, null, now);
    expect(after).toEqual({
      ok: true,
      value: [{ key: "a", value: "new", agent: null, updated_at: "2026-11-29T10:00:00.000Z" }],
    });
  });

  it("refuses a 51st fact with MEMORY_FULL, saying how full it would be", () => {
    const after = applyFactChange(facts(50), { kind: "put", key: "z", value: "v" }, null, now);
    expect(after).toEqual({
      ok: false,
      error: {
        code: "MEMORY_FULL",
        message: expect.stringContaining("50 facts"),
        details: { key: "z", facts: 51, chars: 50 * 4 + 2, limits: { facts: 50, total_chars: 8000 } },
      },
    });
  });

  it("takes a 50th fact, and a new value for a key of a full memory", () => {
    expect(applyFactChange(facts(49), { kind: "put", key: "z", value: "v" }, null, now).ok).toBe(true);
    const replaced = applyFactChange(facts(50), { kind: "put", key: "k07", value: "w" }, null, now);
    expect(replaced.ok && replaced.value.find((f) => f.key === "k07")?.value).toBe("w");
  });

  it("refuses characters past the total with MEMORY_FULL, and takes exactly the total", () => {
    const many = facts(16, "x".repeat(490));
    const over = applyFactChange(many, { kind: "put", key: "z", value: "y".repeat(112) }, null, now);
    expect(over).toMatchObject({ ok: false, error: { code: "MEMORY_FULL", details: { chars: 8001, facts: 17 } } });
    const fits = applyFactChange(many, { kind: "put", key: "z", value: "y".repeat(111) }, null, now);
    expect(fits.ok && memoryChars(fits.value)).toBe(8000);
  });

  it("refuses a bad key or value with VALIDATION_FAILED", () => {
    const badKey = applyFactChange([], { kind: "put", key: "a b", value: "v" }, null, now);
    expect(badKey).toMatchObject({
      ok: false,
      error: { code: "VALIDATION_FAILED", details: { issues: [{ path: "key" }] } },
    });
    const badValue = applyFactChange([], { kind: "put", key: "k", value: "v".repeat(501) }, null, now);
    expect(badValue).toMatchObject({
      ok: false,
      error: { code: "VALIDATION_FAILED", details: { issues: [{ path: "value" }] } },
    });
  });

  it("deletes a key, and refuses one it does not hold with NOT_FOUND", () => {
    expect(applyFactChange([fact("a", "1"), fact("b", "2")], { kind: "delete", key: "a" }, null, now)).toEqual({
      ok: true,
      value: [fact("b", "2")],
    });
    expect(applyFactChange([fact("a", "1")], { kind: "delete", key: "b" }, null, now)).toEqual({
      ok: false,
      error: { code: "NOT_FOUND", message: "No fact 'b' in the session's memory.", details: { key: "b" } },
    });
  });
});

describe("factsPrompt", () => {
  it("is null while the memory is empty", () => {
    expect(factsPrompt([])).toBeNull();
  });

  it("lists the facts by key under its heading, one line each", () => {
    expect(factsPrompt([fact("order", "42"), fact("customer", "Ada\n  Lovelace\r\nthe first")])).toBe(
      [
        "# Session memory",
        "These facts were recorded earlier in this conversation, by its agents or by people; take them as known.",
        "- customer: Ada Lovelace the first",
        "- order: 42",
      ].join("\n"),
    );
  });
});

describe("memoryView", () => {
  it("says how full the memory is against its limits", () => {
    expect(memoryView([fact("ab", "cde")])).toEqual({
      facts: [fact("ab", "cde")],
      chars: 5,
      limits: { facts: 50, value_chars: 500, total_chars: 8000 },
    });
  });
});
