import type { Env } from "../env";
import { ok, type Result } from "../errors";
import { orAfter } from "../lib/deadline";
import type { Ask } from "../quotas/admission";
import { DEMAND_MS, LEASE_MS, leaseWanted, MAX_LEASE } from "../quotas/lease";
import { TENANT_CALL_DEADLINE_MS, tenantRpc } from "../rpc/stubs";
import type { Admission, Granted } from "../rpc/tenant";
import { countRefused, tokensCounted } from "./usage-meter";

/**
 * Admitting a session or a run against the tenant's quotas (docs/operations.md, Quotas): asked
 * of the tenant's object before anything is written, so a refusal leaves nothing behind; and
 * taken back when what was admitted is not made after all (the count is the usage).
 *
 * When this isolate sees a tenant's asks come quickly, it asks for a lease with the admission:
 * more admissions of the same kind, already counted by the object, that it gives out itself
 * until the lease ends (src/quotas/lease.ts); the ones not given out are handed back then.
 */

type Background = (work: Promise<unknown>) => void;
type Kind = "sessions" | "runs" | "both";

/** A lease this isolate holds. */
interface Held {
  id: string;
  hour: number;
  minute: number;
  kind: Kind;
  /** Admissions not given out yet. */
  left: number;
  /** This isolate's clock: measured from before the ask, so it ends no later than the object granted. */
  until: number;
  /** The tokens counted here when it was asked for, and how many more end it (null: none do). */
  tokensAt: number;
  tokensLeft: number | null;
  ended: boolean;
}

/** One tenant's asks of one kind in this isolate. */
interface Pool {
  lease: Held | null;
  /** The ask under way that asked for a lease: others wait for it rather than call too. */
  asking: Promise<void> | null;
  /** The last lease asked for was not granted (a tenant near a limit): asks do not wait then. */
  denied: boolean;
  /** When the recent asks were made (at most MAX_LEASE + 1 kept). */
  asks: number[];
}

const pools = new Map<string, Pool>();

const kindOf = (ask: Ask): Kind | null =>
  ask.sessions && ask.runs ? "both" : ask.sessions ? "sessions" : ask.runs ? "runs" : null;

const keyOf = (tenant: string, kind: Kind) => `${tenant}\u0000${kind}`;

function poolOf(tenant: string, kind: Kind): Pool {
  let pool = pools.get(keyOf(tenant, kind));
  if (!pool) {
    pool = { lease: null, asking: null, denied: false, asks: [] };
    pools.set(keyOf(tenant, kind), pool);
  }
  return pool;
}

/** Notes an ask at `now`; answers how many of the pool's asks fall in the last DEMAND_MS. */
function noteAsk(pool: Pool, now: number): number {
  pool.asks.push(now);
  while (pool.asks.length > MAX_LEASE + 1 || (pool.asks[0] ?? now) <= now - DEMAND_MS) pool.asks.shift();
  return pool.asks.length;
}

/**
 * The tenant's admission of `ask`: one from this isolate's lease when it holds one, else the
 * tenant object's; a QUOTA_EXCEEDED refusal is counted in the tenant's usage. `background`
 * keeps a lease's end alive past a response (`ctx.waitUntil`).
 */
export async function admit(
  env: Pick<Env, "TENANTS">,
  tenant: string,
  ask: Ask,
  background?: Background,
): Promise<Result<Admission>> {
  const kind = kindOf(ask);
  if (!kind) return refusalCounted(env, tenant, await tenantRpc(env, tenant).admit(tenant, ask), background);
  const pool = poolOf(tenant, kind);
  const asks = noteAsk(pool, Date.now());
  // While another ask of this isolate is asking for a lease, wait for it rather than call too:
  // a burst is served lease after lease, until the object grants none (near a limit).
  for (;;) {
    const taken = take(env, tenant, pool, background);
    if (taken) return ok(taken);
    const asking = pool.asking;
    if (!asking || pool.denied) break;
    // That ask belongs to another request: should it never settle (that request cancelled),
    // this one stops waiting for it and asks by itself.
    if (!(await settlesWithin(asking, TENANT_CALL_DEADLINE_MS))) {
      if (pool.asking === asking) pool.asking = null;
      break;
    }
  }
  const wanted = pool.asking ? 0 : leaseWanted(asks);
  const answer = await fromObject(env, tenant, pool, kind, ask, wanted, background);
  if (!answer.ok && answer.error.code === "QUOTA_EXCEEDED") {
    // This isolate's own lease, granted while this ask was under way, holds what it was refused.
    if (pool.asking) await settlesWithin(pool.asking, TENANT_CALL_DEADLINE_MS);
    const late = take(env, tenant, pool, background);
    if (late) return ok(late);
  }
  return refusalCounted(env, tenant, answer, background);
}

/**
 * The object's admission of `ask`, with a lease of up to `wanted` more asked for. While that is
 * under way, the pool's other asks wait for it; the lease is held before any of them resumes.
 */
function fromObject(
  env: Pick<Env, "TENANTS">,
  tenant: string,
  pool: Pool,
  kind: Kind,
  ask: Ask,
  wanted: number,
  background?: Background,
): Promise<Result<Granted>> {
  const since = { at: Date.now(), tokens: tokensCounted(tenant) };
  const asked = tenantRpc(env, tenant).admit(tenant, ask, wanted);
  if (wanted > 0) {
    const asking: Promise<void> = asked.then(
      (granted) => {
        if (pool.asking === asking) pool.asking = null;
        const grant = granted.ok ? granted.value.grant : undefined;
        pool.denied = !grant;
        if (granted.ok && grant) hold(env, tenant, pool, kind, granted.value, since, background);
      },
      () => {
        if (pool.asking === asking) pool.asking = null;
      },
    );
    pool.asking = asking;
  }
  return asked;
}

