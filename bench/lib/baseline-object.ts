import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { unstable_readConfig } from "wrangler";
import { SESSION_SCHEMA, SESSION_TABLES_DEFERRED } from "../../durable-objects/session/session-store";
import { tableOf } from "../../durable-objects/shared/schema-text";
import { memoryStateFolder, migrationStatements } from "./workerd-server";
import { spawnWranglerDev, workerdCpu, workerdRss } from "./wrangler-dev";

/**
 * The smallest Worker with a SQLite-backed Durable Object, served as Relay is (on workerd
 * through Miniflare's API, or through `wrangler dev`), for a baseline beside Relay. `POST
 * /objects/:name` makes the object if it is new, creates one table and writes one row: a
 * new name is the floor of creating an object (a session), a name seen before the floor of
 * one commit in a live object (a handoff). `POST
 * /schemas/:name` makes a new object with a Relay session's tables (SESSION_SCHEMA, one
 * exec) and one row, and nothing else of Relay's: what the tables alone cost. `POST
 * /audited/:name` is one write in a live object that also keeps an audit trail in D1 as a
 * handoff must: four rows in Relay's `audit_log` (its real schema and indexes), sent as one
 * batch per ten writes, off the request as Relay's flush is — the least an audited handoff
 * can cost here, with no index upserts, no flow and no Relay code (`GET /audit-rows`
 * counts the handoff rows that reached D1). `POST /durable-audited/:name` is that write kept
 * through a crash, as Relay keeps a handoff's: its four audit rows written to an outbox table
 * in the same transaction, an alarm half a second later (set once per flush) that sends the
 * pending rows to D1 in one batch and then deletes them — the floor of a durable audited
 * handoff (`GET /audit-rows?tenant=durable` counts its rows in D1). `POST /created/:name` makes a new object with one table and
 * one row and sends that creation's one audit row to D1 off the request, as a session's
 * creation must (Relay's `session.created`): the floor of an audited creation, without the
 * sessions index Relay writes with it. `POST /durable/:name` is the least a session that
 * keeps its audit record through a crash and expires can write: a new object whose one
 * transaction makes a session table and an outbox table (with its pending-rows index) and
 * writes the session row and its pending audit row, an alarm set (its expiry, which also
 * retries the outbox), and the audit row sent to D1 off the request and then marked sent.
 * `POST /stored/:name` is a Relay session's own storage work with none of its code: the
 * tables a new session makes (SESSION_SCHEMA's eager ones and the schema-version row, the
 * same statements), its session row, its audit row and its two timers in one transaction,
 * the alarm, and the audit row to D1 and marked sent as `/durable` does (Relay sends it from
 * the alarm half a second later instead). `POST /history/:name?n=N&chars=C` is a turn's
 * storage floor in a long conversation: a live object holding a table of at least N history
 * rows of C characters reads the last N of them and appends one (the first call writes the N
 * rows, in one transaction). `GET /objects/:name` calls the object without touching storage.
 * `POST /streamed/:name?to=URL` is one write in a live object, then a POST of the request's
 * body to URL whose streamed answer comes back as it arrives: the floor of a streamed turn's
 * first token. `POST /exported/:name?to=URL&bytes=B` is one write in a live object with a trace export
 * queued in the same transaction, then the alarm that POSTs B bytes of JSON to URL and removes
 * it: the floor of a run's export.
 * `GET /health` answers from the Worker alone, as Relay's does.
 */

/**
 * The floors session creation is measured beside, in the order printed: the path of each
 * (`POST /<path>/:name`, see above), its name in a table and a short one for a column.
 */
export const CREATION_FLOORS = [
  { path: "objects", name: "one table, one row", short: "one table" },
  { path: "created", name: "the same and its audit row to D1", short: "+ audit row to D1" },
  { path: "durable", name: "a durable session: two tables, an alarm, its audit row to D1", short: "durable session" },
  { path: "stored", name: "a Relay session's storage, no Relay code", short: "Relay's storage" },
] as const;

/** An immediate handoff's transitions (action, from, to): an audited write's rows, one each. */
const TRANSITIONS = [
  ["handoff.initiated", null, "initiated"],
  ["handoff.validated", "initiated", "validating"],
  ["handoff.transferring", "validating", "transferring"],
  ["handoff.completed", "transferring", "completed"],
];
export const AUDIT_ROWS_PER_WRITE = TRANSITIONS.length;
/** Audited writes an object collects before it sends their rows to D1 in one batch. */
export const AUDITED_WRITES_PER_BATCH = 10;

