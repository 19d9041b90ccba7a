import { type ListTasksRequest, type ListTasksResponse, type Task, TaskState } from "@a2a-js/sdk";
import { RequestMalformedError } from "@a2a-js/sdk/errors";
import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import { readDetails } from "../audit/stored-record";
import { runTask } from "../interop/a2a-task";
import { sessionRpc } from "../rpc/stubs";
import type { Run, RunStatus } from "../schemas/run";
import { readDatabase } from "../services/tenant-shards";
import { isSessionId } from "../sessions/ids";
import { AuditRecordPosition, sessionRunPosition } from "./positions";

/**
 * ListTasks (docs/a2a.md): with a contextId, that session's runs, newest first, read from
 * the session; without, the tenant's runs (at an agent's endpoint, the runs that started
 * with that agent), newest first, from the audit trail in D1 — which, like every D1 list,
 * is about half a second behind — each read live from its session. Pages are cursors.
 */

const DEFAULT_PAGE = 50;
const MAX_PAGE = 100;

function pageSizeOf(request: ListTasksRequest): number {
  const size = request.pageSize ?? DEFAULT_PAGE;
  if (!Number.isInteger(size) || size < 1 || size > MAX_PAGE)
    throw new RequestMalformedError({ message: `pageSize must be 1–${MAX_PAGE}.` });
  return size;
}

/** The task a listed run shows: history only when asked for, artifacts only when included. */
async function listedTask(c: Context<AppEnv>, run: Run, request: ListTasksRequest): Promise<Task | null> {
  const historyLength = request.historyLength ?? 0;
  if (historyLength > 0 || request.includeArtifacts) {
    const view = await sessionRpc(c.env, c.get("tenant"), run.session_id).runTask(run.id);
    if (!view.ok) return null;
    const task = runTask(view.value.run, view.value.items, historyLength);
    return request.includeArtifacts ? task : { ...task, artifacts: [] };
  }
  return { ...runTask({ ...run, events: [] }, [], 0), artifacts: [] };
}

function keep(run: Run, statuses: RunStatus[] | null, request: ListTasksRequest): boolean {
  if (statuses && !statuses.includes(run.status)) return false;
  return !request.statusTimestampAfter || run.updated_at >= request.statusTimestampAfter;
}

/**
 * A page token is the position the last page ended on, as the list writes it: a run id of
 * the context's session, or an audit record id for the tenant's runs. Anything else is not
 * a token this server gave (strict, like the API's cursors: docs/api.md).
 */
function checkPageToken(request: ListTasksRequest): void {
  if (!request.pageToken) return;
  const position = request.contextId ? sessionRunPosition(request.contextId) : AuditRecordPosition;
  if (!position.safeParse(request.pageToken).success)
    throw new RequestMalformedError({ message: "pageToken is not one this server gave for this list." });
}

export async function listA2aTasks(
  c: Context<AppEnv>,
  agent: string | null,
  request: ListTasksRequest,
  statuses: RunStatus[] | null,
): Promise<ListTasksResponse> {
  const pageSize = pageSizeOf(request);
  const filter = request.status === TaskState.TASK_STATE_UNSPECIFIED ? null : statuses;
  checkPageToken(request);
  let runs: Run[];
  let next = "";
  if (request.contextId) {
    if (!isSessionId(request.contextId)) return { tasks: [], nextPageToken: "", pageSize, totalSize: 0 };
    const page = await sessionRpc(c.env, c.get("tenant"), request.contextId).listRuns({
      ...(request.pageToken ? { before: request.pageToken } : {}),
      limit: pageSize + 1,
    });
    if (!page.ok) return { tasks: [], nextPageToken: "", pageSize, totalSize: 0 };
    runs = page.value.slice(0, pageSize);
    if (page.value.length > pageSize) next = runs.at(-1)!.id;
  } else {
    const { results } = await (await readDatabase(c.env, c.get("tenant")))
      .prepare(
        `SELECT id, session_id, details FROM audit_log
        WHERE tenant = ?1 AND action = 'run.started' AND (?2 IS NULL OR agent = ?2) AND id < ?3
        ORDER BY id DESC LIMIT ?4`,
      )
      .bind(c.get("tenant"), agent, request.pageToken || "~", pageSize + 1)
      .all<{ id: string; session_id: string; details: string }>();
    const page = results.slice(0, pageSize);
    if (results.length > pageSize) next = page.at(-1)!.id;
    const read = await Promise.all(
      page.map(async (row) => {
        const runId = readDetails(row.details, row.session_id).run_id as string | undefined;
        if (!runId) return null;
        const found = await sessionRpc(c.env, c.get("tenant"), row.session_id).getRun(runId);
        return found.ok ? found.value : null;
      }),
    );
    runs = read.filter((r): r is Run => r !== null);
  }
  const tasks = (
    await Promise.all(runs.filter((r) => keep(r, filter, request)).map((r) => listedTask(c, r, request)))
  ).filter((t): t is Task => t !== null);
  return { tasks, nextPageToken: next, pageSize, totalSize: tasks.length };
}
