import { env } from "cloudflare:workers";
import { agentRpc, collaborationRpc, sessionRpc } from "../../src/rpc/stubs";
import type { Fixtures } from "./fixtures";

/**
 * The tenants' observable state, for "a refused write changed nothing": the registry rows in
 * D1 (agents, tools, routing and events configuration — written synchronously), each tenant's
 * vault as sealed (a value stored again is sealed afresh, so its ciphertext moves even when the
 * value is the same), and every fixture object as its own Durable Object reports it — each
 * session's view, history, inbox and full audit trail (flushed and pending: a session keeps its
 * records), each collaboration, and the capacity-limited agent's leases. Read straight from
 * storage and RPC: about ten calls, cheap enough to take before and after every refused write.
 *
 * Not in it, by design: the D1 audit rows the session outboxes flush a moment after an
 * accepted write (they change on their own schedule; the sessions' trails above are the
 * source they come from), and webhook refusal counts (a refused delivery is counted: that is
 * the point of them).
 */
export async function snapshot(f: Fixtures): Promise<unknown> {
  const registry = await env.DB.batch([
    vaultQuery("alpha", "beta"),
    env.DB.prepare(
      "SELECT tenant, name, updated_at FROM agents WHERE tenant IN ('alpha', 'beta') ORDER BY tenant, name",
    ),
    env.DB.prepare(
      "SELECT tenant, name, updated_at FROM tools WHERE tenant IN ('alpha', 'beta') ORDER BY tenant, name",
    ),
    env.DB.prepare("SELECT tenant, updated_at FROM routing_config WHERE tenant IN ('alpha', 'beta') ORDER BY tenant"),
    env.DB.prepare(
      "SELECT tenant, updated_at FROM event_subscriptions WHERE tenant IN ('alpha', 'beta') ORDER BY tenant",
    ),
    env.DB.prepare("SELECT tenant, version FROM registry_versions WHERE tenant IN ('alpha', 'beta') ORDER BY tenant"),
  ]);
  const sessions = await Promise.all(
    [
      ["alpha", f.alpha.session],
      ["alpha", f.alpha.session2],
      ["beta", f.beta.session],
      ["beta", f.beta.session2],
    ].map(async ([tenant, id]) => {
      const rpc = sessionRpc(env, tenant!, id!);
      const [view, history, inbox, audit] = await Promise.all([
        rpc.get(),
        rpc.history({ limit: 1000 }),
        rpc.inbox(),
        rpc.audit({ limit: 1000 }),
      ]);
      return {
        view,
        history: history.ok ? history.value.items.map((i) => i.id) : history,
        inbox,
        audit: audit.ok ? audit.value.records.map((r) => r.id) : audit,
      };
    }),
  );
  const collaborations = await Promise.all(
    [
      ["alpha", f.alpha.collaboration],
      ["beta", f.beta.collaboration],
    ].map(([tenant, id]) => collaborationRpc(env, tenant!, id!).get()),
  );
  const load = await Promise.all(["alpha", "beta"].map((tenant) => agentRpc(env, tenant, "w3").load()));
  return { registry: registry.map((r) => r.results), sessions, collaborations, load };
}

const vaultQuery = (...tenants: string[]) =>
  env.DB.prepare(
    `SELECT tenant, name, format, key_id, wrapped_key, ciphertext, created_at, rotated_at FROM vault_secrets
     WHERE tenant IN (${tenants.map((_, i) => `?${i + 1}`).join(", ")}) ORDER BY tenant, name`,
  ).bind(...tenants);

/** A tenant's vault rows as sealed, in name order. */
export async function vaultRows(tenant: string): Promise<unknown[]> {
  return (await vaultQuery(tenant).all()).results;
}
