import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeAll, describe, expect, it } from "vitest";
import { copyPage, deletePage, tenantRowCounts } from "../../src/audit/shard-move";
import { findAssignment } from "../../src/audit/shard-store";
import worker from "../../src/index";
import { shardDatabase } from "../../src/services/tenant-shards";
import { advanceClock, drainDue, sessionStub } from "../durable-objects/helpers";
import { ALPHA_KEY, call, OPERATOR_KEY } from "./helpers";

/**
 * Tenants on D1 shards (docs/scaling.md, Shards): wrangler.toml binds two, alpha's home is
 * shard 1 and gamma's shard 0, so each sees only its own lists and audit; a tenant moved while
 * its sessions keep working, with a crash between the copy and the switch, loses and doubles
 * nothing; the operator's route refuses what it cannot do.
 */

const GAMMA_KEY = "gamma-test-key";
const operator = { key: OPERATOR_KEY };

beforeAll(async () => {
  for (const key of [ALPHA_KEY, GAMMA_KEY]) {
    await call("PUT", "/v1/agents/desk", { name: "desk", handoffs: ["clerk"] }, { key });
    await call("PUT", "/v1/agents/clerk", { name: "clerk", handoffs: ["desk"] }, { key });
  }
});

/** A session of the tenant with one handoff; its id. */
async function sessionWithHandoff(key: string): Promise<string> {
  const created = await call("POST", "/v1/sessions", { agent: "desk", ttl_s: 86_400 }, { key });
  expect(created.status).toBe(201);
  const handed = await call(
    "POST",
    "/v1/handoffs",
    { session_id: created.json.id, source_agent: "desk", target_agent: "clerk", reason: "a clerk's question" },
    { key },
  );
  expect(handed.status).toBe(200);
  return created.json.id;
}

/** Runs the session's flushes, past any backoff a refused flush left (the object's clock moves). */
async function flush(tenant: string, id: string): Promise<void> {
  const { stub } = sessionStub(tenant, id);
  await advanceClock(stub, 120_000);
  await drainDue(stub);
}

/** Every page of a list, ids in order. */
async function listed(path: string, key: string): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const sep = path.includes("?") ? "&" : "?";
    const res = await call("GET", `${path}${sep}limit=200${cursor ? `&cursor=${cursor}` : ""}`, undefined, { key });
    expect(res.status).toBe(200);
    ids.push(...res.json.items.map((item: { id: string }) => item.id));
    cursor = res.json.next_cursor;
  } while (cursor !== null);
  return ids;
}

/** The session's own audit trail (its object keeps every record): what D1 must hold of it. */
async function ownAudit(id: string, key: string): Promise<string[]> {
  return (await call("GET", `/v1/sessions/${id}/audit?limit=500`, undefined, { key })).json.items.map(
    (r: { id: string }) => r.id,
  );
}

/** The settle wait of the move's phase passes (every isolate has seen it). */
const settled = (tenant: string) =>
  env.DB.prepare("UPDATE tenant_shards SET not_before = 0 WHERE tenant = ?1").bind(tenant).run();

const moveTo = (tenant: string, shard: number) =>
  call("PUT", `/v1/operator/tenants/${tenant}/shard`, { shard }, operator);

describe("two tenants on two shards", () => {
  it("each sees only its own sessions, audit and handoffs, and each shard holds only its tenant's rows", async () => {
    expect((await call("GET", "/v1/operator/tenants/alpha/shard", undefined, operator)).json).toMatchObject({
      shard: 1,
      phase: "settled",
    });
    expect((await call("GET", "/v1/operator/tenants/gamma/shard", undefined, operator)).json.shard).toBe(0);
    const alpha = await sessionWithHandoff(ALPHA_KEY);
    const gamma = await sessionWithHandoff(GAMMA_KEY);
    await flush("alpha", alpha);
    await flush("gamma", gamma);

    expect(await listed("/v1/sessions", ALPHA_KEY)).toContain(alpha);
    expect(await listed("/v1/sessions", ALPHA_KEY)).not.toContain(gamma);
    expect(await listed("/v1/sessions", GAMMA_KEY)).toEqual([gamma]);
    const gammaAudit = await listed("/v1/audit", GAMMA_KEY);
    expect(gammaAudit).toEqual(expect.arrayContaining(await ownAudit(gamma, GAMMA_KEY)));
    expect(gammaAudit).not.toEqual(expect.arrayContaining(await ownAudit(alpha, ALPHA_KEY)));
    expect(await listed("/v1/agents/desk/handoffs", GAMMA_KEY)).toHaveLength(1);

    const [zero, one] = [shardDatabase(env, 0), shardDatabase(env, 1)];
    expect((await tenantRowCounts(one, "gamma")).audit_log).toBe(0);
    expect((await tenantRowCounts(zero, "alpha")).audit_log).toBe(0);
    expect((await tenantRowCounts(zero, "gamma")).sessions).toBe(1);
    // The registry database holds no tenant's history.
    expect(await env.DB.prepare("SELECT COUNT(*) AS n FROM audit_log").first("n")).toBe(0);
    const shards = (await call("GET", "/v1/operator/shards", undefined, operator)).json.shards;
    expect(shards.map((s: { shard: number }) => s.shard)).toEqual([0, 1]);
  });
});

