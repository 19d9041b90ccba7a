import type { SessionIndexRow, SessionIndexStatus } from "../schemas/session";
import type { AuditRecord } from "./record";

/**
 * The D1 `sessions` index behind `GET /v1/sessions`: one row per session, projected from
 * its audit records and written in the same D1 batch as them (see handoff-index.ts, the
 * same idea for handoffs). Sessions live in their Durable Objects; D1 only hears of them
 * when an outbox flushes, so the index is eventually consistent, and exactly as durable as
 * the audit log.
 *
 * Replays and reordering change nothing:
 * - `current_agent` and `status` carry the id of the record that set them and only move
 *   to a newer record's value;
 * - `created_at`/`updated_at` are the min/max of the records' times;
 * - the handoff count adds only records that audit_log does not hold yet. The upsert runs
 *   in the batch *before* the audit rows are inserted, so a record already delivered once
 *   (the outbox resending a batch whose success it never heard of) counts 0;
 * - the message count is the history's length as the session told it at the flush (a run's
 *   messages have no record each), and only grows.
 */

const ENDINGS: Record<string, SessionIndexStatus> = { "session.expired": "expired", "session.deleted": "deleted" };

/** What one batch says about one session. */
interface Projection {
  tenant: string;
  id: string;
  status: SessionIndexStatus;
  statusAuditId: string;
  endedAt: string | null;
  initialAgent: string | null;
  agent: string;
  agentAuditId: string;
  createdAt: string;
  updatedAt: string;
  handoffs: Set<string>;
}

const str = (value: unknown): string | null => (typeof value === "string" && value.length > 0 ? value : null);

/** Folds one record into its session's projection (records may come in any order). */
function fold(p: Projection, record: AuditRecord): void {
  if (record.at < p.createdAt) p.createdAt = record.at;
  if (record.at > p.updatedAt) p.updatedAt = record.at;
  const setAgent = (agent: string | null) => {
    if (agent !== null && record.id > p.agentAuditId) {
      p.agent = agent;
      p.agentAuditId = record.id;
    }
  };
  if (record.action === "session.created") {
    p.initialAgent = str(record.details.agent) ?? record.agent;
    setAgent(p.initialAgent);
  } else if (record.action === "handoff.completed") {
    setAgent(str(record.details.target));
    p.handoffs.add(record.id);
  }
  const ending = ENDINGS[record.action];
  if (ending && record.id > p.statusAuditId) {
    p.status = ending;
    p.statusAuditId = record.id;
    p.endedAt = record.at;
  }
}

function project(records: readonly AuditRecord[]): Projection[] {
  const sessions = new Map<string, Projection>();
  for (const record of records) {
    if (record.session_id === null) continue;
    const key = `${record.tenant}\u0000${record.session_id}`;
    let p = sessions.get(key);
    if (!p) {
      // Until a record that names the agent is seen, any record's agent stands in, with the
      // lowest precedence (an empty audit id): only an out-of-order batch ever shows it.
      p = {
        tenant: record.tenant,
        id: record.session_id,
        status: "active",
        statusAuditId: "",
        endedAt: null,
        initialAgent: null,
        agent: record.agent ?? "",
        agentAuditId: "",
        createdAt: record.at,
        updatedAt: record.at,
        handoffs: new Set(),
      };
      sessions.set(key, p);
    }
    fold(p, record);
  }
  return [...sessions.values()];
}

/** Counts the ids of a JSON array that audit_log does not hold yet. */
const NEW_IDS = (n: number) =>
  `(SELECT COUNT(*) FROM json_each(?${n}) AS j WHERE NOT EXISTS (SELECT 1 FROM audit_log AS a WHERE a.tenant = ?1 AND a.id = j.value))`;

/**
 * The upserts that bring the index up to date with `records`, one per session. They must
 * run in the batch before the audit rows of `records` are inserted (see the counts above).
 * `historyLengths` is each flushing session's history length (a session's flush names its own).
 */
export function sessionIndexStatements(
  db: D1Database,
  records: readonly AuditRecord[],
  historyLengths: ReadonlyMap<string, number> = new Map(),
): D1PreparedStatement[] {
  return project(records).map((p) =>
    db
      .prepare(
        `INSERT INTO sessions (tenant, id, status, initial_agent, current_agent, created_at, updated_at, ended_at,
                               message_count, handoff_count, agent_audit_id, status_audit_id)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ${NEW_IDS(10)}, ?11, ?12)
         ON CONFLICT (tenant, id) DO UPDATE SET
           initial_agent = COALESCE(sessions.initial_agent, excluded.initial_agent),
           current_agent = CASE WHEN excluded.agent_audit_id > sessions.agent_audit_id THEN excluded.current_agent ELSE sessions.current_agent END,
           agent_audit_id = MAX(sessions.agent_audit_id, excluded.agent_audit_id),
           status = CASE WHEN excluded.status_audit_id > sessions.status_audit_id THEN excluded.status ELSE sessions.status END,
           ended_at = CASE WHEN excluded.status_audit_id > sessions.status_audit_id THEN excluded.ended_at ELSE sessions.ended_at END,
           status_audit_id = MAX(sessions.status_audit_id, excluded.status_audit_id),
           created_at = MIN(sessions.created_at, excluded.created_at),
           updated_at = MAX(sessions.updated_at, excluded.updated_at),
           message_count = MAX(sessions.message_count, excluded.message_count),
           handoff_count = sessions.handoff_count + excluded.handoff_count`,
      )
      .bind(
        p.tenant,
        p.id,
        p.status,
        p.initialAgent,
        p.agent,
        p.createdAt,
        p.updatedAt,
        p.endedAt,
        historyLengths.get(p.id) ?? 0,
        JSON.stringify([...p.handoffs]),
        p.agentAuditId,
        p.statusAuditId,
      ),
  );
}

export interface SessionIndexQuery {
  status?: SessionIndexStatus;
  /** The session's current agent. */
  agent?: string;
  limit: number;
  /** The id of the previous page's last session (exclusive). */
  before?: string;
}

/** One page of a tenant's sessions, newest first; `next` is the cursor position or null. */
export async function querySessions(
  db: D1Database,
  tenant: string,
  query: SessionIndexQuery,
): Promise<{ sessions: SessionIndexRow[]; next: string | null }> {
  const where = ["tenant = ?1"];
  const binds: (string | number)[] = [tenant];
  const bind = (clause: (n: string) => string, value: string | number) => {
    binds.push(value);
    where.push(clause(`?${binds.length}`));
  };
  if (query.status) bind((n) => `status = ${n}`, query.status);
  if (query.agent) bind((n) => `current_agent = ${n}`, query.agent);
  if (query.before) bind((n) => `id < ${n}`, query.before);
  binds.push(query.limit + 1);
  const { results } = await db
    .prepare(
      `SELECT id, status, initial_agent, current_agent, created_at, updated_at, ended_at, message_count, handoff_count
       FROM sessions WHERE ${where.join(" AND ")} ORDER BY id DESC LIMIT ?${binds.length}`,
    )
    .bind(...binds)
    .all<SessionIndexRow>();
  const page = results.slice(0, query.limit);
  return { sessions: page, next: results.length > query.limit ? (page.at(-1)?.id ?? null) : null };
}
