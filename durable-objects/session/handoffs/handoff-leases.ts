import { ok, type Result } from "../../../src/errors";
import type { Lease } from "../../../src/rpc/agent";
import { agentCapacity } from "../../../src/services/agent-capacity";
import type { SessionRecord } from "../../../src/sessions/model";
import type { SessionKernel } from "../session-kernel";
import type { HandoffStore, SessionLease } from "./handoff-store";

/**
 * The session's side of agent capacity (docs/handoffs.md, Capacity leases): the current agent holds a lease in
 * its AgentDO for as long as it holds the session. Leases are taken tentatively and
 * confirmed once the change that needs them is committed; releases are queued in the
 * same transaction as the change that frees them and carried out after it. Whatever a
 * crash interrupts is still in the tables (a tentative session lease, queued releases)
 * and `settle()` finishes it, from the next call or from the sweep timer.
 *
 * A hot agent's capacity is split over shard objects (src/services/agent-capacity.ts):
 * the lease ids it grants name their shard, so the rows here need nothing more.
 */

/** How long a tentative lease lives in the AgentDO unless confirmed. */
export const LEASE_TTL_MS = 30_000;

/** The acquire that re-takes a lapsed or lost session lease names this pseudo-handoff. */
const REACQUIRE = "session.lease_reacquired";

export class HandoffLeases {
  private queue: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly k: Pick<SessionKernel, "env" | "store">,
    private readonly store: HandoffStore,
  ) {}

  /**
   * A tentative lease for a new session's first agent, before the session is committed;
   * null (and no AgentDO call) for an agent without a capacity limit.
   */
  async leaseForNewSession(
    tenant: string,
    sessionId: string,
    agent: string,
    capacity: number | null,
  ): Promise<Result<SessionLease | null>> {
    if (capacity === null) return ok(null);
    const lease = await agentCapacity(this.k.env, tenant, agent, capacity).acquire(
      sessionId,
      "session.created",
      LEASE_TTL_MS,
    );
    if (!lease.ok) return lease;
    return ok(toSessionLease(agent, lease.value, capacity));
  }

  /**
   * Frees whatever this session holds at `agent` (used when the grant's outcome is unknown),
   * at every shard of the plan for `capacity`; null (unknown) looks at every possible plan.
   */
  async releaseBySession(tenant: string, sessionId: string, agent: string, capacity: number | null): Promise<void> {
    const result = await agentCapacity(this.k.env, tenant, agent, capacity).release({ session_id: sessionId });
    if (!result.ok) throw new Error(`release at '${agent}' failed: ${result.error.message}`);
  }

  /**
   * Confirms a tentative session lease and carries out queued releases. Runs one at a
   * time (callers queue behind each other) and never throws: true when nothing is left.
   * `session` (tenant and id) saves reading the session row when the caller has it.
   */
  settle(session?: Pick<SessionRecord, "tenant" | "id">): Promise<boolean> {
    const run = this.queue.then(() => this.settleOnce(session));
    this.queue = run.catch(() => undefined);
    return run.catch((error) => {
      console.error("lease settlement failed", error);
      return false;
    });
  }

  /** True when a restart may have left lease work undone. */
  unsettled(): boolean {
    return this.store.sessionLease()?.state === "tentative" || this.store.releases().length > 0;
  }

  /** A session's tenant and id never change, so a caller's copy spares the read. */
  private async settleOnce(known?: Pick<SessionRecord, "tenant" | "id">): Promise<boolean> {
    const session = known ?? this.k.store.load();
    if (!session) return true;
    const lease = this.store.sessionLease();
    const tasks: Promise<boolean>[] = this.store.releases().map(async (release) => {
      if (release.lease_id === null) {
        // No code queues one today; the row has no capacity, so every possible plan is visited.
        await this.releaseBySession(session.tenant, session.id, release.agent, null);
      } else {
        // The lease id names its shard: no capacity needed.
        const result = await agentCapacity(this.k.env, session.tenant, release.agent, null).release(
          { lease_id: release.lease_id },
          release.fencing_token ?? undefined,
        );
        if (!result.ok) return false;
      }
      this.store.releaseDone(release.id);
      return true;
    });
    if (lease?.state === "tentative") tasks.push(this.confirm(session.tenant, session.id, lease));
    const results = await Promise.allSettled(tasks);
    return results.every((r) => r.status === "fulfilled" && r.value);
  }

  /** Confirms the session lease; one that lapsed or was taken over is taken again. */
  private async confirm(tenant: string, sessionId: string, lease: SessionLease): Promise<boolean> {
    const agent = agentCapacity(this.k.env, tenant, lease.agent, lease.capacity);
    const confirmed = await agent.confirm(lease.lease_id, lease.fencing_token);
    if (confirmed.ok) {
      this.store.markHeld(lease.lease_id, lease.fencing_token);
      return true;
    }
    // Its old shard first: a lease taken over there is taken back rather than doubled elsewhere.
    const again = await agent.acquire(sessionId, REACQUIRE, LEASE_TTL_MS, lease.lease_id);
    const held = again.ok ? await agent.confirm(again.value.lease_id, again.value.fencing_token) : again;
    const current = this.store.sessionLease();
    // Only if nothing replaced the row while we waited.
    if (current?.lease_id !== lease.lease_id || current.fencing_token !== lease.fencing_token) return true;
    if (!held.ok) {
      // The agent is full or paused now: the session keeps its agent without a lease rather than retrying forever.
      console.error(`session ${sessionId}: lease at '${lease.agent}' lost and not re-taken: ${held.error.message}`);
      this.store.setSessionLease(null);
      return true;
    }
    this.store.setSessionLease({ ...toSessionLease(lease.agent, held.value, lease.capacity), state: "held" });
    return true;
  }
}

export function toSessionLease(agent: string, lease: Lease, capacity: number): SessionLease {
  return {
    agent,
    lease_id: lease.lease_id,
    fencing_token: lease.fencing_token,
    state: lease.state === "held" ? "held" : "tentative",
    capacity,
  };
}
