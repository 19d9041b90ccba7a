import type { InboxIndexRow, InboxKind, InboxStatus } from "../schemas/inbox";
import type { AuditRecord } from "./record";

/**
 * The D1 `inbox_items` index behind `GET /v1/inbox`: one row per inbox item, projected from
 * its audit records and written in the same D1 batch as them (as session-index.ts does for
 * sessions). Items live in their sessions' Durable Objects; D1 hears of them when an
 * outbox flushes, so the index is eventually consistent and exactly as durable as the
 * audit log. Replies are not here: the audit trail keeps content out of D1.
 *
 * Replays and reordering change nothing: creation fields are only ever filled in (never
 * overwritten), and `status` moves only to the value of a newer record.
 */

const CLOSINGS: Record<string, InboxStatus> = {
  "inbox.item_resolved": "resolved",
  "inbox.item_expired": "expired",
  "inbox.item_cancelled": "cancelled",
};

/** What one batch says about one item. */
interface Projection {
  tenant: string;
  id: string;
  session_id: string;
  created: {
    kind: string;
    agent: string | null;
    run_id: string | null;
    handoff_id: string | null;
    reason: string;
    at: string;
    expires_at: string | null;
  } | null;
  status: InboxStatus;
  statusAuditId: string;
  closedAt: string | null;
  resolvedBy: string | null;
}

const str = (value: unknown): string | null => (typeof value === "string" && value.length > 0 ? value : null);

function project(records: readonly AuditRecord[]): Projection[] {
  const items = new Map<string, Projection>();
  for (const record of records) {
    const closing = CLOSINGS[record.action];
    if (record.action !== "inbox.item_created" && closing === undefined) continue;
    const id = str(record.details.inbox_id);
    // Items belong to a session, or to a collaboration (its escalations): its id stands in the session column.
    const owner = record.session_id ?? str(record.details.collaboration_id);
    if (id === null || owner === null) continue;
    const key = `${record.tenant}\u0000${id}`;
    let p = items.get(key);
    if (!p) {
      p = {
        tenant: record.tenant,
        id,
        session_id: owner,
        created: null,
        status: "open",
        statusAuditId: "",
        closedAt: null,
        resolvedBy: null,
      };
      items.set(key, p);
    }
    if (record.action === "inbox.item_created") {
      const d = record.details;
      p.created = {
        kind: String(d.kind),
        // The record's columns: its details leave them out (older records repeat them).
        agent: record.agent ?? str(d.agent),
        run_id: str(d.run_id),
        handoff_id: record.handoff_id ?? str(d.handoff_id),
        reason: typeof d.reason === "string" ? d.reason : "",
        at: record.at,
        expires_at: str(d.expires_at),
      };
      // Open, unless a close of this item is already in the batch (its id is always newer).
      if (p.statusAuditId === "") p.statusAuditId = record.id;
    } else if (record.id > p.statusAuditId) {
      p.status = closing!;
      p.statusAuditId = record.id;
      p.closedAt = record.at;
      p.resolvedBy = closing === "resolved" ? str(record.details.resolved_by) : null;
    }
  }
  return [...items.values()];
}

/** The upserts that bring the index up to date with `records`, one per inbox item. */
export function inboxIndexStatements(db: D1Database, records: readonly AuditRecord[]): D1PreparedStatement[] {
  return project(records).map((p) =>
    db
      .prepare(
        `INSERT INTO inbox_items (tenant, id, session_id, kind, status, agent, run_id, handoff_id, reason, created_at, expires_at,
                                  closed_at, resolved_by, status_audit_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)
         ON CONFLICT (tenant, id) DO UPDATE SET
           kind = COALESCE(inbox_items.kind, excluded.kind),
           agent = COALESCE(inbox_items.agent, excluded.agent),
           run_id = COALESCE(inbox_items.run_id, excluded.run_id),
           handoff_id = COALESCE(inbox_items.handoff_id, excluded.handoff_id),
           reason = COALESCE(inbox_items.reason, excluded.reason),
           created_at = COALESCE(inbox_items.created_at, excluded.created_at),
           expires_at = COALESCE(inbox_items.expires_at, excluded.expires_at),
           status = CASE WHEN excluded.status_audit_id > inbox_items.status_audit_id THEN excluded.status ELSE inbox_items.status END,
           closed_at = CASE WHEN excluded.status_audit_id > inbox_items.status_audit_id THEN excluded.closed_at ELSE inbox_items.closed_at END,
           resolved_by = CASE WHEN excluded.status_audit_id > inbox_items.status_audit_id THEN excluded.resolved_by ELSE inbox_items.resolved_by END,
           status_audit_id = MAX(inbox_items.status_audit_id, excluded.status_audit_id)`,
      )
      .bind(
        p.tenant,
        p.id,
        p.session_id,
        p.created?.kind ?? null,
        p.status,
        p.created?.agent ?? null,
        p.created?.run_id ?? null,
        p.created?.handoff_id ?? null,
        p.created?.reason ?? null,
        p.created?.at ?? null,
        p.created?.expires_at ?? null,
        p.closedAt,
        p.resolvedBy,
        p.statusAuditId,
      ),
  );
}

export interface InboxIndexQuery {
  status?: InboxStatus;
  agent?: string;
  kind?: InboxKind;
  session_id?: string;
  limit: number;
  /** The id of the previous page's last item (exclusive). */
  after?: string;
}

/** One page of a tenant's inbox, oldest first; `next` is the cursor position or null. */
export async function queryInbox(
  db: D1Database,
  tenant: string,
  query: InboxIndexQuery,
): Promise<{ items: InboxIndexRow[]; next: string | null }> {
  const where = ["tenant = ?1", "kind IS NOT NULL"];
  const binds: (string | number)[] = [tenant];
  const bind = (clause: (n: string) => string, value: string | number) => {
    binds.push(value);
    where.push(clause(`?${binds.length}`));
  };
  if (query.status) bind((n) => `status = ${n}`, query.status);
  if (query.agent) bind((n) => `agent = ${n}`, query.agent);
  if (query.kind) bind((n) => `kind = ${n}`, query.kind);
  if (query.session_id) bind((n) => `session_id = ${n}`, query.session_id);
  if (query.after) bind((n) => `id > ${n}`, query.after);
  binds.push(query.limit + 1);
  const { results } = await db
    .prepare(
      `SELECT id, kind, status, session_id, agent, run_id, handoff_id, reason, created_at, expires_at, closed_at, resolved_by
       FROM inbox_items WHERE ${where.join(" AND ")} ORDER BY id LIMIT ?${binds.length}`,
    )
    .bind(...binds)
    .all<InboxIndexRow>();
  const items = results.slice(0, query.limit);
  return { items, next: results.length > query.limit ? (items.at(-1)?.id ?? null) : null };
}
