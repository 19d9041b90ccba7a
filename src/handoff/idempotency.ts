import { type Result, statusOf } from "../errors";

/**
 * What an `Idempotency-Key` keeps (on `POST /v1/handoffs`, and on a webhook's handoff, whose
 * key is the webhook id). The first request with a key records the answer it got; a repeat
 * gets that answer and changes nothing. An answer that is the server's fault (a 5xx: a
 * handoff rolled back by a restart, an internal error, a dependency that did not answer) is
 * not kept: such a handoff changed nothing, so the key is forgotten and the client's retry
 * with it runs afresh. Refusals on the request's own merits (4xx) are kept, like successes.
 */
export function keepsOutcome(outcome: Result<unknown>): boolean {
  return outcome.ok || statusOf(outcome.error.code) < 500;
}
