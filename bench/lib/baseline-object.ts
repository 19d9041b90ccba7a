import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { unstable_readConfig } from "wrangler";
import { rmSync } from "node:fs";
import { join } from "node:path";
import { SESSION_SCHEMA } from "../../durable-objects/session-store";
import { memoryStateFolder } from "./workerd-server";
import { workerdCpu, workerdRss } from "./wrangler-dev";

/**
 * The smallest Worker with a SQLite-backed Durable Object, on the same workerd, for a
 * baseline beside Relay. `POST /objects/:name` makes the object if it is new, creates one
 * table and writes one row: a new name is the floor of creating an object (a session), a
 * name seen before the floor of one commit in a live object (a handoff). `POST
 * /schemas/:name` makes a new object with a Relay session's tables (SESSION_SCHEMA, one
 * exec) and one row, and nothing else of Relay's: what the tables alone cost. `GET
 * /objects/:name` calls the object without touching storage. `GET /health` answers from
 * the Worker alone, as Relay's does.
 */

const SCRIPT = `
import { DurableObject } from "cloudflare:workers";
const SESSION_TABLES = ${JSON.stringify(SESSION_SCHEMA.statements.join(";\n"))};
export class Plain extends DurableObject {
  // One transaction, so one commit however many statements: the cheapest way to write.
  async touch(schema = "") {
    const sql = this.ctx.storage.sql;
    this.ctx.storage.transactionSync(() => {
      if (schema) sql.exec(schema);
      sql.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)");
      sql.exec("INSERT INTO t (v) VALUES (?)", "x".repeat(200));
    });
    return sql.exec("SELECT COUNT(*) AS n FROM t").one().n;
  }
  async ping() {
    return 0;
  }
  async schema() {
    return this.touch(SESSION_TABLES);
  }
}
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/health") return new Response("ok");
    const stub = env.PLAIN.get(env.PLAIN.idFromName(url.pathname.split("/").pop()));
    if (url.pathname.startsWith("/schemas/")) return Response.json({ rows: await stub.schema() });
    return Response.json({ rows: request.method === "POST" ? await stub.touch() : await stub.ping() });
  },
};`;

export async function startBaselineObjects(port: number, persistTo?: string): Promise<{ url: string; workerdRssMiB(): number; workerdCpuMs(): number; stop(): Promise<void> }> {
  const config = unstable_readConfig({ config: join(import.meta.dirname, "..", "..", "wrangler.toml") });
  // Miniflare 5 takes the classic options through its converter, as bench/lib/workerd-server.ts does.
  const options = convertV4MiniflareOptions({
    host: "127.0.0.1",
    port,
    modules: true,
    script: SCRIPT,
    compatibilityDate: config.compatibility_date!,
    durableObjects: { PLAIN: { className: "Plain", useSQLite: true } },
  });
  // Local state as Relay's bench server keeps it: in memory unless a folder is given.
  const state = persistTo ?? memoryStateFolder("relay-bench-plain-");
  const mf = new Miniflare({ ...options, resourcePersistencePath: state });
  const url = (await mf.ready).toString().replace(/\/$/, "");
  return {
    url,
    workerdRssMiB: () => workerdRss(process.pid),
    workerdCpuMs: () => workerdCpu(process.pid),
    stop: async () => {
      await mf.dispose();
      if (persistTo === undefined) rmSync(state, { recursive: true, force: true });
    },
  };
}
