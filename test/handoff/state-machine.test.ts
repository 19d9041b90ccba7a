import { describe, expect, it } from "vitest";
import {
  allowedCommands,
  commandAfterTimeout,
  HANDOFF_AUDIT_ACTIONS,
  HandoffCommand,
  type HandoffCommandInput,
  type HandoffEffect,
  type HandoffMachineState,
  initiate,
  transition,
} from "../../src/handoff/state-machine";
import { isTerminal } from "../../src/handoff/statuses";
import { HandoffStatus } from "../../src/schemas/handoff";

const NOW = 1_700_000_000_000;

const state = (status: HandoffStatus, extra: Partial<HandoffMachineState> = {}): HandoffMachineState => ({
  status,
  policy: "graceful",
  source: "triage",
  target: "billing",
  timeout_s: 30,
  target_capacity: 5,
  target_leased: true,
  source_leased: true,
  interrupted: true,
  ...extra,
});

const command = (type: HandoffCommand): HandoffCommandInput => (type === "wait" ? { type, now: NOW } : { type });

/**
 * The expected machine, written out independently of the implementation's table: for a
 * graceful handoff from triage to billing where every lease effect applies (billing has a
 * limit and a lease, triage holds one, the source's turn was interrupted), each accepted
 * cell's next status and effects after the audit record.
 */
const ACCEPTED: Record<string, { next: HandoffStatus; effects: HandoffEffect[] }> = {
  "initiated/validate": { next: "validating", effects: [] },
  "validating/wait": { next: "pending", effects: [{ type: "schedule_timeout", at: NOW + 30_000 }] },
  "validating/transfer": {
    next: "transferring",
    effects: [{ type: "take_lease", agent: "billing", capacity: 5 }],
  },
  "validating/fail": { next: "failed", effects: [] },
  "pending/transfer": {
    next: "transferring",
    effects: [{ type: "cancel_timeout" }, { type: "take_lease", agent: "billing", capacity: 5 }],
  },
  "pending/time_out": { next: "timed_out", effects: [] },
  "pending/cancel": { next: "cancelled", effects: [{ type: "cancel_timeout" }] },
  "transferring/complete": {
    next: "completed",
    effects: [
      { type: "activate_target", agent: "billing" },
      { type: "hold_target_lease", agent: "billing" },
      { type: "release_source_lease", agent: "triage" },
    ],
  },
  "transferring/roll_back": {
    next: "rolled_back",
    effects: [
      { type: "release_target_lease", agent: "billing" },
      { type: "restore_source", agent: "triage" },
    ],
  },
  "timed_out/fail": { next: "failed", effects: [] },
  "timed_out/escalate": { next: "escalated", effects: [{ type: "escalate", source: "triage", target: "billing" }] },
};

const cells = HandoffStatus.options.flatMap((status) => HandoffCommand.options.map((cmd) => [status, cmd] as const));

describe("handoff state machine: every (status, command) cell", () => {
  it("covers 10 statuses × 9 commands", () => {
    expect(cells).toHaveLength(90);
  });

  it.each(cells)("%s + %s", (status, cmd) => {
    const result = transition(state(status), command(cmd));
    const expected = ACCEPTED[`${status}/${cmd}`];
    if (expected) {
      expect(result).toEqual({
        ok: true,
        next: expected.next,
        effects: [
          { type: "audit", action: HANDOFF_AUDIT_ACTIONS[expected.next], from: status, to: expected.next },
          ...expected.effects,
        ],
      });
    } else {
      expect(result.ok).toBe(false);
      if (result.ok) return;
      expect(result.error.code).toBe(cmd === "cancel" ? "HANDOFF_NOT_CANCELLABLE" : "INVALID_TRANSITION");
      expect(result.error.details).toMatchObject({ status });
    }
  });
});

