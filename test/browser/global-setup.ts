import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { type DevServer, devKey, startDevServer } from "../../bench/lib/wrangler-dev";

/**
 * Starts `wrangler dev` once for the browser tests, set up like `npm run dev` (migrations,
 * demo agents) but on its own port and in a fresh state folder, so a developer's own
 * `npm run dev` and its data are untouched.
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
  state = mkdtempSync(join(tmpdir(), "relay-browser-"));
  // Local endpoints allowed, as .dev.vars.example sets them: the tests stand up webhook agents on this machine.
  // One quota set, so the Usage page has a limit to show (usage.test.ts); the others are off.
  server = await startDevServer(Number(process.env.RELAY_BROWSER_PORT ?? 8799), state, {
    RELAY_ALLOW_LOCAL_ENDPOINTS: "true",
    QUOTA_SESSIONS_PER_DAY: "5000",
  });
  project.provide("relayUrl", server.url);
  project.provide("relayKey", devKey());
}

export async function teardown() {
  await server?.stop();
  if (state) rmSync(state, { recursive: true, force: true });
}
