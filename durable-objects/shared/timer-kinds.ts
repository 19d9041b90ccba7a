import * as z from "zod";

/**
 * Every timer kind of both objects, one purpose each, with the zod schema of its payload
 * (parsed when the timer is read) and the keys of the singleton ones. A kind is added
 * here and its handler registered by the feature that owns it.
 */
export const TIMER_PAYLOADS = {
  /** SessionDO, CollaborationDO, RouterDO: drain the audit outbox to D1. */
  "outbox.flush": z.null(),
  /** SessionDO: idle expiry (re-checks and moves itself when the session was touched). */
  "session.expire": z.null(),
  /** SessionDO: wipe a deleted session once its audit is in D1. */
  "session.purge": z.null(),
  /** SessionDO: a graceful handoff's deadline. */
  "handoff.deadline": z.object({ handoff_id: z.string() }),
  /** SessionDO: recover flows a crash left behind and finish lease work. */
  "handoff.sweep": z.null(),
  /** SessionDO: resume a run whose loop is not running (a restart), or fail it past its resumes. */
  "run.resume": z.object({ run_id: z.string() }),
  /** SessionDO: a run in requires_action got no tool outputs in time. */
  "run.outputs_expire": z.object({ run_id: z.string() }),
  /** SessionDO: an inbox item's time for a person ran out. */
  "inbox.expire": z.object({ inbox_id: z.string() }),
  /** SessionDO: evaluate trigger points that arrived while the session was busy. */
  "triggers.drain": z.null(),
  /** SessionDO: the current agent's timeout trigger may be due. */
  "trigger.timeout": z.null(),
  /** SessionDO: deliver lifecycle notifications to the tenant's events_url. */
  "events.deliver": z.null(),
  /** SessionDO: send the runs' spans waiting for the tenant's or the operator's collector. */
  "telemetry.export": z.null(),
  /** SessionDO: a fan-out still executing past its longest task ends (a crash left it). */
  "fanout.deadline": z.object({ fanout_id: z.string() }),
  /** AgentDO: probe the agent's wait-for edges for deadlocks again. */
  "deadlock.probe": z.null(),
  /** CollaborationDO: a message's ttl or a query's timeout ran out. */
  "collab.expire": z.object({ message_id: z.string() }),
  /** AgentDO: a tentative lease lapses. */
  "lease.expire": z.object({ lease_id: z.string() }),
  /** RouterDO: settle a registry write's intent its call never settled (a crash). */
  "agent.write_check": z.null(),
} as const;

export type TimerKind = keyof typeof TIMER_PAYLOADS;
export type TimerPayload<K extends TimerKind> = z.infer<(typeof TIMER_PAYLOADS)[K]>;
export const TIMER_KINDS = Object.keys(TIMER_PAYLOADS) as TimerKind[];

/** Keys of keyed timers: scheduling under a key again moves the one timer. */
export const TIMER_KEYS = {
  flush: "outbox.flush",
  expire: "session.expire",
  purge: "session.purge",
  /** One handoff in flight per session, so one deadline. */
  handoffDeadline: "handoff.deadline",
  handoffSweep: "handoff.sweep",
  /** One active run per session, so one watchdog. */
  runResume: "run.resume",
  /** One paused run per session, so one outputs deadline. */
  toolOutputs: "run.outputs_expire",
  triggerDrain: "triggers.drain",
  deliver: "events.deliver",
  telemetryExport: "telemetry.export",
  deadlockProbe: "deadlock.probe",
  collabMessage: (messageId: string) => `collab:${messageId}`,
  triggerTimeout: "trigger.timeout",
  inbox: (inboxId: string) => `inbox:${inboxId}`,
  lease: (leaseId: string) => `lease:${leaseId}`,
  agentWriteCheck: "agent.write_check",
} as const;

export function isTimerKind(kind: string): kind is TimerKind {
  return Object.hasOwn(TIMER_PAYLOADS, kind);
}
