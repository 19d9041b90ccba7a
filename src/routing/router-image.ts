/**
 * A registry's router in two steps (docs/scaling.md, "Incremental compilation"):
 *
 * 1. **Parts.** `compileAgentPart` compiles one agent on its own: its keywords normalised, its
 *    patterns admitted and compiled to programs, its examples' features extracted. A registry
 *    change recompiles the part of the agent it changed, nothing else.
 * 2. **Link.** `linkRouterImage` joins the parts of a registry version (in name order) into a
 *    `RouterImage`: plain data — typed arrays, strings, numbers — that Workers RPC and
 *    structured clone carry as they are, so the router object that builds it can hand it to
 *    any isolate, which wraps it (`routerFromImage` in rule-router.ts) without compiling.
 *
 * Linking builds what depends on every agent at once: one automaton over every keyword and
 * factor, the pattern programs in shared tables within the tenant's pattern budget, and the
 * classifier's vocabulary, postings and model (trained jointly up to TRAINED_AGENTS_MAX
 * agents, counted beyond).
 */
import type { AgentDefinition } from "../schemas/agent";
import {
  type ClassifierImage,
  type ClassifierPart,
  compileClassifierPart,
  linkClassifierImage,
} from "./classifier/classifier-link";
import type { SoftmaxOptions } from "./classifier/softmax";
import { trainingTexts } from "./classifier/training-texts";
import { type CompileOptions, compileRulePart, linkRuleImage, type RuleImage, type RulePart } from "./rules";

/** What routing tells of an agent besides its rules: the fallback's list and the LLM tier's tools. */
export interface RouteAgent {
  name: string;
  title?: string;
  description: string;
  enabled: boolean;
  triggers: { keywords: string[] };
  max_concurrent_sessions?: number;
}

/** One agent, compiled on its own. */
export interface AgentPart {
  name: string;
  enabled: boolean;
  agent: RouteAgent;
  rules: RulePart;
  classifier: ClassifierPart;
  /** Real examples (not keywords or description), for the calibration. */
  exampleCount: number;
  /** What its patterns cost the tenant's budget (0 when disabled). */
  cost: number;
}

/** Compiles one agent's part. */
export function compileAgentPart(agent: AgentDefinition): AgentPart {
  const rules = compileRulePart(agent);
  return {
    name: agent.name,
    enabled: agent.enabled,
    agent: {
      name: agent.name,
      ...(agent.title === undefined ? {} : { title: agent.title }),
      description: agent.description,
      enabled: agent.enabled,
      triggers: { keywords: [...agent.triggers.keywords] },
      ...(agent.max_concurrent_sessions === undefined
        ? {}
        : { max_concurrent_sessions: agent.max_concurrent_sessions }),
    },
    rules,
    classifier: compileClassifierPart({ agent: agent.name, examples: agent.enabled ? trainingTexts(agent) : [] }),
    exampleCount: agent.triggers.examples.length,
    cost: agent.enabled ? rules.cost : 0,
  };
}

/** A linked router: everything a route reads, as plain data. */
export interface RouterImage {
  /** Every agent of the registry (enabled or not), in the order given to the link. */
  agents: RouteAgent[];
  rules: RuleImage;
  /** Null when no agent is enabled. */
  classifier: ClassifierImage | null;
  /** Per enabled agent (the rules' agent order): its real examples. */
  exampleCounts: Int32Array;
}

export type LinkOptions = CompileOptions & Partial<SoftmaxOptions> & { trained?: boolean };

/** Links the parts of a registry version (their order breaks ties between equal scores). */
export function linkRouterImage(parts: readonly AgentPart[], options: LinkOptions = {}): RouterImage {
  const enabled = parts.filter((p) => p.enabled);
  return {
    agents: parts.map((p) => p.agent),
    rules: linkRuleImage(
      enabled.map((p) => p.rules),
      options,
    ),
    classifier:
      enabled.length === 0
        ? null
        : linkClassifierImage(
            enabled.map((p) => p.classifier),
            options,
          ),
    exampleCounts: Int32Array.from(enabled.map((p) => p.exampleCount)),
  };
}
