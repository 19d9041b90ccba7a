import { describe, expect, it } from "vitest";
import * as events from "../../src/audit/events";
import { turnInterrupted } from "../../src/audit/handoff-events";
import { API_ACTOR, AuditAction, AuditRecord, SYSTEM_ACTOR } from "../../src/audit/record";
import { ulidTime } from "../lib/decode-ulid";

const scope = { tenant: "alpha", session_id: "ses_1" };
const now = Date.UTC(2026, 0, 2, 3, 4, 5, 6);

describe("audit events", () => {
  it("builds valid records whose id and time agree", () => {
    const record = events.sessionCreated(scope, API_ACTOR, now, {
      agent: "support",
      ttl_s: 60,
      metadata: {},
      routed: false,
    });
    expect(AuditRecord.parse(record)).toEqual(record);
    expect(record).toMatchObject({
      tenant: "alpha",
      session_id: "ses_1",
      handoff_id: null,
      action: "session.created",
      agent: "support",
      actor: "api",
      actor_type: "user",
      at: "2026-01-02T03:04:05.006Z",
    });
    expect(ulidTime(record.id)).toBe(now);
  });

  it("records the router as the actor of a route decision", () => {
    const record = events.routeDecided(scope, now, { agent: "billing", method: "rule", confidence: 92 });
    expect(record).toMatchObject({
      action: "route.decided",
      actor: "router",
      actor_type: "system",
      agent: "billing",
      details: { method: "rule" },
    });
  });

  it("leaves out of the details what the record's columns hold", () => {
    const created = events.sessionCreated(scope, API_ACTOR, now, {
      agent: "support",
      ttl_s: 60,
      metadata: {},
      routed: true,
    });
    expect(created.details).toEqual({ ttl_s: 60, metadata: {}, routed: true });
    const interrupted = turnInterrupted(scope, API_ACTOR, now, { agent: "front", handoff_id: "hof_1" });
    expect(interrupted).toMatchObject({ agent: "front", handoff_id: "hof_1", details: {} });
    // A detail that differs from its column is a fact of its own and stays.
    const other = events.auditEvent(
      scope,
      { action: "session.noted", actor: API_ACTOR, details: { session_id: "ses_2" } },
      now,
    );
    expect(other.details).toEqual({ session_id: "ses_2" });
  });

  it("keeps the route decision's outcome and leaves its explanation to the trace", () => {
    const candidate = { score: 3, confidence: 80, matched_keywords: ["refund"], matched_patterns: [] };
    const record = events.routeDecided(scope, now, {
      agent: "billing",
      method: "rule",
      confidence: 80,
      matched_keywords: ["refund"],
      candidates: [
        { agent: "billing", ...candidate },
        { agent: "front", ...candidate, score: 1 },
      ],
      explanation: { terms: ["a long text"] },
      fallback: {
        strategy: "default_agent",
        reason: "below threshold",
        agents: [{ name: "front", title: "F", description: "…" }],
      },
    });
    expect(record.agent).toBe("billing");
    expect(record.details).toEqual({
      method: "rule",
      confidence: 80,
      matched_keywords: ["refund"],
      candidates: [
        { agent: "billing", score: 3, confidence: 80 },
        { agent: "front", score: 1, confidence: 80 },
      ],
      fallback: { strategy: "default_agent", reason: "below threshold" },
    });
  });

  it("accepts only dotted lower-case actions", () => {
    expect(AuditAction.safeParse("session.agent_status_changed").success).toBe(true);
    for (const bad of ["created", "Session.Created", "session.", "session created"]) {
      expect(AuditAction.safeParse(bad).success, bad).toBe(false);
    }
    const expired = events.sessionExpired(scope, SYSTEM_ACTOR, now, { agent: "a", expires_at: "x", idle_s: 60 });
    expect(expired).toMatchObject({ action: "session.expired", actor: "relay", actor_type: "system" });
  });

  it("refuses a record with an unknown actor type", () => {
    const record = events.auditEvent(scope, { action: "session.created", actor: API_ACTOR }, now);
    expect(AuditRecord.safeParse({ ...record, actor_type: "robot" }).success).toBe(false);
  });
});
