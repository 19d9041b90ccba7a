import type { Env } from "../env";
import type { Result } from "../errors";
import type { Ask } from "../quotas/admission";
import { tenantRpc } from "../rpc/stubs";
import type { Admission } from "../rpc/tenant";
import { countRefused } from "./usage-meter";

/**
 * Admitting a session or a run against the tenant's quotas (docs/operations.md, Quotas): asked
 * of the tenant's object before anything is written, so a refusal leaves nothing behind; and
 * taken back when what was admitted is not made after all (the count is the usage).
 */

type Background = (work: Promise<unknown>) => void;

/** The tenant object's admission of `ask`; a QUOTA_EXCEEDED refusal is counted in the tenant's usage. */
export async function admit(
  env: Pick<Env, "TENANTS">,
  tenant: string,
  ask: Ask,
  background?: Background,
): Promise<Result<Admission>> {
  const admitted = await tenantRpc(env, tenant).admit(tenant, ask);
  if (!admitted.ok && admitted.error.code === "QUOTA_EXCEEDED") {
    const limit = (admitted.error.details as { limit?: unknown } | undefined)?.limit;
    countRefused(env, tenant, typeof limit === "string" ? limit : "unknown", background);
  }
  return admitted;
}

/** Takes an admission back (best effort: a failure is logged, and the count stays one too many). */
export async function release(env: Pick<Env, "TENANTS">, tenant: string, admission: Admission): Promise<void> {
  if (!admission.sessions && !admission.runs) return;
  try {
    const released = await tenantRpc(env, tenant).release(tenant, admission);
    if (!released.ok) console.error(`admission of '${tenant}' not taken back (${released.error.code})`);
  } catch (error) {
    console.error(`admission of '${tenant}' not taken back`, error);
  }
}
