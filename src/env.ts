import type { QuotaVars } from "./quotas/limits";
import type { RoutingVars } from "./routing/config";

/**
 * Bindings, vars and secrets the Worker and its Durable Objects receive. The namespaces
 * are reached through src/rpc/stubs.ts, typed by the contracts the classes implement, so
 * nothing here imports a Durable Object.
 */
export interface Env extends RoutingVars, QuotaVars {
  /** The registry: agents, tools, the vault, subscriptions, signing secrets, which shard each tenant is on. */
  DB: D1Database;
  /**
   * The shards (docs/scaling.md, Shards): each tenant's audit trail, lists and handoff index
   * are on one of AUDIT_DB_0 … AUDIT_DB_<N-1>. None bound: DB is the one shard.
   */
  [shard: `AUDIT_DB_${number}`]: D1Database | undefined;
  SESSIONS: DurableObjectNamespace;
  AGENTS: DurableObjectNamespace;
  COLLABORATIONS: DurableObjectNamespace;
  /** One RouterDO per tenant: agent writes and the compiled router (durable-objects/router/). */
  ROUTERS: DurableObjectNamespace;
  /** One TenantDO per tenant: quota admissions, usage by the hour, the operator's overrides (durable-objects/tenant/). */
  TENANTS: DurableObjectNamespace;
  /** The static dashboard and API reference (public/); the platform serves them before the Worker runs. */
  ASSETS: Fetcher;
  /** Workers AI binding; declared only when the `workers-ai` provider is used. */
  AI?: Ai;

  /** `tenant:key` entries, comma-separated. No keys → every /v1 call is refused (503). */
  RELAY_API_KEYS?: string;
  /** The operator's key for /v1/operator (every tenant's quotas and usage). Unset → those routes answer 503. */
  RELAY_OPERATOR_KEY?: string;
  /**
   * The tenant vault's deployment keys: one or more comma-separated keys of at least 32 bytes
   * in base64, the first sealing (src/vault/keyring.ts). Without it the vault is unavailable.
   */
  RELAY_VAULT_KEY?: string;

  /**
   * `true`: Relay may call `http:` and loopback or private-network addresses a tenant names
   * (local development only; see docs/security.md). Set in .dev.vars, never in wrangler.toml.
   */
  RELAY_ALLOW_LOCAL_ENDPOINTS?: string;
  /**
   * Relay's own hosts (comma-separated `host`, `host:port` or origins), which it never calls on
   * a tenant's behalf. The host a request came in at counts too; calls made later by a session
   * know only these.
   */
  RELAY_HOSTS?: string;
  /**
   * An OTLP/HTTP traces URL that receives every tenant's run spans, each request one tenant's
   * (resource attribute `relay.tenant`), besides any endpoint a tenant sets
   * (docs/observability.md, Export). The operator's own: it may be a private address.
   */
  RELAY_OTLP_ENDPOINT?: string;

  /**
   * The audit archive (R2): records older than AUDIT_RETENTION_DAYS, one NDJSON object per
   * tenant per day, moved there by the hourly cron (src/audit/archive.ts).
   */
  AUDIT_ARCHIVE?: R2Bucket;
  /** Whole days audit records stay in D1; unset or 0 keeps them there for good. */
  AUDIT_RETENTION_DAYS?: string;
  /** The archive bucket's name, as `GET /v1/audit` reports where older records are. */
  AUDIT_ARCHIVE_BUCKET?: string;

  /**
   * Megabytes of tenants' routers one isolate holds at most (default 64): past it, the least
   * recently used are let go and reloaded when next asked (docs/scaling.md, "Memory").
   */
  RELAY_ROUTER_BUDGET_MB?: string;

  /** OpenAI-compatible provider's base URL (default https://api.openai.com/v1); its key is in RoutingVars. */
  OPENAI_BASE_URL?: string;
}
