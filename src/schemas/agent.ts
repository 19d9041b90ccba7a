import * as z from "zod";
import { MemoryPolicy } from "./memory";
import { SecretHeaders, SecretName } from "./vault";

/** Agent names are slugs: they appear in URLs, tool names and audit records. */
export const AgentName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "must be a slug: lower-case letters, digits, '-' or '_', at most 64 characters");
export type AgentName = z.infer<typeof AgentName>;

export const AgentKind = z.enum(["llm", "webhook", "human", "a2a"]);
export type AgentKind = z.infer<typeof AgentKind>;

export const LIMITS = {
  keywords: 500,
  patterns: 100,
  examples: 2000,
  handoffs: 50,
  capabilities: 100,
} as const;

export const Triggers = z.strictObject({
  keywords: z.array(z.string().trim().min(1).max(100)).max(LIMITS.keywords).default([]),
  patterns: z.array(z.string().min(1).max(500)).max(LIMITS.patterns).default([]),
  examples: z.array(z.string().trim().min(1).max(1000)).max(LIMITS.examples).default([]),
  /** Multiplies the rule score by priority/100 (docs/routing.md, The tiers). */
  priority: z.number().int().min(0).max(100).default(50),
});
export type Triggers = z.infer<typeof Triggers>;

export const Capability = z.strictObject({
  name: z.string().trim().min(1).max(100),
  proficiency: z.number().min(0).max(1).default(1),
  tags: z.array(z.string().max(100)).max(50).default([]),
});
export type Capability = z.infer<typeof Capability>;

export const HandoffFilter = z.strictObject({
  /** Keep the first 2 and the last N−2 history items. */
  max_history: z.number().int().min(2).max(10_000).optional(),
  redact_pii: z.boolean().default(false),
  remove_tool_items: z.boolean().default(false),
  /**
   * What the target sees of the conversation: `full` (after the other filters), `nested`
   * (one summary message, so long chains do not blow up the context), `summary` (the source's
   * latest compaction and what followed it, in one message: docs/memory.md), or `none`.
   */
  history: z.enum(["full", "nested", "summary", "none"]).default("full"),
});
export type HandoffFilter = z.infer<typeof HandoffFilter>;

export const HandoffWhen = z.enum(["manual", "auto", "conditional"]);

/**
 * What starts a handoff nobody asks for by hand (docs/triggers.md): on an entry with `when: auto`
 * or `conditional`. `condition`: `expression` holds on the session state (checked after
 * every state change); `event`: a session event named `event` arrives (and `expression`, if
 * any, holds on the state with the event's data as `event`); `explicit`: fired by name
 * through the API or a webhook; `timeout`: the agent held the session `timeout_s` without
 * progress; `error`: a turn failed with one of `error_types` ("*": any); `capability`: a task
 * needs capabilities the agent lacks (`capabilities`, if given, limits which).
 */
export const TRIGGER_TYPES = ["condition", "event", "explicit", "timeout", "error", "capability"] as const;
export const TriggerType = z.enum(TRIGGER_TYPES);
export type TriggerType = z.infer<typeof TriggerType>;

export const HandoffTrigger = z
  .strictObject({
    type: TriggerType,
    expression: z.string().min(1).max(2000).optional(),
    event: z.string().trim().min(1).max(100).optional(),
    timeout_s: z
      .number()
      .int()
      .min(1)
      .max(7 * 86_400)
      .optional(),
    error_types: z.array(z.string().trim().min(1).max(100)).min(1).max(50).optional(),
    capabilities: z.array(z.string().trim().min(1).max(100)).min(1).max(50).optional(),
  })
  .superRefine((trigger, ctx) => {
    const needs: Partial<Record<TriggerType, keyof typeof trigger>> = {
      condition: "expression",
      event: "event",
      timeout: "timeout_s",
      error: "error_types",
    };
    const field = needs[trigger.type];
    if (field && trigger[field] === undefined)
      ctx.addIssue({ code: "custom", path: [field], message: `a ${trigger.type} trigger needs ${field}` });
  });
export type HandoffTrigger = z.infer<typeof HandoffTrigger>;

const HandoffObject = z.strictObject({
  to: AgentName,
  when: HandoffWhen.default("manual"),
  description: z.string().max(2000).optional(),
  include_context: z.boolean().default(true),
  /** JSON Schema of the payload the handing-over agent must provide. */
  input_schema: z.record(z.string(), z.unknown()).optional(),
  /** Condition expression over session state (docs/handoffs.md, Conditions); the handoff is offered only when true. */
  condition: z.string().max(2000).optional(),
  filter: HandoffFilter.optional(),
  /** A person approves the handoff (from the inbox) before the run carries it out. */
  requires_approval: z.boolean().default(false),
  /** What starts this handoff by itself (`when: auto` or `conditional` only). */
  trigger: HandoffTrigger.optional(),
});

/** A handoff entry: the full object, or just the target's name (a shorthand for agent files). */
export const HandoffSpec = z.union([AgentName.transform((to) => HandoffObject.parse({ to })), HandoffObject]);
export type HandoffSpec = z.infer<typeof HandoffObject>;

export const ToolPolicy = z.strictObject({
  /** The registry tools (`/v1/tools`) the agent may call; a call to any other gets an error output and never runs. */
  allow: z.array(z.string().max(100)).max(200).default([]),
  confirmation: z
    .strictObject({
      /** Tools whose calls wait for a person's approval in the inbox. */
      require: z.array(z.string().max(100)).max(200).default([]),
      /** How long an approval waits; past it the call is denied. */
      timeout_s: z.number().int().min(1).max(86_400).default(300),
      /**
       * What the person is asked: `{{agent}}`, `{{tool}}`, `{{arguments}}` (JSON) and
       * `{{arguments.<path>}}` are filled in. Default: "<agent> wants to call <tool> with <arguments>".
       */
      prompt_template: z.string().min(1).max(4000).optional(),
    })
    .default({ require: [], timeout_s: 300 }),
});

