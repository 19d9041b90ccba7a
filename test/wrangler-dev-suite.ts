import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { freePorts } from "../bench/lib/free-port";
import { type DevServer, devKey, startDevServer } from "../bench/lib/wrangler-dev";

/**
 * The global set-up of the Node suites that run against `wrangler dev` (browser, client and
 * CLI): one server, set up like `npm run dev` (migrations, demo agents, the dev keys), on the
 * first free port of the suite's own range (or the one its environment variable names) and in
 * a fresh state folder, so a developer's `npm run dev` and its data are untouched. A port
 * something else listens on is never reused: the server there is not the one under test.
 */
declare module "vitest" {
  export interface ProvidedContext {
    relayUrl: string;
    relayKey: string;
  }
}

export interface SuiteServer {
  /** The state folder's prefix. */
  name: string;
  /** Ports this suite may take, first free one used. */
  ports: readonly [from: number, to: number];
  /** An environment variable that pins the port. */
  portVariable: string;
  /** Worker variables beside the dev ones. */
  vars?: Record<string, string>;
}

export function wranglerDevSuite(suite: SuiteServer) {
  let server: DevServer | undefined;
  let state: string | undefined;
  return {
    async setup(project: TestProject) {
      const pinned = process.env[suite.portVariable];
      const port = pinned ? Number(pinned) : (await freePorts(1, ...suite.ports))[0]!;
      state = mkdtempSync(join(tmpdir(), `relay-${suite.name}-`));
      server = await startDevServer(port, state, suite.vars);
      project.provide("relayUrl", server.url);
      project.provide("relayKey", devKey());
    },
    async teardown() {
      await server?.stop();
      if (state) rmSync(state, { recursive: true, force: true });
    },
  };
}
