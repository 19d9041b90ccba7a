import { env } from "cloudflare:workers";
import type { OutboundRule } from "../../src/outbound/policy";
import { invalidateTenant } from "../../src/services/registry-cache";
import { llmServer } from "../fakes/server";

/** Shared by the outbound tests: the addresses a hostile tenant tried, and definitions stored before the policy. */

/**
 * What a tenant named against a fresh Relay, with the rule that refuses each on a deployed
 * Relay. The tests call Relay at http://relay.test (RELAY_HOSTS names it too).
 */
export const REFUSED: readonly [url: string, rule: OutboundRule][] = [
  ["http://127.0.0.1:8787/health", "loopback_address"],
  ["http://0x7f000001/", "loopback_address"],
  ["http://2130706433/", "loopback_address"],
  ["http://127.1/", "loopback_address"],
  ["http://0177.0.0.1/", "loopback_address"],
  ["http://0.0.0.0/", "unspecified_address"],
  ["http://[::1]/", "loopback_address"],
  ["http://[::ffff:127.0.0.1]/", "loopback_address"],
  ["http://localhost:22/", "local_hostname"],
  ["http://10.0.0.1/", "private_address"],
  ["http://100.64.0.1/", "shared_address"],
  ["http://[fd00::1]/", "unique_local_address"],
  ["http://169.254.169.254/latest/meta-data/", "link_local_address"],
  ["http://metadata.google.internal/computeMetadata/v1/", "internal_hostname"],
  ["https://user:pass@hooks.example.com/agent", "no_userinfo"],
  ["http://relay.test/v1/webhooks/crm", "relay_host"],
  ["https://relay.test/v1/webhooks/crm", "relay_host"],
  ["http://hooks.example.com/agent", "https_only"],
];

/**
 * Writes a definition straight into D1, as one stored before the policy existed would be,
 * and moves the registry version so every reader sees it.
 */
export async function storeUnchecked(
  table: "agents" | "tools",
  tenant: string,
  definition: { name: string } & Record<string, unknown>,
): Promise<void> {
  const now = new Date().toISOString();
  await env.DB.batch([
    env.DB.prepare(
      `INSERT INTO ${table} (tenant, name, definition, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)
       ON CONFLICT (tenant, name) DO UPDATE SET definition = excluded.definition, updated_at = excluded.updated_at`,
    ).bind(tenant, definition.name, JSON.stringify(definition), now),
    env.DB.prepare(
      `INSERT INTO registry_versions (tenant, version, stamp) VALUES (?1, 1, ?2)
       ON CONFLICT (tenant) DO UPDATE SET version = version + 1, stamp = excluded.stamp`,
    ).bind(tenant, crypto.randomUUID()),
  ]);
  invalidateTenant(tenant);
}

/** An events URL written straight into D1 (no policy check). */
export async function storeEventsUrl(tenant: string, url: string, secret: string): Promise<void> {
  const now = new Date().toISOString();
  await env.DB.prepare(
    `INSERT INTO event_subscriptions (tenant, url, types, secret, created_at, updated_at) VALUES (?1, ?2, '[]', ?3, ?4, ?4)
     ON CONFLICT (tenant) DO UPDATE SET url = excluded.url, updated_at = excluded.updated_at`,
  )
    .bind(tenant, url, secret, now)
    .run();
  invalidateTenant(tenant);
}

/** Every URL Relay fetches from now until `stop()`, as the fetch boundary (msw) saw it. */
export function watchFetches(): { urls: string[]; stop(): void } {
  const urls: string[] = [];
  const listener = ({ request }: { request: Request }) => {
    urls.push(request.url);
  };
  llmServer.events.on("request:start", listener);
  return { urls, stop: () => llmServer.events.removeListener("request:start", listener) };
}
