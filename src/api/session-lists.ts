import type { Context } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-env";
import { querySessions } from "../audit/session-index";
import { RelayError, type Result } from "../errors";
import { AgentName } from "../schemas/agent";
import type { TracePage } from "../schemas/run";
import { SessionIndexStatus } from "../schemas/session";
import { readDatabase } from "../services/tenant-shards";
import { decodeCursor, listPage, pagingQuery, readAfter } from "./cursor";
import {
  AUDIT_RECORD_ID,
  AuditRecordPosition,
  type Position,
  SequencePosition,
  SessionPosition,
  TraceEventPosition,
} from "./positions";
import { settle } from "./session-result";
import { readQuery } from "./validate";

/**
 * The session lists, in the one envelope `{ items, next_cursor }`: `GET /v1/sessions`
 * from the D1 sessions index, and a session's messages and audit trail from its object.
 * The object pages by position (`next_after`: a sequence number, a record id); here those
 * positions become opaque cursors. `after` stays accepted beside `cursor` for callers that
 * know a position (a message's `seq`, a record's id); the two do not mix, and either is
 * checked against the list's grammar (./positions.ts): a bad one is INVALID_CURSOR.
 */

type Ctx = Context<AppEnv>;

export const SessionListQuery = z.strictObject({
  status: SessionIndexStatus.optional(),
  agent: AgentName.optional(),
  ...pagingQuery(200, 50),
});

/**
 * `GET /v1/sessions`: the tenant's sessions, newest first. Read from D1, which hears of a
 * session when its object's outbox flushes: a session created a moment ago, or its
 * latest handoff, may not show yet.
 */
export async function listSessions(c: Ctx) {
  const { cursor, ...filters } = readQuery(c, SessionListQuery);
  const page = await querySessions(await readDatabase(c.env, c.get("tenant")), c.get("tenant"), {
    ...filters,
    before: decodeCursor(cursor, SessionPosition),
  });
  return c.json(listPage(page.sessions, page.next));
}

/**
 * Where a page starts: after `after` or after the cursor's position, never both. Read
 * from the raw query before the route's schema does, so that a malformed `after` is
 * INVALID_CURSOR like a malformed cursor, and not the schema's VALIDATION_FAILED.
 */
function startAfter<T>(c: Ctx, position: Position<T>): T | undefined {
  const after = c.req.query("after");
  const cursor = c.req.query("cursor");
  if (after !== undefined && cursor !== undefined) {
    throw new RelayError("VALIDATION_FAILED", "Invalid query.", {
      issues: [{ path: "cursor", message: "give either after or cursor, not both" }],
    });
  }
  return after === undefined ? decodeCursor(cursor, position) : readAfter(after, position);
}

export const HistoryQuery = z.strictObject({
  after: z.coerce.number().int().min(0).optional(),
  ...pagingQuery(500, 100),
});

/** `GET /v1/sessions/:id/messages`: the conversation in order; the cursor is a sequence number. */
export async function historyPage<T>(
  c: Ctx,
  id: string,
  read: (query: { after: number; limit: number }) => Promise<Result<{ items: T[]; next_after: number | null }>>,
) {
  const from = startAfter(c, SequencePosition) ?? 0;
  const { limit } = readQuery(c, HistoryQuery);
  const page = await settle(c, id, await read({ after: from, limit }));
  return c.json(listPage(page.items, page.next_after));
}

export const SessionAuditQuery = z.strictObject({
  after: z.string().regex(AUDIT_RECORD_ID).optional(),
  ...pagingQuery(500, 100),
});

export const TraceQuery = z.strictObject(pagingQuery(1000, 200));

/** `GET /v1/sessions/:id/trace`: the runs' events in order, oldest first. */
export async function tracePage(
  c: Ctx,
  id: string,
  read: (query: { after?: string; limit: number }) => Promise<Result<TracePage>>,
) {
  const { cursor, limit } = readQuery(c, TraceQuery);
  const page = await settle(c, id, await read({ after: decodeCursor(cursor, TraceEventPosition), limit }));
  return c.json(listPage(page.events, page.next_after));
}

/** `GET /v1/sessions/:id/audit`: the object's own trail (read-your-writes) and how much of it D1 still lacks. */
export async function sessionAuditPage<T>(
  c: Ctx,
  id: string,
  read: (query: {
    after?: string;
    limit: number;
  }) => Promise<Result<{ records: T[]; pending: number; next_after: string | null }>>,
) {
  const from = startAfter(c, AuditRecordPosition);
  const { limit } = readQuery(c, SessionAuditQuery);
  const page = await settle(c, id, await read({ after: from, limit }));
  return c.json({ ...listPage(page.records, page.next_after), pending: page.pending });
}
