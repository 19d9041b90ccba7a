import { describe, expect, it } from "vitest";
import * as events from "../../src/audit/events";
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
