import { factDeleted, factWritten } from "../../../src/audit/fact-events";
import { type Actor, API_ACTOR } from "../../../src/audit/record";
import { ok, type Result } from "../../../src/errors";
import { applyFactChange, type FactChange, memoryView } from "../../../src/memory/facts";
import type { CompactionList, MemoryFact, MemoryView } from "../../../src/schemas/memory";
import { touch } from "../../../src/sessions/model";
import { auditScope, type SessionKernel } from "../session-kernel";

/**
 * The session's memory as people see it through the API (docs/memory.md): its compactions, and
 * its facts — read them, write a fact, delete one. Each change is checked by
 * src/memory/facts.ts against the memory's bounds and written in one commit with its audit
 * record (the key, never the value). A session that is not active refuses, as every session
 * write does. Agents change the memory from their runs, with the same functions.
 */
export class SessionMemoryFacts {
  constructor(private readonly k: Pick<SessionKernel, "commit" | "compactions" | "live" | "memory" | "now">) {}

  /** Every compaction of the session's views, oldest first (docs/memory.md, Compaction). */
  compactions(): Result<CompactionList> {
    const loaded = this.k.live();
    return loaded.ok ? ok({ compactions: this.k.compactions.list() }) : loaded;
  }

  /** The facts by key, and how full the memory is. */
  view(): Result<MemoryView> {
    const loaded = this.k.live();
    return loaded.ok ? ok(memoryView(this.k.memory.list())) : loaded;
  }

  /** Writes (or replaces) a fact as a person's (agent null): MEMORY_FULL past the bounds. */
  async write(key: string, value: string, actor: Actor = API_ACTOR): Promise<Result<MemoryFact>> {
    const changed = await this.change({ kind: "put", key, value }, actor);
    if (!changed.ok) return changed;
    return ok(changed.value.find((fact) => fact.key === key)!);
  }

  /** Deletes a fact: NOT_FOUND when the memory does not hold its key. */
  async delete(key: string, actor: Actor = API_ACTOR): Promise<Result<{ deleted: true }>> {
    const changed = await this.change({ kind: "delete", key }, actor);
    return changed.ok ? ok({ deleted: true }) : changed;
  }

  /** Load → decide → one commit of the session row, the fact and its audit record. */
  private async change(change: FactChange, actor: Actor): Promise<Result<MemoryFact[]>> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const now = this.k.now();
    // No await between this read and the commit's transaction: concurrent writes stay serial.
    const after = applyFactChange(this.k.memory.list(), change, null, now);
    if (!after.ok) return after;
    const session = touch(loaded.value, now);
    const about = { agent: session.current_agent, key: change.key };
    if (change.kind === "put") {
      const fact = after.value.find((f) => f.key === change.key)!;
      await this.k.commit(session, [factWritten(auditScope(session), actor, now, about)], () =>
        this.k.memory.put(fact, now),
      );
    } else {
      await this.k.commit(session, [factDeleted(auditScope(session), actor, now, about)], () =>
        this.k.memory.remove(change.key),
      );
    }
    return after;
  }
}