describe("handoff state machine: guards and details", () => {
  it("writes exactly one audit record per accepted transition, first in the effects", () => {
    for (const [key, { next }] of Object.entries(ACCEPTED)) {
      const [status, cmd] = key.split("/") as [HandoffStatus, HandoffCommand];
      const result = transition(state(status), command(cmd));
      if (!result.ok) throw new Error(key);
      expect(result.effects.filter((e) => e.type === "audit")).toHaveLength(1);
      expect(result.effects[0]).toMatchObject({ type: "audit", action: HANDOFF_AUDIT_ACTIONS[next] });
    }
  });

  it("refuses to make an immediate handoff wait", () => {
    const result = transition(state("validating", { policy: "immediate" }), { type: "wait", now: NOW });
    expect(result).toMatchObject({
      ok: false,
      error: { code: "INVALID_TRANSITION", details: { status: "validating", command: "wait" } },
    });
  });

  it("lets a conditional handoff wait like a graceful one", () => {
    const result = transition(state("validating", { policy: "conditional", timeout_s: 5 }), { type: "wait", now: NOW });
    expect(result).toMatchObject({ ok: true, next: "pending" });
    if (result.ok) expect(result.effects[1]).toEqual({ type: "schedule_timeout", at: NOW + 5000 });
  });

  it("interrupts the source only when an immediate handoff transfers", () => {
    const immediate = transition(state("validating", { policy: "immediate" }), { type: "transfer" });
    expect(immediate.ok && immediate.effects.map((e) => e.type)).toEqual(["audit", "interrupt_source", "take_lease"]);
    expect(immediate.ok && immediate.effects[1]).toEqual({ type: "interrupt_source", agent: "triage" });
    const graceful = transition(state("validating", { policy: "graceful" }), { type: "transfer" });
    expect(graceful.ok && graceful.effects.map((e) => e.type)).toEqual(["audit", "take_lease"]);
  });

  // Which leases a step takes and frees: each lease effect only when there is a lease.
  it.each([
    ["validating", "transfer", { target_capacity: null }, ["audit"]],
    ["pending", "transfer", { target_capacity: null }, ["audit", "cancel_timeout"]],
    ["transferring", "complete", { target_leased: false }, ["audit", "activate_target", "release_source_lease"]],
    ["transferring", "complete", { source_leased: false }, ["audit", "activate_target", "hold_target_lease"]],
    ["transferring", "complete", { target_leased: false, source_leased: false }, ["audit", "activate_target"]],
    ["transferring", "roll_back", { target_leased: false }, ["audit", "restore_source"]],
    ["transferring", "roll_back", { interrupted: false }, ["audit", "release_target_lease"]],
    ["transferring", "roll_back", { target_leased: false, interrupted: false }, ["audit"]],
  ] as const)("%s + %s with %o: %j", (status, cmd, facts, types) => {
    const result = transition(state(status, facts), { type: cmd });
    expect(result.ok && result.effects.map((e) => e.type)).toEqual(types);
  });

  it("refuses steps that need a target when none was chosen", () => {
    for (const [status, cmd] of [
      ["validating", "transfer"],
      ["pending", "transfer"],
      ["transferring", "complete"],
      ["transferring", "roll_back"],
    ] as const) {
      const result = transition(state(status, { target: null }), { type: cmd });
      expect(result).toMatchObject({ ok: false, error: { code: "INVALID_TRANSITION" } });
    }
    expect(transition(state("validating", { target: null }), { type: "fail" }).ok).toBe(true);
    const escalated = transition(state("timed_out", { target: null }), { type: "escalate" });
    expect(escalated.ok && escalated.effects[1]).toEqual({ type: "escalate", source: "triage", target: null });
  });

  it("carries the command's reason into the audit record", () => {
    const result = transition(state("validating"), { type: "fail", reason: "AGENT_NOT_FOUND" });
    expect(result.ok && result.effects[0]).toEqual({
      type: "audit",
      action: "handoff.failed",
      from: "validating",
      to: "failed",
      reason: "AGENT_NOT_FOUND",
    });
  });

  it("explains a refusal with the commands that are possible", () => {
    const result = transition(state("pending"), { type: "complete" });
    expect(result).toMatchObject({
      ok: false,
      error: {
        code: "INVALID_TRANSITION",
        details: { status: "pending", command: "complete", allowed_commands: ["transfer", "time_out", "cancel"] },
      },
    });
    const cancel = transition(state("completed"), { type: "cancel" });
    expect(cancel).toMatchObject({
      ok: false,
      error: { code: "HANDOFF_NOT_CANCELLABLE", details: { status: "completed" } },
    });
  });

  it("knows its terminal statuses, which accept no command", () => {
    const terminal = HandoffStatus.options.filter(isTerminal);
    expect(terminal).toEqual(["completed", "failed", "rolled_back", "cancelled", "escalated"]);
    for (const status of terminal) expect(allowedCommands(status)).toEqual([]);
    for (const status of HandoffStatus.options.filter((s) => !isTerminal(s)))
      expect(allowedCommands(status).length).toBeGreaterThan(0);
  });

  it("starts a handoff initiated, audited", () => {
    expect(initiate()).toEqual({
      next: "initiated",
      effects: [{ type: "audit", action: "handoff.initiated", from: null, to: "initiated" }],
    });
  });

  it("follows a timeout with the request's on_timeout", () => {
    expect(commandAfterTimeout("fail")).toBe("fail");
    expect(commandAfterTimeout("escalate")).toBe("escalate");
  });

  it("uses dotted audit actions, one per status", () => {
    expect(Object.keys(HANDOFF_AUDIT_ACTIONS)).toEqual(HandoffStatus.options);
    for (const action of Object.values(HANDOFF_AUDIT_ACTIONS)) expect(action).toMatch(/^handoff\.[a-z_]+$/);
    expect(new Set(Object.values(HANDOFF_AUDIT_ACTIONS)).size).toBe(10);
  });
});

describe("handoff state machine: whole lives", () => {
  const run = (policy: HandoffMachineState["policy"], commands: HandoffCommandInput[]) => {
    let current = state("initiated", { policy });
    const actions: string[] = [...initiate().effects.map((e) => (e.type === "audit" ? e.action : ""))];
    for (const cmd of commands) {
      const result = transition(current, cmd);
      if (!result.ok) throw new Error(`${current.status} + ${cmd.type}: ${result.error.message}`);
      for (const e of result.effects) if (e.type === "audit") actions.push(e.action);
      current = { ...current, status: result.next };
    }
    return { status: current.status, actions };
  };

  it("immediate: initiated → validating → transferring → completed", () => {
    expect(run("immediate", [{ type: "validate" }, { type: "transfer" }, { type: "complete" }])).toEqual({
      status: "completed",
      actions: ["handoff.initiated", "handoff.validated", "handoff.transferring", "handoff.completed"],
    });
  });

  it("graceful timing out into an escalation", () => {
    expect(
      run("graceful", [
        { type: "validate" },
        { type: "wait", now: NOW },
        { type: "time_out" },
        { type: commandAfterTimeout("escalate") },
      ]).status,
    ).toBe("escalated");
  });

  it("a failed activation rolls back", () => {
    expect(run("immediate", [{ type: "validate" }, { type: "transfer" }, { type: "roll_back" }]).actions.at(-1)).toBe(
      "handoff.rolled_back",
    );
  });
});
