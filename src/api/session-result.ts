import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import type { Result } from "../errors";
import { RUN_CALL_DEADLINE_MS, sessionMissing, sessionValue } from "../services/session-results";

export { RUN_CALL_DEADLINE_MS, sessionMissing };

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
  return sessionValue(c.env, c.get("tenant"), sessionId, result, missing);
}
