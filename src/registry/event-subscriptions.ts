import { EventSubscription, type EventSubscriptionInput } from "../schemas/events";

/** A tenant's events_url subscription in D1 (webhooks out). */

interface Row {
  url: string;
  types: string;
  secret: string;
  created_at: string;
  updated_at: string;
}

const toSubscription = (row: Row): EventSubscription =>
  EventSubscription.parse({ ...row, types: JSON.parse(row.types) });

function newSecret(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(24));
  return `whsec_${btoa(String.fromCharCode(...bytes))}`;
}

/** Whether the tenant has an events_url: one row or none (read with the registry head, see registry-cache). */
export function subscribedStatement(db: D1Database, tenant: string): D1PreparedStatement {
  return db.prepare("SELECT 1 AS subscribed FROM event_subscriptions WHERE tenant = ?1").bind(tenant);
}

export async function getSubscription(db: D1Database, tenant: string): Promise<EventSubscription | null> {
  const row = await db
    .prepare("SELECT url, types, secret, created_at, updated_at FROM event_subscriptions WHERE tenant = ?1")
    .bind(tenant)
    .first<Row>();
  return row ? toSubscription(row) : null;
}

/** Creates or replaces the subscription; a replacement keeps its secret (receivers keep verifying). */
export async function putSubscription(
  db: D1Database,
  tenant: string,
  input: EventSubscriptionInput,
): Promise<{ created: boolean; subscription: EventSubscription }> {
  const now = new Date().toISOString();
  const row = await db
    .prepare(
      `INSERT INTO event_subscriptions (tenant, url, types, secret, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)
       ON CONFLICT (tenant) DO UPDATE SET url = excluded.url, types = excluded.types, updated_at = excluded.updated_at
       RETURNING url, types, secret, created_at, updated_at`,
    )
    .bind(tenant, input.url, JSON.stringify(input.types), newSecret(), now)
    .first<Row>();
  if (!row) throw new Error("subscription upsert returned no row");
  return { created: row.created_at === now && row.updated_at === now, subscription: toSubscription(row) };
}

export async function deleteSubscription(db: D1Database, tenant: string): Promise<boolean> {
  const result = await db.prepare("DELETE FROM event_subscriptions WHERE tenant = ?1").bind(tenant).run();
  return result.meta.changes > 0;
}