/** The statements a new Relay session runs to make its tables (the rest are made when first needed). */
const SESSION_EAGER = [
  ...SESSION_SCHEMA.statements.filter((statement) => {
    const table = tableOf(statement);
    return table !== null && SESSION_TABLES_DEFERRED.eager.includes(table);
  }),
  "CREATE TABLE IF NOT EXISTS _schema (id INTEGER PRIMARY KEY CHECK (id = 1), version INTEGER NOT NULL)",
  `INSERT INTO _schema (id, version) VALUES (1, ${SESSION_SCHEMA.version})`,
];

const SCRIPT = `
import { DurableObject } from "cloudflare:workers";
const SESSION_TABLES = ${JSON.stringify(SESSION_SCHEMA.statements.join(";\n"))};
const TRANSITIONS = ${JSON.stringify(TRANSITIONS)};
const SESSION_EAGER = ${JSON.stringify(SESSION_EAGER.join(";\n"))};
const DURABLE_TABLES = "CREATE TABLE session (id INTEGER PRIMARY KEY, v TEXT NOT NULL); CREATE TABLE outbox (id TEXT PRIMARY KEY, details TEXT NOT NULL, sent INTEGER NOT NULL DEFAULT 0); CREATE INDEX outbox_pending ON outbox (id) WHERE sent = 0";
const DAY_MS = 86400000;
// Sixteen rows a statement (six binds each, under D1's 100), as Relay writes several rows a statement.
const AUDIT_ROWS_PER_STATEMENT = 16;
const insertAudit = (rows, tenant = "dev") =>
  "INSERT INTO audit_log (id, at, tenant, session_id, handoff_id, action, agent, actor, actor_type, details) VALUES " +
  rows.map(() => "(?, ?, '" + tenant + "', ?, ?, ?, 'billing', 'api', 'user', ?)").join(", ");
const auditBatch = (db, batch, tenant) => {
  const statements = [];
  for (let from = 0; from < batch.length; from += AUDIT_ROWS_PER_STATEMENT) {
    const some = batch.slice(from, from + AUDIT_ROWS_PER_STATEMENT);
    statements.push(db.prepare(insertAudit(some, tenant)).bind(...some.flat()));
  }
  return db.batch(statements);
};
export class Plain extends DurableObject {
  pending = [];
  filled = false;
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
  // The expiry the durable floors set: nothing to expire here. After \`durableAudited\`: its
  // outbox; after \`exported\`: its queued exports.
  async alarm() {
    if (this.flushAt !== undefined) await this.flushAudit();
    if (!this.exportTo) return;
    const sql = this.ctx.storage.sql;
    const due = sql.exec("SELECT id FROM exports WHERE next_at <= ? ORDER BY id", Date.now()).toArray();
    if (due.length === 0) return;
    const body = JSON.stringify({ resourceSpans: [], pad: "x".repeat(this.exportBytes) });
    const response = await fetch(this.exportTo, { method: "POST", headers: { "content-type": "application/json" }, body });
    await response.body?.cancel();
    sql.exec("DELETE FROM exports WHERE id <= ?", due.at(-1).id);
  }
  // One write in a live object with an export queued in the same transaction, and the alarm
  // that sends it (a POST of \`bytes\`) and removes it: the floor of a run's trace export.
  async exported(to, bytes) {
    const sql = this.ctx.storage.sql;
    this.exportTo = to;
    this.exportBytes = bytes;
    this.ctx.storage.transactionSync(() => {
      sql.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)");
      sql.exec("CREATE TABLE IF NOT EXISTS exports (id INTEGER PRIMARY KEY, next_at INTEGER NOT NULL)");
      sql.exec("INSERT INTO t (v) VALUES (?)", "x".repeat(200));
      sql.exec("INSERT INTO exports (next_at) VALUES (?)", Date.now());
    });
    await this.ctx.storage.setAlarm(Date.now());
    return 1;
  }
  // One write in a live object, then the model's streamed answer passed on as it comes: the
  // floor of a streamed turn's first token (the message stored before the model is called).
  async streamed(to, body) {
    await this.touch();
    const response = await fetch(to, { method: "POST", headers: { "content-type": "application/json" }, body });
    return response.body;
  }
  async created() {
    const rows = await this.touch();
    const at = new Date().toISOString();
    const row = [crypto.randomUUID(), at, this.ctx.id.toString(), null, "session.created", JSON.stringify({ agent: "triage", created_at: at })];
    this.ctx.waitUntil(this.env.DB.prepare(insertAudit([row])).bind(...row).run());
    return rows;
  }
  // The one audit row of a creation to D1, then \`sent\` (the outbox's bookkeeping) in one transaction.
  sendCreated(id, at, sent) {
    const row = [id, at, this.ctx.id.toString(), null, "session.created", JSON.stringify({ agent: "triage", created_at: at })];
    const write = this.env.DB.prepare(insertAudit([row])).bind(...row).run();
    this.ctx.waitUntil(write.then(() => this.ctx.storage.transactionSync(sent)));
  }
  async durable() {
    const sql = this.ctx.storage.sql;
    const id = crypto.randomUUID();
    const at = new Date().toISOString();
    this.ctx.storage.transactionSync(() => {
      sql.exec(DURABLE_TABLES);
      sql.exec("INSERT INTO session (v) VALUES (?)", "x".repeat(200));
      sql.exec("INSERT INTO outbox (id, details) VALUES (?, ?)", id, "x".repeat(200));
    });
    await this.ctx.storage.setAlarm(Date.now() + DAY_MS);
    this.sendCreated(id, at, () => sql.exec("UPDATE outbox SET sent = 1 WHERE id = ?", id));
    return 1;
  }
  async stored() {
    const sql = this.ctx.storage.sql;
    const id = crypto.randomUUID();
    const now = Date.now();
    const at = new Date(now).toISOString();
    this.ctx.storage.transactionSync(() => {
      sql.exec(SESSION_EAGER);
      sql.exec(
        "INSERT INTO session (id, session_id, tenant, status, current_agent, handoff_stack, state, metadata, ttl_s, created_at, updated_at, expires_at) VALUES (1, ?, 'dev', 'active', 'triage', '[]', '{}', '{}', 86400, ?, ?, ?)",
        this.ctx.id.toString(), now, now, now + DAY_MS,
      );
      sql.exec(
        "INSERT INTO audit (id, at, tenant, session_id, action, agent, actor, actor_type, details) VALUES (?, ?, 'dev', ?, 'session.created', 'triage', 'api', 'user', ?)",
        id, at, this.ctx.id.toString(), "x".repeat(200),
      );
      sql.exec("INSERT INTO timers (id, key, kind, due_at) VALUES (?, 'outbox.flush', 'outbox.flush', ?)", id, now + 500);
      sql.exec("INSERT INTO timers (id, key, kind, due_at) VALUES (?, 'session.expire', 'session.expire', ?)", id + "e", now + DAY_MS);
    });
    await this.ctx.storage.setAlarm(now + DAY_MS);
    this.sendCreated(id, at, () => {
      sql.exec("UPDATE audit SET flushed = 1 WHERE id = ?", id);
      sql.exec("DELETE FROM timers WHERE key = 'outbox.flush'");
    });
    return 1;
  }
  async schema() {
    return this.touch(SESSION_TABLES);
  }
  // A turn's reads and write in a long conversation: the last n rows, then one more row.
  async history(n, chars) {
    const sql = this.ctx.storage.sql;
    const item = "x".repeat(chars);
    // Filled once per live object, so a call's own work is the read and the append alone.
    if (!this.filled) {
      sql.exec("CREATE TABLE IF NOT EXISTS history (seq INTEGER PRIMARY KEY, item TEXT NOT NULL)");
      const have = sql.exec("SELECT COUNT(*) AS n FROM history").one().n;
      this.ctx.storage.transactionSync(() => {
        for (let i = have; i < n; i++) sql.exec("INSERT INTO history (item) VALUES (?)", item);
      });
      this.filled = true;
    }
    let read = 0;
    for (const row of sql.exec("SELECT seq, item FROM history ORDER BY seq DESC LIMIT ?", n)) read += row.item.length;
    sql.exec("INSERT INTO history (item) VALUES (?)", item);
    return read;
  }
  // One write and its four audit rows in an outbox, in one transaction; the alarm sends them.
  async durableAudited() {
    const sql = this.ctx.storage.sql;
    const at = new Date().toISOString();
    const handoff = crypto.randomUUID();
    this.ctx.storage.transactionSync(() => {
      sql.exec("CREATE TABLE IF NOT EXISTS t (id INTEGER PRIMARY KEY, v TEXT)");
      sql.exec("CREATE TABLE IF NOT EXISTS audit_outbox (seq INTEGER PRIMARY KEY, id TEXT NOT NULL, at TEXT NOT NULL, handoff TEXT NOT NULL, action TEXT NOT NULL, details TEXT NOT NULL)");
      sql.exec("INSERT INTO t (v) VALUES (?)", "x".repeat(200));
      for (const [action, from, to] of TRANSITIONS) {
        const details = JSON.stringify({ from, to, source: "triage", target: "billing", mode: "transfer", policy: "immediate", created_at: at });
        sql.exec("INSERT INTO audit_outbox (id, at, handoff, action, details) VALUES (?, ?, ?, ?, ?)", crypto.randomUUID(), at, handoff, action, details);
      }
    });
    if (this.flushAt === undefined) {
      this.flushAt = Date.now() + 500;
      await this.ctx.storage.setAlarm(this.flushAt);
    }
    return 1;
  }
  async flushAudit() {
    this.flushAt = undefined;
    const sql = this.ctx.storage.sql;
    const rows = sql.exec("SELECT seq, id, at, handoff, action, details FROM audit_outbox ORDER BY seq").toArray();
    if (rows.length === 0) return;
    await auditBatch(this.env.DB, rows.map((r) => [r.id, r.at, this.ctx.id.toString(), r.handoff, r.action, r.details]), "durable");
    sql.exec("DELETE FROM audit_outbox WHERE seq <= ?", rows.at(-1).seq);
  }
  async audited() {
    const rows = await this.touch();
    const at = new Date().toISOString();
    const handoff = crypto.randomUUID();
    for (const [action, from, to] of TRANSITIONS) {
      const details = JSON.stringify({ from, to, source: "triage", target: "billing", mode: "transfer", policy: "immediate", created_at: at });
      this.pending.push([crypto.randomUUID(), at, this.ctx.id.toString(), handoff, action, details]);
    }
    if (this.pending.length >= ${AUDIT_ROWS_PER_WRITE * AUDITED_WRITES_PER_BATCH}) {
      this.ctx.waitUntil(auditBatch(this.env.DB, this.pending.splice(0), "dev"));
    }
    return rows;
  }
}
export default {
  async fetch(request, env) {
    const url = new URL(request.url);
    if (url.pathname === "/health") return new Response("ok");
    if (url.pathname === "/audit-rows")
      return Response.json({ rows: (await env.DB.prepare("SELECT COUNT(*) AS n FROM audit_log WHERE action LIKE 'handoff.%' AND tenant = ?").bind(url.searchParams.get("tenant") ?? "dev").first()).n });
    const stub = env.PLAIN.get(env.PLAIN.idFromName(url.pathname.split("/").pop()));
    if (url.pathname.startsWith("/schemas/")) return Response.json({ rows: await stub.schema() });
    if (url.pathname.startsWith("/durable-audited/")) return Response.json({ rows: await stub.durableAudited() });
    if (url.pathname.startsWith("/audited/")) return Response.json({ rows: await stub.audited() });
    if (url.pathname.startsWith("/created/")) return Response.json({ rows: await stub.created() });
    if (url.pathname.startsWith("/durable/")) return Response.json({ rows: await stub.durable() });
    if (url.pathname.startsWith("/stored/")) return Response.json({ rows: await stub.stored() });
    if (url.pathname.startsWith("/exported/"))
      return Response.json({ rows: await stub.exported(url.searchParams.get("to"), Number(url.searchParams.get("bytes"))) });
    if (url.pathname.startsWith("/streamed/"))
      return new Response(await stub.streamed(url.searchParams.get("to"), await request.text()), { headers: { "content-type": "text/event-stream" } });
    if (url.pathname.startsWith("/history/"))
      return Response.json({ chars: await stub.history(Number(url.searchParams.get("n")), Number(url.searchParams.get("chars"))) });
    return Response.json({ rows: request.method === "POST" ? await stub.touch() : await stub.ping() });
  },
};`;

