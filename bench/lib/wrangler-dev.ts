import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { relayHostsForDev } from "../../scripts/lib/dev-vars";
import { isFree } from "./free-port";

/**
 * Starts `wrangler dev` on loopback for an HTTP benchmark, after the same setup as
 * `npm run dev` (migrations, demo agents, .dev.vars), and stops it when done.
 */
export interface DevServer {
  url: string;
  process: ChildProcess;
  /** Resident memory of the workerd processes, in MiB (Linux /proc). */
  workerdRssMiB(): number;
  /** CPU time the workerd processes have used so far, user and system, in ms (Linux /proc). */
  workerdCpuMs(): number;
  stop(): Promise<void>;
}

const root = join(import.meta.dirname, "..", "..");

/** The arguments that make `wrangler dev` listen on loopback at `port`. */
const listenArgs = (port: number) => ["--port", String(port), "--ip", "127.0.0.1"];

/**
 * Every tenant quota off (docs/operations.md, Quotas): the benchmarks and the Node suites measure
 * and test Relay, not one tenant's limits; admissions still go through each tenant's object. A
 * caller's `vars` may set one.
 */
export const UNLIMITED_QUOTAS: Record<string, string> = {
  QUOTA_REQUESTS_PER_MINUTE: "unlimited",
  QUOTA_SESSIONS_PER_DAY: "unlimited",
  QUOTA_RUNS_PER_MINUTE: "unlimited",
  QUOTA_MODEL_TOKENS_PER_DAY: "unlimited",
  QUOTA_AGENTS: "unlimited",
  QUOTA_TOOLS: "unlimited",
};

/**
 * `vars` are passed to the Worker with `--var` (e.g. a model endpoint on loopback), after
 * UNLIMITED_QUOTAS and RELAY_HOSTS, which names the port this server listens on as `npm run dev` does.
 * `persistTo` puts the local state (DO SQLite, D1) in another folder, e.g. on tmpfs: on this
 * kind of machine every local storage commit waits about 1 ms for the disk, which is the
 * machine's cost, not the code's.
 */
export async function startDevServer(
  port = 8788,
  persistTo?: string,
  vars: Record<string, string> = {},
): Promise<DevServer> {
  const env = {
    ...process.env,
    WRANGLER_SEND_METRICS: "false",
    CI: "true",
    ...(persistTo ? { RELAY_PERSIST_TO: persistTo } : {}),
  };
  execFileSync(join(root, "node_modules", ".bin", "tsx"), [join(root, "scripts", "dev-setup.ts")], {
    cwd: root,
    env,
    stdio: ["ignore", "ignore", "inherit"],
  });
  const persist = persistTo ? ["--persist-to", persistTo] : [];
  const relayHosts = relayHostsForDev(root, listenArgs(port));
  const extraVars = Object.entries({ RELAY_HOSTS: relayHosts, ...UNLIMITED_QUOTAS, ...vars }).flatMap(
    ([name, value]) => ["--var", `${name}:${value}`],
  );
  return spawnWranglerDev(root, port, [...persist, ...extraVars], env);
}

/**
 * Runs `wrangler dev` for the Worker configured in `cwd` on loopback and waits until its
 * `GET /health` answers; `stop` ends wrangler and its workerd processes.
 */
