import { auditEvent } from "./events";
import type { Actor, AuditRecord } from "./record";

/** A collaboration's audit record: tenant-wide (no session), naming the collaboration and its phase. */
export function collaborationEvent(
  tenant: string,
  record: { id: string; phase: string },
  action: string,
  actor: Actor,
  now: number,
  details: Record<string, unknown>,
): AuditRecord {
  return auditEvent(
    { tenant, session_id: null },
    { action, actor, details: { collaboration_id: record.id, phase: record.phase, ...details } },
    now,
  );
}
