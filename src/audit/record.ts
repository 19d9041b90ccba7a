import * as z from "zod";

/**
 * One audit record (docs/sessions.md, The audit trail): who did what to which session or handoff, and when.
 * Records are immutable; their ULID id makes every write of them idempotent.
 */

/** Who acted: a person or client, an agent, Relay itself, a signed webhook, or a handoff trigger. */
export const ActorType = z.enum(["user", "agent", "system", "webhook", "trigger"]);
export type ActorType = z.infer<typeof ActorType>;

/** Audit actions are dotted and in the past tense: `session.created`, `handoff.completed`. */
export const AuditAction = z
  .string()
  .max(100)
  .regex(/^[a-z][a-z_]*(\.[a-z][a-z_]*)+$/, "must be dotted lower-case words, e.g. session.created");
export type AuditAction = z.infer<typeof AuditAction>;

export const Actor = z.strictObject({
  actor: z.string().min(1).max(200),
  actor_type: ActorType,
});
export type Actor = z.infer<typeof Actor>;

/** The actor of calls made through the HTTP API with a tenant's key. */
export const API_ACTOR: Actor = { actor: "api", actor_type: "user" };
/** An agent acting in a session (its turn's writes, its tool calls, its handoffs). */
export const agentActor = (agent: string): Actor => ({ actor: agent, actor_type: "agent" });
/** Relay itself: timers, the router, expiry. */
export const SYSTEM_ACTOR: Actor = { actor: "relay", actor_type: "system" };

export const AuditRecord = z.strictObject({
  id: z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, "must be a ULID"),
  /** ISO 8601 time the change was made. */
  at: z.iso.datetime(),
  tenant: z.string().min(1),
  session_id: z.string().nullable(),
  handoff_id: z.string().nullable(),
  action: AuditAction,
  /** The agent the record is about (the session's agent, a handoff's target), for `?agent=` queries. */
  agent: z.string().nullable(),
  actor: z.string().min(1),
  actor_type: ActorType,
  details: z.record(z.string(), z.unknown()),
});
export type AuditRecord = z.infer<typeof AuditRecord>;
