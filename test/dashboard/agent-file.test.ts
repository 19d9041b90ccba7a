/// <reference types="vite/client" />
import { describe, expect, it } from "vitest";
import { agentMarkdown, DEFAULTS, scalar } from "../../public/app/agent-file.js";
import { parseAgentFile } from "../../src/registry/agent-file";
import { AgentDefinition, type AgentDefinitionInput } from "../../src/schemas/agent";

/**
 * The Markdown file the dashboard offers for copying: the Worker's own agent-file parser
 * reads it back as the very definition it was made from.
 */

const demo = import.meta.glob("../../agents/*.md", { query: "?raw", import: "default", eager: true }) as Record<
  string,
  string
>;

const roundTrip = (input: AgentDefinitionInput) => {
  const definition = AgentDefinition.parse(input);
  const markdown = agentMarkdown(definition);
  return { definition, markdown, back: parseAgentFile(markdown, `${definition.name}.md`) };
};

describe("agentMarkdown", () => {
  it("writes each demo agent as a file that parses back to the same definition", () => {
    expect(Object.keys(demo)).toHaveLength(5);
    for (const [path, text] of Object.entries(demo)) {
      const definition = parseAgentFile(text, path);
      const back = parseAgentFile(agentMarkdown(definition), path);
      expect(back, path).toEqual(definition);
    }
  });

  it("leaves defaults out, writes a bare handoff as its target's name, and the instructions as the body", () => {
    const { markdown } = roundTrip({
      name: "shipping",
      description: "Parcels",
      instructions: "You track parcels.",
      handoffs: ["triage", { to: "billing", condition: "refund_amount > 500" }],
    });
    expect(markdown).toBe(
      [
        "---",
        "name: shipping",
        "description: Parcels",
        "kind: llm",
        "handoffs:",
        "  - triage",
        "  - to: billing",
        "    condition: refund_amount > 500",
        "---",
        "You track parcels.",
        "",
      ].join("\n"),
    );
  });

  it("keeps what YAML would misread: colons, hashes, quotes, numbers and words YAML reserves, blank edges, line breaks", () => {
    const { definition, back, markdown } = roundTrip({
      name: "tricky",
      title: "Refunds: over $500 # really",
      description: "line one\nline two\t'quoted' \"double\" \\ back\u2028sep\u007f",
      kind: "webhook",
      endpoint: "https://hooks.example.com/relay?x=1&y=2",
      enabled: false,
      timeout_s: 45,
      max_concurrent_sessions: 3,
      instructions: "  starts with blanks\n---\nand has a dashed line  ",
      triggers: {
        keywords: ["true", "null", "500", "yes", "- dash", "a, b", "[x]", "退款", "credit card", "~"],
        patterns: ["charged\\s+(twice|two times)", "^\\s*(hi|hello)\\b"],
        examples: [
          "a, b: c",
          "a,b:c",
          "x #y",
          "x#y",
          "ends:",
          "Ünïcödé, ok",
          " leading blank",
          "trailing blank ",
          "@at",
          "`tick`",
          "%pct",
          "!bang",
          "*star",
          "&amp",
        ],
        priority: 0,
      },
      capabilities: [{ name: "billing", proficiency: 0.95, tags: ["payments"] }, { name: "refunds" }],
      handoffs: [
        {
          to: "supervisor",
          when: "conditional",
          condition: 'refund_amount > 500 && tier == "gold"',
          requires_approval: true,
          include_context: false,
          description: "A person: approves",
          trigger: { type: "event", event: "refund.requested", expression: "event.amount > 500" },
          filter: { redact_pii: true, max_history: 20, history: "nested" },
          input_schema: {
            type: "object",
            properties: { "order-id": { type: "string" }, $ref: { const: "#/x" } },
            required: ["order-id"],
          },
        },
        { to: "triage", filter: {} },
      ],
      tools: { allow: ["lookup_order", "refund"], confirmation: { require: ["refund"], timeout_s: 60 } },
      guardrails: { output_schema: { type: "object", required: ["answer"] }, on_failure: "repair" },
      model: "@cf/meta/llama-3.1-8b-instruct",
      signing: "none",
    });
    expect(back).toEqual(definition);
    // The instructions with blanks at their edges stay in the front matter (the body is read trimmed).
    expect(markdown.trimEnd().endsWith("---")).toBe(true);
  });

  it("writes defaults the entry spelled out only where leaving them out would change the definition", () => {
    const { definition, back, markdown } = roundTrip({
      name: "plain",
      handoffs: [{ to: "triage", filter: {} }],
      guardrails: {},
    });
    expect(back).toEqual(definition);
    expect(markdown).toContain("filter: {}");
    expect(markdown).toContain("guardrails: {}");
  });

  it("has the schema's defaults", () => {
    const bare = AgentDefinition.parse({ name: "x" });
    for (const [field, value] of Object.entries(DEFAULTS.agent))
      expect(bare[field as keyof typeof bare], field).toEqual(value);
    const parsed = AgentDefinition.parse({
      name: "x",
      capabilities: [{ name: "c" }],
      handoffs: [{ to: "y", filter: {} }],
      guardrails: {},
    });
    expect(parsed.triggers).toEqual(DEFAULTS.triggers);
    expect(parsed.capabilities[0]).toEqual({ name: "c", ...DEFAULTS.capability });
    const { to: _to, filter, ...handoff } = parsed.handoffs[0]!;
    expect(handoff).toEqual(DEFAULTS.handoff);
    expect(filter).toEqual(DEFAULTS.filter);
    expect(parsed.tools).toEqual({ ...DEFAULTS.tools, confirmation: DEFAULTS.confirmation });
    expect(parsed.guardrails).toEqual(DEFAULTS.guardrails);
  });
});

describe("scalar", () => {
  it("writes plain words plain and anything YAML could misread as a JSON string", () => {
    expect(scalar("billing")).toBe("billing");
    expect(scalar("credit card")).toBe("credit card");
    expect(scalar("退款")).toBe("退款");
    expect(scalar("true")).toBe('"true"');
    expect(scalar("500")).toBe('"500"');
    expect(scalar("a: b")).toBe('"a: b"');
    expect(scalar("Payments, refunds and invoices.")).toBe("Payments, refunds and invoices.");
    expect(scalar("Payments, refunds", true)).toBe('"Payments, refunds"');
    expect(scalar("the #1 agent")).toBe('"the #1 agent"');
    expect(scalar("ends with:")).toBe('"ends with:"');
    expect(scalar(500)).toBe("500");
    expect(scalar(false)).toBe("false");
  });
});
