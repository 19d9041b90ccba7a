/**
 * Linux `perf` over the whole workerd process (bench/profile-creation.ts,
 * bench/profile-disk.ts): V8's symbol map names the JavaScript, so local D1, Miniflare's entry
 * Worker, SQLite, the kernel's file I/O and the runtime show beside Relay's code. Each
 * sample's stack is charged to the first part, in the order given, that any frame of it names.
 */

import { execFileSync, spawn } from "node:child_process";
import { rmSync } from "node:fs";
import { workerdPids } from "./wrangler-dev";

// Read by Miniflare when it starts workerd: JIT code named in /tmp/perf-<pid>.map for perf.
export const PERF_V8_FLAGS = "--perf-basic-prof --interpreted-frames-native-stack";

/** A part of workerd's work, named by a frame its stacks hold. */
export type Part = readonly [name: string, names: (frame: string) => boolean];

/** workerd's parts by where the work starts; what no part names is RUNTIME's. */
export const WORKERD_PARTS: readonly Part[] = [
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
export const RUNTIME = "the runtime: event loop, sockets, commits";

export function hasPerf(): boolean {
  try {
    execFileSync("perf", ["--version"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
}

/**
 * `perf record` at `hz` on every workerd process under this one while `load` runs (with a
 * half-second lead), then the samples as µs per op by part. The symbol maps V8 left are
 * the caller's to remove (`removeSymbolMaps`), once every profile of a process is taken.
 */
export async function perfProfile(
  file: string,
  ops: number,
  load: () => Promise<void>,
  parts: readonly Part[] = WORKERD_PARTS,
  hz = 2000,
): Promise<Map<string, number>> {
  const pids = workerdPids(process.pid);
  for (const pid of pids) profiled.add(pid);
  const perf = spawn("perf", ["record", "-F", String(hz), "-g", "-o", file, "-p", pids.join(",")], {
    stdio: "ignore",
  });
  const exited = new Promise((resolve) => perf.on("exit", resolve));
  await new Promise((resolve) => setTimeout(resolve, 500));
  await load();
  perf.kill("SIGINT");
  await exited;
  const script = execFileSync("perf", ["script", "-i", file, "-F", "tid,ip,sym"], {
    encoding: "utf8",
    maxBuffer: 1 << 30,
    stdio: ["ignore", "pipe", "ignore"],
  });
  const by = new Map<string, number>();
  const usPerSample = 1e6 / hz / ops;
  // perf script: a stack is its frames, one a line starting with a tab, ended by a blank line.
  for (const stack of script.split(/\n\s*\n/)) {
    const frames = stack.split("\n").filter((line) => line.startsWith("\t"));
    if (frames.length === 0) continue;
    const part = parts.find(([, names]) => frames.some(names))?.[0] ?? RUNTIME;
    by.set(part, (by.get(part) ?? 0) + usPerSample);
  }
  return by;
}

/** workerd processes profiled: V8 left a symbol map of each in /tmp. */
const profiled = new Set<number>();

export function removeSymbolMaps(): void {
  for (const pid of profiled) rmSync(`/tmp/perf-${pid}.map`, { force: true });
}

/** A table of µs per op by part, one column per profile, and its totals. */
export function printParts(profiles: readonly [string, Map<string, number>][], parts: readonly Part[]): void {
  const names = [...parts.map(([name]) => name), RUNTIME];
  const total = (by: Map<string, number>) => [...by.values()].reduce((a, b) => a + b, 0);
  console.log(`| part | ${profiles.map(([name]) => name).join(" | ")} |\n|${" --- |".repeat(profiles.length + 1)}`);
  for (const part of names)
    console.log(`| ${part} | ${profiles.map(([, by]) => (by.get(part) ?? 0).toFixed(0)).join(" | ")} |`);
  console.log(`| **all** | ${profiles.map(([, by]) => `**${total(by).toFixed(0)}**`).join(" | ")} |`);
}
