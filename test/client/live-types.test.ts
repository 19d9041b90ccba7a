import { beforeAll, describe, expect, expectTypeOf, inject, it } from "vitest";
import {
  type components,
  isKnownLiveEvent,
  isLiveEvent,
  type LiveEvent,
  type LiveEventData,
} from "../../client/src/index.ts";

/**
 * The client's live event types are the document's LiveEvent and LiveDelta components: the
 * types it knows at run time are exactly those the served /openapi.json lists, and a type it
 * does not know stays a live event with untyped data.
 */

type Schemas = components["schemas"];
let documented: string[];

beforeAll(async () => {
  const document = await (await fetch(`${inject("relayUrl")}/openapi.json`)).json();
  const { LiveEvent, LiveDelta } = document.components.schemas;
  documented = [...LiveEvent.oneOf, LiveDelta].map((member: any) => member.properties.type.const);
});

const event = (type: string, data: unknown): LiveEvent => ({
  id: "evt_1",
  type,
  session_id: "ses_1",
  run_id: "run_1",
  at: "2026-11-29T10:00:00.000Z",
  data,
});

describe("isKnownLiveEvent", () => {
  it("knows every type the served document lists, and no other", () => {
    expect(documented.length).toBeGreaterThanOrEqual(20);
    for (const type of documented) expect(isKnownLiveEvent(event(type, {})), type).toBe(true);
    for (const type of ["message.edited", "subscribed", "constructor", "toString", ""])
      expect(isKnownLiveEvent(event(type, {})), type).toBe(false);
  });

  it("narrows data by type once known", () => {
    const retracted = event("message.retracted", { message_id: "msg_1", agent: "billing", code: "GUARDRAIL_FAILED" });
    expect(isLiveEvent(retracted, "message.retracted") && retracted.data.code).toBe("GUARDRAIL_FAILED");
    expectTypeOf<LiveEventData["message.retracted"]>().toEqualTypeOf<Schemas["MessageRetracted"]>();
    expectTypeOf<LiveEventData["handoff_status"]>().toEqualTypeOf<Schemas["HandoffStatusChange"]>();
    expectTypeOf<LiveEventData["run_failed"]>().toEqualTypeOf<Schemas["RunSummary"]>();
    expectTypeOf<LiveEventData["tool_call"]>().toEqualTypeOf<Schemas["TraceEvent"]>();
    expectTypeOf<LiveEventData["message"]>().toEqualTypeOf<Schemas["HistoryItem"]>();
    expectTypeOf<LiveEventData["message.delta"]>().toEqualTypeOf<Schemas["LiveDelta"]["data"]>();
  });
});
