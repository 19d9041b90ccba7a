import { secretList } from "../lib/standard-webhooks";

/**
 * Webhook sources (docs/webhooks.md): a source `crm` is configured by the operator's Worker
 * secret `WEBHOOK_SECRET_CRM` (`whsec_…`, several comma-separated while rotating) and var
 * `WEBHOOK_TENANT_CRM`, the tenant its deliveries act for. Without both it is unknown.
 *
 * The table is built from the names the operator set, once per environment; a source named in
 * a request's path is looked up in that table, never in the environment itself, so no name a
 * caller writes can reach another setting (docs/security.md).
 */

export interface WebhookSource {
  name: string;
  tenant: string;
  secrets: string[];
}

const SECRET_PREFIX = "WEBHOOK_SECRET_";
const TENANT_PREFIX = "WEBHOOK_TENANT_";

/** A source name as its settings spell it: upper-cased, every other character as `_`. */
const settingSuffix = (source: string) => source.toUpperCase().replace(/[^A-Z0-9]/g, "_");

type SourceTable = ReadonlyMap<string, { tenant: string; secrets: string[] }>;

const tables = new WeakMap<object, SourceTable>();

/** The operator's sources, by setting suffix: each WEBHOOK_SECRET_<X> with a WEBHOOK_TENANT_<X>. */
function sourceTable(env: object): SourceTable {
  const known = tables.get(env);
  if (known) return known;
  const settings = new Map(Object.entries(env));
  const table = new Map<string, { tenant: string; secrets: string[] }>();
  for (const [key, secret] of settings) {
    if (!key.startsWith(SECRET_PREFIX) || typeof secret !== "string") continue;
    const suffix = key.slice(SECRET_PREFIX.length);
    const tenant = settings.get(`${TENANT_PREFIX}${suffix}`);
    const secrets = secretList(secret);
    if (typeof tenant === "string" && tenant.trim() !== "" && secrets.length > 0)
      table.set(suffix, { tenant: tenant.trim(), secrets });
  }
  tables.set(env, table);
  return table;
}

/** The source a delivery names, or null when the operator configured none by that name. */
export function webhookSource(env: object, name: string): WebhookSource | null {
  const found = sourceTable(env).get(settingSuffix(name));
  return found ? { name, ...found } : null;
}
