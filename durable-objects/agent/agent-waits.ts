import { onProbe, type Probe, startProbes, victimOf, type WaitEdge } from "../../src/collaboration/deadlock";
import type { Env } from "../../src/env";
import { ok, type Result } from "../../src/errors";
import type { WaitStart } from "../../src/rpc/agent";
import { agentRpc, collaborationRpc } from "../../src/rpc/stubs";
import type { BlockingStatus } from "../../src/schemas/collaboration";
import type { Sql } from "../shared/sql";
import { TIMER_KEYS } from "../shared/timer-kinds";
import type { TimerOutcome, Timers } from "../shared/timers";

/**
 * An agent's waits (docs/collaboration.md, Deadlocks): its blocking status, and its outgoing wait-for edges, which
 * only this object holds. Starting an internal wait sends deadlock probes along it, and a
 * periodic alarm sends them again while the agent waits; a probe that returns to its
 * initiator found a cycle, and the cycle's earliest waiter is broken (its query answered
 * DEADLOCK_RESOLVED by the collaboration that holds it).
 */

/** How often a waiting agent probes again (a cycle closed by an edge another probe missed). */
export const PROBE_INTERVAL_MS = 30_000;

/** Agent v3: the waits. */
export const WAITS_DDL = [
  `CREATE TABLE waits (
     message_id        TEXT PRIMARY KEY,
     tenant            TEXT NOT NULL,
     self              TEXT NOT NULL,
     kind              TEXT NOT NULL CHECK (kind IN ('internal', 'user')),
     to_agent          TEXT NOT NULL,
     reason            TEXT NOT NULL,
     collaboration_id  TEXT NOT NULL,
     since             INTEGER NOT NULL
   )`,
] as const;

interface WaitRow {
  message_id: string;
  tenant: string;
  self: string;
  kind: "internal" | "user";
  to_agent: string;
  reason: string;
  collaboration_id: string;
  since: number;
}

export const NOT_BLOCKED: BlockingStatus = {
  status: "none",
  waiting_for: null,
  reason: null,
  message_id: null,
  started_at: null,
};

export class AgentWaits {
  constructor(
    private readonly env: Env,
    private readonly sql: Sql,
    private readonly timers: Timers,
    private readonly now: () => number,
  ) {}

  /** Records the wait, then probes along it. */
  async blockOn(wait: WaitStart): Promise<Result<BlockingStatus>> {
    const now = this.now();
    this.sql`INSERT OR IGNORE INTO waits (message_id, tenant, self, kind, to_agent, reason, collaboration_id, since)
             VALUES (${wait.message_id}, ${wait.tenant}, ${wait.self}, ${wait.kind}, ${wait.to}, ${wait.reason}, ${wait.collaboration_id}, ${now})`;
    if (wait.kind === "internal") {
      this.timers.schedule("deadlock.probe", now + PROBE_INTERVAL_MS, null, {
        key: TIMER_KEYS.deadlockProbe,
        ifExists: "keep",
      });
      await this.timers.arm();
      await this.sendProbes();
    }
    return ok(this.status());
  }

  unblock(messageId: string): Result<BlockingStatus> {
    this.sql`DELETE FROM waits WHERE message_id = ${messageId}`;
    if (this.edges().length === 0) this.timers.cancel(TIMER_KEYS.deadlockProbe);
    return ok(this.status());
  }

  /** The earliest wait (a user wait first: a person holds the agent fully). */
  status(): BlockingStatus {
    const row = this.sql<WaitRow>`SELECT * FROM waits ORDER BY kind = 'user' DESC, since, message_id LIMIT 1`[0];
    if (!row) return NOT_BLOCKED;
    return {
      status: row.kind,
      waiting_for: row.to_agent,
      reason: row.reason,
      message_id: row.message_id,
      started_at: new Date(row.since).toISOString(),
    };
  }

  async probe(tenant: string, self: string, probe: Probe): Promise<Result<{ cycle: string[] | null }>> {
    const step = onProbe(self, probe, this.edges());
    if (step.cycle) {
      const victim = victimOf(step.cycle);
      const cycle = step.cycle.map((e) => e.from);
      await agentRpc(this.env, tenant, victim.from).breakWait(victim.message_id, cycle);
      return ok({ cycle });
    }
    await Promise.all(step.forward.map((f) => agentRpc(this.env, tenant, f.to).probe(tenant, f.to, f.probe)));
    return ok({ cycle: null });
  }

  /** Breaks the wait if it is still here: the collaboration answers the query DEADLOCK_RESOLVED. */
  async breakWait(messageId: string, cycle: string[]): Promise<Result<{ broken: boolean }>> {
    const row = this.sql<WaitRow>`DELETE FROM waits WHERE message_id = ${messageId} RETURNING *`[0];
    if (!row) return ok({ broken: false });
    await collaborationRpc(this.env, row.tenant, row.collaboration_id).resolveWait(
      messageId,
      "DEADLOCK_RESOLVED",
      cycle,
    );
    return ok({ broken: true });
  }

  /** The alarm: probe again while waiting. */
  async onTimer(now: number): Promise<TimerOutcome> {
    if (this.edges().length === 0) return { type: "done" };
    await this.sendProbes();
    return { type: "again", at: now + PROBE_INTERVAL_MS };
  }

  private edges(): WaitEdge[] {
    return this.sql<WaitRow>`SELECT * FROM waits WHERE kind = 'internal'`.map((r) => ({
      from: r.self,
      to: r.to_agent,
      since: r.since,
      message_id: r.message_id,
    }));
  }

  private async sendProbes(): Promise<void> {
    const rows = this.sql<WaitRow>`SELECT * FROM waits WHERE kind = 'internal'`;
    const first = rows[0];
    if (!first) return;
    const probes = startProbes(first.self, this.edges());
    await Promise.all(probes.map((p) => agentRpc(this.env, first.tenant, p.to).probe(first.tenant, p.to, p.probe)));
  }
}
