import type { Env } from "../../src/env";
import {
  AgentDO as RelayAgentDO,
  CollaborationDO as RelayCollaborationDO,
  RouterDO as RelayRouterDO,
  SessionDO as RelaySessionDO,
  default as relay,
} from "../../src/index";

/**
 * Relay's Worker with a meter, for bench/conversation-cost.bench.ts: the production Worker
 * and Durable Objects, unchanged, each object's class subclassed (as test/worker.ts does
 * for tests) and its bindings wrapped, so the bench can count what Cloudflare bills without
 * a line of metering in Relay itself. Counted, in this isolate (the Worker and its objects
 * share one locally):
 *
 * - Worker requests: calls of the Worker's `fetch` (the bench's own `/__meter` left out);
 * - Durable Object requests: every method called on a stub of any namespace (each is one
 *   billed RPC session), every `fetch` to a stub, and every alarm;
 * - Durable Object wall time: per object, the time some method of it was running (nested
 *   and concurrent calls counted once), which is what duration is billed on while an
 *   object cannot hibernate;
 * - SQLite rows read and written in the objects, from each `ctx.storage.sql.exec` cursor's
 *   `rowsRead`/`rowsWritten`, and each `setAlarm` (billed as one row written);
 * - D1 rows read and written, from each result's `meta` (`first()` is answered from
 *   `all()`, which carries it), by table written, for every D1 database bound (`DB` and
 *   any `AUDIT_DB_<n>`);
 * - D1 bytes: each database's size, `meta.size_after` of the last query it answered
 *   (what D1 bills storage on); `/__meter` first asks each one a `SELECT 1`, so the size
 *   is the database's now, not as of its last query;
 * - subrequests: the Worker's and the objects' own `fetch` calls (model, tools, webhooks).
 *
 * `GET /__meter` answers the counts; `POST /__meter/reset` zeroes them.
 */

interface D1Meta {
  rows_read?: number;
  rows_written?: number;
  size_after?: number;
}

/** The D1 bindings a Worker of Relay's may have: the main database and the audit shards. */
const isD1Binding = (key: string | symbol) => typeof key === "string" && /^(DB|AUDIT_DB_\d+)$/.test(key);

function emptyMeter() {
  return {
    workerRequests: 0,
    /** Stub calls by namespace binding, and alarms by class: billed Durable Object requests. */
    doRequests: {} as Record<string, number>,
    alarms: {} as Record<string, number>,
    /** Milliseconds some method of the object was running, summed per class. */
    doActiveMs: {} as Record<string, number>,
    /** Objects that ran anything, per class. */
    objects: {} as Record<string, number>,
    sqlRowsRead: 0,
    sqlRowsWritten: 0,
    sqlRowsWrittenByTable: {} as Record<string, number>,
    setAlarms: 0,
    d1Queries: 0,
    d1RowsRead: 0,
    d1RowsWritten: 0,
    d1RowsWrittenByTable: {} as Record<string, number>,
    /** Bytes each D1 database holds, by binding, as of the last query it answered. */
    d1Bytes: {} as Record<string, number>,
    subrequests: {} as Record<string, number>,
  };
}
let meter = emptyMeter();
const add = (counts: Record<string, number>, key: string, n = 1) => {
  counts[key] = (counts[key] ?? 0) + n;
};

// ── Subrequests ───────────────────────────────────────────────────────────────
const realFetch = globalThis.fetch;
globalThis.fetch = ((input: RequestInfo | URL, init?: RequestInit) => {
  const url = new URL(input instanceof Request ? input.url : String(input));
  add(meter.subrequests, url.pathname.startsWith("/v1/chat") ? "model" : url.host);
  return realFetch(input, init);
}) as typeof fetch;

// ── D1 ──────────────────────────────────────────────────────────────────────
const REAL = Symbol("real statement");
type Metered = D1PreparedStatement & { [REAL]: D1PreparedStatement; query: string };

/** The table a statement writes (INSERT/UPDATE/DELETE), else its verb. */
function tableOf(query: string): string {
  const m = /^\s*(?:INSERT(?:\s+OR\s+\w+)?\s+INTO|UPDATE|DELETE\s+FROM)\s+(\w+)/i.exec(query);
  return m ? m[1]! : (/^\s*(\w+)/.exec(query)?.[1]?.toUpperCase() ?? "?");
}

function recordOn(binding: string, query: string, meta: D1Meta | undefined): void {
  meter.d1Queries++;
  if (meta?.size_after !== undefined) meter.d1Bytes[binding] = meta.size_after;
  meter.d1RowsRead += meta?.rows_read ?? 0;
  meter.d1RowsWritten += meta?.rows_written ?? 0;
  if (meta?.rows_written) add(meter.d1RowsWrittenByTable, tableOf(query), meta.rows_written);
}

