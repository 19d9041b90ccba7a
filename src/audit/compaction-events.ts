import type { Compaction } from "../schemas/memory";
import { type AuditScope, auditEvent } from "./events";
import type { Actor, AuditRecord } from "./record";

/**
 * An agent's view was compacted (docs/memory.md, Compaction): which range the compaction covers
 * and what it saved. The summary's text stays in the session, like every message.
 */
export function memoryCompacted(scope: AuditScope, actor: Actor, now: number, compaction: Compaction): AuditRecord {
  const { id, agent, strategy, from_seq, through_seq, items, tokens_before, tokens_after, run_id } = compaction;
  return auditEvent(
    scope,
    {
      action: "memory.compacted",
      actor,
      agent,
      details: { compaction_id: id, run_id, strategy, from_seq, through_seq, items, tokens_before, tokens_after },
    },
    now,
  );
}
