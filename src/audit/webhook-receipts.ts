/**
 * Webhook receipts in D1 (`webhook_receipts`, migration 0007): one row per tenant, source and
 * webhook-id. The first delivery claims the row and records its answer; every repeat —
 * later, or in the same instant from a burst of retries — gets that answer and changes
 * nothing. A claim older than CLAIM_STALE_MS whose handler never answered (it died) may be
 * taken over; the handoff it asked for carries the webhook id as its idempotency key, so
 * the session does not hand off twice even then.
 */

export const CLAIM_STALE_MS = 60_000;
/** How long a repeat waits for the first delivery's answer before saying it is still being handled. */
export const REPEAT_WAIT_MS = 10_000;
const POLL_MS = 25;

export interface Receipt {
  http_status: number;
  body: unknown;
}

export type Claim = { claimed: true } | { claimed: false; receipt: Receipt | null };

interface ReceiptRow {
  status: "processing" | "done";
  http_status: number | null;
  result: string | null;
  claimed_at: string;
}

/** Claims the delivery, or reports the first one's answer (null while it is still being handled past the wait). */
export async function claimReceipt(
  db: D1Database,
  key: { tenant: string; source: string; id: string },
  now = Date.now(),
): Promise<Claim> {
  const at = new Date(now).toISOString();
  const stale = new Date(now - CLAIM_STALE_MS).toISOString();
  const claimed = await db
    .prepare(
      `INSERT INTO webhook_receipts (tenant, source, webhook_id, status, claimed_at) VALUES (?1, ?2, ?3, 'processing', ?4)
       ON CONFLICT (tenant, source, webhook_id) DO UPDATE SET claimed_at = excluded.claimed_at
         WHERE webhook_receipts.status = 'processing' AND webhook_receipts.claimed_at < ?5
       RETURNING webhook_id`,
    )
    .bind(key.tenant, key.source, key.id, at, stale)
    .first();
  if (claimed) return { claimed: true };
  return { claimed: false, receipt: await waitForReceipt(db, key) };
}

async function waitForReceipt(
  db: D1Database,
  key: { tenant: string; source: string; id: string },
): Promise<Receipt | null> {
  const deadline = Date.now() + REPEAT_WAIT_MS;
  for (;;) {
    const row = await db
      .prepare(
        "SELECT status, http_status, result, claimed_at FROM webhook_receipts WHERE tenant = ?1 AND source = ?2 AND webhook_id = ?3",
      )
      .bind(key.tenant, key.source, key.id)
      .first<ReceiptRow>();
    if (row?.status === "done")
      return { http_status: row.http_status ?? 200, body: row.result === null ? null : JSON.parse(row.result) };
    if (Date.now() >= deadline) return null;
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
  }
}

/** Records the first delivery's answer, for every repeat. */
export async function completeReceipt(
  db: D1Database,
  key: { tenant: string; source: string; id: string },
  receipt: Receipt,
): Promise<void> {
  await db
    .prepare(
      "UPDATE webhook_receipts SET status = 'done', http_status = ?4, result = ?5 WHERE tenant = ?1 AND source = ?2 AND webhook_id = ?3",
    )
    .bind(key.tenant, key.source, key.id, receipt.http_status, JSON.stringify(receipt.body))
    .run();
}

/** Gives a claim up (the answer was a transient failure): the sender's retry is handled afresh. */
export async function releaseReceipt(
  db: D1Database,
  key: { tenant: string; source: string; id: string },
): Promise<void> {
  await db
    .prepare(
      "DELETE FROM webhook_receipts WHERE tenant = ?1 AND source = ?2 AND webhook_id = ?3 AND status = 'processing'",
    )
    .bind(key.tenant, key.source, key.id)
    .run();
}
