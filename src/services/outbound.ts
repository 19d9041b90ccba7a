import type { Env } from "../env";
import { RelayError } from "../errors";
import { secretList } from "../lib/standard-webhooks";
import type { DeliverySigning, OutboundCall, SecretHeaderValues } from "../outbound/fetch";
import {
  checkOutboundUrl,
  type OutboundPolicy,
  parseRelayHosts,
  refusalMessage,
  requestRelayHost,
} from "../outbound/policy";
import { activeSecrets, ensureSigningSecret } from "../registry/signing-secrets";
import type { Signing } from "../schemas/agent";
import type { SigningSecret } from "../schemas/signing";
import { type NamesSecrets, secretReferences } from "../vault/references";
import { readSecrets } from "../vault/secrets";

/**
 * The outbound policy, signing and headers of a call a tenant's definition makes: every caller
 * that makes a call on a tenant's behalf resolves what it needs here (the Worker at
 * registration, the SessionDO before each call), and src/outbound/ applies it. Secrets come
 * from the tenant's own vault only; no name a tenant wrote is ever looked up in the Worker's
 * environment (docs/security.md).
 */

type Vars = Pick<Env, "RELAY_ALLOW_LOCAL_ENDPOINTS" | "RELAY_HOSTS">;

/** RELAY_ALLOW_LOCAL_ENDPOINTS is `true` (any case). */
export function allowLocalEndpoints(env: Vars): boolean {
  return (env.RELAY_ALLOW_LOCAL_ENDPOINTS ?? "").trim().toLowerCase() === "true";
}

/**
 * The policy in force: the local switch, and Relay's own hosts — RELAY_HOSTS, plus the host
 * of the request being served when there is one (a call made later from a session knows
 * only RELAY_HOSTS).
 */
export function outboundPolicy(env: Vars, requestUrl?: string): OutboundPolicy {
  const relayHosts = parseRelayHosts(env.RELAY_HOSTS);
  if (requestUrl !== undefined) relayHosts.push(requestRelayHost(requestUrl));
  return { allowLocal: allowLocalEndpoints(env), relayHosts };
}

/** Throws ENDPOINT_NOT_ALLOWED (400) naming the rule when the policy refuses `url` (a definition's `field`). */
export function assertEndpointAllowed(policy: OutboundPolicy, url: string | undefined, field: string): void {
  if (url === undefined) return;
  const verdict = checkOutboundUrl(url, policy);
  if (verdict.ok) return;
  throw new RelayError("ENDPOINT_NOT_ALLOWED", `${field}: ${refusalMessage(verdict)}`, {
    rule: verdict.rule,
    url: url.slice(0, 2048),
    field,
  });
}

/**
 * How long an isolate signs with the tenant's secrets it last read. A rotation through this
 * isolate is seen at once; through another, within this time (the replaced secret keeps
 * signing through its grace, so receivers holding either verify meanwhile).
 */
export const SIGNING_TTL_MS = 10_000;

const signingCache = new Map<string, { value: Promise<SigningSecret>; expires: number }>();

/** The tenant's signing secret: one D1 read per SIGNING_TTL_MS per isolate (made on first use). */
export function tenantSigningSecret(db: D1Database, tenant: string, now = Date.now()): Promise<SigningSecret> {
  const cached = signingCache.get(tenant);
  if (cached && cached.expires > now) return cached.value;
  const value = ensureSigningSecret(db, tenant);
  signingCache.set(tenant, { value, expires: now + SIGNING_TTL_MS });
  value.catch(() => signingCache.delete(tenant));
  return value;
}

/** Forgets this isolate's copy of a tenant's signing secret (after a rotation). */
export function forgetSigningSecret(tenant: string): void {
  signingCache.delete(tenant);
}

/** A definition that Relay calls: what it names of the vault, and whether it is signed. */
export interface CalledDefinition extends NamesSecrets {
  signing?: Signing | undefined;
}

async function tenantSigning(env: Env, tenant: string): Promise<DeliverySigning> {
  try {
    const secret = await tenantSigningSecret(env.DB, tenant);
    return { ok: true, secrets: activeSecrets(secret, Date.now()), by: "the tenant's signing secret" };
  } catch {
    return {
      ok: false,
      code: "DEPENDENCY_UNAVAILABLE",
      message: "the tenant's signing secret could not be read (D1 unavailable); nothing was sent",
    };
  }
}

/**
 * What a call `owner` makes for `tenant` needs: the policy in force, the delivery's signing
 * (none; the vault secret `signing_secret` names; else the tenant's signing secret) and the
 * headers, their values from the vault. `signed: false` for a call that is never signed (MCP).
 */
async function resolveCall(
  env: Env,
  tenant: string,
  definition: CalledDefinition,
  owner: string,
  options: { signed: boolean; requestUrl?: string | undefined },
): Promise<OutboundCall> {
  const policy = outboundPolicy(env, options.requestUrl);
  const read = await readSecrets(env, tenant, secretReferences(definition), owner);
  const headers: SecretHeaderValues = read.ok
    ? {
        ok: true,
        values: Object.fromEntries(
          Object.entries(definition.headers ?? {}).map(([header, name]) => [header, read.values.get(name)!]),
        ),
      }
    : read;
  let signing: DeliverySigning;
  if (!options.signed || definition.signing === "none") signing = { ok: true, secrets: [], by: "none" };
  else if (definition.signing_secret === undefined) signing = await tenantSigning(env, tenant);
  else if (!read.ok) signing = read;
  else
    signing = {
      ok: true,
      secrets: secretList(read.values.get(definition.signing_secret)),
      by: `the vault secret '${definition.signing_secret}'`,
    };
  return { tenant, policy, signing, headers };
}

/** What a call to a webhook or remote A2A agent needs. */
export function agentOutbound(env: Env, tenant: string, agent: CalledDefinition): Promise<OutboundCall> {
  return resolveCall(env, tenant, agent, `agent '${agent.name}'`, { signed: true });
}

/** What a call to an http tool needs. */
export function toolOutbound(env: Env, tenant: string, tool: CalledDefinition): Promise<OutboundCall> {
  return resolveCall(env, tenant, tool, `tool '${tool.name}'`, { signed: true });
}

/**
 * What a listing or call of an MCP server needs (never signed: the server authenticates
 * Relay by the headers). `requestUrl`: the request being served, when there is one.
 */
export function mcpOutbound(
  env: Env,
  tenant: string,
  server: NamesSecrets,
  requestUrl?: string,
): Promise<OutboundCall> {
  return resolveCall(env, tenant, server, `mcp tool '${server.name}'`, { signed: false, requestUrl });
}
