import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import { createSql, migrate } from "../../../durable-objects/shared/sql";
import {
  combineHandlers,
  TIMERS_DDL,
  type TimerRow,
  Timers,
  thrownBackoffMs,
} from "../../../durable-objects/shared/timers";
import { spyOnConsoleError } from "../../console-spy";
import { agentStub } from "../helpers";

// Far in the future, so the real alarm these timers arm never fires during the test.
const T = Date.now() + 24 * 3_600_000;
let counter = 0;

/** Runs `fn` with a Timers over a scratch object's storage and a clock the test moves. */
async function withTimers<R>(
  fn: (timers: Timers, clock: { now: number }, storage: DurableObjectStorage) => Promise<R> | R,
): Promise<R> {
  return runInDurableObject(agentStub("timer-tests", `scratch-${++counter}`).stub, async (_instance, state) => {
    const sql = createSql(state.storage);
    migrate(state.storage, sql, [{ version: 1, statements: TIMERS_DDL }]);
    const clock = { now: T };
    return fn(new Timers(state.storage, sql, () => clock.now), clock, state.storage);
  });
}

describe("Timers", () => {
  it("arms the one alarm at the earliest due time across kinds", async () => {
    const result = await withTimers(async (timers, _clock, storage) => {
      timers.schedule("session.expire", T + 5_000, null);
      timers.schedule("lease.expire", T + 1_000, { lease_id: "l1" });
      await timers.arm();
      return { alarm: await storage.getAlarm(), kinds: timers.list().map((t) => t.kind) };
    });
    expect(result).toEqual({ alarm: T + 1_000, kinds: ["lease.expire", "session.expire"] });
  });

  it("runs only due timers, through the handler of their kind, then re-arms at the next", async () => {
    const result = await withTimers(async (timers, clock, storage) => {
      const ran: string[] = [];
      timers.schedule("lease.expire", T + 1_000, { lease_id: "l1" });
      timers.schedule("session.expire", T + 5_000, null);
      clock.now = T + 1_000;
      const report = await timers.run({
        "lease.expire": (t) => {
          ran.push(`lease:${(t.payload as { lease_id: string }).lease_id}`);
          return { type: "done" };
        },
        "session.expire": () => {
          ran.push("expire");
          return { type: "done" };
        },
      });
      return { ran, report, alarm: await storage.getAlarm(), left: timers.list().map((t) => t.kind) };
    });
    expect(result).toEqual({
      ran: ["lease:l1"],
      report: { ran: 1, failed: 0, destroyed: false },
      alarm: T + 5_000,
      left: ["session.expire"],
    });
  });

  it("replaces a keyed timer, or keeps it with ifExists: keep", async () => {
    const result = await withTimers((timers) => {
      timers.schedule("session.expire", T + 1_000, null, { key: "k" });
      timers.schedule("session.expire", T + 9_000, null, { key: "k" });
      const replaced = timers.get("k")!.due_at;
      timers.schedule("session.expire", T + 2_000, null, { key: "k", ifExists: "keep" });
      return { replaced, kept: timers.get("k")!.due_at, count: timers.list().length };
    });
    expect(result).toEqual({ replaced: T + 9_000, kept: T + 9_000, count: 1 });
  });

  it("rewrites a keyed timer in place, keeping its id, unless its handler is running", async () => {
    const result = await withTimers(async (timers, clock) => {
      const first = timers.schedule("session.expire", T + 1_000, null, { key: "k" });
      const rewritten = timers.schedule("session.expire", T + 9_000, null, { key: "k" });
      timers.schedule("session.purge", T, null, { key: "p" });
      clock.now = T;
      let during: string | null = null;
      await timers.run({
        "session.purge": () => {
          during = timers.schedule("session.purge", T + 5_000, null, { key: "p" });
          return { type: "done" };
        },
      });
      return { first, rewritten, during, ran: timers.get("p")?.id, count: timers.list().length };
    });
    expect(result.rewritten).toBe(result.first);
    // The purge handler's own key got a new id, which its "done" (by the old id) left standing.
    expect(result.during).not.toBeNull();
    expect(result).toMatchObject({ ran: result.during, count: 2 });
  });

  it("with ifExists: earliest, keeps an earlier timer not yet due and moves any other", async () => {
    const result = await withTimers((timers, clock) => {
      timers.schedule("session.expire", T + 1_000, null, { key: "e" });
      const kept = timers.schedule("session.expire", T + 5_000, null, { key: "e", ifExists: "earliest" });
      const afterKeep = timers.get("e")!.due_at;
      timers.schedule("session.expire", T + 500, null, { key: "e", ifExists: "earliest" });
      const movedEarlier = timers.get("e")!.due_at;
      clock.now = T + 500;
      timers.schedule("session.expire", T + 9_000, null, { key: "e", ifExists: "earliest" });
      const dueReplaced = timers.get("e")!.due_at;
      timers.schedule("session.expire", T + 2_000, null, { key: "fresh", ifExists: "earliest" });
      return { kept, afterKeep, movedEarlier, dueReplaced, fresh: timers.get("fresh")!.due_at };
    });
    expect(result).toEqual({
      kept: null,
      afterKeep: T + 1_000,
      movedEarlier: T + 500,
      dueReplaced: T + 9_000,
      fresh: T + 2_000,
    });
  });

  it("keeps the alarm at the earliest timer through adds, cancels, replacements and runs", async () => {
    const result = await withTimers(async (timers, clock, storage) => {
      const alarms: (number | null)[] = [];
      const step = async () => {
        await timers.arm();
        alarms.push(await storage.getAlarm());
      };
      timers.schedule("session.expire", T + 3_000, null, { key: "a", ifExists: "keep" });
      await step();
      timers.schedule("session.expire", T + 1_000, null, { key: "b", ifExists: "keep" });
      await step();
      timers.schedule("session.expire", T + 2_000, null, { key: "c" });
      await step();
      timers.cancel("b");
      await step();
      timers.schedule("session.expire", T + 4_000, null, { key: "c" });
      await step();
      clock.now = T + 3_000;
      await timers.run({ "session.expire": () => ({ type: "done" }) });
      alarms.push(await storage.getAlarm());
      timers.cancel("c");
      await step();
      return alarms;
    });
    expect(result).toEqual([T + 3_000, T + 1_000, T + 1_000, T + 2_000, T + 3_000, T + 4_000, null]);
  });

  it("cancels by key and clears the alarm when nothing is left", async () => {
    const result = await withTimers(async (timers, _clock, storage) => {
      timers.schedule("session.expire", T + 1_000, null, { key: "lease:1" });
      await timers.arm();
      const armed = await storage.getAlarm();
      const cancelled = [timers.cancel("lease:1"), timers.cancel("lease:1")];
      await timers.arm();
      return { armed, cancelled, alarm: await storage.getAlarm() };
    });
    expect(result).toEqual({ armed: T + 1_000, cancelled: [true, false], alarm: null });
  });

  it("cancels a key it knows is gone without a statement, and a key scheduled again is cancelled for real", async () => {
    const result = await withTimers(async (timers) => {
      timers.schedule("session.expire", T + 1_000, null, { key: "expire" });
      const first = timers.cancel("expire");
      // Had the row come back behind the instance's back, a known-absent key would not see it:
      // only writes through the instance make a key present again.
      const again = timers.cancel("expire");
      timers.schedule("session.expire", T + 2_000, null, { key: "expire" });
      const rescheduled = timers.cancel("expire");
      return { first, again, rescheduled, left: timers.list().length };
    });
    expect(result).toEqual({ first: true, again: false, rescheduled: true, left: 0 });
  });

  it("forgets which keys are gone with the rest of what it knows", async () => {
    const result = await withTimers(async (timers, _clock, storage) => {
      timers.cancel("expire");
      // A write the instance did not make (a restored or rolled-back table), then forget().
      storage.sql.exec(
        "INSERT INTO timers (id, key, kind, due_at) VALUES ('outside', 'expire', 'session.expire', ?)",
        T,
      );
      timers.forget();
      return { cancelled: timers.cancel("expire"), left: timers.list().length };
    });
    expect(result).toEqual({ cancelled: true, left: 0 });
  });

  it("turns a throwing handler into a retry with backoff, logs the error and never throws itself", async () => {
    const errors = spyOnConsoleError();
    const result = await withTimers(async (timers, clock) => {
      timers.schedule("outbox.flush", T, null, { key: "f" });
      const report = await timers.run({
        "outbox.flush": () => {
          throw new Error("boom");
        },
      });
      const first = timers.get("f")!;
      clock.now = first.due_at;
      await timers.run({ "outbox.flush": () => Promise.reject(new Error("boom again")) });
      return { report, first, second: timers.get("f")! };
    });
    expect(result.report).toEqual({ ran: 1, failed: 1, destroyed: false });
    expect(result.first).toMatchObject({ attempts: 1, due_at: T + thrownBackoffMs(0), last_error: "Error: boom" });
    expect(result.second).toMatchObject({
      attempts: 2,
      due_at: result.first.due_at + thrownBackoffMs(1),
      last_error: "Error: boom again",
    });
    expect(errors.mock.calls.map(([text, error]) => [text, (error as Error).message])).toEqual([
      [`timer ${result.first.id} (outbox.flush) threw`, "boom"],
      [`timer ${result.first.id} (outbox.flush) threw`, "boom again"],
    ]);
  });

  it("applies again, retry and destroyed outcomes", async () => {
    const result = await withTimers(async (timers, clock) => {
      timers.schedule("outbox.flush", T, null, { key: "a" });
      await timers.run({ "outbox.flush": () => ({ type: "retry", at: T + 50, error: "x" }) });
      const retried = timers.get("a")!;
      await timers.run({ "outbox.flush": () => ({ type: "again", at: T + 1 }) });
      const notDue = timers.get("a")!;
      clock.now = T + 50;
      await timers.run({ "outbox.flush": () => ({ type: "again", at: T + 60 }) });
      const again = timers.get("a")!;
      timers.schedule("outbox.flush", T, null, { key: "b" });
      const report = await timers.run({ "outbox.flush": () => ({ type: "destroyed" }) });
      return { retried, notDue, again, report, b: timers.get("b") };
    });
    expect(result.retried).toMatchObject({ attempts: 1, due_at: T + 50, last_error: "x" });
    expect(result.notDue).toMatchObject({ attempts: 1, due_at: T + 50 });
    expect(result.again).toMatchObject({ attempts: 0, due_at: T + 60, last_error: null });
    expect(result.report).toEqual({ ran: 1, failed: 0, destroyed: true });
    expect(result.b).not.toBeNull();
  });

  it("does not let a handler's outcome touch a timer replaced while it ran", async () => {
    const result = await withTimers(async (timers) => {
      timers.schedule("session.expire", T, null, { key: "exp" });
      await timers.run({
        "session.expire": async () => {
          await Promise.resolve();
          timers.schedule("session.expire", T + 60_000, null, { key: "exp" });
          return { type: "done" };
        },
      });
      return timers.get("exp");
    });
    expect(result).toMatchObject({ due_at: T + 60_000, attempts: 0 });
  });

  it("does not run a due timer an earlier handler cancelled or moved while it ran", async () => {
    const result = await withTimers(async (timers, clock) => {
      const ran: string[] = [];
      timers.schedule("lease.expire", T, { lease_id: "l1" });
      timers.schedule("session.expire", T + 1, null, { key: "exp" });
      timers.schedule("session.purge", T + 2, null, { key: "purge" });
      clock.now = T + 10;
      await timers.run({
        "lease.expire": async () => {
          ran.push("lease");
          await Promise.resolve();
          timers.cancel("exp");
          timers.schedule("session.purge", T + 60_000, null, { key: "purge" });
          return { type: "done" };
        },
        "session.expire": () => {
          ran.push("expire");
          return { type: "done" };
        },
        "session.purge": () => {
          ran.push("purge");
          return { type: "done" };
        },
      });
      return { ran, left: timers.list().map((t) => [t.kind, t.due_at]) };
    });
    expect(result).toEqual({ ran: ["lease"], left: [["session.purge", T + 60_000]] });
  });
  it("drops a timer whose kind has no handler instead of looping on it, and says so", async () => {
    const errors = spyOnConsoleError();
    const { id, left } = await withTimers(async (timers) => {
      const id = timers.schedule("handoff.sweep", T, null)!;
      await timers.run({});
      return { id, left: timers.list() };
    });
    expect(left).toEqual<TimerRow[]>([]);
    expect(errors.mock.calls).toEqual([[`timer ${id}: no handler for kind 'handoff.sweep', dropped`]]);
  });

  it("hands each handler its kind's payload, parsed; a payload that does not parse is dropped, not run, and said so", async () => {
    const errors = spyOnConsoleError();
    const seen: unknown[] = [];
    const left = await withTimers(async (timers, _clock, storage) => {
      timers.schedule("lease.expire", T, { lease_id: "l1" });
      storage.sql.exec(
        `INSERT INTO timers (id, kind, due_at, payload) VALUES ('bad', 'lease.expire', ?, '{"lease":7}')`,
        T,
      );
      await timers.run({
        "lease.expire": (timer) => {
          seen.push(timer.payload);
          return { type: "done" };
        },
      });
      return timers.list();
    });
    expect(seen).toEqual([{ lease_id: "l1" }]);
    expect(left).toEqual<TimerRow[]>([]);
    expect(errors.mock.calls.map((c) => c[0])).toEqual(["timer bad (lease.expire): payload does not parse, dropped"]);
  });

  it("refuses two handlers for one kind when features are combined", () => {
    const done = () => ({ type: "done" }) as const;
    expect(() => combineHandlers({ "outbox.flush": done }, { "outbox.flush": done })).toThrow("two handlers");
    expect(Object.keys(combineHandlers({ "outbox.flush": done }, { "handoff.sweep": done }))).toEqual([
      "outbox.flush",
      "handoff.sweep",
    ]);
  });
});

describe("thrownBackoffMs", () => {
  it("doubles from 1 s and caps at 5 min", () => {
    expect([0, 1, 2, 3, 8, 9, 20].map(thrownBackoffMs)).toEqual([
      1_000, 2_000, 4_000, 8_000, 256_000, 300_000, 300_000,
    ]);
  });
});
