import { type ListTasksRequest, type ListTasksResponse, type Task, TaskState } from "@a2a-js/sdk";
import { RequestMalformedError } from "@a2a-js/sdk/errors";
import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import { ulidFloor } from "../audit/d1-store";
import { runTask } from "../interop/a2a-task";
import { sessionRpc, tenantRpc } from "../rpc/stubs";
import type { RecentRun } from "../rpc/tenant";
import { sessionOfRun } from "../runtime/run-record";
import type { Run, RunStatus } from "../schemas/run";
import { readDatabase } from "../services/tenant-shards";
import { isSessionId } from "../sessions/ids";
import { sessionRunPosition } from "./positions";

/**
 * ListTasks (docs/a2a.md): with a contextId, that session's runs, newest first, read from the
 * session; without, the tenant's runs (at an agent's endpoint, the runs that started with that
 * agent), newest first by run id. The filters (status, statusTimestampAfter) are applied before
 * paging, so a page holds up to pageSize tasks that pass them and `totalSize` counts them all.
 * Tenant-wide, runs that started or went on in the last seconds are read live from their
 * sessions, which the tenant's object names (D1 hears of them only when the outbox flushes),
 * and the rest from the audit trail in D1, where each run's latest status record says its
 * status. Pages are cursors.
 */

const DEFAULT_PAGE = 50;
const MAX_PAGE = 100;

type Ctx = Context<AppEnv>;

/** What a list keeps: run statuses (null: any), the earliest status time (ISO 8601; null: any), the starting agent. */
interface TaskFilter {
  statuses: RunStatus[] | null;
  after: string | null;
  agent: string | null;
}

/** One page of matching runs, and how many match in all. */
interface RunPage {
  runs: Run[];
  next: string;
  total: number;
}

function pageSizeOf(request: ListTasksRequest): number {
  const size = request.pageSize ?? DEFAULT_PAGE;
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE)
    throw new RequestMalformedError({ message: `pageSize must be 1–${MAX_PAGE}.` });
  return size;
}

/** The task a listed run shows: history only when asked for, artifacts only when included. */
async function listedTask(c: Ctx, run: Run, request: ListTasksRequest): Promise<Task | null> {
  const historyLength = request.historyLength ?? 0;
  if (historyLength > 0 || request.includeArtifacts) {
    const view = await sessionRpc(c.env, c.get("tenant"), run.session_id).runTask(run.id);
    if (!view.ok) return null;
    const task = runTask(view.value.run, view.value.items, historyLength);
    return request.includeArtifacts ? task : { ...task, artifacts: [] };
  }
  return { ...runTask({ ...run, events: [] }, [], 0), artifacts: [] };
}

/** A run read live passes the filter (its starting agent is the caller's to check). */
const passes = (run: Run, filter: TaskFilter): boolean =>
  (!filter.statuses || filter.statuses.includes(run.status)) && (!filter.after || run.updated_at >= filter.after);

/**
 * A page token is the id of the last run the page held, as the list writes it: a run of the
 * context's session, or any run id for the tenant's runs. Anything else is not a token this
 * server gave (strict, like the API's cursors: docs/api.md).
 */
function checkPageToken(request: ListTasksRequest): void {
  if (!request.pageToken) return;
  const valid = request.contextId
    ? sessionRunPosition(request.contextId).safeParse(request.pageToken).success
    : sessionOfRun(request.pageToken) !== null;
  if (!valid) throw new RequestMalformedError({ message: "pageToken is not one this server gave for this list." });
}

/** The filter of a request: the status's run statuses, statusTimestampAfter as `toISOString` writes times. */
function filterOf(request: ListTasksRequest, statuses: RunStatus[] | null, agent: string | null): TaskFilter {
  const filtered = request.status !== TaskState.TASK_STATE_UNSPECIFIED ? statuses : null;
  const after = request.statusTimestampAfter ? new Date(request.statusTimestampAfter).toISOString() : null;
  return { statuses: filtered, after, agent };
}

/** A page of one session's runs: the session filters and counts. */
async function contextRuns(c: Ctx, contextId: string, filter: TaskFilter, pageSize: number, before: string) {
  const page = await sessionRpc(c.env, c.get("tenant"), contextId).listRuns({
    ...(before ? { before } : {}),
    limit: pageSize + 1,
    ...(filter.statuses ? { statuses: filter.statuses } : {}),
    ...(filter.after ? { updated_after: filter.after } : {}),
  });
  if (!page.ok) return { runs: [], next: "", total: 0 };
  const runs = page.value.runs.slice(0, pageSize);
  return { runs, next: page.value.runs.length > pageSize ? runs.at(-1)!.id : "", total: page.value.total };
}

/** The audit actions that start or move a run: the latest one's `to` is its status (run.started has none: running). */
const RUN_ACTIONS = "'run.started', 'run.paused', 'run.resumed', 'run.completed', 'run.failed', 'run.cancelled'";

/**
 * The tenant's runs D1 knows, each with its latest status record, that pass the filter; less
 * the runs read live, and the sessions D1 knows have ended (their runs are gone). Records keep
 * a run id without its session's suffix (src/audit/stored-record.ts): it is put back here.
 */
