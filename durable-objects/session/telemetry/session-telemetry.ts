import { nextFlushAt } from "../../../src/audit/outbox-policy";
import type { AuditRecord } from "../../../src/audit/record";
import { taskStateName } from "../../../src/interop/a2a-task";
import type { StatsDelta } from "../../../src/registry/telemetry-config-store";
import { PEER_TOOLS } from "../../../src/runtime/agent-tools";
import { isActiveRun } from "../../../src/runtime/run-record";
import type { RunTrace, TraceEvent } from "../../../src/schemas/run";
import type { TelemetryConfig } from "../../../src/schemas/telemetry";
import { agentModels } from "../../../src/services/agent-models";
import { agentDirectory, knownTelemetryRatio, tenantHead } from "../../../src/services/registry-cache";
import { exportSpans } from "../../../src/services/telemetry-batches";
import { type ExportDestination, operatorEndpoint, tenantDestination } from "../../../src/services/telemetry-export";
import { countExport, flushHeldStats, STATS_FLUSH_MS } from "../../../src/services/telemetry-stats";
import {
  afterExportFailure,
  EXPORT_BATCH_RUNS,
  EXPORT_RETRY_DELAYS_MS,
  type ExportOutcome,
  sampled,
} from "../../../src/telemetry/export-policy";
import { type RunSpans, type RunTraceInput, spansFromRun } from "../../../src/telemetry/from-trace";
import { derivedRunTrace } from "../../../src/telemetry/propagation";
import type { Span } from "../../../src/telemetry/span";
import type { Sql } from "../../shared/sql";
import { TIMER_KEYS } from "../../shared/timer-kinds";
import type { TimerHandlers, TimerOutcome } from "../../shared/timers";
import { sessionCollaborationId } from "../runs/run-peers";
import { type RunStore, traceOf } from "../runs/run-store";
import type { SessionKernel } from "../session-kernel";
import type { SessionEndHook } from "../session-lifecycle";
import { ExportQueue, type ExportTarget, type QueuedExport } from "./export-store";

/**
 * Trace export (docs/observability.md, Export): when a run ends or pauses, its export is
 * queued in the transaction that records it (the run's status audit record), and the
 * session's alarm sends the run's closed spans after the commit — never on the request path —
 * to the tenant's endpoint and the operator's, several runs a request, retried with backoff
 * and given up within bounds (src/telemetry/export-policy.ts), counting spans exported and
 * dropped in the tenant's telemetry_stats.
 */

/** The audit actions of a run's status that close spans: it paused, or it ended. */
const SETTLED = new Set(["run.paused", "run.completed", "run.failed", "run.cancelled"]);

/**
 * Whether a run's spans go to the tenant (parent-based sampling): a run that continues a
 * caller's trace follows the caller's sampled flag, so a trace is whole or absent in the
 * collector; a trace Relay starts is kept when its id falls under `ratio` (the same answer
 * for every span, and at queue and send time).
 */
export function runSampled(trace: RunTrace, ratio: number): boolean {
  return trace.parent ? trace.parent.sampled : sampled(trace.trace_id, ratio);
}

/** The parent spansFromRun (and so every span id) takes for a run: its caller's span, if any. */
const parentOf = (trace: RunTrace): RunTraceInput["parent"] =>
  trace.parent ? { trace_id: trace.trace_id, span_id: trace.parent.span_id } : undefined;

type RunInput = Pick<RunTraceInput, "provider" | "session_id" | "tools" | "collaboration_id">;

interface Prepared {
  e: QueuedExport;
  spans: Span[];
  ended: boolean;
}

export class SessionTelemetry {
  private readonly queue: ExportQueue;
  /** When this session's alarm writes the tenant's held counts (null: it holds none to write). */
  private statsFlushAt: number | null = null;

  constructor(
    private readonly k: Pick<SessionKernel, "env" | "now" | "store" | "tables" | "timers" | "transaction">,
    sql: Sql,
    private readonly runs: RunStore,
  ) {
    this.queue = new ExportQueue(sql, k.tables);
  }

