import { secretList } from "../runtime/webhook-agent";

/**
 * Webhook sources (docs/webhooks.md): a source `crm` is configured by the Worker secret
 * `WEBHOOK_SECRET_CRM` (`whsec_…`, several comma-separated while rotating) and the var
 * `WEBHOOK_TENANT_CRM`, the tenant its deliveries act for. Without both it is unknown.
 */

export interface WebhookSource {
  name: string;
  tenant: string;
  secrets: string[];
}

/** The setting name for a source: `<PREFIX>` + the name upper-cased, other characters as `_`. */
export function sourceSetting(prefix: "WEBHOOK_SECRET_" | "WEBHOOK_TENANT_", source: string): string {
  return `${prefix}${source.toUpperCase().replace(/[^A-Z0-9]/g, "_")}`;
}

export function webhookSource(env: object, name: string): WebhookSource | null {
  const vars = env as Record<string, unknown>;
  const secret = vars[sourceSetting("WEBHOOK_SECRET_", name)];
  const tenant = vars[sourceSetting("WEBHOOK_TENANT_", name)];
  if (typeof secret !== "string" || typeof tenant !== "string" || tenant.trim() === "") return null;
  const secrets = secretList(secret);
  return secrets.length > 0 ? { name, tenant: tenant.trim(), secrets } : null;
}
