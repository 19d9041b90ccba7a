import type { AgentDefinition } from "../schemas/agent";
import type { CapabilityHit, CapabilityMatch } from "../schemas/collaboration";

export type { CapabilityHit, CapabilityMatch };

/**
 * The proficiency-weighted capability matcher (docs/collaboration.md, Capability matching): for each
 * required capability an agent has, add its proficiency; the score is that sum divided by
 * the number of required capabilities, so 0..1.
 *
 * Rules beyond that sum:
 * - Names compare case-insensitively after trimming; duplicate requirements count once.
 * - A requirement equal to one of a capability's tags matches at that capability's
 *   proficiency × `TAG_WEIGHT` (0.8): a tag is weaker evidence than a name. When several
 *   capabilities match one requirement, the best value counts.
 * - Agents that match nothing are left out (even with min_score 0), as are disabled and
 *   excluded agents. Scores are rounded to 4 decimals before they are compared, so
 *   0.1 + 0.2 meets a min_score of 0.3.
 * - Order: score descending, then name ascending.
 */

export const TAG_WEIGHT = 0.8;

/** The fields of an agent the matcher reads. */
export type MatchableAgent = Pick<AgentDefinition, "name" | "capabilities"> & { enabled?: boolean };

export interface CapabilityMatchOptions {
  /** Agent names to leave out (case-insensitive). */
  exclude?: readonly string[];
  /** Keep agents scoring at least this (0..1); default 0. */
  min_score?: number;
}

const norm = (s: string): string => s.trim().toLowerCase();

/** Requirements trimmed, empty ones dropped, case-insensitive duplicates removed (first spelling kept). */
export function normalizeRequired(required: readonly string[]): string[] {
  const seen = new Set<string>();
  const out: string[] = [];
  for (const raw of required) {
    const name = raw.trim();
    const key = name.toLowerCase();
    if (name === "" || seen.has(key)) continue;
    seen.add(key);
    out.push(name);
  }
  return out;
}

/** Scores one agent against the requirements, whatever its score (no filtering, no exclusion). */
export function scoreAgent(agent: MatchableAgent, required: readonly string[]): CapabilityMatch {
  const wanted = normalizeRequired(required);
  const hits: CapabilityHit[] = [];
  const missing: string[] = [];
  for (const req of wanted) {
    const hit = bestHit(agent, req);
    if (hit) hits.push(hit);
    else missing.push(req);
  }
  const sum = hits.reduce((total, hit) => total + hit.weight, 0);
  const score = wanted.length === 0 ? 0 : roundScore(sum / wanted.length);
  return { agent: agent.name, score, matched: hits.map((h) => h.required), missing, hits };
}

function bestHit(agent: MatchableAgent, required: string): CapabilityHit | null {
  const key = norm(required);
  let best: CapabilityHit | null = null;
  for (const cap of agent.capabilities) {
    let candidate: CapabilityHit | null = null;
    if (norm(cap.name) === key) {
      candidate = { required, capability: cap.name, via: "name", weight: cap.proficiency };
    } else if (cap.tags.some((tag) => norm(tag) === key)) {
      candidate = { required, capability: cap.name, via: "tag", weight: cap.proficiency * TAG_WEIGHT };
    }
    if (candidate && (best === null || candidate.weight > best.weight)) best = candidate;
  }
  return best;
}

/**
 * Ranks agents for the required capabilities: enabled, not excluded, matching at least
 * one requirement, scoring ≥ min_score; best first, ties by name.
 */
export function matchCapabilities(
  agents: readonly MatchableAgent[],
  required: readonly string[],
  options: CapabilityMatchOptions = {},
): CapabilityMatch[] {
  const excluded = new Set((options.exclude ?? []).map(norm));
  const minScore = options.min_score ?? 0;
  const ranked = agents
    .filter((agent) => agent.enabled !== false && !excluded.has(norm(agent.name)))
    .map((agent) => scoreAgent(agent, required))
    .filter((match) => match.matched.length > 0 && match.score >= minScore);
  return ranked.sort((a, b) => b.score - a.score || (a.agent < b.agent ? -1 : a.agent > b.agent ? 1 : 0));
}

/** Scores as reported: rounded to 4 decimals. */
export function roundScore(n: number): number {
  return Math.round(n * 10_000) / 10_000;
}
