import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { type DevServer, devKey, startDevServer } from "../../bench/lib/wrangler-dev";

/**
 * Starts `wrangler dev` once for the client and CLI tests, set up like `npm run dev`
 * (migrations, demo agents, the dev keys) on its own port (8850–8859 are this suite's) and
 * in a fresh state folder, so a developer's `npm run dev` and its data are untouched.
 */
declare module "vitest" {
  export interface ProvidedContext {
    relayUrl: string;
    relayKey: string;
  }
}

let server: DevServer | undefined;
let state: string | undefined;

export async function setup(project: TestProject) {
  state = mkdtempSync(join(tmpdir(), "relay-cli-"));
  server = await startDevServer(Number(process.env.RELAY_CLI_PORT ?? 8850), state);
  project.provide("relayUrl", server.url);
  project.provide("relayKey", devKey());
}

export async function teardown() {
  await server?.stop();
  if (state) rmSync(state, { recursive: true, force: true });
}
