import { writeAuditBatch } from "../audit/d1-store";
import { auditEvent } from "../audit/events";
import { SETTLE_MS, type ShardAssignment } from "../audit/shard-assignment";
import { copyPage, deletePage } from "../audit/shard-move";
import {
  type AssignmentChange,
  ensureAssignment,
  findAssignment,
  stepAssignment,
  unsettledTenants,
} from "../audit/shard-store";
import { err, ok, type Result } from "../errors";
import { heldAssignment, type ShardEnv, shardDatabase, shardDatabases } from "./tenant-shards";

/**
 * Moving a tenant to another shard (docs/operations.md, Shards): `startMove` enters the copy
 * phase, `advanceMove` does the phases' work a page at a time. Every step is stored before the
 * next begins, so a driver that stops anywhere — a crash, a deadline — is taken up by the next
 * call or the cron, from where the row says, and neither loses nor doubles a row. The phases
 * are ../audit/shard-assignment.ts.
 */

/** Pages one `advanceMove` does at most (each a D1 read and write); the next call goes on. */
export const MOVE_PAGES_PER_CALL = 50;

const OPERATOR = { actor: "operator", actor_type: "system" } as const;

async function record(db: D1Database, tenant: string, action: string, details: Record<string, unknown>) {
  await writeAuditBatch(db, [
    auditEvent({ tenant, session_id: null }, { action, actor: OPERATOR, details }, Date.now()),
  ]);
}

async function step(env: ShardEnv, from: ShardAssignment, change: AssignmentChange): Promise<ShardAssignment | null> {
  const next = await stepAssignment(env.DB, from, change, Date.now());
  if (next) heldAssignment(next);
  return next;
}

/**
 * Starts moving `tenant` to `target`, or answers the move already going there (a repeated call
 * resumes it). Already there: nothing to do.
 */
export async function startMove(env: ShardEnv, tenant: string, target: number): Promise<Result<ShardAssignment>> {
  const shards = shardDatabases(env).length;
  if (!Number.isInteger(target) || target < 0 || target >= shards)
    return err("UNKNOWN_SHARD", `No shard ${target}: the deployment binds ${shards} (0 to ${shards - 1}).`, {
      shard: target,
      shards,
    });
  const now = Date.now();
  const current = await ensureAssignment(env.DB, tenant, shards, now);
  const goingThere =
    (current.phase === "settled" && current.shard === target) ||
    (current.phase === "copying" && current.other === target) ||
    (current.phase === "cleaning" && current.shard === target);
  if (goingThere) return ok(current);
  if (current.phase !== "settled")
    return err(
      "SHARD_MOVE_IN_PROGRESS",
      `Tenant '${tenant}' is moving to shard ${current.phase === "copying" ? current.other : current.shard}; that move finishes first.`,
      { tenant, phase: current.phase },
    );
  const started = await step(env, current, {
    shard: current.shard,
    phase: "copying",
    other: target,
    cursor: { table: 0, after: null },
    not_before: now + SETTLE_MS,
  });
  if (!started) return startMove(env, tenant, target);
  // In the source, before the copy: the record travels with the tenant's rows.
  await record(shardDatabase(env, current.shard), tenant, "tenant.shard_move_started", {
    from: current.shard,
    to: target,
  });
  return ok(started);
}

/**
 * Does the move's work that is due, up to `pages` pages: the tenant's assignment after it. A
 * phase still waiting for every isolate (`not_before`) is left as it is.
 */
export async function advanceMove(
  env: ShardEnv,
  tenant: string,
  pages = MOVE_PAGES_PER_CALL,
): Promise<ShardAssignment | null> {
  let current = await findAssignment(env.DB, tenant);
  for (let done = 0; current && current.phase !== "settled" && done < pages; done++) {
    if (Date.now() < current.not_before) break;
    const next: ShardAssignment | null =
      current.phase === "copying" ? await copyStep(env, current) : await cleanStep(env, current);
    // Another driver stepped first: read where it left the row.
    current = next ?? (await findAssignment(env.DB, tenant));
  }
  return current;
}

async function copyStep(env: ShardEnv, a: ShardAssignment): Promise<ShardAssignment | null> {
  const source = a.shard;
  const target = a.other!;
  const cursor = await copyPage(shardDatabase(env, source), shardDatabase(env, target), a.tenant, a.cursor!);
  if (cursor) return step(env, a, { shard: source, phase: "copying", other: target, cursor, not_before: a.not_before });
  const switched = await step(env, a, {
    shard: target,
    phase: "cleaning",
    other: source,
    cursor: { table: 0, after: null },
    not_before: Date.now() + SETTLE_MS,
  });
  if (switched) await record(shardDatabase(env, target), a.tenant, "tenant.shard_moved", { from: source, to: target });
  return switched;
}

async function cleanStep(env: ShardEnv, a: ShardAssignment): Promise<ShardAssignment | null> {
  const table = await deletePage(shardDatabase(env, a.other!), a.tenant, a.cursor?.table ?? 0);
  if (table !== null)
    return step(env, a, {
      shard: a.shard,
      phase: "cleaning",
      other: a.other,
      cursor: { table, after: null },
      not_before: a.not_before,
    });
  return step(env, a, { shard: a.shard, phase: "settled", other: null, cursor: null, not_before: 0 });
}

/** The cron's part: every move under way goes on as far as one call takes it. */
export async function driveMoves(env: ShardEnv): Promise<void> {
  for (const tenant of await unsettledTenants(env.DB, 100)) await advanceMove(env, tenant);
}
