import type { Env } from "../env";
import { RelayError } from "../errors";
import { tenantRpc } from "../rpc/stubs";
import type { TenantLimits } from "../rpc/tenant";

/**
 * A tenant's limits as this isolate holds them: read from the tenant's object at most once
 * per LIMITS_TTL_MS (and refreshed by every usage write, which answers them), so a request's
 * check costs no call. An override reaches every isolate within that time.
 */

export const LIMITS_TTL_MS = 30_000;

interface Slot {
  limits: TenantLimits | null;
  at: number;
  loading: Promise<TenantLimits> | null;
}

const slots = new Map<string, Slot>();

/** The tenant's limits: this isolate's copy while fresh, else the object's (a stale copy stands in if it does not answer). */
export async function tenantLimits(env: Pick<Env, "TENANTS">, tenant: string): Promise<TenantLimits> {
  const slot = slots.get(tenant) ?? { limits: null, at: 0, loading: null };
  slots.set(tenant, slot);
  if (slot.limits && Date.now() - slot.at < LIMITS_TTL_MS) return slot.limits;
  slot.loading ??= load(env, tenant, slot).finally(() => {
    slot.loading = null;
  });
  return slot.loading;
}

async function load(env: Pick<Env, "TENANTS">, tenant: string, slot: Slot): Promise<TenantLimits> {
  const result = await tenantRpc(env, tenant).limits(tenant);
  if (result.ok) {
    freshLimits(tenant, result.value);
    return result.value;
  }
  if (slot.limits) return slot.limits;
  throw RelayError.fromBody(result.error);
}

/** Limits just read from the tenant's object (a usage write's answer, the operator's change). */
export function freshLimits(tenant: string, limits: TenantLimits): void {
  const slot = slots.get(tenant);
  if (slot) {
    slot.limits = limits;
    slot.at = Date.now();
  } else slots.set(tenant, { limits, at: Date.now(), loading: null });
}
