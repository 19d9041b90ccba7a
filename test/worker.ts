import { AgentDO as RelayAgentDO } from "../durable-objects/agent/agent";
import { CollaborationDO as RelayCollaborationDO } from "../durable-objects/collaboration/collaboration";
import { RouterDO as RelayRouterDO } from "../durable-objects/router/router";
import { SessionDO as RelaySessionDO } from "../durable-objects/session/session";
import type { FlowCheckpoint } from "../durable-objects/session/session-kernel";
import type { Sql } from "../durable-objects/shared/sql";
import { TenantDO as RelayTenantDO } from "../durable-objects/tenant/tenant";
import type { Actor } from "../src/audit/record";
import { err, type Result } from "../src/errors";
import type { Ask } from "../src/quotas/admission";
import type { Lease } from "../src/rpc/agent";
import type { HandoffAccepted, StartHandoffArgs } from "../src/rpc/session";
import type { Admission, Granted, TenantLimits } from "../src/rpc/tenant";
import type { Usage } from "../src/usage/counts";

/**
 * The Worker the tests run (vitest.config.ts `main`): the production Worker, with its
 * Durable Object classes extended by what only tests may do — move an object's clock, stop
 * a handoff flow at a checkpoint as a crash would, make an agent's object answer as an
 * unreachable one does (cloudflare/agents' test workers
 * do the same). Production code has no switch that reaches any of this.
 */
export { default } from "../src/index";

/** A clock the test can move or pin (an evicted object starts again from the real one). */
class TestClock {
  private offset = 0;
  private pinned: number | null = null;
  now(): number {
    return this.pinned ?? Date.now() + this.offset;
  }
  advance(ms: number): void {
    if (this.pinned !== null) this.pinned += ms;
    else this.offset += ms;
  }
  pin(ms: number): void {
    this.pinned = ms;
  }
  /** Back to the real clock (plus any offset). */
  unpin(): void {
    this.pinned = null;
  }
}

/** What a flow throws at an armed checkpoint. */
export class FaultInjected extends Error {
  override readonly name = "FaultInjected";
}

export class SessionDO extends RelaySessionDO {
  readonly clock = new TestClock();
  private fault: FlowCheckpoint | null = null;

  protected override now(): number {
    return this.clock.now();
  }

  /**
   * The object's own SQL, for a test that sets up a state by hand: a table the session has
   * not made yet is made as its own code makes it, and the object knows it holds it.
   */
  ownSql(): Sql {
    return this.sql;
  }

  /** One shot: the next flow reaching `point` throws there. */
  async setFault(point: FlowCheckpoint | null): Promise<void> {
    this.fault = point;
  }

  protected override checkpoint(point: FlowCheckpoint): void {
    if (this.fault !== point) return;
    this.fault = null;
    throw new FaultInjected(`injected fault at ${point}`);
  }

  /**
   * The crash surfaces to the test as an INTERNAL result rather than a rejection crossing
   * RPC (which workerd would report as an uncaught exception); the flow has already left
   * its sweep behind, as a real crash would.
   */
  override async startHandoff(args: StartHandoffArgs, actor?: Actor): Promise<Result<HandoffAccepted>> {
    try {
      return await super.startHandoff(args, actor);
    } catch (error) {
      if (error instanceof FaultInjected) return err("INTERNAL", error.message, { fault: true });
      throw error;
    }
  }
}

export class AgentDO extends RelayAgentDO {
  readonly clock = new TestClock();
  /** While set, acquires answer as a caller sees an object that did not answer in time. */
  private unreachable = false;

  protected override now(): number {
    return this.clock.now();
  }

  async setUnreachable(on: boolean): Promise<void> {
    this.unreachable = on;
  }

  override async acquire(
    sessionId: string,
    handoffId: string,
    ttlMs: number,
    capacity: number,
  ): Promise<Result<Lease>> {
    if (this.unreachable)
      return err("DEPENDENCY_UNAVAILABLE", "The agent did not answer within 5000 ms.", {
        reason: "deadline",
        deadline_ms: 5000,
        call: "acquire",
      });
    return super.acquire(sessionId, handoffId, ttlMs, capacity);
  }
}

export class CollaborationDO extends RelayCollaborationDO {
  readonly clock = new TestClock();

  protected override now(): number {
    return this.clock.now();
  }
}

export class RouterDO extends RelayRouterDO {
  readonly clock = new TestClock();

  protected override now(): number {
    return this.clock.now();
  }
}

export class TenantDO extends RelayTenantDO {
  readonly clock = new TestClock();
  /** While set, `limits` answers as a caller sees an object that did not answer in time. */
  private unreachable = false;
  /** How many times `limits` was asked. */
  limitReads = 0;
  /** How many times `admit` was asked (an admission given out from a lease asks nothing). */
  admits = 0;

  protected override now(): number {
    return this.clock.now();
  }

  async setUnreachable(on: boolean): Promise<void> {
    this.unreachable = on;
  }

  override async limits(tenant: string): Promise<Result<TenantLimits>> {
    this.limitReads++;
    return this.unreachable ? missed("limits") : super.limits(tenant);
  }

  override async admit(tenant: string, ask: Ask, lease?: number): Promise<Result<Granted>> {
    this.admits++;
    return super.admit(tenant, ask, lease);
  }

  override async record(tenant: string, hours: { hour: number; usage: Usage }[]): Promise<Result<TenantLimits>> {
    return this.unreachable ? missed("record") : super.record(tenant, hours);
  }

  override async release(tenant: string, admission: Admission): Promise<Result<{ released: boolean }>> {
    return this.unreachable ? missed("release") : super.release(tenant, admission);
  }
}

/** What a caller sees of a call an object did not answer in time. */
function missed(call: string): Result<never> {
  return err("DEPENDENCY_UNAVAILABLE", "The quotas of the tenant did not answer within 5000 ms.", {
    reason: "deadline",
    deadline_ms: 5000,
    call,
  });
}