export const Guardrails = z.strictObject({
  output_schema: z.record(z.string(), z.unknown()).optional(),
  on_failure: z.enum(["reject", "repair", "warn"]).default("reject"),
});

/**
 * How Relay signs what it sends to a webhook agent's endpoint or an http tool's url
 * (Standard Webhooks). `signed` (the default when absent): with the definition's
 * `signing_secret` from the tenant's vault when it names one, else the tenant's signing
 * secret (`GET /v1/config/signing-secret`). `none`: unsigned, only when the definition says so.
 */
export const Signing = z.enum(["signed", "none"]);
export type Signing = z.infer<typeof Signing>;

/** An agent definition (docs/agents.md): what the registry stores and the routers compile. */
export const AgentDefinition = z
  .strictObject({
    name: AgentName,
    title: z.string().trim().min(1).max(200).optional(),
    description: z.string().max(4000).default(""),
    kind: AgentKind.default("llm"),
    enabled: z.boolean().default(true),
    instructions: z
      .string()
      .max(64 * 1024)
      .default(""),
    model: z.string().max(200).optional(),
    /** Webhook agents: where turns are POSTed. Relay's outbound address policy applies (docs/security.md). */
    endpoint: z.url({ protocol: /^https?$/ }).optional(),
    signing: Signing.optional(),
    /**
     * Webhook and a2a agents: the vault secret that signs what Relay sends the agent (a
     * Standard Webhooks secret, `whsec_…`; several, comma-separated, while rotating). Absent:
     * the tenant's signing secret.
     */
    signing_secret: SecretName.optional(),
    /**
     * Webhook and a2a agents: headers sent with every call, each taking its value from the
     * tenant's vault secret named (`{ "Authorization": "billing-token" }`: docs/security.md).
     */
    headers: SecretHeaders.optional(),
    /**
     * Remote A2A agents (`kind: a2a`): the URL of the agent's card (A2A 1.0, docs/a2a.md). Read
     * through the outbound address policy, like every address a tenant names.
     */
    card_url: z.url({ protocol: /^https?$/ }).optional(),
    triggers: Triggers.default({ keywords: [], patterns: [], examples: [], priority: 50 }),
    capabilities: z.array(Capability).max(LIMITS.capabilities).default([]),
    handoffs: z.array(HandoffSpec).max(LIMITS.handoffs).default([]),
    tools: ToolPolicy.default({ allow: [], confirmation: { require: [], timeout_s: 300 } }),
    guardrails: Guardrails.optional(),
    /**
     * How long one turn of this agent may take: the model or webhook call, or for a human
     * agent the wait for a person in the inbox. Defaults: model 60 s, webhook 30 s, human 24 h.
     */
    timeout_s: z
      .number()
      .int()
      .min(1)
      .max(7 * 86_400)
      .optional(),
    /** How its turns stay within the model's context (docs/memory.md); absent: the defaults. */
    memory: MemoryPolicy.optional(),
    /** Sessions the agent may hold at once; absent: no limit (and no capacity lease). */
    max_concurrent_sessions: z.number().int().min(1).max(1_000_000).optional(),
  })
  .superRefine((agent, ctx) => {
    if (agent.kind === "webhook" && !agent.endpoint) {
      ctx.addIssue({ code: "custom", path: ["endpoint"], message: "a webhook agent needs an endpoint" });
    }
    if (agent.kind === "a2a" && !agent.card_url) {
      ctx.addIssue({ code: "custom", path: ["card_url"], message: "an a2a agent needs a card_url" });
    }
    if (agent.kind !== "a2a" && agent.card_url) {
      ctx.addIssue({ code: "custom", path: ["card_url"], message: "only an a2a agent has a card_url" });
    }
    const remote = agent.kind === "webhook" || agent.kind === "a2a";
    if (!remote && agent.signing_secret)
      ctx.addIssue({ code: "custom", path: ["signing_secret"], message: "only a webhook or a2a agent is signed" });
    if (!remote && agent.headers)
      ctx.addIssue({ code: "custom", path: ["headers"], message: "only a webhook or a2a agent is sent headers" });
    if (agent.signing === "none" && agent.signing_secret)
      ctx.addIssue({
        code: "custom",
        path: ["signing_secret"],
        message: "an agent with signing: none has no signing secret",
      });
    const seen = new Set<string>();
    agent.handoffs.forEach((h, i) => {
      if (h.to === agent.name)
        ctx.addIssue({ code: "custom", path: ["handoffs", i, "to"], message: "an agent cannot hand off to itself" });
      if (seen.has(h.to))
        ctx.addIssue({ code: "custom", path: ["handoffs", i, "to"], message: `duplicate handoff to '${h.to}'` });
      if (h.trigger && h.when === "manual")
        ctx.addIssue({
          code: "custom",
          path: ["handoffs", i, "when"],
          message: "a handoff with a trigger is `auto` or `conditional`",
        });
      seen.add(h.to);
    });
  });
export type AgentDefinition = z.infer<typeof AgentDefinition>;
export type AgentDefinitionInput = z.input<typeof AgentDefinition>;

/** An agent as the API returns it: the definition plus registry bookkeeping. */
export const StoredAgent = z.object({
  definition: AgentDefinition,
  created_at: z.string(),
  updated_at: z.string(),
});
export type StoredAgent = z.infer<typeof StoredAgent>;
