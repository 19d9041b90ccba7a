import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import { RelayError, type Result } from "../errors";
import { readDatabase } from "../services/tenant-shards";
import { findExpiry } from "../sessions/summary-store";

/** 404 for a session id that names no session of this tenant. */
export const sessionMissing = (id: string) => () =>
  new RelayError("SESSION_NOT_FOUND", `No session '${id}'.`, { session_id: id });

/**
 * A SessionDO result as HTTP: the value, or its error thrown for `onError`. A session the
 * object no longer has but D1 remembers as expired is 410 with its expiry time; otherwise
 * `missing()` says what was not found.
 */
export async function settle<T>(
  c: Context<AppEnv>,
  sessionId: string,
  result: Result<T>,
  missing = sessionMissing(sessionId),
): Promise<T> {
  if (result.ok) return result.value;
  if (result.error.code === "SESSION_NOT_FOUND") {
    const expired_at = await findExpiry(await readDatabase(c.env, c.get("tenant")), c.get("tenant"), sessionId);
    if (expired_at)
      throw new RelayError("SESSION_EXPIRED", `Session '${sessionId}' expired at ${expired_at}.`, {
        session_id: sessionId,
        expired_at,
      });
    throw missing();
  }
  throw RelayError.fromBody(result.error);
}

/** A call that drives a run answers within RUN_WAIT_MS (25 s); its deadline leaves it room. */
export const RUN_CALL_DEADLINE_MS = 30_000;
