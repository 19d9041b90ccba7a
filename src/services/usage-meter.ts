import type { AuditRecord } from "../audit/record";
import type { Env } from "../env";
import type { ChatProvider, ChatRequest, ChatResponse } from "../providers/types";
import { tenantRpc } from "../rpc/stubs";
import { counted, modelCall, refusedFor, type Usage } from "../usage/counts";
import { flushedUsage } from "../usage/flushed";
import { type TenantHours, UsageTally } from "../usage/tally";
import { freshLimits } from "./tenant-limits";

/**
 * The isolate's usage meter (docs/operations.md, Usage): what a request, a model call or an
 * audit flush uses is counted in memory, and the tally goes to each tenant's object at most
 * once per USAGE_FLUSH_MS — one call per tenant a second from an isolate, never one a request,
 * and no D1 write. A tally the object does not take is kept for the next flush (the next count
 * brings it); an isolate that ends first loses it: these are counters, not records.
 */

export const USAGE_FLUSH_MS = 1_000;

type Background = (work: Promise<unknown>) => void;

export class UsageMeter {
  private readonly tally = new UsageTally();
  private flushPending = false;
  private lastFlush = 0;

  constructor(private readonly intervalMs = USAGE_FLUSH_MS) {}

  /** Counts `usage` for `tenant` now; `background` keeps the flush alive past a response (`ctx.waitUntil`). */
  add(env: Pick<Env, "TENANTS">, tenant: string, usage: Usage, background?: Background): void {
    this.tally.add(tenant, Date.now(), usage);
    if (this.flushPending || this.tally.size === 0) return;
    this.flushPending = true;
    const flush = this.flushSoon(env);
    if (background) background(flush);
  }

  private async flushSoon(env: Pick<Env, "TENANTS">): Promise<void> {
    const wait = this.lastFlush + this.intervalMs - Date.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    // From here a new count schedules the next flush (an interval after this one starts).
    this.flushPending = false;
    this.lastFlush = Date.now();
    await Promise.all(this.tally.take().map((batch) => this.hand(env, batch)));
  }

  private async hand(env: Pick<Env, "TENANTS">, batch: TenantHours): Promise<void> {
    try {
      const result = await tenantRpc(env, batch.tenant).record(batch.tenant, batch.hours);
      if (result.ok) {
        freshLimits(batch.tenant, result.value);
        return;
      }
      this.tally.putBack(batch);
      console.error(`usage of '${batch.tenant}' not recorded (${result.error.code}); kept for the next flush`);
    } catch (error) {
      this.tally.putBack(batch);
      console.error(`usage of '${batch.tenant}' not recorded; kept for the next flush`, error);
    }
  }
}

/** The isolate's one meter: the Worker's requests and the objects' model calls and flushes share it. */
export const usageMeter = new UsageMeter();

/** Counts a quota refusal in the tenant's usage (the limit it met). */
export function countRefused(env: Pick<Env, "TENANTS">, tenant: string, limit: string, background?: Background): void {
  usageMeter.add(env, tenant, refusedFor(limit), background);
}

/** Counts tool calls a turn asked to run. */
export function countToolCalls(env: Pick<Env, "TENANTS">, tenant: string, calls: number): void {
  if (calls > 0) usageMeter.add(env, tenant, counted({ tool_calls: calls }));
}

/** Tokens of the model calls this isolate counted, by tenant, since it started. */
const tokensByTenant = new Map<string, number>();

/**
 * The tokens of `tenant`'s model calls this isolate has counted so far: a lease of runs ends
 * once those it may spend are used here (src/services/admissions.ts).
 */
export function tokensCounted(tenant: string): number {
  return tokensByTenant.get(tenant) ?? 0;
}

/**
 * `provider` with every call counted for `tenant`: one model call of the request's model,
 * with the tokens the provider reported (none when it reported none, or the call failed).
 */
export function meteredProvider(env: Pick<Env, "TENANTS">, tenant: string, provider: ChatProvider): ChatProvider {
  const counting = async (req: ChatRequest, call: Promise<ChatResponse>): Promise<ChatResponse> => {
    let usage: ChatResponse["usage"];
    try {
      const response = await call;
      usage = response.usage;
      return response;
    } finally {
      const tokens = usage ? { input: usage.prompt_tokens, output: usage.completion_tokens } : undefined;
      usageMeter.add(env, tenant, modelCall(provider.name, req.model, tokens));
      if (tokens) tokensByTenant.set(tenant, tokensCounted(tenant) + tokens.input + tokens.output);
    }
  };
  const stream = provider.stream?.bind(provider);
  return {
    name: provider.name,
    complete: (req, signal) => counting(req, provider.complete(req, signal)),
    ...(stream ? { stream: (req, signal, onText) => counting(req, stream(req, signal, onText)) } : {}),
  };
}

/**
 * `db` for one audit flush: when the batch is written, the flush's usage is counted for the
 * records' tenant — the handoffs they complete, the rows D1 reports written, the bytes.
 */
export function meteredAuditDb(env: Pick<Env, "TENANTS">, db: D1Database, records: readonly AuditRecord[]): D1Database {
  const tenant = records[0]?.tenant;
  return new Proxy(db, {
    get(target, property) {
      if (property === "batch" && tenant !== undefined)
        return async (statements: D1PreparedStatement[]) => {
          const results = await target.batch(statements);
          const rows = results.reduce((n, r) => n + (r.meta?.rows_written ?? 0), 0);
          usageMeter.add(env, tenant, flushedUsage(records, rows));
          return results;
        };
      const value = Reflect.get(target, property, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}
