import type { AgentDefinition } from "../schemas/agent";

/**
 * How long an agent's question to another agent (`ask_agent`) waits: the asked agent's own
 * turn deadline (its `timeout_s`, else 30 s for a webhook and 60 s otherwise) plus a margin,
 * so the query in the collaboration never times out before the answer it waits for has had
 * its whole turn.
 */
export const PEER_QUERY_MARGIN_S = 5;

export function peerQueryTimeoutS(peer: Pick<AgentDefinition, "kind" | "timeout_s">): number {
  const turn = peer.timeout_s ?? (peer.kind === "webhook" ? 30 : 60);
  return Math.max(1, Math.ceil(turn + PEER_QUERY_MARGIN_S));
}
