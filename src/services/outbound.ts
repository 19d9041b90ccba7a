import type { Env } from "../env";
import { RelayError } from "../errors";
import type { DeliverySigning, OutboundCall } from "../outbound/fetch";
import {
  checkOutboundUrl,
  type OutboundPolicy,
  parseRelayHosts,
  refusalMessage,
  requestRelayHost,
} from "../outbound/policy";
import { activeSecrets, ensureSigningSecret } from "../registry/signing-secrets";
import { toolSecret, toolSecretName } from "../runtime/http-tool";
import { agentSecret, agentSecretName, secretList } from "../runtime/webhook-agent";
import type { Signing } from "../schemas/agent";
import type { SigningSecret } from "../schemas/signing";

/**
 * The outbound policy and signing as the deployment configures them: every caller that makes
 * a call on a tenant's behalf resolves what it needs here (the Worker at registration, the
 * SessionDO before each call), and src/outbound/ applies it.
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

async function signing(
  env: Env,
  tenant: string,
  own: { name: string; value: string | undefined },
  choice: Signing | undefined,
): Promise<DeliverySigning> {
  if (choice === "none") return { ok: true, secrets: [], by: "none" };
  if (own.value !== undefined) return { ok: true, secrets: secretList(own.value), by: own.name };
  try {
    const secret = await tenantSigningSecret(env.DB, tenant);
    return { ok: true, secrets: activeSecrets(secret, Date.now()), by: "the tenant's signing secret" };
  } catch {
    return { ok: false, message: "the tenant's signing secret could not be read (D1 unavailable); nothing was sent" };
  }
}

// Operator secrets are named per agent or tool (AGENT_SECRET_<NAME>), so env is read by name.
const vars = (env: Env) => env as unknown as Record<string, unknown>;

/** What a call to a webhook agent needs: the policy in force and its signing. */
export async function agentOutbound(
  env: Env,
  tenant: string,
  agent: { name: string; signing?: Signing | undefined },
): Promise<OutboundCall> {
  const own = { name: agentSecretName(agent.name), value: agentSecret(vars(env), agent.name) };
  return { policy: outboundPolicy(env), signing: await signing(env, tenant, own, agent.signing) };
}

/** What a call to an http tool needs: the policy in force and its signing. */
export async function toolOutbound(
  env: Env,
  tenant: string,
  tool: { name: string; signing?: Signing | undefined },
): Promise<OutboundCall> {
  const own = { name: toolSecretName(tool.name), value: toolSecret(vars(env), tool.name) };
  return { policy: outboundPolicy(env), signing: await signing(env, tenant, own, tool.signing) };
}

/**
 * What a call to an MCP server needs: the policy in force and its headers, each value read
 * from the Worker secret the tool names (a missing or empty secret fails the call, naming it).
 */
export function mcpOutbound(
  env: Env,
  tool: { name: string; headers?: Record<string, string> | undefined },
): {
  policy: OutboundPolicy;
  headers: { ok: true; values: Record<string, string> } | { ok: false; message: string };
} {
  const values: Record<string, string> = {};
  for (const [header, secret] of Object.entries(tool.headers ?? {})) {
    const value = vars(env)[secret];
    if (typeof value !== "string" || value.trim() === "")
      return {
        policy: outboundPolicy(env),
        headers: { ok: false, message: `the Worker secret ${secret} (header ${header} of '${tool.name}') is not set` },
      };
    values[header] = value.trim();
  }
  return { policy: outboundPolicy(env), headers: { ok: true, values } };
}
