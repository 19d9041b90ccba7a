import * as z from "zod";
import { AgentName, HandoffFilter, HandoffSpec } from "../schemas/agent";
import { HandoffMode } from "../schemas/handoff";

/**
 * A handoff that passed validation: everything the context builder and the switch need.
 * Stored with the handoff (parsed on read), so it is a schema rather than an interface.
 */

const CapabilityHit = z.object({
  required: z.string(),
  capability: z.string(),
  via: z.enum(["name", "tag"]),
  weight: z.number(),
});

/** How a by-capability target matched (collaboration/capability-match.ts computes it). */
const CapabilityMatch = z.object({
  agent: z.string(),
  score: z.number(),
  matched: z.array(z.string()),
  missing: z.array(z.string()),
  hits: z.array(CapabilityHit),
});

export const ValidatedHandoff = z.object({
  mode: HandoffMode,
  source: AgentName,
  target: AgentName,
  /** The source's whitelist entry for the target (always set for a transfer). */
  entry: HandoffSpec.nullable(),
  include_context: z.boolean(),
  filter: HandoffFilter.partial(),
  /** The stack after the handoff. */
  chain: z.array(AgentName),
  depth: z.number().int().min(0),
  /** By capability: how the chosen target matched. */
  match: CapabilityMatch.nullable(),
});
export type ValidatedHandoff = z.infer<typeof ValidatedHandoff>;
