import { type Context, Hono } from "hono";
import type { AppEnv } from "../app-env";
import { parseApiKeys } from "../auth/api-keys";
import { backgroundOf } from "../auth/middleware";
import { operatorAuth } from "../auth/operator";
import { RelayError, unwrap } from "../errors";
import { tenantRpc } from "../rpc/stubs";
import type { TenantLimits } from "../rpc/tenant";
import { QuotaOverrides, type TenantQuotas } from "../schemas/quotas";
import type { TenantsUsage } from "../schemas/usage";
import { endLeases } from "../services/admissions";
import { requestTiers, tierBinding } from "../services/request-rate";
import { freshLimits } from "../services/tenant-limits";
import { usageReport } from "../services/usage-report";
import { operatorShards } from "./operator-shards";
import { periodOf, UsageQuery } from "./usage";
import { readJson, readQuery } from "./validate";

/**
 * `/v1/operator/…` (docs/operations.md, Quotas): the operator's routes, behind RELAY_OPERATOR_KEY
 * and never a tenant's key — each tenant's quota overrides, its usage, and every tenant's usage
 * at once, and the tenants' shards (./operator-shards.ts). The tenants are those RELAY_API_KEYS lists.
 */

type Ctx = Context<AppEnv>;

/** The tenants RELAY_API_KEYS names, in order, each once. */
function tenants(c: Ctx): string[] {
  return [...new Set(parseApiKeys(c.env.RELAY_API_KEYS).map((entry) => entry.tenant))].sort();
}

function tenantOf(c: Ctx): string {
  const tenant = c.req.param("tenant") ?? "";
  if (!tenants(c).includes(tenant))
    throw new RelayError("TENANT_NOT_FOUND", `RELAY_API_KEYS lists no tenant '${tenant}'.`, { tenant });
  return tenant;
}

function quotasView(c: Ctx, tenant: string, limits: TenantLimits): TenantQuotas {
  return {
    tenant,
    limits: limits.limits,
    sources: limits.sources,
    overrides: limits.overrides,
    request_tiers: requestTiers(c.env),
    warnings: limits.warnings,
  };
}

/** A request limit must be a tier the deployment binds (src/services/request-rate.ts), or none. */
function checkTier(c: Ctx, overrides: QuotaOverrides): void {
  const value = overrides.requests_per_minute;
  if (value === undefined || value === null) return;
  const tiers = requestTiers(c.env);
  if (!tiers.includes(value))
    throw new RelayError(
      "VALIDATION_FAILED",
      `No request tier of ${value} a minute: bind ${tierBinding(value)} first.`,
      {
        issues: [{ path: "requests_per_minute", message: `must be one of ${tiers.join(", ")}, or null` }],
        tiers,
      },
    );
}

/**
 * Sets a tenant's overrides; this isolate's copy of its limits follows at once, the others within
 * a TTL. This isolate's admission leases of the tenant end (others' within their second).
 */
async function setOverrides(c: Ctx, overrides: QuotaOverrides | null): Promise<Response> {
  const tenant = tenantOf(c);
  const limits = unwrap(await tenantRpc(c.env, tenant).setOverrides(tenant, overrides));
  freshLimits(tenant, limits);
  endLeases(c.env, tenant, backgroundOf(c));
  return c.json(quotasView(c, tenant, limits));
}

export const operator = new Hono<AppEnv>()
  .use(operatorAuth())
  .get("/usage", async (c) => {
    const period = periodOf(readQuery(c, UsageQuery));
    const reports = await Promise.all(tenants(c).map((tenant) => usageReport(c.env, tenant, period)));
    const answer: TenantsUsage = {
      from: new Date(period.from).toISOString(),
      to: new Date(period.to).toISOString(),
      tenants: reports.map((r) => ({
        tenant: r.tenant,
        totals: r.totals,
        d1_bytes_stored_estimate: r.d1_bytes_stored_estimate,
        quotas: r.quotas,
      })),
    };
    return c.json(answer);
  })
  .get("/tenants/:tenant/usage", async (c) => {
    const tenant = tenantOf(c);
    return c.json(await usageReport(c.env, tenant, periodOf(readQuery(c, UsageQuery))));
  })
  .get("/tenants/:tenant/quotas", async (c) => {
    const tenant = tenantOf(c);
    return c.json(quotasView(c, tenant, unwrap(await tenantRpc(c.env, tenant).limits(tenant))));
  })
  .put("/tenants/:tenant/quotas", async (c) => {
    tenantOf(c);
    const overrides = await readJson(c, QuotaOverrides);
    checkTier(c, overrides);
    return setOverrides(c, overrides);
  })
  .delete("/tenants/:tenant/quotas", (c) => setOverrides(c, null))
  .route("/", operatorShards(tenantOf));