  /**
   * Inside the transaction that appends `records` to the outbox: queues an export of each run
   * that paused or ended, for the operator's endpoint and for the tenant's — unless this
   * isolate knows the tenant exports nothing, or does not sample the run's trace.
   */
  onAudit(records: readonly AuditRecord[]): void {
    const tenant = records[0]?.tenant;
    if (tenant === undefined) return;
    const ratio = knownTelemetryRatio(tenant);
    const operator = operatorEndpoint(this.k.env) !== null;
    // Known to export nothing: no table to make, no run to queue.
    if (ratio === null && !operator) return;
    if (records.some((r) => r.action === "run.started")) {
      // Made with the run's own tables (the same commit makes them), not when the run ends:
      // a table made there changes the schema under every statement the run has cached,
      // and each is prepared again (docs/observability.md, What is sent, and when).
      this.k.tables.make(["telemetry_exports"]);
    }
    const settled = records.filter((r) => SETTLED.has(r.action) && typeof r.details.run_id === "string");
    if (settled.length === 0) return;
    const now = this.k.now();
    let queued = false;
    for (const record of settled) {
      const runId = record.details.run_id as string;
      const targets: ExportTarget[] = [];
      if (ratio === undefined || (ratio !== null && runSampled(this.traceOf(runId), ratio))) targets.push("tenant");
      if (operator) targets.push("operator");
      for (const target of targets) this.queue.add(runId, target, now);
      queued ||= targets.length > 0;
    }
    if (!queued) return;
    // With the audit flush the same commit schedules, in one alarm: an alarm of its own for
    // each run's export cost about as much as the export's own work (docs/benchmarks.md).
    // A flush waiting out a D1 backoff does not hold the export back.
    const at = Math.min(this.k.timers.get(TIMER_KEYS.flush)?.due_at ?? Number.POSITIVE_INFINITY, nextFlushAt(now));
    this.k.timers.schedule("telemetry.export", at, null, { key: TIMER_KEYS.telemetryExport, ifExists: "earliest" });
  }

  /** A run's trace as stored with it (derived for a run this object no longer holds). */
  private traceOf(runId: string): RunTrace {
    const row = this.runs.get(runId);
    return row ? traceOf(row) : derivedRunTrace(runId);
  }

  timerHandlers(): TimerHandlers {
    return { "telemetry.export": (_timer, now) => this.run(now) };
  }

  /** A deleted session's storage goes once its exports are sent or given up (within the bounds). */
  endHook(): SessionEndHook {
    return {
      onEnd: (session) => session,
      settle: async () => {
        const now = this.k.now();
        await this.run(now);
        const session = this.k.store.load();
        if (session) await this.flushStats(session.tenant, now, true);
        return this.queue.nextAt() === null;
      },
    };
  }

  private async run(now: number): Promise<TimerOutcome> {
    const due = this.queue.due(now, EXPORT_BATCH_RUNS * 2);
    const session = this.k.store.load();
    if (due.length > 0 && session) {
      let config: TelemetryConfig | null;
      try {
        // The tenant head (one D1 batch a second per isolate) holds the settings.
        config = (await tenantHead(this.k.env.DB, session.tenant)).telemetry;
      } catch {
        return {
          type: "retry",
          at: now + EXPORT_RETRY_DELAYS_MS[0],
          error: "the telemetry settings could not be read",
        };
      }
      const input = await this.inputOf(session.tenant, session.id);
      for (const target of ["tenant", "operator"] as const) {
        const rows = due.filter((e) => e.target === target).slice(0, EXPORT_BATCH_RUNS);
        if (rows.length > 0) await this.send(session.tenant, target, rows, config, input, now);
      }
    }
    if (session) await this.flushStats(session.tenant, now);
    const wakes = [this.queue.nextAt(), this.statsFlushAt].filter((at): at is number => at !== null);
    return wakes.length === 0 ? { type: "done" } : { type: "again", at: Math.max(Math.min(...wakes), now) };
  }

  /** What spansFromRun needs besides a run's events: the tenant's provider and tool kinds (defaults when unreadable). */
  private async inputOf(tenant: string, sessionId: string): Promise<RunInput> {
    const models = await agentModels(this.k.env, tenant).catch(() => null);
    const directory = await agentDirectory(this.k.env.DB, tenant).catch(() => null);
    const tools = [...(directory?.tools.values() ?? [])];
    const peers = Object.entries(PEER_TOOLS).map(([action, name]) => [name, { kind: "peer" as const, action }]);
    return {
      session_id: sessionId,
      provider: models?.provider.ok ? models.provider.value.name : "local",
      tools: Object.fromEntries([...tools.map((t) => [t.name, t.kind]), ...peers]),
      collaboration_id: sessionCollaborationId(sessionId),
    };
  }

  /**
   * A run's trace events; the session's first run also gets the router's decision that gave
   * the session its agent (an event of the session, not of a run: docs/runs.md, Traces).
   */
  private eventsOf(runId: string, sessionId: string): TraceEvent[] {
    const events = this.runs.events(runId);
    if (this.runs.firstId() !== runId) return events;
    return [...this.runs.events(sessionId).filter((e) => e.event_type === "route"), ...events];
  }

