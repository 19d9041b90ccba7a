import { describe, expect, it } from "vitest";
import {
  COLLABORATION_MIGRATIONS,
  COLLABORATION_SCHEMA,
} from "../../../durable-objects/collaboration/collaboration-store";
import { Outbox } from "../../../durable-objects/shared/outbox";
import { migrate, type Sql } from "../../../durable-objects/shared/sql";
import { onScratchObject, rowlessTables, shapeOf } from "../schema-shape";

/**
 * A new collaboration object is made with COLLABORATION_SCHEMA in one step; one made by v1
 * is migrated. Both end with the same schema, and the older one keeps its rows.
 */

const LATEST = COLLABORATION_MIGRATIONS.at(-1)!.version;

/** `fn` over an empty scratch object of this file's own. */
const scratch = <R>(fn: (sql: Sql, storage: DurableObjectStorage) => R) => onScratchObject("collaboration-schema", fn);

describe("the collaboration object's schema", () => {
  it("made new in one step equals every migration applied in turn, with fewer statements", async () => {
    const stepwise = await scratch((sql, storage) => {
      migrate(storage, sql, COLLABORATION_MIGRATIONS);
      return shapeOf(sql);
    });
    const direct = await scratch((sql, storage) => {
      migrate(storage, sql, COLLABORATION_MIGRATIONS, COLLABORATION_SCHEMA);
      return { shape: shapeOf(sql), rowless: rowlessTables(sql) };
    });
    expect(direct.shape).toEqual(stepwise);
    expect(direct).toMatchObject({ shape: { version: LATEST }, rowless: ["audit", "timers"] });
    expect(COLLABORATION_SCHEMA.statements.length).toBeLessThan(
      COLLABORATION_MIGRATIONS.flatMap((m) => m.statements).length,
    );
  });

  it("v2: an object made by v1 keeps its audit rows, timers and messages, and the next message follows the last", async () => {
    const upgraded = await scratch((sql, storage) => {
      migrate(
        storage,
        sql,
        COLLABORATION_MIGRATIONS.filter((m) => m.version === 1),
      );
      for (const [id, flushed] of [
        ["01AAAAAAAAAAAAAAAAAAAAAAAA", 1],
        ["01BBBBBBBBBBBBBBBBBBBBBBBB", 0],
      ] as const)
        sql`INSERT INTO audit (id, at, tenant, action, actor, actor_type, details, flushed)
            VALUES (${id}, '2026-01-01T00:00:00.000Z', 'alpha', 'collaboration.message', 'triage', 'agent', '{}', ${flushed})`;
      sql`INSERT INTO timers (id, key, kind, due_at) VALUES ('t1', 'k1', 'outbox.flush', 1)`;
      for (const id of ["m1", "m2"]) sql`INSERT INTO messages (id, record) VALUES (${id}, '{}')`;
      const before = {
        audit: sql`SELECT * FROM audit ORDER BY id`,
        timers: sql`SELECT * FROM timers ORDER BY id`,
      };
      const version = migrate(storage, sql, COLLABORATION_MIGRATIONS, COLLABORATION_SCHEMA);
      sql`INSERT INTO messages (id, record) VALUES ('m3', '{}')`;
      return {
        version,
        same: {
          audit: sql`SELECT * FROM audit ORDER BY id`,
          timers: sql`SELECT * FROM timers ORDER BY id`,
        },
        before,
        pending: new Outbox(sql).pendingCount(),
        seqs: sql<{ id: string; seq: number }>`SELECT id, seq FROM messages ORDER BY seq`,
        shape: shapeOf(sql),
      };
    });
    expect(upgraded.same).toEqual(upgraded.before);
    expect(upgraded).toMatchObject({
      version: LATEST,
      pending: 1,
      seqs: [
        { id: "m1", seq: 1 },
        { id: "m2", seq: 2 },
        { id: "m3", seq: 3 },
      ],
    });
    const fresh = await scratch((sql, storage) => {
      migrate(storage, sql, COLLABORATION_MIGRATIONS, COLLABORATION_SCHEMA);
      return shapeOf(sql);
    });
    expect(upgraded.shape).toEqual(fresh);
  });
});
