import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { rmSync } from "node:fs";
import { SESSION_SCHEMA } from "../durable-objects/session-store";
import { memoryStateFolder } from "./lib/workerd-server";
import { runConcurrent } from "./lib/wrangler-dev";
const full = [...SESSION_SCHEMA.statements];
// Folded: ALTER ... ADD COLUMN moved into its CREATE TABLE.
const folded: string[] = full.filter((s) => !/^ALTER TABLE/.test(s.trim()));
for (const alter of full.filter((s) => /^ALTER TABLE/.test(s.trim()))) {
  const [, table, column] = /^ALTER TABLE (\w+) ADD COLUMN (.*)$/s.exec(alter.trim())!;
  const i = folded.findIndex((s) => new RegExp(`^CREATE TABLE ${table} \\(`).test(s.trim()));
  folded[i] = folded[i]!.replace(/\)\s*$/, `, ${column})`);
}
const core = folded.filter((s) => /\b(session|messages|agent_status|audit|timers|handoffs|handoff_requests|session_lease|lease_releases|live_events)\b/.test(s.split("(")[0]!));
const SCRIPT = `
import { DurableObject } from "cloudflare:workers";
const SCHEMAS = ${JSON.stringify({ full, folded, core, none: [] })};
export class Plain extends DurableObject {
  async touch(mode) {
    const sql = this.ctx.storage.sql;
    this.ctx.storage.transactionSync(() => {
      const s = SCHEMAS[mode];
      if (s.length) sql.exec(s.join(";\\n"));
      sql.exec("CREATE TABLE IF NOT EXISTS z (id INTEGER PRIMARY KEY, v TEXT)");
      sql.exec("INSERT INTO z (v) VALUES ('x')");
    });
    return 1;
  }
}
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/health") return new Response("ok");
    const [, mode, name] = url.pathname.split("/");
    return Response.json({ r: await env.PLAIN.get(env.PLAIN.idFromName(name)).touch(mode) });
  },
};`;
const state = memoryStateFolder("ddl-");
const mf = new Miniflare({ ...convertV4MiniflareOptions({ host: "127.0.0.1", port: 8899, modules: true, script: SCRIPT, compatibilityDate: "2026-01-01", durableObjects: { PLAIN: { className: "Plain", useSQLite: true } } } as any), resourcePersistencePath: state } as any);
const url = (await mf.ready).toString().replace(/\/$/, "");
async function rate(n: number, f: (i: number) => Promise<unknown>) { const t = performance.now(); await runConcurrent(n, 16, async (i) => { const r = await f(i) as string; if (!r.includes('"r":1')) throw new Error(r); }); return Math.round(n / ((performance.now() - t) / 1000)); }
console.log({ full: full.length, folded: folded.length, core: core.length });
for (let round = 0; round < 2; round++) {
  const out: Record<string, number> = {};
  out.health = await rate(2000, () => fetch(`${url}/health`).then((r) => r.text().then(() => '"r":1')));
  for (const mode of ["none", "core", "folded", "full"]) out[mode] = await rate(500, (i) => fetch(`${url}/${mode}/${mode}-${round}-${i}`).then((r) => r.text()));
  console.log(out);
}
await mf.dispose(); rmSync(state, { recursive: true, force: true });
