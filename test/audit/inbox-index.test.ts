import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { writeAuditBatch } from "../../src/audit/d1-store";
import { queryInbox } from "../../src/audit/inbox-index";
import { type AuditRecord, SYSTEM_ACTOR } from "../../src/audit/record";
import { inboxItemClosed, inboxItemCreated } from "../../src/audit/run-events";
import { newInboxId } from "../../src/runtime/inbox";
import type { InboxKind } from "../../src/schemas/inbox";

const T = Date.UTC(2026, 5, 1);
let counter = 0;
const at = (ms: number) => new Date(T + ms).toISOString();

/** An item's life as its session would audit it: created, then (optionally) closed. */
function item(
  outcome?: "resolved" | "expired" | "cancelled",
  {
    tenant = "alpha",
    agent = "person",
    kind = "human_turn",
  }: { tenant?: string; agent?: string; kind?: InboxKind } = {},
): { id: string; records: AuditRecord[] } {
  const session_id = `ses_${String(++counter).padStart(52, "0")}`;
  const id = newInboxId(session_id, T + counter);
  const scope = { tenant, session_id };
  const records = [
    inboxItemCreated(scope, SYSTEM_ACTOR, T + counter, {
      inbox_id: id,
      kind,
      agent,
      run_id: `run_${counter}`,
      handoff_id: null,
      reason: "needs a person",
      expires_at: at(86_400_000),
    }),
  ];
  if (outcome)
    records.push(
      inboxItemClosed(
        scope,
        outcome === "resolved" ? { actor: "ops@example.com", actor_type: "user" } : SYSTEM_ACTOR,
        T + counter + 10,
        { inbox_id: id, agent, outcome, resolved_by: outcome === "resolved" ? "ops@example.com" : null },
      ),
    );
  return { id, records };
}

async function row(id: string) {
  return env.DB.prepare(
    "SELECT kind, status, agent, run_id, reason, expires_at, closed_at, resolved_by FROM inbox_items WHERE id = ?1",
  )
    .bind(id)
    .first();
}

describe("the D1 inbox index", () => {
  it("projects an item's records into one row: open, then closed with who and when", async () => {
    const { id, records } = item("resolved");
    await writeAuditBatch(env.DB, records.slice(0, 1));
    expect(await row(id)).toMatchObject({
      kind: "human_turn",
      status: "open",
      agent: "person",
      reason: "needs a person",
      closed_at: null,
      resolved_by: null,
    });
    await writeAuditBatch(env.DB, records.slice(1));
    expect(await row(id)).toMatchObject({
      status: "resolved",
      closed_at: records[1]!.at,
      resolved_by: "ops@example.com",
      expires_at: at(86_400_000),
    });
  });

  it("replays and reordering change nothing: a close is never undone by an older record", async () => {
    const { id, records } = item("expired");
    await writeAuditBatch(env.DB, records.slice(1));
    // The close arrived first: kept, but not listed until the item's creation is known.
    expect(await row(id)).toMatchObject({ kind: null, status: "expired" });
    expect((await queryInbox(env.DB, "alpha", { limit: 200 })).items.map((i) => i.id)).not.toContain(id);
    await writeAuditBatch(env.DB, records.slice(0, 1));
    await writeAuditBatch(env.DB, records);
    await writeAuditBatch(env.DB, records.slice(0, 1));
    expect(await row(id)).toMatchObject({
      kind: "human_turn",
      status: "expired",
      reason: "needs a person",
      resolved_by: null,
    });
  });

  it("lists oldest first, filtered by status, agent and kind, paged after an id, one tenant only", async () => {
    const a = item(undefined, { agent: "lister-a" });
    const b = item("cancelled", { agent: "lister-a" });
    const c = item(undefined, { agent: "lister-a", kind: "escalation" });
    const other = item(undefined, { agent: "lister-a", tenant: "beta" });
    for (const x of [c, a, b, other]) await writeAuditBatch(env.DB, x.records);
    const ids = async (q: Parameters<typeof queryInbox>[2], tenant = "alpha") =>
      (await queryInbox(env.DB, tenant, q)).items.map((i) => i.id);
    expect(await ids({ agent: "lister-a", limit: 10 })).toEqual([a.id, b.id, c.id]);
    expect(await ids({ agent: "lister-a", status: "open", limit: 10 })).toEqual([a.id, c.id]);
    expect(await ids({ agent: "lister-a", kind: "escalation", limit: 10 })).toEqual([c.id]);
    expect(await ids({ agent: "lister-a", limit: 10 }, "beta")).toEqual([other.id]);
    const first = await queryInbox(env.DB, "alpha", { agent: "lister-a", limit: 2 });
    expect(first).toMatchObject({ next: b.id });
    expect(await ids({ agent: "lister-a", limit: 2, after: first.next! })).toEqual([c.id]);
  });
});