const root = join(import.meta.dirname, "..", "..");

/**
 * One request to the baseline Worker, its body read; throws unless it answered 2xx. A floor
 * that fails fast would otherwise pass for a fast floor (an object whose call throws still
 * answers, with a 500).
 */
export async function floorCall(url: string, init?: RequestInit): Promise<string> {
  const response = await fetch(url, init);
  const body = await response.text();
  if (!response.ok)
    throw new Error(`baseline ${init?.method ?? "GET"} ${new URL(url).pathname}: ${response.status} ${body}`);
  return body;
}

export interface BaselineServer {
  url: string;
  workerdRssMiB(): number;
  workerdCpuMs(): number;
  stop(): Promise<void>;
}

export async function startBaselineObjects(port: number, persistTo?: string): Promise<BaselineServer> {
  const config = unstable_readConfig({ config: join(root, "wrangler.toml") });
  // Miniflare 5 takes the classic options through its converter, as bench/lib/workerd-server.ts does.
  const options = convertV4MiniflareOptions({
    host: "127.0.0.1",
    port,
    modules: true,
    script: SCRIPT,
    compatibilityDate: config.compatibility_date!,
    durableObjects: { PLAIN: { className: "Plain", useSQLite: true } },
    d1Databases: { DB: "relay" },
  });
  // Local state as Relay's bench server keeps it: in memory unless a folder is given.
  const state = persistTo ?? memoryStateFolder("relay-bench-plain-");
  const mf = new Miniflare({ ...options, resourcePersistencePath: state });
  const stop = async () => {
    await mf.dispose();
    if (persistTo === undefined) rmSync(state, { recursive: true, force: true });
  };
  try {
    const url = (await mf.ready).toString().replace(/\/$/, "");
    const db = await mf.getD1Database("DB");
    for (const statement of migrationStatements()) await db.prepare(statement).run();
    return { url, workerdRssMiB: () => workerdRss(process.pid), workerdCpuMs: () => workerdCpu(process.pid), stop };
  } catch (error) {
    // As the Relay bench server does: a set-up that fails leaves no workerd or state behind.
    await stop();
    throw error;
  }
}