const MATCHING_RUNS = `WITH records AS (
    SELECT id, session_id, action, agent, json_extract(details, '$.to') AS moved_to,
      'run_' || substr(json_extract(details, '$.run_id'), 5, 26) || '_' || session_id AS run_id
    FROM audit_log
    WHERE tenant = ?1 AND action IN (${RUN_ACTIONS}) AND session_id IS NOT NULL
  ),
  latest AS (
    SELECT run_id, session_id, id, moved_to,
      ROW_NUMBER() OVER (PARTITION BY run_id ORDER BY id DESC) AS nth,
      MAX(CASE WHEN action = 'run.started' THEN agent END) OVER (PARTITION BY run_id) AS started_by
    FROM records
  ),
  matching AS (
    SELECT run_id, session_id FROM latest
    WHERE nth = 1 AND started_by IS NOT NULL
      AND (?2 IS NULL OR started_by = ?2)
      AND (?3 IS NULL OR COALESCE(moved_to, 'running') IN (SELECT value FROM json_each(?3)))
      AND (?4 IS NULL OR id >= ?4)
      AND run_id NOT IN (SELECT value FROM json_each(?5))
      AND session_id NOT IN (SELECT id FROM sessions WHERE tenant = ?1 AND status <> 'active')
  )`;

/** From D1: how many of the tenant's runs (not `live`) pass the filter, and the ids of up to `limit` of them before `before`. */
async function d1Runs(c: Ctx, filter: TaskFilter, live: string[], before: string, limit: number) {
  const db = await readDatabase(c.env, c.get("tenant"));
  const binds = [
    c.get("tenant"),
    filter.agent,
    filter.statuses ? JSON.stringify(filter.statuses) : null,
    filter.after ? ulidFloor(Date.parse(filter.after)) : null,
    JSON.stringify(live),
  ];
  const [count, page] = await db.batch<{ n?: number; run_id?: string }>([
    db.prepare(`${MATCHING_RUNS} SELECT COUNT(*) AS n FROM matching`).bind(...binds),
    db
      .prepare(`${MATCHING_RUNS} SELECT run_id FROM matching WHERE run_id < ?6 ORDER BY run_id DESC LIMIT ?7`)
      .bind(...binds, before || "~", limit),
  ]);
  return {
    total: count!.results[0]?.n ?? 0,
    ids: page!.results.map((row) => row.run_id!),
  };
}

/** The runs the tenant's object saw start or go on in the last seconds, read live from their sessions. */
async function recentRuns(c: Ctx): Promise<{ noted: RecentRun[]; runs: Run[] }> {
  const recent = await tenantRpc(c.env, c.get("tenant")).recentRuns(c.get("tenant"));
  const noted = recent.ok ? recent.value : [];
  const read = await Promise.all(
    noted.map(async (r) => {
      const found = await sessionRpc(c.env, c.get("tenant"), r.session_id).getRun(r.run_id);
      return found.ok ? found.value : null;
    }),
  );
  return { noted, runs: read.filter((r): r is Run => r !== null) };
}

/**
 * A page of the tenant's runs: the recent ones read live and filtered here, merged in run id
 * order with D1's, which D1 filters and counts. A D1 run read live that no longer passes the
 * filter (it moved within D1's lag) is left out of its page.
 */
async function tenantRuns(c: Ctx, filter: TaskFilter, pageSize: number, before: string): Promise<RunPage> {
  const { noted, runs: recent } = await recentRuns(c);
  const startedBy = new Map(noted.map((r) => [r.run_id, r.agent]));
  const liveMatches = recent.filter(
    (run) => passes(run, filter) && (!filter.agent || startedBy.get(run.id) === filter.agent),
  );
  const { total, ids } = await d1Runs(
    c,
    filter,
    noted.map((r) => r.run_id),
    before,
    pageSize + 1,
  );
  const candidates = [
    ...liveMatches.filter((run) => !before || run.id < before).map((run) => ({ id: run.id, run })),
    ...ids.map((id) => ({ id, run: null as Run | null })),
  ].sort((a, b) => (a.id < b.id ? 1 : a.id > b.id ? -1 : 0));
  const page = candidates.slice(0, pageSize);
  const next = candidates.length > pageSize ? page.at(-1)!.id : "";
  const runs = await Promise.all(
    page.map(async (entry) => {
      if (entry.run) return entry.run;
      const found = await sessionRpc(c.env, c.get("tenant"), sessionOfRun(entry.id)!).getRun(entry.id);
      return found.ok && passes(found.value, filter) ? found.value : null;
    }),
  );
  return { runs: runs.filter((r): r is Run => r !== null), next, total: total + liveMatches.length };
}

export async function listA2aTasks(
  c: Ctx,
  agent: string | null,
  request: ListTasksRequest,
  statuses: RunStatus[] | null,
): Promise<ListTasksResponse> {
  const pageSize = pageSizeOf(request);
  checkPageToken(request);
  const filter = filterOf(request, statuses, agent);
  const before = request.pageToken ?? "";
  let page: RunPage;
  if (request.contextId) {
    if (!isSessionId(request.contextId)) return { tasks: [], nextPageToken: "", pageSize, totalSize: 0 };
    page = await contextRuns(c, request.contextId, filter, pageSize, before);
  } else page = await tenantRuns(c, filter, pageSize, before);
  const tasks = (await Promise.all(page.runs.map((r) => listedTask(c, r, request)))).filter(
    (t): t is Task => t !== null,
  );
  return { tasks, nextPageToken: page.next, pageSize, totalSize: page.total };
}