export async function spawnWranglerDev(
  cwd: string,
  port: number,
  args: string[],
  env: NodeJS.ProcessEnv,
): Promise<DevServer> {
  // A server already on the port would answer the health check below, and the caller would
  // measure or test a server it did not start (an old run's, a developer's).
  if (!(await isFree(port)))
    throw new Error(`port ${port} is taken: something this process did not start listens there`);
  const child = spawn(join(root, "node_modules", ".bin", "wrangler"), ["dev", ...listenArgs(port), ...args], {
    cwd,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let log = "";
  child.stdout?.on("data", (chunk) => (log += chunk));
  child.stderr?.on("data", (chunk) => (log += chunk));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 60_000;
  for (;;) {
    try {
      const response = await fetch(`${url}/health`);
      if (response.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline || child.exitCode !== null) {
      child.kill("SIGKILL");
      throw new Error(`wrangler dev did not start:\n${log.slice(-2000)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return {
    url,
    process: child,
    workerdRssMiB: () => workerdRss(child.pid ?? 0),
    workerdCpuMs: () => workerdCpu(child.pid ?? 0),
    stop: async () => {
      try {
        process.kill(-(child.pid ?? 0), "SIGTERM");
      } catch {
        // already gone
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    },
  };
}

/** The /proc folders of every workerd process descended from `pid`. */
function workerdProcesses(pid: number): string[] {
  const children = (p: number): number[] => {
    try {
      return readFileSync(`/proc/${p}/task/${p}/children`, "utf8").trim().split(/\s+/).filter(Boolean).map(Number);
    } catch {
      return [];
    }
  };
  const found: string[] = [];
  const stack = [pid];
  while (stack.length > 0) {
    const p = stack.pop()!;
    stack.push(...children(p));
    try {
      if (/^Name:\s+workerd/m.test(readFileSync(`/proc/${p}/status`, "utf8"))) found.push(`/proc/${p}`);
    } catch {
      // exited
    }
  }
  return found;
}

/** The pids of every workerd process descended from `pid` (Linux /proc). */
export function workerdPids(pid: number): number[] {
  return workerdProcesses(pid).map((folder) => Number(folder.slice("/proc/".length)));
}

/** Sums VmRSS of every workerd process descended from `pid` (Linux /proc). */
export function workerdRss(pid: number): number {
  let total = 0;
  for (const proc of workerdProcesses(pid)) {
    try {
      total += Number(/VmRSS:\s+(\d+)/.exec(readFileSync(`${proc}/status`, "utf8"))?.[1] ?? 0) / 1024;
    } catch {
      // exited
    }
  }
  return Math.round(total);
}

/** Clock ticks per second of /proc's CPU times (USER_HZ, 100 on Linux). */
const TICKS_PER_S = 100;

/** Sums the user and system CPU time of every workerd process descended from `pid`, in ms (Linux /proc). */
export function workerdCpu(pid: number): number {
  let ticks = 0;
  for (const proc of workerdProcesses(pid)) {
    try {
      // Fields after the command name: state is the 1st, utime the 12th, stime the 13th.
      const fields = readFileSync(`${proc}/stat`, "utf8").split(") ").pop()!.split(" ");
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      // exited
    }
  }
  return (ticks / TICKS_PER_S) * 1000;
}

/** Runs `total` calls of `task` with at most `concurrency` in flight; returns each call's ms. */
export async function runConcurrent(
  total: number,
  concurrency: number,
  task: (i: number) => Promise<void>,
): Promise<number[]> {
  const durations: number[] = new Array(total);
  let next = 0;
  const worker = async () => {
    while (next < total) {
      const i = next++;
      const started = performance.now();
      await task(i);
      durations[i] = performance.now() - started;
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return durations;
}

/** A load's result: the p50 of a call (ms) and calls per second. */
export interface Load {
  p50: number;
  rate: number;
}

/** `calls` of `task` with at most `concurrency` in flight. */
export async function measureLoad(
  calls: number,
  concurrency: number,
  task: (i: number) => Promise<unknown>,
): Promise<Load> {
  const started = performance.now();
  const ms = await runConcurrent(calls, concurrency, async (i) => {
    await task(i);
  });
  return { p50: percentile(ms, 50), rate: calls / ((performance.now() - started) / 1000) };
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
}

export function devKey(): string {
  const vars = readFileSync(join(root, ".dev.vars"), "utf8");
  const entry = /RELAY_API_KEYS\s*=\s*"?([^",\n]*)/.exec(vars)?.[1] ?? "";
  return entry.slice(entry.indexOf(":") + 1);
}
