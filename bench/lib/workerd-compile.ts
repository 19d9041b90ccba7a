/**
 * Measures `compileRuleRouter` inside workerd (the Workers runtime, the binary wrangler ships):
 * the worker is bundled with esbuild, served by `workerd serve` on loopback, receives the
 * registry as JSON and compiles it three times. Workers freeze the clock while code runs (it
 * advances at I/O), so each compile is timed across zero-delay timers that let it catch up.
 */
import { spawn } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { build } from "esbuild";
import type { AgentDefinition } from "../../src/schemas/agent";
import { repoRoot } from "./clinc";

const WORKER = `
import { compileRuleRouter } from "./src/routing/rule-router";
const tick = () => new Promise((resolve) => setTimeout(resolve, 0));
export default {
  async fetch(request) {
    const agents = await request.json();
    const ms = [];
    let memoryBytes = 0;
    for (let i = 0; i < 3; i++) {
      await tick();
      const started = Date.now();
      memoryBytes = compileRuleRouter(agents).memoryBytes;
      await tick();
      ms.push(Date.now() - started);
    }
    return Response.json({ ms, memoryBytes });
  },
};
`;

/** A `workerd serve` config running one ES module, `worker.js` beside it, on loopback at `port`. */
export const workerdConfig = (port: number) => `using Workerd = import "/workerd/workerd.capnp";
const config :Workerd.Config = (
  services = [(name = "main", worker = .bench)],
  sockets = [(name = "http", address = "127.0.0.1:${port}", http = (), service = "main")],
);
const bench :Workerd.Worker = (
  modules = [(name = "worker.js", esModule = embed "worker.js")],
  compatibilityDate = "2026-08-01",
);
`;

/** A bench Worker's source (imports resolved from the repository root) as one ES module for workerd. */
export async function bundleWorker(source: string): Promise<string> {
  const bundle = await build({
    stdin: { contents: source, resolveDir: repoRoot, loader: "js" },
    bundle: true,
    format: "esm",
    platform: "neutral",
    target: "es2022",
    write: false,
    logLevel: "silent",
  });
  return bundle.outputFiles[0]?.text ?? "";
}

/** Compile times (ms, in order: the first includes JIT warm-up) and memoryBytes, in workerd. */
export async function compileInWorkerd(
  agents: readonly AgentDefinition[],
): Promise<{ ms: number[]; memoryBytes: number }> {
  const script = await bundleWorker(WORKER);
  const dir = mkdtempSync(path.join(tmpdir(), "relay-workerd-"));
  const port = 20_000 + Math.floor(Math.random() * 20_000);
  writeFileSync(path.join(dir, "worker.js"), script);
  writeFileSync(path.join(dir, "config.capnp"), workerdConfig(port));
  const child = spawn(path.join(repoRoot, "node_modules", ".bin", "workerd"), ["serve", "config.capnp"], {
    cwd: dir,
    stdio: ["ignore", "ignore", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (chunk) => (stderr += chunk));
  try {
    const deadline = Date.now() + 30_000;
    for (;;) {
      try {
        const response = await fetch(`http://127.0.0.1:${port}/`, { method: "POST", body: JSON.stringify(agents) });
        if (!response.ok) throw new Error(`workerd answered ${response.status}: ${await response.text()}`);
        return (await response.json()) as { ms: number[]; memoryBytes: number };
      } catch (error) {
        if (!(error instanceof TypeError) || Date.now() > deadline || child.exitCode !== null) {
          throw new Error(`workerd compile bench failed: ${String(error)}\n${stderr}`);
        }
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    }
  } finally {
    child.kill();
    rmSync(dir, { recursive: true, force: true });
  }
}
