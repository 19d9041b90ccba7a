import type { Env } from "../env";
import { orAfter } from "../lib/deadline";
import {
  EXPORT_BATCH_SPANS,
  EXPORT_LINGER_MS,
  EXPORT_TIMEOUT_MS,
  type ExportOutcome,
  shareOf,
} from "../telemetry/export-policy";
import type { Span } from "../telemetry/span";
import { type ExportDestination, postSpans } from "./telemetry-export";

/**
 * Several sessions' exports in one request (docs/observability.md, What is sent, and when):
 * a session's alarm that exports to a destination either joins the isolate's open batch for
 * it — same tenant, endpoint and headers — or opens one, waits EXPORT_LINGER_MS for others to
 * join, and sends them all. Each session still keeps its export queued until its own share of
 * the answer says it went, so a lost batch is retried by each session as before. A request
 * costs the isolate about as much as the rest of a run's export together, and a session's
 * own outbox holds only its own runs (docs/benchmarks.md, Trace export).
 */

class Batch {
  readonly spans: Span[] = [];
  private settle!: (outcome: ExportOutcome) => void;
  private readonly outcome = new Promise<ExportOutcome>((resolve) => {
    this.settle = resolve;
  });

  /** Adds `spans`; this caller's part of the batch's outcome. */
  join(spans: readonly Span[]): Promise<ExportOutcome> {
    const share = { offset: this.spans.length, count: spans.length };
    this.spans.push(...spans);
    return this.outcome.then((outcome) => shareOf(outcome, share));
  }

  send(env: Env, tenant: string, destination: ExportDestination): Promise<void> {
    return postSpans(env, tenant, destination, this.spans).then(
      (outcome) => this.settle(outcome),
      (error: unknown) => this.settle({ type: "retryable", error: String(error) }),
    );
  }
}

const open = new Map<string, Batch>();

const keyOf = (tenant: string, d: ExportDestination) =>
  JSON.stringify([tenant, d.target, d.endpoint, Object.entries(d.headers).sort()]);

/**
 * Sends `spans` (the tenant's) to `destination` in this isolate's next batch for it, and
 * answers with this caller's part of how it went. A caller whose batch another session
 * sends waits at most as long as the sender could take; past that its spans count as not sent.
 */
export async function exportSpans(
  env: Env,
  tenant: string,
  destination: ExportDestination,
  spans: readonly Span[],
): Promise<ExportOutcome> {
  const key = keyOf(tenant, destination);
  const joined = open.get(key);
  if (joined && joined.spans.length + spans.length <= EXPORT_BATCH_SPANS)
    return orAfter(joined.join(spans), JOIN_DEADLINE_MS, notAnswered);
  const batch = new Batch();
  open.set(key, batch);
  const mine = batch.join(spans);
  await new Promise((resolve) => setTimeout(resolve, EXPORT_LINGER_MS));
  if (open.get(key) === batch) open.delete(key);
  await batch.send(env, tenant, destination);
  return mine;
}

/** The sender's alarm may end before it answers (its object evicted): its joiners do not wait for ever. */
const JOIN_DEADLINE_MS = EXPORT_LINGER_MS + EXPORT_TIMEOUT_MS + 1_000;

const notAnswered = (): ExportOutcome => ({
  type: "retryable",
  error: "the batch this export joined was not answered in time",
});