/** Whether `work` settles within `ms`. */
const settlesWithin = (work: Promise<void>, ms: number): Promise<boolean> =>
  orAfter(
    work.then(() => true),
    ms,
    () => false,
  );

/**
 * Ends this isolate's leases of the tenant now, handing back what they did not give out: its
 * limits just changed (the operator's override), and the next asks are decided under the new ones.
 */
export function endLeases(env: Pick<Env, "TENANTS">, tenant: string, background?: Background): void {
  for (const kind of ["sessions", "runs", "both"] as const) {
    const pool = pools.get(keyOf(tenant, kind));
    if (pool?.lease) void end(env, tenant, pool, pool.lease, background);
  }
}

/** Takes an admission back (best effort: a failure is logged, and the count stays one too many). */
export async function release(env: Pick<Env, "TENANTS">, tenant: string, admission: Admission): Promise<void> {
  if (!admission.sessions && !admission.runs) return;
  const kind = kindOf(admission);
  const lease = kind && admission.lease !== undefined ? pools.get(keyOf(tenant, kind))?.lease : undefined;
  if (lease && lease.id === admission.lease && !lease.ended && Date.now() < lease.until) {
    // Still good: back to the lease, given out again or handed back with it at its end.
    lease.left++;
    return;
  }
  try {
    const { lease: _, ...counted } = admission;
    const released = await tenantRpc(env, tenant).release(tenant, counted);
    if (!released.ok) console.error(`admission of '${tenant}' not taken back (${released.error.code})`);
  } catch (error) {
    console.error(`admission of '${tenant}' not taken back`, error);
  }
}

/** The object's answer as callers see it, without a lease's grant; a QUOTA_EXCEEDED refusal is counted in usage. */
function refusalCounted(
  env: Pick<Env, "TENANTS">,
  tenant: string,
  answer: Result<Granted>,
  background?: Background,
): Result<Admission> {
  if (answer.ok) {
    const { grant: _, ...admission } = answer.value;
    return ok(admission);
  }
  if (answer.error.code === "QUOTA_EXCEEDED") {
    const limit = (answer.error.details as { limit?: unknown } | undefined)?.limit;
    countRefused(env, tenant, typeof limit === "string" ? limit : "unknown", background);
  }
  return answer;
}

/**
 * One admission from the pool's lease while it is good: not past its time, and (for runs) not
 * past the tokens the tenant had left when it was granted, as far as this isolate counted them.
 * The lease ends when its last is given out.
 */
function take(env: Pick<Env, "TENANTS">, tenant: string, pool: Pool, background?: Background): Admission | null {
  const lease = pool.lease;
  if (!lease || lease.ended) return null;
  const spent = lease.tokensLeft !== null && tokensCounted(tenant) - lease.tokensAt >= lease.tokensLeft;
  if (Date.now() >= lease.until || lease.left <= 0 || spent) {
    end(env, tenant, pool, lease, background);
    return null;
  }
  lease.left--;
  const { hour, minute, kind, id } = lease;
  if (lease.left === 0) end(env, tenant, pool, lease, background);
  return { hour, minute, sessions: kind !== "runs", runs: kind !== "sessions", lease: id };
}

/** Holds a lease just granted (ending the one before), and ends it when its time is up. */
function hold(
  env: Pick<Env, "TENANTS">,
  tenant: string,
  pool: Pool,
  kind: Kind,
  granted: Granted,
  since: { at: number; tokens: number },
  background?: Background,
): void {
  const grant = granted.grant!;
  if (pool.lease) end(env, tenant, pool, pool.lease, background);
  const lease: Held = {
    id: grant.id,
    hour: granted.hour,
    minute: granted.minute,
    kind,
    left: grant.count,
    until: since.at + Math.min(grant.ms, LEASE_MS),
    tokensAt: since.tokens,
    tokensLeft: grant.tokens,
    ended: false,
  };
  pool.lease = lease;
  // The timer is this request's, and runs its course even when the lease ends sooner: the
  // runtime refuses to settle a promise one request waits on from another request.
  const expiry = new Promise((resolve) => setTimeout(resolve, Math.max(0, lease.until - Date.now())));
  const ending = expiry.then(() => end(env, tenant, pool, lease));
  if (background) background(ending);
}

/**
 * Ends a lease once: the admissions it did not give out go back to the object, which also stops
 * leaving the lease out of its usage views. Best effort, like a release.
 */
function end(
  env: Pick<Env, "TENANTS">,
  tenant: string,
  pool: Pool,
  lease: Held,
  background?: Background,
): Promise<void> {
  if (lease.ended) return Promise.resolve();
  lease.ended = true;
  if (pool.lease === lease) pool.lease = null;
  const unused = Math.max(0, lease.left);
  lease.left = 0;
  const ended = {
    id: lease.id,
    hour: lease.hour,
    minute: lease.minute,
    sessions: lease.kind === "runs" ? 0 : unused,
    runs: lease.kind === "sessions" ? 0 : unused,
  };
  const sent = tenantRpc(env, tenant)
    .endLease(tenant, ended)
    .then(
      (result) => {
        if (!result.ok)
          console.error(`lease of '${tenant}' not ended (${result.error.code}); ${unused} not taken back`);
      },
      (error: unknown) => console.error(`lease of '${tenant}' not ended; ${unused} not taken back`, error),
    );
  if (background) background(sent);
  return sent;
}
