import * as z from "zod";

/**
 * An agent's capacity as its AgentDO (or the shards of a hot agent) hold it: the type of
 * the AgentDO's answers and of `GET /v1/agents/:name/load`.
 */

export const AGENT_STATUSES = ["active", "paused"] as const;
export const AgentStatus = z.enum(AGENT_STATUSES);
export type AgentStatus = z.infer<typeof AgentStatus>;

export const Lease = z.object({
  /** A sharded agent's lease ids name their shard (`…~s3of4`). */
  lease_id: z.string(),
  session_id: z.string(),
  handoff_id: z.string(),
  state: z.enum(["tentative", "held"]),
  /** Grows with every grant on the object that holds it: a holder with a smaller token is stale. */
  fencing_token: z.number().int(),
  created_at: z.string(),
  /** When a tentative lease lapses; null once held. */
  expires_at: z.string().nullable(),
});
export type Lease = z.infer<typeof Lease>;

export const AgentLoad = z.object({
  status: AgentStatus,
  /** The capacity given with the last acquire (null before any); a sharded agent's is the sum of its slices. */
  max_concurrent_sessions: z.number().int().positive().nullable(),
  active_leases: z.number().int().nonnegative(),
  leases: z.array(Lease),
});
export type AgentLoad = z.infer<typeof AgentLoad>;
