import { evictDurableObject } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it } from "vitest";
import { drainDue, registerAgents, sessionStub } from "../durable-objects/helpers";
import { call } from "./helpers";

/**
 * A webhook's handoff across a crash: the webhook id is the handoff's Idempotency-Key, so a
 * sender retrying after a 5xx must find the handoff run afresh, not the server's fault
 * replayed (docs/handoffs.md, "Idempotency"). Signed with the `standardwebhooks` package.
 */

const CRM_SECRET = "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD";

function signed(payload: unknown, id: string) {
  const body = JSON.stringify(payload);
  const timestamp = new Date();
  return {
    body,
    headers: {
      "content-type": "application/json",
      "webhook-id": id,
      "webhook-timestamp": String(Math.floor(timestamp.getTime() / 1000)),
      "webhook-signature": new Webhook(CRM_SECRET).sign(id, timestamp, body),
    },
  };
}

async function post(d: { body: string; headers: Record<string, string> }) {
  const response = await (exports as unknown as { default: Fetcher }).default.fetch(
    "http://relay.test/v1/webhooks/crm",
    {
      method: "POST",
      headers: d.headers,
      body: d.body,
    },
  );
  return { status: response.status, json: (await response.json()) as any };
}

describe("a webhook handoff a crash interrupted", () => {
  it("answers 5xx once; the sender's retry with the same webhook id hands off", async () => {
    await registerAgents(
      "alpha",
      { name: "crash-desk", handoffs: ["crash-spec"], max_concurrent_sessions: 5 },
      { name: "crash-spec", max_concurrent_sessions: 5 },
    );
    const id = (await call("POST", "/v1/sessions", { agent: "crash-desk" })).json.id as string;
    const { stub } = sessionStub("alpha", id);
    const delivery = signed(
      { type: "handoff.requested", data: { session_id: id, target_agent: "crash-spec", reason: "from the CRM" } },
      `msg_crash_${id}`,
    );

    await stub.setFault("after_intent");
    const first = await post(delivery);
    expect(first.status).toBe(500);
    await evictDurableObject(stub);
    await drainDue(stub);

    const retry = await post(delivery);
    expect(retry.status).toBe(200);
    expect(retry.json).toMatchObject({
      type: "handoff.requested",
      handoff: { status: "completed", target: "crash-spec" },
    });
    expect((await call("GET", `/v1/sessions/${id}`)).json.current_agent).toBe("crash-spec");
  });
});
