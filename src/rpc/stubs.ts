import type { Env } from "../env";
import { err, type Result } from "../errors";
import { agentObjectName, sessionObjectName } from "../sessions/ids";
import type { AgentRpc } from "./agent";
import type { CollaborationRpc } from "./collaboration";
import type { RouterRpc } from "./router";
import type { SessionRpc } from "./session";
import type { TenantRpc } from "./tenant";

/**
 * Typed handles on the Durable Objects, with a deadline on every call. The one place a
 * stub meets its contract: workers-types would map the free-form JSON in our signatures
 * (`unknown` state, metadata, details) to `never`, although structured clone carries it
 * fine, so the contract interfaces (which the classes implement) type the handles instead.
 */

/** The Worker's wait for a SessionDO call (a handoff inside it makes AgentDO calls of its own). */
export const SESSION_CALL_DEADLINE_MS = 15_000;
/** A SessionDO's wait for an AgentDO call (lease bookkeeping: a few SQL statements). */
export const AGENT_CALL_DEADLINE_MS = 5_000;

/** Methods that resolve to a Result: the only kind a contract has. */
type ResultMethods<T> = {
  [K in keyof T]: T[K] extends (...args: infer A) => Promise<Result<infer R>>
    ? (...args: A) => Promise<Result<R>>
    : never;
};

/**
 * Why a call was rejected by the platform rather than by the object's code: the object was
 * reset under it (a crash, a deploy, `ctx.abort()`), or is overloaded. Such a call may or may
 * not have been carried out: objects make their steps idempotent and recover them, so the
 * caller is told the dependency is unavailable and may retry.
 */
function platformFailure(error: unknown): "reset" | "overloaded" | "retryable" | null {
  if (typeof error !== "object" || error === null) return null;
  const e = error as { durableObjectReset?: unknown; overloaded?: unknown; retryable?: unknown };
  if (e.durableObjectReset === true) return "reset";
  if (e.overloaded === true) return "overloaded";
  if (e.retryable === true) return "retryable";
  return null;
}

/**
 * `target`'s methods, each answering DEPENDENCY_UNAVAILABLE when it has not settled within
 * `ms` (reason `deadline`; the call goes on and its result is ignored) or when the platform
 * rejected it (reason `reset`, `overloaded` or `retryable`). Any other rejection stays
 * rejected: a thrown error is a bug, for `onError` to report.
 */
export function withDeadline<T extends object>(target: object, what: string, ms: number): ResultMethods<T> {
  return new Proxy({} as ResultMethods<T>, {
    get(_, method) {
      // Never a thenable: `await handle` must not call a method named `then`.
      if (typeof method !== "string" || method === "then") return undefined;
      return (...args: unknown[]) => {
        const call = (target as Record<string, (...a: unknown[]) => Promise<unknown>>)[method]!(...args).catch(
          (error: unknown) => {
            const reason = platformFailure(error);
            if (reason === null) throw error;
            return err("DEPENDENCY_UNAVAILABLE", `${what} was interrupted (${reason}); try again.`, {
              reason,
              call: method,
            });
          },
        );
        let timer: ReturnType<typeof setTimeout> | undefined;
        const deadline = new Promise<Result<never>>((resolve) => {
          timer = setTimeout(
            () =>
              resolve(
                err("DEPENDENCY_UNAVAILABLE", `${what} did not answer within ${ms} ms.`, {
                  reason: "deadline",
                  deadline_ms: ms,
                  call: method,
                }),
              ),
            ms,
          );
        });
        return Promise.race([call, deadline]).finally(() => clearTimeout(timer));
      };
    },
  });
}

/** The session `sessionId` of `tenant`; another tenant's name reaches another (empty) object. */
export function sessionRpc(
  env: Pick<Env, "SESSIONS">,
  tenant: string,
  sessionId: string,
  ms = SESSION_CALL_DEADLINE_MS,
): SessionRpc {
  const stub = env.SESSIONS.get(env.SESSIONS.idFromName(sessionObjectName(tenant, sessionId)));
  return withDeadline<SessionRpc>(stub, `Session '${sessionId}'`, ms) as SessionRpc;
}

