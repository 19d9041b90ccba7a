import { describe, expect, it } from "vitest";
import type { AuditRecord } from "../../src/audit/record";
import { flushedUsage, recordBytes } from "../../src/usage/flushed";

const record = (action: string, details: Record<string, unknown> = {}): AuditRecord => ({
  id: "01JABCDEFGHJKMNPQRSTVWXYZ0",
  at: "2026-03-04T10:20:30.000Z",
  tenant: "alpha",
  session_id: "ses_1",
  handoff_id: action.startsWith("handoff.") ? "hof_1" : null,
  action,
  agent: "billing",
  actor: "api",
  actor_type: "user",
  details,
});

describe("flushedUsage", () => {
  it("counts the handoffs a batch completes, the rows D1 wrote, and the bytes of the values", () => {
    const records = [
      record("handoff.initiated"),
      record("handoff.completed"),
      record("session.message_added", { chars: 12 }),
    ];
    const usage = flushedUsage(records, 21);
    expect(usage.counts).toEqual({
      handoffs: 1,
      d1_rows_written: 21,
      d1_bytes_written: records.reduce((n, r) => n + recordBytes(r), 0),
    });
  });

  it("measures a row by the UTF-8 bytes of its values, details as JSON", () => {
    const base = recordBytes(record("session.created"));
    // 26 + 24 + 5 + 5 + 15 + 7 + 3 + 4 + 2 ("{}")
    expect(base).toBe(91);
    expect(recordBytes(record("session.created", { name: "ü" }))).toBe(base - 2 + '{"name":"ü"}'.length + 1);
  });
});
