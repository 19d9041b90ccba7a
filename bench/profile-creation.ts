/**
 * Where a session creation's CPU goes in the whole workerd process, beside the floors it is
 * measured against (bench/lib/baseline-object.ts): Relay's `POST /v1/sessions` and each
 * creation floor, 1,000 creations each at 16 in flight, state in memory, sampled by Linux
 * `perf` with V8's symbol map, so local D1, Miniflare's entry Worker and the runtime show
 * beside the JavaScript (bench/profile-handoffs.ts sees the isolate's JavaScript only).
 * Each sample's stack is charged to the first part, in PARTS' order, any frame of it names.
 * The counts include the flushes to D1 each load left behind.
 *
 *   npx tsx bench/profile-creation.ts   (needs `perf`: apt install linux-perf)
 */

import { execFileSync, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiClient } from "./lib/api-client";
import { CREATION_FLOORS, floorCall, startBaselineObjects } from "./lib/baseline-object";
import { flushesSettled, startWorkerdServer } from "./lib/workerd-server";
import { measureLoad, workerdPids } from "./lib/wrangler-dev";

// Read by Miniflare when it starts workerd: JIT code named in /tmp/perf-<pid>.map for perf.
process.env.MINIFLARE_WORKERD_V8_FLAGS = "--perf-basic-prof --interpreted-frames-native-stack";

const PORT = Number(process.env.BENCH_PORT ?? 8799);
const KEY = "bench-profile-creation-key";
const CREATIONS = 1000;
const CONCURRENCY = 16;
const HZ = 2000;

/** The parts of workerd's work, each named by a frame its stacks hold; the first match wins. */
const PARTS: [string, (frame: string) => boolean][] = [
  ["local D1: its Worker and SQLite", (f) => f.includes("database.worker.js") || f.includes("D1Entry")],
  ["the D1 binding's client side", (f) => f.includes("d1-api")],
  ["Miniflare's entry Worker (local only)", (f) => f.includes("entry.worker.js") || f.includes("miniflare:shared")],
  ["a new object: start, SQLite open, constructor", (f) => f.includes("worker_new_actor")],
  ["the alarm event", (f) => f.includes("runAlarm")],
  ["the object's RPC method, to its first await", (f) => f.includes("JsRpcTargetBase::callImpl")],
  ["the Worker's fetch, to its first await", (f) => f.includes("ServiceWorkerGlobalScope::request")],
  ["JavaScript resumed after an await", (f) => f.includes("RunMicrotasks") || f.includes("resumeAfterIo")],
  ["garbage collection", (f) => f.includes("CollectGarbage") || f.includes("Scavenge")],
  ["V8's compiler and GC threads", (f) => f.includes("JobTaskWrapper")],
];
const RUNTIME = "the runtime: event loop, sockets, commits";

if (!hasPerf()) {
  console.error("bench/profile-creation.ts needs Linux perf on the PATH (Debian: apt install linux-perf).");
  process.exit(1);
}

/** µs per creation by part, per load, in the order measured. */
const profiles: [string, Map<string, number>][] = [];
/** workerd processes profiled: V8 left a symbol map of each in /tmp, removed at the end. */
const profiled = new Set<number>();
const folder = mkdtempSync(join(tmpdir(), "relay-profile-creation-"));
try {
  const relay = await startWorkerdServer(PORT, KEY);
  try {
    const api = apiClient(relay.url, KEY).call;
    const create = async () => {
      const created = await api("POST", "/v1/sessions", { agent: "triage", metadata: { bench: "profile" } });
      if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.json)}`);
    };
    profiles.push(["Relay", await profile(join(folder, "relay.data"), create)]);
  } finally {
    await relay.stop();
  }
  const plain = await startBaselineObjects(PORT + 1);
  try {
    for (const { path, short } of CREATION_FLOORS) {
      const call = (i: number) => floorCall(`${plain.url}/${path}/${path}-${i}`, { method: "POST" });
      profiles.push([short, await profile(join(folder, `${path}.data`), call)]);
    }
  } finally {
    await plain.stop();
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
  for (const pid of profiled) rmSync(`/tmp/perf-${pid}.map`, { force: true });
}

const parts = [...PARTS.map(([name]) => name), RUNTIME];
const total = (by: Map<string, number>) => [...by.values()].reduce((a, b) => a + b, 0);
console.log(
  `\nworkerd CPU per creation, µs, by part (${CREATIONS} creations, ${CONCURRENCY} in flight, state in memory, perf at ${HZ} Hz)`,
);
console.log(`| part | ${profiles.map(([name]) => name).join(" | ")} |\n|${" --- |".repeat(profiles.length + 1)}`);
for (const part of parts)
  console.log(`| ${part} | ${profiles.map(([, by]) => (by.get(part) ?? 0).toFixed(0)).join(" | ")} |`);
console.log(`| **all** | ${profiles.map(([, by]) => `**${total(by).toFixed(0)}**`).join(" | ")} |`);

/**
 * A warm-up, then CREATIONS calls of `call` (each a new object) under `perf record` on every
 * workerd process of this bench, the flushes they left included; the samples by part.
 */
async function profile(file: string, call: (i: number) => Promise<unknown>): Promise<Map<string, number>> {
  await measureLoad(200, CONCURRENCY, (i) => call(CREATIONS + i));
  await flushesSettled();
  const pids = workerdPids(process.pid);
  for (const pid of pids) profiled.add(pid);
  const perf = spawn("perf", ["record", "-F", String(HZ), "-g", "-o", file, "-p", pids.join(",")], {
    stdio: "ignore",
  });
  const exited = new Promise((resolve) => perf.on("exit", resolve));
  await new Promise((resolve) => setTimeout(resolve, 500));
  await measureLoad(CREATIONS, CONCURRENCY, call);
  await flushesSettled();
  perf.kill("SIGINT");
  await exited;
  const script = execFileSync("perf", ["script", "-i", file, "-F", "tid,ip,sym"], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
    stdio: ["ignore", "pipe", "ignore"],
  });
  const by = new Map<string, number>();
  const usPerSample = 1e6 / HZ / CREATIONS;
  // perf script: a stack is its frames, one a line starting with a tab, ended by a blank line.
  for (const stack of script.split(/\n\s*\n/)) {
    const frames = stack.split("\n").filter((line) => line.startsWith("\t"));
    if (frames.length === 0) continue;
    const part = PARTS.find(([, names]) => frames.some(names))?.[0] ?? RUNTIME;
    by.set(part, (by.get(part) ?? 0) + usPerSample);
  }
  return by;
}

function hasPerf(): boolean {
  try {
    execFileSync("perf", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}