describe("moving a tenant", () => {
  it("loses and doubles nothing while its sessions go on, with a crash between the copy and the switch", async () => {
    const before: string[] = [];
    for (let i = 0; i < 4; i++) before.push(await sessionWithHandoff(GAMMA_KEY));
    for (const id of before) await flush("gamma", id);

    const started = await moveTo("gamma", 1);
    expect(started.status).toBe(202);
    expect(started.json).toMatchObject({ shard: 0, phase: "copying", moving_to: 1 });
    expect(Number(started.headers.get("Retry-After"))).toBeGreaterThan(0);

    // Traffic while the rows are copied: its records wait in the sessions' outboxes.
    const during: string[] = [];
    for (let i = 0; i < 3; i++) during.push(await sessionWithHandoff(GAMMA_KEY));
    for (const id of during) await flush("gamma", id);
    expect((await tenantRowCounts(shardDatabase(env, 0), "gamma")).sessions).toBe(5);

    // The copy runs to its end, then the driver dies before it stores the switch.
    await settled("gamma");
    const copying = (await findAssignment(env.DB, "gamma"))!;
    let cursor = copying.cursor;
    while (cursor) cursor = await copyPage(shardDatabase(env, 0), shardDatabase(env, 1), "gamma", cursor);
    expect(await findAssignment(env.DB, "gamma")).toMatchObject({ shard: 0, phase: "copying" });

    // More traffic; then the operator calls again: the copy is taken up and the tenant switched.
    during.push(await sessionWithHandoff(GAMMA_KEY));
    const switched = await moveTo("gamma", 1);
    expect(switched.status).toBe(202);
    expect(switched.json).toMatchObject({ shard: 1, phase: "cleaning", cleaning: 0 });

    // Half a clean-up, and a crash again; the cron finishes it.
    await settled("gamma");
    expect(await deletePage(shardDatabase(env, 0), "gamma", 0)).toBe(0);
    const ctx = createExecutionContext();
    await worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "17 * * * *" }), env, ctx);
    await waitOnExecutionContext(ctx);
    expect(await findAssignment(env.DB, "gamma")).toMatchObject({ shard: 1, phase: "settled", other: null });
    expect((await moveTo("gamma", 1)).status).toBe(200);

    // The waiting records reach the new shard.
    const all = [...before, ...during];
    for (const id of all) await flush("gamma", id);
    const old = await tenantRowCounts(shardDatabase(env, 0), "gamma");
    expect(Object.values(old).every((n) => n === 0)).toBe(true);

    const sessions = await listed("/v1/sessions", GAMMA_KEY);
    expect(sessions.filter((id) => all.includes(id)).sort()).toEqual([...all].sort());
    expect(new Set(sessions).size).toBe(sessions.length);
    const audit = await listed("/v1/audit", GAMMA_KEY);
    expect(new Set(audit).size).toBe(audit.length);
    for (const id of all) {
      const own = await ownAudit(id, GAMMA_KEY);
      expect(audit).toEqual(expect.arrayContaining(own));
      const row = await shardDatabase(env, 1)
        .prepare("SELECT handoff_count FROM sessions WHERE tenant = 'gamma' AND id = ?1")
        .bind(id)
        .first<number>("handoff_count");
      expect(row).toBe(1);
    }
    expect(await listed("/v1/agents/desk/handoffs", GAMMA_KEY)).toHaveLength(1 + all.length);
    const actions = (await call("GET", "/v1/audit?action=tenant.shard_moved", undefined, { key: GAMMA_KEY })).json;
    expect(actions.items.map((r: { details: unknown }) => r.details)).toEqual([{ from: 0, to: 1 }]);
  });

  it("refuses a shard the deployment does not bind, another move under way, and a tenant it does not know", async () => {
    const unknown = await moveTo("alpha", 2);
    expect(unknown.status).toBe(400);
    expect(unknown.json.error).toMatchObject({ code: "UNKNOWN_SHARD", details: { shard: 2, shards: 2 } });
    expect(await findAssignment(env.DB, "alpha")).toMatchObject({ shard: 1, phase: "settled" });

    expect((await moveTo("alpha", 0)).status).toBe(202);
    const other = await moveTo("alpha", 1);
    expect(other.status).toBe(409);
    expect(other.json.error.code).toBe("SHARD_MOVE_IN_PROGRESS");

    expect((await moveTo("nobody", 0)).json.error.code).toBe("TENANT_NOT_FOUND");
    expect((await call("PUT", "/v1/operator/tenants/alpha/shard", { shard: -1 }, operator)).json.error.code).toBe(
      "VALIDATION_FAILED",
    );
    expect((await call("PUT", "/v1/operator/tenants/alpha/shard", { shard: 0 })).status).toBe(401);
  });
});
