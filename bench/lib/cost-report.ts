/**
 * The cost bench's tables (bench/conversation-cost.bench.ts): what the metered Worker
 * (bench/lib/metered-worker.ts) counted, priced and printed as Markdown.
 */

/** Workers Paid, as published on developers.cloudflare.com (Workers, Durable Objects, D1 pricing pages). */
export const PRICES = {
  read: "2026-11-26",
  workerRequests: { perMillion: 0.3, note: "10 M a month included" },
  workerCpuMs: { perMillion: 0.02, note: "30 M CPU-ms a month included" },
  doRequests: { perMillion: 0.15, note: "1 M a month included; RPC calls, alarms, HTTP requests" },
  doGbSeconds: { perMillion: 12.5, note: "400,000 GB-s a month included; 128 MB an object" },
  rowsRead: { perMillion: 0.001, note: "25 billion a month included (Durable Object SQLite and D1 alike)" },
  rowsWritten: {
    perMillion: 1.0,
    note: "50 M a month included (Durable Object SQLite and D1 alike); a setAlarm is one",
  },
};

/** The metered Worker's counts (`GET /__meter`). */
export interface Meter {
  workerRequests: number;
  doRequests: Record<string, number>;
  alarms: Record<string, number>;
  doActiveMs: Record<string, number>;
  objects: Record<string, number>;
  sqlRowsRead: number;
  sqlRowsWritten: number;
  sqlRowsWrittenByTable: Record<string, number>;
  setAlarms: number;
  d1Queries: number;
  d1RowsRead: number;
  d1RowsWritten: number;
  d1RowsWrittenByTable: Record<string, number>;
  /** Bytes each D1 database holds now, by binding (`meta.size_after`). */
  d1Bytes: Record<string, number>;
  subrequests: Record<string, number>;
}

export const sum = (counts: Record<string, number>) => Object.values(counts).reduce((a, b) => a + b, 0);

/** How the counts were taken: conversations played, the model's delay, the handoff sessions. */
export interface Played {
  conversations: number;
  modelMs: number;
  handoffSessions: number;
  handoffs: number;
}

/** What one handoff writes and reads: `some`'s counts less `none`'s, per handoff. */
export function printHandoff(what: string, none: Meter, some: Meter, p: Played): void {
  const per = (f: (m: Meter) => number) => (f(some) - f(none)) / (p.handoffSessions * p.handoffs);
  const keys = (f: (m: Meter) => Record<string, number>) =>
    [...new Set([...Object.keys(f(some)), ...Object.keys(f(none))])].sort();
  console.log(
    `\nOne immediate API handoff (${what}), from ${p.handoffSessions} sessions × ${p.handoffs} handoffs beside ${p.handoffSessions} sessions with none`,
  );
  console.log("| per handoff | count |\n| --- | --- |");
  console.log(`| D1 rows written | ${per((m) => m.d1RowsWritten).toFixed(1)} |`);
  for (const table of keys((m) => m.d1RowsWrittenByTable))
    console.log(`| … of which \`${table}\` | ${per((m) => m.d1RowsWrittenByTable[table] ?? 0).toFixed(1)} |`);
  console.log(`| D1 rows read | ${per((m) => m.d1RowsRead).toFixed(1)} |`);
  console.log(`| D1 queries | ${per((m) => m.d1Queries).toFixed(2)} |`);
  console.log(
    `| Durable Object SQLite rows written (a setAlarm counted as one) | ${per((m) => m.sqlRowsWritten + m.setAlarms).toFixed(1)} |`,
  );
  for (const table of keys((m) => m.sqlRowsWrittenByTable))
    console.log(`| … of which \`${table}\` | ${per((m) => m.sqlRowsWrittenByTable[table] ?? 0).toFixed(1)} |`);
  console.log(`| Durable Object SQLite rows read | ${per((m) => m.sqlRowsRead).toFixed(1)} |`);
  console.log(
    `| Durable Object requests (the handoff's RPC, lease calls, its share of flush alarms) | ${per((m) => sum(m.doRequests) + sum(m.alarms)).toFixed(2)} |`,
  );
}

/**
 * `m`, counted from `before` (taken when the meter was reset): the counts are `m`'s; the D1
 * bytes, each database's growth.
 */
