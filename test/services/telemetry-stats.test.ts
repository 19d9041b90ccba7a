import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { getTelemetryStats } from "../../src/registry/telemetry-config-store";
import { countExport, flushHeldStats, STATS_FLUSH_MS } from "../../src/services/telemetry-stats";

/**
 * The export counters coalesced per isolate (docs/observability.md, Export), against local D1:
 * spans exported are held and written together; drops and errors are written at once, with
 * what was held.
 */

const T0 = 1_800_000_000_000;
const stats = (tenant: string) => getTelemetryStats(env.DB, tenant);

describe("export counters", () => {
  it("holds spans exported within STATS_FLUSH_MS and writes them in one go when flushed", async () => {
    const tenant = "stats-hold";
    expect(await countExport(env.DB, tenant, { exported: 8, dropped: 0 }, T0)).toBe("flush");
    expect(await countExport(env.DB, tenant, { exported: 5, dropped: 0 }, T0 + 10)).toBe("held");
    expect((await stats(tenant)).exported_spans).toBe(0);
    await flushHeldStats(env.DB, tenant);
    expect((await stats(tenant)).exported_spans).toBe(13);
    await flushHeldStats(env.DB, tenant);
    expect((await stats(tenant)).exported_spans).toBe(13);
  });

  it("writes a hold that is STATS_FLUSH_MS old with the next export", async () => {
    const tenant = "stats-old";
    await countExport(env.DB, tenant, { exported: 8, dropped: 0 }, T0);
    expect(await countExport(env.DB, tenant, { exported: 2, dropped: 0 }, T0 + STATS_FLUSH_MS)).toBe("written");
    expect((await stats(tenant)).exported_spans).toBe(10);
  });

  it("writes a drop at once, with the spans exported it held and the error", async () => {
    const tenant = "stats-drop";
    await countExport(env.DB, tenant, { exported: 8, dropped: 0 }, T0);
    const error = { message: "HTTP 400", at: new Date(T0).toISOString() };
    expect(await countExport(env.DB, tenant, { exported: 0, dropped: 3, error }, T0 + 1)).toBe("written");
    expect(await stats(tenant)).toMatchObject({ exported_spans: 8, dropped_spans: 3, last_error: "HTTP 400" });
  });
});