function meteredStatement(binding: string, real: D1PreparedStatement, query: string): Metered {
  const statement = {
    [REAL]: real,
    query,
    bind: (...values: unknown[]) => meteredStatement(binding, real.bind(...values), query),
    async run() {
      const result = await real.run();
      recordOn(binding, query, result.meta);
      return result;
    },
    async all() {
      const result = await real.all();
      recordOn(binding, query, result.meta);
      return result;
    },
    async first(column?: string) {
      const result = await real.all<Record<string, unknown>>();
      recordOn(binding, query, result.meta);
      const row = result.results[0];
      if (row === undefined) return null;
      return column === undefined ? row : (row[column] ?? null);
    },
    async raw(options?: { columnNames?: boolean }) {
      meter.d1Queries++;
      return real.raw(options as { columnNames: true });
    },
  };
  return statement as unknown as Metered;
}

const databases = new WeakMap<D1Database, D1Database>();
function meteredDatabase(db: D1Database, binding: string): D1Database {
  let wrapped = databases.get(db);
  if (!wrapped) {
    wrapped = new Proxy(db, {
      get(target, key) {
        if (key === "prepare") return (query: string) => meteredStatement(binding, target.prepare(query), query);
        if (key === "batch")
          return async (statements: Metered[]) => {
            const results = await target.batch(statements.map((s) => s[REAL]));
            for (const [i, result] of results.entries()) recordOn(binding, statements[i]!.query, result.meta);
            return results;
          };
        const value = Reflect.get(target, key);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    databases.set(db, wrapped);
  }
  return wrapped;
}

// ── Durable Object stubs ───────────────────────────────────────────────────────
function meteredStub(stub: DurableObjectStub, binding: string): DurableObjectStub {
  return new Proxy(stub, {
    get(target, key) {
      const value = Reflect.get(target, key);
      // Never thenable; only methods are calls.
      if (key === "then" || typeof key === "symbol" || typeof value !== "function") return value;
      return (...args: unknown[]) => {
        add(meter.doRequests, binding);
        // Reflect.apply: on an RPC method, `.apply` would itself be an RPC property.
        return Reflect.apply(value as (...a: unknown[]) => unknown, target, args);
      };
    },
  });
}

const namespaces = new WeakMap<DurableObjectNamespace, DurableObjectNamespace>();
function meteredNamespace(namespace: DurableObjectNamespace, binding: string): DurableObjectNamespace {
  let wrapped = namespaces.get(namespace);
  if (!wrapped) {
    wrapped = new Proxy(namespace, {
      get(target, key) {
        const value = Reflect.get(target, key);
        if (key === "get" || key === "getByName")
          return (...args: unknown[]) =>
            meteredStub(Reflect.apply(value as (...a: unknown[]) => DurableObjectStub, target, args), binding);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    namespaces.set(namespace, wrapped);
  }
  return wrapped;
}

const isNamespace = (value: unknown): value is DurableObjectNamespace =>
  typeof value === "object" &&
  value !== null &&
  typeof (value as DurableObjectNamespace).idFromName === "function" &&
  typeof (value as DurableObjectNamespace).get === "function";

const envs = new WeakMap<object, Env>();
function meteredEnv(env: Env): Env {
  let wrapped = envs.get(env);
  if (!wrapped) {
    // A proxy, not a copy: the runtime's env does not spread (its bindings are not own enumerable values).
    wrapped = new Proxy(env, {
      get(target, key) {
        const value = Reflect.get(target, key);
        // A shard past the last bound is undefined: the code counts shards by probing for it.
        if (isD1Binding(key) && value !== undefined) return meteredDatabase(value as D1Database, key as string);
        return typeof key === "string" && isNamespace(value) ? meteredNamespace(value, key) : value;
      },
    });
    envs.set(env, wrapped);
  }
  return wrapped;
}

// ── Durable Objects ───────────────────────────────────────────────────────────
/** Every SQL cursor opened since the meter was last read; Relay reads each to its end at once. */
const cursors: [string, SqlStorageCursor<Record<string, SqlStorageValue>>][] = [];
let storagePatched = false;

/**
 * Counts the SQL cursors and alarms of every object in this isolate, on the storage's
 * prototypes: the runtime accepts no stand-in for `ctx` (its constructor checks the type),
 * and Relay's objects hold the real one.
 */
function meterStorage(ctx: DurableObjectState): void {
  if (storagePatched) return;
  storagePatched = true;
  const sqlProto = Object.getPrototypeOf(ctx.storage.sql) as SqlStorage;
  const exec = sqlProto.exec;
  sqlProto.exec = function (this: SqlStorage, ...args: Parameters<SqlStorage["exec"]>) {
    const cursor = exec.apply(this, args);
    cursors.push([args[0], cursor]);
    return cursor;
  } as SqlStorage["exec"];
  const storageProto = Object.getPrototypeOf(ctx.storage) as DurableObjectStorage;
  const setAlarm = storageProto.setAlarm;
  storageProto.setAlarm = function (this: DurableObjectStorage, ...args: Parameters<DurableObjectStorage["setAlarm"]>) {
    meter.setAlarms++;
    return setAlarm.apply(this, args);
  };
}

function settleCursors(): void {
  for (const [query, cursor] of cursors.splice(0)) {
    meter.sqlRowsRead += cursor.rowsRead;
    meter.sqlRowsWritten += cursor.rowsWritten;
    if (cursor.rowsWritten) add(meter.sqlRowsWrittenByTable, tableOf(query), cursor.rowsWritten);
  }
}

/** Per object: how many of its methods are running, and since when. */
const running = new WeakMap<object, { open: number; since: number }>();

function enter(instance: object, kind: string): void {
  let state = running.get(instance);
  if (!state) {
    state = { open: 0, since: 0 };
    running.set(instance, state);
    add(meter.objects, kind);
  }
  if (state.open++ === 0) state.since = Date.now();
}

function leave(instance: object, kind: string): void {
  const state = running.get(instance)!;
  if (--state.open === 0) add(meter.doActiveMs, kind, Date.now() - state.since);
}

type ObjectClass = new (...args: any[]) => object;

/** `Base` with every method of its own timed (the union per object) and its storage and bindings metered. */
function metered<T extends ObjectClass>(Base: T, kind: string): T {
  const Metered = class extends Base {
    constructor(...args: any[]) {
      const [ctx, env] = args as [DurableObjectState, Env];
      meterStorage(ctx);
      super(ctx, meteredEnv(env));
    }
  };
  for (const name of Object.getOwnPropertyNames(Base.prototype)) {
    const descriptor = Object.getOwnPropertyDescriptor(Base.prototype, name)!;
    if (name === "constructor" || typeof descriptor.value !== "function") continue;
    const method = descriptor.value as (...a: unknown[]) => unknown;
    Object.defineProperty(Metered.prototype, name, {
      ...descriptor,
      value(this: object, ...args: unknown[]) {
        if (name === "alarm") add(meter.alarms, kind);
        enter(this, kind);
        let result: unknown;
        try {
          result = method.apply(this, args);
        } catch (error) {
          leave(this, kind);
          throw error;
        }
        if (result instanceof Promise)
          return result.then(
            (value) => {
              leave(this, kind);
              return value;
            },
            (error) => {
              leave(this, kind);
              throw error;
            },
          );
        leave(this, kind);
        return result;
      },
    });
  }
  return Metered;
}

export * from "../../src/index";
export const SessionDO = metered(RelaySessionDO, "SessionDO");
export const AgentDO = metered(RelayAgentDO, "AgentDO");
export const CollaborationDO = metered(RelayCollaborationDO, "CollaborationDO");
export const RouterDO = metered(RelayRouterDO, "RouterDO");

/** The D1 bindings `env` has; probed by name, as the runtime's env lists none of its bindings. */
const d1Bindings = (env: Env) =>
  ["DB", ...Array.from({ length: 256 }, (_, i) => `AUDIT_DB_${i}`)].filter(
    (key) => Reflect.get(env, key) !== undefined,
  );

/** Each D1 database's size now: any query's `meta.size_after` carries it (not counted as a query). */
async function measureD1(env: Env): Promise<void> {
  for (const key of d1Bindings(env)) {
    const result = await (Reflect.get(env, key) as D1Database).prepare("SELECT 1").run();
    if (result.meta.size_after !== undefined) meter.d1Bytes[key] = result.meta.size_after;
  }
}

export default {
  async fetch(request: Request, env: Env, ctx: ExecutionContext): Promise<Response> {
    const url = new URL(request.url);
    if (url.pathname === "/__meter") {
      settleCursors();
      await measureD1(env);
      return Response.json(meter);
    }
    if (url.pathname === "/__meter/reset") {
      settleCursors();
      meter = emptyMeter();
      await measureD1(env);
      return Response.json({ reset: true });
    }
    meter.workerRequests++;
    return relay.fetch(request, meteredEnv(env), ctx);
  },
} satisfies ExportedHandler<Env>;