export function report(
  p: Played,
  before: Meter,
  m: Meter,
  cpuMs: number,
  wallMs: number,
  outside: { modelCalls: number; toolCalls: number },
): void {
  const n = p.conversations;
  const doRequests = (sum(m.doRequests) + sum(m.alarms)) / n;
  const activeS = sum(m.doActiveMs) / 1000 / n;
  const gbS = activeS * 0.125;
  const sqlWritten = (m.sqlRowsWritten + m.setAlarms) / n;
  const rows: [string, string, number][] = [
    ["Worker requests", (m.workerRequests / n).toFixed(1), (m.workerRequests / n) * PRICES.workerRequests.perMillion],
    [
      "workerd CPU, all of it (Worker, objects, local D1): an upper bound of the Worker's billed CPU",
      `${cpuMs.toFixed(0)} ms`,
      cpuMs * PRICES.workerCpuMs.perMillion,
    ],
    [
      `Durable Object requests (${Object.entries(m.doRequests)
        .map(([k, v]) => `${k} ${(v / n).toFixed(1)}`)
        .join(", ")}; alarms ${(sum(m.alarms) / n).toFixed(1)})`,
      doRequests.toFixed(1),
      doRequests * PRICES.doRequests.perMillion,
    ],
    [
      `Durable Object wall time while running (${Object.entries(m.doActiveMs)
        .map(([k, v]) => `${k} ${(v / n).toFixed(0)} ms`)
        .join(", ")}), at 128 MB`,
      `${(activeS * 1000).toFixed(0)} ms = ${gbS.toFixed(4)} GB-s`,
      gbS * PRICES.doGbSeconds.perMillion,
    ],
    [
      `SQLite rows written in the objects (${(m.setAlarms / n).toFixed(0)} setAlarm, ${Object.entries(
        m.sqlRowsWrittenByTable,
      )
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${(v / n).toFixed(0)}`)
        .join(", ")})`,
      sqlWritten.toFixed(0),
      sqlWritten * PRICES.rowsWritten.perMillion,
    ],
    [
      "SQLite rows read in the objects",
      (m.sqlRowsRead / n).toFixed(0),
      (m.sqlRowsRead / n) * PRICES.rowsRead.perMillion,
    ],
    [
      `D1 rows written (${Object.entries(m.d1RowsWrittenByTable)
        .sort((a, b) => b[1] - a[1])
        .map(([k, v]) => `${k} ${(v / n).toFixed(0)}`)
        .join(", ")})`,
      (m.d1RowsWritten / n).toFixed(0),
      (m.d1RowsWritten / n) * PRICES.rowsWritten.perMillion,
    ],
    ["D1 rows read", (m.d1RowsRead / n).toFixed(0), (m.d1RowsRead / n) * PRICES.rowsRead.perMillion],
  ];
  console.log(
    `\nOne conversation (created with routing, 5 messages with runs, 2 handoffs, 1 approval, ended), mean of ${n}; the model answering in ${p.modelMs} ms; prices read ${PRICES.read}, beyond the included usage`,
  );
  console.log("| what Cloudflare bills | per conversation | a million conversations |\n| --- | --- | --- |");
  for (const [what, count, dollars] of rows) console.log(`| ${what} | ${count} | $${dollars.toFixed(2)} |`);
  const total = rows.reduce((a, r) => a + r[2], 0);
  console.log(`| **total** | | **$${total.toFixed(2)}** |`);
  console.log(`\n| not billed by Cloudflare, counted | per conversation |\n| --- | --- |`);
  console.log(
    `| subrequests (fetch) | ${Object.entries(m.subrequests)
      .map(([k, v]) => `${k} ${(v / n).toFixed(1)}`)
      .join(", ")} |`,
  );
  console.log(`| model calls / tool calls the fakes answered | ${outside.modelCalls} / ${outside.toolCalls} |`);
  console.log(`| D1 queries | ${(m.d1Queries / n).toFixed(1)} |`);
  const grown = Object.keys(m.d1Bytes).map((k) => [k, m.d1Bytes[k]! - (before.d1Bytes[k] ?? 0)] as const);
  console.log(
    `| D1 bytes stored (growth of \`meta.size_after\`: ${grown.map(([k, v]) => `${k} ${(v / n / 1024).toFixed(1)} KB`).join(", ")}) | ${(grown.reduce((a, [, v]) => a + v, 0) / n / 1024).toFixed(1)} KB |`,
  );
  console.log(
    `| objects that ran | ${Object.entries(m.objects)
      .map(([k, v]) => `${k} ${(v / n).toFixed(1)}`)
      .join(", ")} |`,
  );
  console.log(`| the conversation's wall time at the client, one at a time | ${wallMs.toFixed(0)} ms |`);
}
