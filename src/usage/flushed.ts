import type { AuditRecord } from "../audit/record";
import { type RecordOrRow, storedRow, storedValues } from "../audit/stored-record";
import { counted, type Usage } from "./counts";

/**
 * What an audit flush to D1 tells about a tenant's use: the handoffs its records complete, the
 * rows D1 says the batch wrote, and an estimate of the bytes they added. Pure.
 */

const encoder = new TextEncoder();

/**
 * The bytes of the values an audit row holds, as D1 keeps them (src/audit/stored-record.ts):
 * a lower bound of what the row adds to D1, which also keeps each indexed column again in
 * its index, and page space (docs/operations.md, Usage).
 */
export function recordBytes(record: RecordOrRow): number {
  return encoder.encode(storedValues(storedRow(record)).join("")).length;
}

/** The usage of one flushed batch (all of one tenant: a batch comes from one object). */
export function flushedUsage(records: readonly AuditRecord[], rowsWritten: number): Usage {
  let handoffs = 0;
  let bytes = 0;
  for (const record of records) {
    if (record.action === "handoff.completed") handoffs++;
    bytes += recordBytes(record);
  }
  return counted({ handoffs, d1_rows_written: rowsWritten, d1_bytes_written: bytes });
}
