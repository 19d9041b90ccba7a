import { describe, expect, it } from "vitest";
import { COLLABORATION_SCHEMA } from "../../../durable-objects/collaboration/collaboration-store";
import { Outbox } from "../../../durable-objects/shared/outbox";
import { migrate } from "../../../durable-objects/shared/sql";
import { auditEvent } from "../../../src/audit/events";
import { API_ACTOR, type AuditRecord } from "../../../src/audit/record";
import { meteredSql, onScratchObject } from "../schema-shape";

/**
 * The outbox over a real object's SQLite (the collaboration schema's outbox, the same DDL a
 * session's holds): what reaches D1 is a watermark, so a record costs one row written and
 * a flush two, and no record is ever taken for sent before `write` resolved with it.
 */

const T = Date.UTC(2026, 5, 1);
const record = (ms: number): AuditRecord =>
  auditEvent({ tenant: "alpha", session_id: "s" }, { action: "session.message_added", actor: API_ACTOR }, ms);

/** `fn` over a scratch object holding the outbox, with a Sql that counts the rows its statements wrote. */
async function withOutbox<R>(fn: (outbox: Outbox, written: () => number) => Promise<R>): Promise<R> {
  return onScratchObject("outbox-tests", async (plain, storage) => {
    migrate(storage, plain, [COLLABORATION_SCHEMA], COLLABORATION_SCHEMA);
    const { sql, written } = meteredSql(storage);
    return fn(new Outbox(sql), written);
  });
}

const ids = (records: readonly AuditRecord[]) => records.map((r) => r.id);

describe("the audit outbox", () => {
  it("writes one row a record and two a flush, and answers every record sent", async () => {
    const batch = [record(T), record(T + 1), record(T + 2)];
    const seen = await withOutbox(async (outbox, written) => {
      outbox.append(batch);
      const appended = written();
      const sent: string[][] = [];
      const result = await outbox.flush(async (records) => {
        sent.push(ids(records));
      });
      return {
        appended,
        flushWrote: written(),
        result,
        sent,
        pending: outbox.pendingCount(),
        list: outbox.list({ limit: 10 }),
      };
    });
    expect(seen).toMatchObject({
      appended: 3,
      flushWrote: 2,
      result: { flushed: 3, remaining: 0 },
      sent: [ids(batch)],
      pending: 0,
    });
    expect(seen.list.map((r) => [r.id, r.flushed])).toEqual(batch.map((r) => [r.id, true]));
  });

  it("keeps every record pending when D1 refuses them", async () => {
    const seen = await withOutbox(async (outbox) => {
      outbox.append([record(T), record(T + 1)]);
      const failed = await outbox.flush(() => Promise.reject(new Error("D1_ERROR"))).catch((e: Error) => e.message);
      return { failed, pending: outbox.pendingCount(), flags: outbox.list({ limit: 10 }).map((r) => r.flushed) };
    });
    expect(seen).toEqual({ failed: "D1_ERROR", pending: 2, flags: [false, false] });
  });

  it("sends again from the last flush below a record appended late (ids of one millisecond sort at random)", async () => {
    const [a, b, c] = [record(T), record(T + 1), record(T + 2)];
    const seen = await withOutbox(async (outbox) => {
      outbox.append([a!]);
      await outbox.flush(async () => undefined);
      outbox.append([c!]);
      await outbox.flush(async () => undefined);
      outbox.append([b!]);
      const pending = outbox.pendingCount();
      const sent: string[][] = [];
      await outbox.flush(async (records) => {
        sent.push(ids(records));
      });
      return { pending, sent, after: outbox.pendingCount() };
    });
    expect(seen).toEqual({ pending: 2, sent: [[b!.id, c!.id]], after: 0 });
  });

  it("does not take for sent a record appended, below the batch's newest, while D1 was written", async () => {
    const [a, b, c] = [record(T), record(T + 1), record(T + 2)];
    const seen = await withOutbox(async (outbox) => {
      outbox.append([a!, c!]);
      const sent: string[][] = [];
      await outbox.flush(async (records) => {
        sent.push(ids(records));
        if (sent.length === 1) outbox.append([b!]);
      });
      return { sent, pending: outbox.pendingCount(), flags: outbox.list({ limit: 10 }).map((r) => r.flushed) };
    });
    // The first flush's run sends the batch, then again from the record that landed meanwhile.
    expect(seen.sent[0]).toEqual([a!.id, c!.id]);
    expect(seen.sent.at(-1)).toEqual([b!.id, c!.id]);
    expect(seen).toMatchObject({ pending: 0, flags: [true, true, true] });
  });
  it("keeps a record appended below a batch pending when another flush, overlapping, fails to send it", async () => {
    const [a, b, c] = [record(T), record(T + 1), record(T + 2)];
    const seen = await withOutbox(async (outbox) => {
      outbox.append([a!, c!]);
      let release: () => void = () => undefined;
      const gate = new Promise<void>((resolve) => {
        release = resolve;
      });
      // One batch: what this run marks is what its one write sent.
      const first = outbox.flush(() => gate, 1);
      outbox.append([b!]);
      const second = await outbox.flush(() => Promise.reject(new Error("D1_ERROR"))).catch((e: Error) => e.message);
      release();
      await first;
      return { second, pending: outbox.pendingCount(), flags: outbox.list({ limit: 10 }).map((r) => r.flushed) };
    });
    expect(seen).toEqual({ second: "D1_ERROR", pending: 2, flags: [true, false, false] });
  });
});
