/**
 * Where a handoff's CPU goes with state on disk, beside state in memory and beside the floor
 * it is judged against (the handoffs bench's audited write: one write in a live object and
 * its four audit rows sent to D1): Linux `perf` over the whole workerd process
 * (bench/lib/perf-profile.ts), with the kernel's file I/O and SQLite named first, so what disk
 * adds shows as its own rows.
 *
 *   npx tsx bench/profile-disk.ts   (needs `perf`: apt install linux-perf)
 *
 * Each setup: 100 sessions on the demo `triage` agent, 10 handoffs each (triage ↔ billing or
 * technical, no capacity limit), 16 in flight, after a warm-up; then the floor's 1,000 audited
 * writes on 100 live objects, and the durable floor's (the audit rows kept in an outbox until
 * an alarm has sent them), state where Relay's is. The flushes each load leaves are
 * included.
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiClient } from "./lib/api-client";
import { floorCall, startBaselineObjects } from "./lib/baseline-object";
import {
  hasPerf,
  type Part,
  PERF_V8_FLAGS,
  perfProfile,
  printParts,
  removeSymbolMaps,
  WORKERD_PARTS,
} from "./lib/perf-profile";
import { flushesSettled, startWorkerdServer } from "./lib/workerd-server";
import { measureLoad, workerdCpu } from "./lib/wrangler-dev";

process.env.MINIFLARE_WORKERD_V8_FLAGS = PERF_V8_FLAGS;

const PORT = Number(process.env.BENCH_PORT ?? 8799);
const KEY = "bench-profile-disk-key";
const SESSIONS = 100;
const HANDOFFS_PER_SESSION = 10;
const HANDOFFS = SESSIONS * HANDOFFS_PER_SESSION;
const CONCURRENCY = 16;
const HZ = 2000;

/** The disk's own rows first: a stack in the kernel's file code is the disk's, whoever called it. */
const PARTS: readonly Part[] = [
  [
    "the kernel's file I/O (reads, writes, syncs)",
    (f) => /\b(vfs_|ext4_|jbd2|blk_|do_fsync|__x64_sys_(pread|pwrite|fsync|fdatasync|write|read|openat|fcntl))/.test(f),
  ],
  ["SQLite itself (statements, pager, commits)", (f) => f.includes("sqlite3")],
  ...WORKERD_PARTS,
];

if (!hasPerf()) {
  console.error("bench/profile-disk.ts needs Linux perf on the PATH (Debian: apt install linux-perf).");
  process.exit(1);
}

const profiles: [string, Map<string, number>][] = [];
const cpu: string[] = [];
const folder = mkdtempSync(join(tmpdir(), "relay-profile-disk-"));
try {
  for (const where of ["memory", "disk"] as const) {
    const state = where === "disk" ? mkdtempSync(join(tmpdir(), "relay-profile-disk-state-")) : undefined;
    const relay = await startWorkerdServer(PORT, KEY, {}, undefined, state);
    try {
      const api = apiClient(relay.url, KEY).call;
      const sessions = async (n: number) => {
        const ids: string[] = [];
        for (let i = 0; i < n; i++) {
          const created = await api("POST", "/v1/sessions", { agent: "triage" });
          if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.json)}`);
          ids.push(created.json.id);
        }
        return ids;
      };
      const handoffs = (ids: string[]) => (i: number) => {
        const session = ids[i % ids.length]!;
        const step = Math.floor(i / ids.length);
        const specialist = i % 2 === 0 ? "billing" : "technical";
        const body =
          step % 2 === 0
            ? { session_id: session, source_agent: "triage", target_agent: specialist, reason: "profile" }
            : { session_id: session, source_agent: specialist, mode: "return", reason: "profile" };
        return api("POST", "/v1/handoffs", body).then((reply) => {
          if (reply.status !== 200) throw new Error(`handoff: ${reply.status} ${JSON.stringify(reply.json)}`);
        });
      };
      // One wave per step keeps each session's handoffs in order (a return follows its transfer).
      const waves = async (ids: string[]) => {
        for (let step = 0; step < HANDOFFS_PER_SESSION; step++)
          await measureLoad(ids.length, CONCURRENCY, (i) => handoffs(ids)(step * ids.length + i));
      };
      await waves(await sessions(20));
      const ids = await sessions(SESSIONS);
      await flushesSettled();
      const before = workerdCpu(process.pid);
      profiles.push([
        `Relay, ${where}`,
        await perfProfile(
          join(folder, `relay-${where}.data`),
          HANDOFFS,
          async () => {
            await waves(ids);
            await flushesSettled();
          },
          PARTS,
          HZ,
        ),
      ]);
      cpu.push(`Relay, ${where}: ${(((workerdCpu(process.pid) - before) / HANDOFFS) * 1000).toFixed(0)} µs`);
    } finally {
      await relay.stop();
    }
    const plainState = state && mkdtempSync(join(tmpdir(), "relay-profile-disk-plain-"));
    const plain = await startBaselineObjects(PORT + 1, plainState);
    try {
      for (let i = 0; i < SESSIONS; i++) await floorCall(`${plain.url}/objects/live-${i}`, { method: "POST" });
      for (const [name, path] of [
        ["floor", "audited"],
        ["durable floor", "durable-audited"],
      ] as const) {
        const write = (i: number) => floorCall(`${plain.url}/${path}/live-${i % SESSIONS}`, { method: "POST" });
        await measureLoad(200, CONCURRENCY, write);
        await flushesSettled();
        const before = plain.workerdCpuMs();
        profiles.push([
          `${name}, ${where}`,
          await perfProfile(
            join(folder, `${path}-${where}.data`),
            HANDOFFS,
            async () => {
              await measureLoad(HANDOFFS, CONCURRENCY, write);
              await flushesSettled();
            },
            PARTS,
            HZ,
          ),
        ]);
        cpu.push(`${name}, ${where}: ${(((plain.workerdCpuMs() - before) / HANDOFFS) * 1000).toFixed(0)} µs`);
      }
    } finally {
      await plain.stop();
    }
    for (const made of [state, plainState]) if (made) rmSync(made, { recursive: true, force: true });
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
  removeSymbolMaps();
}

console.log(
  `\nworkerd CPU per handoff (floor: per audited write), µs, by part (${HANDOFFS} each, ${CONCURRENCY} in flight, perf at ${HZ} Hz)`,
);
printParts(profiles, PARTS);
console.log(`\nworkerd CPU by its clock over the same windows: ${cpu.join("; ")}`);
