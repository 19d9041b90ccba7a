/**
 * Deadlock detection across agents (docs/collaboration.md, Deadlocks): edge-chasing probes in the style of
 * Chandy–Misra–Haas. The wait-for graph is spread over the agents' objects — each holds only
 * its own outgoing edges (whom it waits for, since when, on which message) — so no object
 * sees it whole. An agent that starts to wait, and every waiting agent on its periodic
 * alarm, sends a probe along its edges; each agent that receives one forwards it along its
 * own edges with itself appended. A probe that comes back to its initiator has travelled a
 * cycle, and carries every edge of it. Pure: the objects deliver probes; this decides.
 */

/** A wait-for edge, held by the waiting agent's object. */
export interface WaitEdge {
  from: string;
  to: string;
  /** Epoch ms the wait started. */
  since: number;
  /** The message (query, escalation) the wait is for. */
  message_id: string;
}

export interface Probe {
  initiator: string;
  /** The edges travelled so far, from the initiator's. */
  edges: WaitEdge[];
}

/** Probes past this many hops are dropped (a bound on message cost, far above any real cycle). */
export const MAX_PROBE_HOPS = 64;

export interface ProbeStep {
  /** The cycle's edges when the probe came back to its initiator. */
  cycle: WaitEdge[] | null;
  /** Probes to send on, each to the agent it is addressed to. */
  forward: { to: string; probe: Probe }[];
}

/** The probes an agent sends along its own edges when it starts to wait, or on its alarm. */
export function startProbes(self: string, edges: readonly WaitEdge[]): { to: string; probe: Probe }[] {
  return edges.filter((e) => e.from === self).map((e) => ({ to: e.to, probe: { initiator: self, edges: [e] } }));
}

/** What an agent does with a probe that reached it, given its own outgoing edges. */
export function onProbe(self: string, probe: Probe, edges: readonly WaitEdge[]): ProbeStep {
  if (self === probe.initiator) return { cycle: probe.edges, forward: [] };
  // Back at an agent it passed, not the initiator: a cycle the initiator is not on, which
  // that cycle's own members detect with their probes.
  if (probe.edges.some((e) => e.from === self) || probe.edges.length >= MAX_PROBE_HOPS)
    return { cycle: null, forward: [] };
  return {
    cycle: null,
    forward: edges
      .filter((e) => e.from === self)
      .map((e) => ({ to: e.to, probe: { initiator: probe.initiator, edges: [...probe.edges, e] } })),
  };
}

/**
 * The wait to break in a cycle: the earliest waiter's (ties: by agent name). Every member
 * that detects the cycle picks the same edge, and breaking it is idempotent (the waiter's
 * object checks the edge is still there), so a cycle found by several probes breaks once.
 */
export function victimOf(cycle: readonly WaitEdge[]): WaitEdge {
  return [...cycle].sort((a, b) => a.since - b.since || (a.from < b.from ? -1 : a.from > b.from ? 1 : 0))[0]!;
}

/** The agents of a cycle, in wait order from the victim (for the audit record). */
export function cycleAgents(cycle: readonly WaitEdge[]): string[] {
  const start = cycle.indexOf(victimOf(cycle));
  return [...cycle.slice(start), ...cycle.slice(0, start)].map((e) => e.from);
}