export function agentRpc(
  env: Pick<Env, "AGENTS">,
  tenant: string,
  agent: string,
  ms = AGENT_CALL_DEADLINE_MS,
): AgentRpc {
  return agentRpcByName(env, agentObjectName(tenant, agent), `Agent '${agent}'`, ms);
}

/**
 * The AgentDO named `objectName` (a capacity shard of an agent: src/handoff/capacity-shards.ts),
 * `what` naming it in deadline errors.
 */
export function agentRpcByName(
  env: Pick<Env, "AGENTS">,
  objectName: string,
  what: string,
  ms = AGENT_CALL_DEADLINE_MS,
): AgentRpc {
  const stub = env.AGENTS.get(env.AGENTS.idFromName(objectName));
  return withDeadline<AgentRpc>(stub, what, ms) as AgentRpc;
}

/** The Worker's wait for the router object: a first build of a large registry takes seconds. */
export const ROUTER_CALL_DEADLINE_MS = 60_000;

/** The tenant's router object (durable-objects/router/router.ts): agent writes and compiled routers. */
export function routerRpc(env: Pick<Env, "ROUTERS">, tenant: string, ms = ROUTER_CALL_DEADLINE_MS): RouterRpc {
  const stub = env.ROUTERS.get(env.ROUTERS.idFromName(tenant));
  return withDeadline<RouterRpc>(stub, `The router of tenant '${tenant}'`, ms) as RouterRpc;
}

/**
 * The wait for the router object's routing history (a few SQL statements): a routed session's
 * record goes in the background, and one that does not land within this is dropped.
 */
export const HISTORY_CALL_DEADLINE_MS = 5_000;

/** The wait for the tenant object: an admission or a usage write is a few SQL statements. */
export const TENANT_CALL_DEADLINE_MS = 5_000;

/** The tenant's object (durable-objects/tenant/tenant.ts): quota admissions, usage, the operator's overrides. */
export function tenantRpc(env: Pick<Env, "TENANTS">, tenant: string, ms = TENANT_CALL_DEADLINE_MS): TenantRpc {
  const stub = env.TENANTS.get(env.TENANTS.idFromName(tenant));
  return withDeadline<TenantRpc>(stub, `The quotas of tenant '${tenant}'`, ms) as TenantRpc;
}

/** A collaboration's object, named by tenant and id like a session's. */
export function collaborationRpc(
  env: Pick<Env, "COLLABORATIONS">,
  tenant: string,
  id: string,
  ms = SESSION_CALL_DEADLINE_MS,
): CollaborationRpc {
  const stub = env.COLLABORATIONS.get(env.COLLABORATIONS.idFromName(`${tenant}:${id}`));
  return withDeadline<CollaborationRpc>(stub, `Collaboration '${id}'`, ms) as CollaborationRpc;
}

/**
 * Forwards a request to the session's object (`fetch`, for what RPC cannot carry: a
 * WebSocket upgrade), answering 503 DEPENDENCY_UNAVAILABLE when it does not within `ms`.
 */
export async function sessionFetch(
  env: Pick<Env, "SESSIONS">,
  tenant: string,
  sessionId: string,
  request: Request,
  ms = SESSION_CALL_DEADLINE_MS,
): Promise<Response> {
  const stub = env.SESSIONS.get(env.SESSIONS.idFromName(sessionObjectName(tenant, sessionId)));
  let timer: ReturnType<typeof setTimeout> | undefined;
  const deadline = new Promise<Response>((resolve) => {
    timer = setTimeout(
      () =>
        resolve(
          Response.json(
            {
              error: {
                code: "DEPENDENCY_UNAVAILABLE",
                message: `Session '${sessionId}' did not answer within ${ms} ms.`,
                details: { reason: "deadline", deadline_ms: ms },
              },
            },
            { status: 503 },
          ),
        ),
      ms,
    );
  });
  return Promise.race([stub.fetch(request), deadline]).finally(() => clearTimeout(timer));
}
