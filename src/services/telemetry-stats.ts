import { addTelemetryStats, type StatsDelta } from "../registry/telemetry-config-store";

/**
 * A tenant's export counters, written to D1 coalesced per isolate (docs/observability.md,
 * Export): one D1 write per export cost a run with export on a fifth of its throughput
 * (docs/benchmarks.md, Trace export). Spans exported are held and written together, at most
 * STATS_FLUSH_MS after the first of them; drops and errors are written at once, with what
 * the isolate held. A write that fails loses its counts, never a run.
 */

/** How long an isolate holds a tenant's exported-span count before writing it. */
export const STATS_FLUSH_MS = 1_000;

const held = new Map<string, { exported: number; since: number }>();

/** What counting an export asks of its caller: `flush` — it started a hold, and must flush it within STATS_FLUSH_MS. */
export type Counted = "written" | "held" | "flush";

/** Adds an export's counts to the tenant's counters, holding spans exported for a later write. */
export async function countExport(
  db: D1Database,
  tenant: string,
  delta: StatsDelta,
  now = Date.now(),
): Promise<Counted> {
  const holding = held.get(tenant);
  if (delta.dropped === 0 && !delta.error) {
    if (delta.exported === 0) return "written";
    if (!holding) {
      held.set(tenant, { exported: delta.exported, since: now });
      return "flush";
    }
    if (now - holding.since < STATS_FLUSH_MS) {
      holding.exported += delta.exported;
      return "held";
    }
  }
  held.delete(tenant);
  await write(db, tenant, { ...delta, exported: delta.exported + (holding?.exported ?? 0) });
  return "written";
}

/** Writes what this isolate holds of the tenant's counts (nothing held: no write). */
export async function flushHeldStats(db: D1Database, tenant: string): Promise<void> {
  const holding = held.get(tenant);
  if (!holding) return;
  held.delete(tenant);
  await write(db, tenant, { exported: holding.exported, dropped: 0 });
}

async function write(db: D1Database, tenant: string, delta: StatsDelta): Promise<void> {
  if (delta.exported === 0 && delta.dropped === 0 && !delta.error) return;
  await addTelemetryStats(db, tenant, delta).catch((error: unknown) =>
    console.warn("telemetry: the export counters could not be written", error),
  );
}