/**
 * The same Worker through `wrangler dev` and its proxy, as Relay runs in the handoffs
 * bench's wrangler setup: its own folder with a wrangler.toml, D1 migrated with Relay's
 * migrations, local state on disk in that folder (removed at `stop`) unless `persistTo`
 * names another (wrangler's `--persist-to`, e.g. on tmpfs as Relay's may be).
 */
export async function startBaselineDevServer(port: number, persistTo?: string): Promise<BaselineServer> {
  const config = unstable_readConfig({ config: join(root, "wrangler.toml") });
  const folder = mkdtempSync(join(tmpdir(), "relay-bench-plain-dev-"));
  writeFileSync(join(folder, "worker.js"), SCRIPT);
  writeFileSync(
    join(folder, "wrangler.toml"),
    `name = "relay-bench-plain"
main = "worker.js"
compatibility_date = "${config.compatibility_date}"

[[durable_objects.bindings]]
name = "PLAIN"
class_name = "Plain"

[[migrations]]
tag = "v1"
new_sqlite_classes = ["Plain"]

[[d1_databases]]
binding = "DB"
database_name = "relay"
database_id = "00000000-0000-4000-8000-000000000000"
migrations_dir = ${JSON.stringify(join(root, "migrations"))}
`,
  );
  const env = { ...process.env, WRANGLER_SEND_METRICS: "false", CI: "true" };
  const state = persistTo === undefined ? [] : ["--persist-to", mkdtempSync(join(persistTo, "plain-"))];
  const removeFolders = () => {
    rmSync(folder, { recursive: true, force: true });
    if (state.length > 0) rmSync(state[1]!, { recursive: true, force: true });
  };
  try {
    execFileSync(
      join(root, "node_modules", ".bin", "wrangler"),
      ["d1", "migrations", "apply", "relay", "--local", ...state],
      { cwd: folder, env, stdio: ["ignore", "ignore", "inherit"] },
    );
    const server = await spawnWranglerDev(folder, port, state, env);
    return {
      ...server,
      stop: async () => {
        await server.stop();
        removeFolders();
      },
    };
  } catch (error) {
    removeFolders();
    throw error;
  }
}
