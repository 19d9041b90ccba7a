import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";

const root = join(import.meta.dirname, "..", "..");

/**
 * Runs `file` again in a process of its own with BENCH_ROLE=`role` (a fake model, say, so the
 * client's load does not delay its answers), resolved once it prints its first line.
 */
export async function spawnRole(file: string, role: string): Promise<ChildProcess> {
  const child = spawn(join(root, "node_modules", ".bin", "tsx"), [file], {
    env: { ...process.env, BENCH_ROLE: role },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise<void>((resolve, reject) => {
    child.stdout!.once("data", () => resolve());
    child.once("exit", (code) => reject(new Error(`the ${role} process exited (${code})`)));
  });
  return child;
}