  /** One request to one destination with the spans of `rows`' runs not sent there yet; then each row's fate. */
  private async send(
    tenant: string,
    target: ExportTarget,
    rows: QueuedExport[],
    config: TelemetryConfig | null,
    input: RunInput,
    now: number,
  ): Promise<void> {
    const operator = operatorEndpoint(this.k.env);
    const destination: ExportDestination | null =
      target === "tenant"
        ? config && tenantDestination(config)
        : operator === null
          ? null
          : { target: "operator", endpoint: operator, headers: {} };
    // The operator's endpoint never gets content: what a tenant's tools were given is the tenant's.
    const capture = target === "tenant" && config?.capture_content === true;
    const prepared: Prepared[] = [];
    const gone: QueuedExport[] = [];
    for (const e of rows) {
      const run = this.runs.get(e.run_id);
      const trace = run ? traceOf(run) : derivedRunTrace(e.run_id);
      const parent = parentOf(trace);
      const origin = run?.origin;
      // Content is read only for a tenant that captures it: the run's items, as its task shows them.
      const messages =
        capture && run
          ? this.k.store.historyBetween(
              Date.parse(run.run.started_at),
              run.run.ended_at === null ? now : Date.parse(run.run.ended_at),
              200,
            )
          : undefined;
      const traced: RunSpans = spansFromRun({
        ...input,
        ...(parent ? { parent } : {}),
        ...(origin && run
          ? {
              a2a: {
                method: origin.a2a_method,
                state: taskStateName(run.run.status),
                ...(origin.message_id ? { message_id: origin.message_id } : {}),
              },
            }
          : {}),
        run_id: e.run_id,
        events: this.eventsOf(e.run_id, input.session_id),
        settings: { capture_content: capture },
        ...(messages ? { messages } : {}),
      });
      const sent = new Set(e.sent);
      const spans = traced.spans.filter((s) => !sent.has(s.span_id));
      const ended = !run || !isActiveRun(run.run.status);
      const unsampled = target === "tenant" && config !== null && !runSampled(trace, config.sample_ratio);
      if (!destination || unsampled) gone.push(e);
      else prepared.push({ e, spans, ended });
    }
    const evicted = prepared.filter((p) => p.e.evicted);
    const sending = prepared.filter((p) => !p.e.evicted && p.spans.length > 0);
    const outcome: ExportOutcome =
      sending.length > 0 && destination
        ? await exportSpans(
            this.k.env,
            tenant,
            destination,
            sending.flatMap((p) => p.spans),
          )
        : { type: "sent" };
    const delta: StatsDelta = { exported: 0, dropped: evicted.reduce((n, p) => n + p.spans.length, 0) };
    if (evicted.length > 0)
      delta.error = { message: "the session's export queue overflowed", at: new Date(now).toISOString() };
    this.k.transaction(() => {
      for (const e of gone) this.queue.remove(e);
      for (const p of evicted) this.queue.remove(p.e);
      for (const p of prepared.filter((p) => !p.e.evicted && (p.spans.length === 0 || outcome.type === "sent"))) {
        this.queue.sent(
          p.e,
          p.spans.map((s) => s.span_id),
          p.ended,
        );
        delta.exported += p.spans.length;
      }
      if (outcome.type === "sent") {
        // A partial success: the rejected spans are dropped (not sent again), and said why.
        if (outcome.rejected) {
          delta.exported -= outcome.rejected.spans;
          delta.dropped += outcome.rejected.spans;
          delta.error = { message: outcome.rejected.error, at: new Date(now).toISOString() };
        }
        return;
      }
      delta.error = { message: outcome.error, at: new Date(now).toISOString() };
      for (const p of sending) {
        const next = afterExportFailure(outcome, p.e.attempts, p.e.failing_since ?? now, now);
        if (next.type === "retry") {
          this.queue.retryAt(p.e, next.attempts, next.at, p.e.failing_since ?? now, outcome.error);
          continue;
        }
        delta.dropped += p.spans.length;
        // A paused run's row keeps what was sent; the dropped spans are not sent again.
        this.queue.sent(
          p.e,
          p.spans.map((s) => s.span_id),
          p.ended,
        );
      }
    });
    await this.count(tenant, target, delta);
  }

  /**
   * Adds to the tenant's counters (its own endpoint's only), coalesced per isolate
   * (src/services/telemetry-stats.ts); when this export starts a hold, this session's alarm
   * writes it. A D1 failure loses the count, never the run.
   */
  private async count(tenant: string, target: ExportTarget, delta: StatsDelta): Promise<void> {
    if (delta.exported === 0 && delta.dropped === 0 && !delta.error) return;
    if (target === "operator") {
      if (delta.dropped > 0)
        console.warn(
          `telemetry: ${delta.dropped} spans of ${tenant} dropped by the operator's endpoint: ${delta.error?.message}`,
        );
      return;
    }
    if ((await countExport(this.k.env.DB, tenant, delta)) === "flush")
      this.statsFlushAt ??= this.k.now() + STATS_FLUSH_MS;
  }

  /** This session started a hold of the tenant's counts: it writes it when its alarm runs then. */
  private async flushStats(tenant: string, now: number, always = false): Promise<void> {
    if (this.statsFlushAt === null || (!always && now < this.statsFlushAt)) return;
    this.statsFlushAt = null;
    await flushHeldStats(this.k.env.DB, tenant);
  }
}
