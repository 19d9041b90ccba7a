import * as z from "zod";

/**
 * Which shard holds a tenant's data, and a move to another (docs/scaling.md, Shards). Pure:
 * the row's shape, where a new tenant goes, where reads and writes go in each phase, and the
 * phases' order. The registry queries are ./shard-store.ts; the move's work ./shard-move.ts.
 *
 * A move runs through three phases, each waiting SETTLE_MS before its work so that every
 * isolate's copy of the assignment has caught up:
 *
 * | phase      | shard  | other  | reads from | writes go to          | its work                    |
 * | ---------- | ------ | ------ | ---------- | --------------------- | --------------------------- |
 * | `settled`  | home   | —      | home       | home                  | —                           |
 * | `copying`  | source | target | source     | nowhere: outboxes wait | copy every row to the target |
 * | `cleaning` | target | source | target     | target                | delete the source's rows    |
 *
 * Writes wait while rows are copied, so the copy is exact; the wait is an outbox's ordinary
 * retry, so nothing is lost. Reads stay on a complete copy throughout.
 */

export const SHARD_PHASES = ["settled", "copying", "cleaning"] as const;
export type ShardPhase = (typeof SHARD_PHASES)[number];

/** How long an isolate trusts its copy of a tenant's assignment. */
export const ASSIGNMENT_TTL_MS = 10_000;
/**
 * How long a phase waits before its work: past every isolate's copy of the previous phase
 * (the TTL) and past a write that read it just before (a D1 batch's deadline is well under).
 */
export const SETTLE_MS = 3 * ASSIGNMENT_TTL_MS;

/** Where a copy or a clean-up stands: the table (index in SHARD_TABLES) and the last key done. */
export const MoveCursor = z.object({
  table: z.number().int().min(0),
  after: z.array(z.union([z.string(), z.number()])).nullable(),
});
export type MoveCursor = z.infer<typeof MoveCursor>;

/** A tenant's row in `tenant_shards` (migration 0015), parsed on read. */
export const ShardAssignment = z.object({
  tenant: z.string(),
  shard: z.number().int().min(0),
  phase: z.enum(SHARD_PHASES),
  other: z.number().int().min(0).nullable(),
  cursor: z
    .string()
    .nullable()
    .transform((text) => (text === null ? null : MoveCursor.parse(JSON.parse(text)))),
  not_before: z.number().int(),
  version: z.number().int(),
  updated_at: z.string(),
});
export type ShardAssignment = z.infer<typeof ShardAssignment>;

/** The answer of the operator's shard routes. */
export const ShardAssignmentView = z
  .object({
    tenant: z.string(),
    shard: z.number().int().describe("The shard reads go to now."),
    phase: z.enum(SHARD_PHASES).describe("`settled`, or the move's phase (docs/operations.md, Shards)."),
    moving_to: z.number().int().nullable().describe("While copying: the shard the tenant is moving to."),
    cleaning: z.number().int().nullable().describe("While cleaning: the shard the tenant's old rows are deleted from."),
    next_step_at: z.string().nullable().describe("When the phase's work may go on (every isolate has seen it)."),
  })
  .describe("A tenant's shard, and the move under way if any.");
export type ShardAssignmentView = z.infer<typeof ShardAssignmentView>;

export function assignmentView(a: ShardAssignment): ShardAssignmentView {
  return {
    tenant: a.tenant,
    shard: a.shard,
    phase: a.phase,
    moving_to: a.phase === "copying" ? a.other : null,
    cleaning: a.phase === "cleaning" ? a.other : null,
    next_step_at: a.phase === "settled" ? null : new Date(a.not_before).toISOString(),
  };
}

/**
 * A new tenant's shard: FNV-1a of its name over the shards bound now. Stored on first use and
 * never recomputed, so shards added later take new tenants only; every isolate computes the
 * same, so two first uses at once agree.
 */
export function homeShard(tenant: string, shards: number): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < tenant.length; i++) {
    hash ^= tenant.charCodeAt(i);
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash % shards;
}

/** The shard a tenant's reads go to. */
export const readShard = (a: ShardAssignment): number => a.shard;

/** The shard a tenant's writes go to, or null while its rows are being copied (writes wait). */
export const writeShard = (a: ShardAssignment): number | null => (a.phase === "copying" ? null : a.shard);
