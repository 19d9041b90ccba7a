import { isTerminal } from "../handoff/statuses";
import { type HandoffIndexRow, HandoffMode, HandoffPolicy, HandoffStatus } from "../schemas/handoff";
import { chunk } from "./outbox-policy";
import type { AuditRecord } from "./record";

/**
 * The D1 `handoffs` history index: one row per handoff, derived from its
 * `handoff.<status>` audit records and written in the same D1 batch as them. So the index
 * is exactly as durable as the audit log — D1 down delays both, loses neither — and needs
 * no outbox of its own. Upserts are guarded by the id of the record they come from
 * (`last_audit_id`), so a replayed or reordered batch never moves a handoff backwards.
 */

const COLUMNS = [
  "id",
  "tenant",
  "session_id",
  "source_agent",
  "target_agent",
  "status",
  "mode",
  "policy",
  "reason",
  "created_at",
  "completed_at",
  "last_audit_id",
];
/** 8 rows × 12 columns = 96 bound parameters, under D1's 100. */
const ROWS_PER_STATEMENT = 8;

type IndexValue = string | null;

/** The index row a handoff record implies, or null for records that are not handoff transitions. */
function rowOf(record: AuditRecord): IndexValue[] | null {
  const d = record.details;
  if (record.handoff_id === null || record.session_id === null || !record.action.startsWith("handoff.")) return null;
  const status = HandoffStatus.safeParse(d.to);
  const mode = HandoffMode.safeParse(d.mode);
  const policy = HandoffPolicy.safeParse(d.policy);
  if (
    !status.success ||
    !mode.success ||
    !policy.success ||
    typeof d.source !== "string" ||
    typeof d.created_at !== "string"
  )
    return null;
  return [
    record.handoff_id,
    record.tenant,
    record.session_id,
    d.source,
    typeof d.target === "string" ? d.target : null,
    status.data,
    mode.data,
    policy.data,
    typeof d.reason === "string" ? d.reason : "",
    d.created_at,
    isTerminal(status.data) ? record.at : null,
    record.id,
  ];
}

/**
 * The upserts that bring the index up to date with `records` (a batch in id order): one
 * row per handoff, its latest record's status; the request's reason from the initiated record.
 */
export function handoffIndexStatements(db: D1Database, records: readonly AuditRecord[]): D1PreparedStatement[] {
  const latest = new Map<string, IndexValue[]>();
  for (const record of records) {
    const row = rowOf(record);
    if (!row) continue;
    const previous = latest.get(row[0]!);
    if (previous && previous[11]! > row[11]!) continue;
    // The reason is only on the first record; keep it when a later record wins.
    if (previous && row[8] === "") row[8] = previous[8]!;
    latest.set(row[0]!, row);
  }
  return chunk([...latest.values()], ROWS_PER_STATEMENT).map((rows) => {
    const placeholders = rows.map((_, r) => `(${COLUMNS.map((_, c) => `?${r * COLUMNS.length + c + 1}`).join(", ")})`);
    return db
      .prepare(
        `INSERT INTO handoffs (${COLUMNS.join(", ")}) VALUES ${placeholders.join(", ")}
         ON CONFLICT (id) DO UPDATE SET status = excluded.status,
           target_agent = COALESCE(excluded.target_agent, handoffs.target_agent),
           reason = CASE WHEN handoffs.reason = '' THEN excluded.reason ELSE handoffs.reason END,
           completed_at = excluded.completed_at, last_audit_id = excluded.last_audit_id
         WHERE excluded.last_audit_id > handoffs.last_audit_id`,
      )
      .bind(...rows.flat());
  });
}

const PAGE_COLUMNS =
  "id, session_id, source_agent, target_agent, status, mode, policy, reason, created_at, completed_at";

/**
 * The one query the index serves: an agent's handoffs newest first (tenant, agent, before,
 * limit). Handoff ids start with a ULID, so id order is creation order; the UNION lets each
 * branch use its own (tenant, agent, id) index, and those two are the table's only ones.
 */
export const AGENT_HANDOFFS_PAGE = `SELECT ${PAGE_COLUMNS} FROM handoffs WHERE tenant = ?1 AND source_agent = ?2 AND id < ?3
  UNION
  SELECT ${PAGE_COLUMNS} FROM handoffs WHERE tenant = ?1 AND target_agent = ?2 AND id < ?3
  ORDER BY id DESC LIMIT ?4`;

/**
 * One page of the handoffs an agent took part in (as source or target), newest first.
 * `before` is the id of the previous page's last row (exclusive).
 */
export async function queryAgentHandoffs(
  db: D1Database,
  tenant: string,
  agent: string,
  { limit, before }: { limit: number; before?: string },
): Promise<{ handoffs: HandoffIndexRow[]; next: string | null }> {
  const { results } = await db
    .prepare(AGENT_HANDOFFS_PAGE)
    .bind(tenant, agent, before ?? "\uffff", limit + 1)
    .all<HandoffIndexRow>();
  const page = results.slice(0, limit);
  return { handoffs: page, next: results.length > limit ? (page.at(-1)?.id ?? null) : null };
}
