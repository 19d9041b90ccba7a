import type { Env } from "../env";
import { effectiveLimits, limitsFromVars } from "../quotas/limits";
import { tenantRpc } from "../rpc/stubs";
import type { TenantLimits } from "../rpc/tenant";

/**
 * A tenant's limits as this isolate holds them: read from the tenant's object at most once
 * per LIMITS_TTL_MS (and refreshed by every usage write, which answers them), so a request's
 * check costs no call. An override reaches every isolate within that time.
 */

export const LIMITS_TTL_MS = 30_000;
/**
 * How long the deployment's defaults stand in for a tenant's limits its object did not give:
 * the API stays up while the object is unreachable, and asks it again this soon.
 */
export const LIMITS_FALLBACK_MS = 5_000;

interface Slot {
  limits: TenantLimits | null;
  /** Until when `limits` is fresh. */
  until: number;
  loading: Promise<TenantLimits> | null;
}

const slots = new Map<string, Slot>();

/**
 * The tenant's limits: this isolate's copy while fresh, else the object's. When the object does
 * not answer, the copy it had stands in; with none, the deployment's defaults, for
 * LIMITS_FALLBACK_MS (logged).
 */
export async function tenantLimits(env: Env, tenant: string): Promise<TenantLimits> {
  const slot = slots.get(tenant) ?? { limits: null, until: 0, loading: null };
  slots.set(tenant, slot);
  if (slot.limits && Date.now() < slot.until) return slot.limits;
  slot.loading ??= load(env, tenant, slot).finally(() => {
    slot.loading = null;
  });
  return slot.loading;
}

async function load(env: Env, tenant: string, slot: Slot): Promise<TenantLimits> {
  const result = await tenantRpc(env, tenant).limits(tenant);
  if (result.ok) {
    freshLimits(tenant, result.value);
    return result.value;
  }
  console.error(`limits of '${tenant}' not read (${result.error.code}); the last known or the defaults stand in`);
  const standIn = slot.limits ?? defaults(env);
  slot.limits = standIn;
  slot.until = Date.now() + LIMITS_FALLBACK_MS;
  return standIn;
}

function defaults(env: Env): TenantLimits {
  const { limits, warnings } = limitsFromVars(env);
  return { ...effectiveLimits(limits, {}), overrides: {}, warnings };
}

/** Limits just read from the tenant's object (a usage write's answer, the operator's change). */
export function freshLimits(tenant: string, limits: TenantLimits): void {
  const slot = slots.get(tenant) ?? { limits: null, until: 0, loading: null };
  slot.limits = limits;
  slot.until = Date.now() + LIMITS_TTL_MS;
  slots.set(tenant, slot);
}
