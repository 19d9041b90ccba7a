import { readFileSync } from "node:fs";
import { beforeAll, describe, expect, expectTypeOf, inject, it } from "vitest";
import { GENERATED_PATH, typesOf } from "../../client/scripts/openapi-types";
import { createRelayClient } from "../../client/src/index.ts";
import type { components, MessageRun, paths, RouteDecision } from "../../client/src/types.ts";

/**
 * The generated types are the document's: the committed file is what the generator makes
 * of the document served at `GET /openapi.json` on wrangler dev (public/openapi.json, which
 * the same command writes), so a changed schema without `npm run client:generate` fails here;
 * the type assertions below are checked by `npm run typecheck`.
 */

let document: { paths: Record<string, unknown> };
beforeAll(async () => {
  document = await (await fetch(`${inject("relayUrl")}/openapi.json`)).json();
});

/** Every path of the document; the type below makes the list and the generated `paths` agree. */
const DOCUMENT_PATHS = [
  "/health",
  "/openapi.json",
  "/v1/agents/{name}",
  "/v1/agents",
  "/v1/agents/{name}/blocking",
  "/v1/agents/{name}/load",
  "/v1/agents/{name}/handoffs",
  "/v1/tools/{name}",
  "/v1/tools",
  "/v1/route",
  "/v1/route/stats",
  "/v1/route/replay",
  "/v1/route/history",
  "/v1/config/routing",
  "/v1/config/events",
  "/v1/config",
  "/v1/config/signing-secret",
  "/v1/config/signing-secret/rotate",
  "/v1/webhooks/{source}",
  "/v1/sessions",
  "/v1/sessions/{id}",
  "/v1/sessions/{id}/messages",
  "/v1/sessions/{id}/compactions",
  "/v1/sessions/{id}/tool-outputs",
  "/v1/sessions/{id}/runs/{run_id}",
  "/v1/sessions/{id}/runs/{run_id}/cancel",
  "/v1/webhooks/stats",
  "/v1/sessions/{id}/trace",
  "/v1/sessions/{id}/ws",
  "/v1/sessions/{id}/state",
  "/v1/sessions/{id}/agent-status",
  "/v1/sessions/{id}/events",
  "/v1/sessions/{id}/triggers",
  "/v1/sessions/{id}/fan-out",
  "/v1/sessions/{id}/fan-outs/{fanout_id}",
  "/v1/sessions/{id}/audit",
  "/v1/sessions/{id}/inbox",
  "/v1/sessions/{id}/memory",
  "/v1/sessions/{id}/memory/{key}",
  "/v1/handoffs",
  "/v1/handoffs/{id}",
  "/v1/handoffs/{id}/cancel",
  "/v1/inbox",
  "/v1/inbox/{id}",
  "/v1/inbox/{id}/resolve",
  "/v1/collaborations",
  "/v1/collaborations/{id}",
  "/v1/collaborations/{id}/messages",
  "/v1/collaborations/{id}/messages/{message_id}/resolve",
  "/v1/collaborations/{id}/complete",
  "/v1/capabilities/match",
  "/v1/audit",
  "/.well-known/agent-card.json",
  "/a2a",
  "/a2a/.well-known/agent-card.json",
  "/a2a/{agent}",
  "/a2a/{agent}/.well-known/agent-card.json",
  "/mcp",
  "/v1/config/mcp",
  "/v1/config/telemetry",
  "/v1/tools/{name}/refresh",
  "/v1/secrets",
  "/v1/secrets/{name}",
  "/v1/usage",
  "/v1/operator/usage",
  "/v1/operator/tenants/{tenant}/usage",
  "/v1/operator/tenants/{tenant}/quotas",
  "/v1/operator/shards",
  "/v1/operator/tenants/{tenant}/shard",
] as const satisfies readonly (keyof paths)[];

describe("the generated client types", () => {
  it("are what the generator makes of the served document (run npm run client:generate when this fails)", async () => {
    expect(readFileSync(GENERATED_PATH, "utf8")).toBe(await typesOf(document));
  });

  it("cover every path of the document, and no other", () => {
    expect(Object.keys(document.paths).sort()).toEqual([...DOCUMENT_PATHS].sort());
    expectTypeOf<(typeof DOCUMENT_PATHS)[number]>().toEqualTypeOf<keyof paths>();
  });

  it("type requests and answers as the schemas do", () => {
    expectTypeOf<RouteDecision["agent"]>().toEqualTypeOf<string | null>();
    expectTypeOf<RouteDecision["method"]>().toEqualTypeOf<"rule" | "llm" | "fallback" | "none">();
    expectTypeOf<MessageRun["run"]["status"]>().toEqualTypeOf<
      "running" | "completed" | "failed" | "awaiting_human" | "awaiting_approval" | "requires_action" | "cancelled"
    >();
    // Request fields with a default may be left out (ttl_s has one).
    expectTypeOf<{ agent: string }>().toExtend<components["schemas"]["SessionCreate"]>();
    expectTypeOf<components["schemas"]["InboxResolve"]>().toHaveProperty("decision");

    const relay = createRelayClient({ url: "http://relay.invalid", apiKey: "k" });
    const calls = () => {
      // @ts-expect-error no such path
      relay.api.GET("/v1/nope");
      // @ts-expect-error the route's body needs `input`
      relay.api.POST("/v1/route", { body: { strategy: "rule" } });
      // @ts-expect-error a strategy the schema does not list
      relay.api.POST("/v1/route", { body: { input: "hi", strategy: "magic" } });
      // @ts-expect-error the agent's path needs its name
      relay.api.GET("/v1/agents/{name}", {});
      return relay.api.POST("/v1/route", { body: { input: "hi", strategy: "rule" } });
    };
    expectTypeOf(calls).returns.resolves.toHaveProperty("data").toEqualTypeOf<RouteDecision | undefined>();
  });
});
