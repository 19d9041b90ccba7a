import { RelayError, type Result } from "../errors";
import { findExpiry } from "../sessions/summary-store";
import { readDatabase, type ShardEnv } from "./tenant-shards";

/** A caller's not-found for a session id that names no session of the tenant. */
export const sessionMissing = (id: string) => () =>
  new RelayError("SESSION_NOT_FOUND", `No session '${id}'.`, { session_id: id });

/** A call that drives a run answers within RUN_WAIT_MS (25 s); its deadline leaves it room. */
export const RUN_CALL_DEADLINE_MS = 30_000;

/**
 * A SessionDO result's value, or its error thrown as a RelayError: a session the object no
 * longer has but D1 remembers as expired is SESSION_EXPIRED with its expiry time; otherwise
 * `missing()` says what was not found. Shared by the HTTP API and the MCP server.
 */
export async function sessionValue<T>(
  env: ShardEnv,
  tenant: string,
  sessionId: string,
  result: Result<T>,
  missing = sessionMissing(sessionId),
): Promise<T> {
  if (result.ok) return result.value;
  if (result.error.code === "SESSION_NOT_FOUND") {
    const expired_at = await findExpiry(await readDatabase(env, tenant), tenant, sessionId);
    if (expired_at)
      throw new RelayError("SESSION_EXPIRED", `Session '${sessionId}' expired at ${expired_at}.`, {
        session_id: sessionId,
        expired_at,
      });
    throw missing();
  }
  throw RelayError.fromBody(result.error);
}
