import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { RouteHistory } from "../../../durable-objects/router/route-history";
import { ROUTER_MIGRATIONS, routerTables } from "../../../durable-objects/router/schema";
import { ShardStore } from "../../../durable-objects/router/shard-store";
import { createSql, migrate, schemaVersion } from "../../../durable-objects/shared/sql";
import { routerRpc } from "../../../src/rpc/stubs";
import { HistorySelection, type RoutedInput } from "../../../src/schemas/replay";
import { team } from "../../routing/router-fixtures";

let counter = 0;
const fresh = () => env.ROUTERS.get(env.ROUTERS.idFromName(`history-${++counter}`));

const row = (n: number, agent = "billing"): RoutedInput => ({
  at: new Date(Date.UTC(2026, 10, 1) + n * 60_000).toISOString(),
  session_id: `ses_${n}`,
  input: `input ${n}`,
  agent,
  method: "rule",
  confidence: 90,
  registry_version: 1,
});
const select = (s: unknown) => HistorySelection.parse(s);

describe("the router object's routing history", () => {
  it("keeps the newest rows only, dropping the oldest as each one comes", async () => {
    const kept = await runInDurableObject(fresh(), (_instance, state) => {
      const { sql, schema } = routerTables(state.storage);
      const history = new RouteHistory(state.storage, sql, schema);
      const held = [1, 2, 3, 4, 5].map((n) => history.record(row(n), 3));
      return { held, rows: history.select(select({ limit: 10 })).map((r) => r.session_id) };
    });
    expect(kept).toEqual({ held: [1, 2, 3, 3, 3], rows: ["ses_3", "ses_4", "ses_5"] });
  });

  it("selects the newest N, oldest first, within a time range and of one agent", async () => {
    const rows = await runInDurableObject(fresh(), (_instance, state) => {
      const { sql, schema } = routerTables(state.storage);
      const history = new RouteHistory(state.storage, sql, schema);
      for (let n = 1; n <= 6; n++) history.record(row(n, n % 2 === 0 ? "sales" : "billing"), 100);
      const ids = (s: unknown) => history.select(select(s)).map((r) => r.session_id);
      return {
        newest: ids({ limit: 2 }),
        range: ids({ since: row(2).at, until: row(4).at }),
        agent: ids({ agent: "sales", limit: 2 }),
        whole: history.select(select({ limit: 1 }))[0],
      };
    });
    expect(rows).toEqual({
      newest: ["ses_5", "ses_6"],
      range: ["ses_2", "ses_3", "ses_4"],
      agent: ["ses_4", "ses_6"],
      whole: row(6, "sales"),
    });
  });

  it("over RPC: records, reads and clears; a fresh object reads and clears nothing, making no table", async () => {
    const stub = fresh();
    const made = () => runInDurableObject(stub, (_instance, state) => schemaVersion(createSql(state.storage)));
    const rpc = routerRpc(env, `history-${counter}`);
    expect(await rpc.routeHistory(select({}))).toEqual({ ok: true, value: [] });
    expect(await rpc.clearRouteHistory()).toEqual({ ok: true, value: { deleted: 0 } });
    expect(await made()).toBe(0);
    expect(await rpc.recordRoute(row(1))).toEqual({ ok: true, value: { held: 1 } });
    expect(await rpc.clearRouteHistory()).toEqual({ ok: true, value: { deleted: 1 } });
    expect(await rpc.routeHistory(select({}))).toEqual({ ok: true, value: [] });
  });

  it("a history cleared before the object's first build still records after it", async () => {
    const tenant = `history-${++counter}`;
    const rpc = routerRpc(env, tenant);
    expect(await rpc.clearRouteHistory()).toEqual({ ok: true, value: { deleted: 0 } });
    // The first registry write makes the object's tables, through the shards' side.
    expect((await rpc.putAgent(tenant, team[0]!)).ok).toBe(true);
    expect(await rpc.recordRoute(row(1))).toEqual({ ok: true, value: { held: 1 } });
  });

  it("an object of schema version 1 (shards only) gains the table and keeps its version", async () => {
    const version = { head: { version: 3, stamp: "s" }, version: 3 };
    const out = await runInDurableObject(fresh(), (_instance, state) => {
      const sql = createSql(state.storage);
      migrate(state.storage, sql, ROUTER_MIGRATIONS.slice(0, 1));
      sql`INSERT INTO router_version (id, data) VALUES (1, ${JSON.stringify(version)})`;
      const before = schemaVersion(createSql(state.storage));
      const tables = routerTables(state.storage);
      const history = new RouteHistory(state.storage, tables.sql, tables.schema);
      history.record(row(1), 10);
      return {
        before,
        after: schemaVersion(createSql(state.storage)),
        kept: new ShardStore(state.storage, tables.sql, tables.schema).version(),
        rows: history.select(select({})).length,
      };
    });
    expect(out).toEqual({ before: 1, after: ROUTER_MIGRATIONS.at(-1)!.version, kept: version, rows: 1 });
  });
});
