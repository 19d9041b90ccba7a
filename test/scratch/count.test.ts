import { runInDurableObject } from "cloudflare:test";
import { it } from "vitest";
import { call } from "../api/helpers";
import { sessionStub } from "../durable-objects/helpers";

it("counts statements", async () => {
  await call("PUT", "/v1/agents/cdesk", { name: "cdesk", description: "d", handoffs: ["cbill"] });
  await call("PUT", "/v1/agents/cbill", { name: "cbill", description: "b" });
  const warm = (await call("POST", "/v1/sessions", { agent: "cdesk" })).json.id;
  let proto: any;
  await runInDurableObject(sessionStub("alpha", warm).stub, (_i, state) => { proto = Object.getPrototypeOf(state.storage.sql); });
  const log: string[] = [];
  const orig = proto.exec;
  proto.exec = function (q: string, ...b: unknown[]) { log.push(q.replace(/\s+/g, " ").slice(0, 100)); return orig.call(this, q, ...b); };
  log.push("---- create");
  const id = (await call("POST", "/v1/sessions", { agent: "cdesk" })).json.id;
  await new Promise((r) => setTimeout(r, 100));
  for (let i = 0; i < 2; i++) {
    log.push(`---- handoff ${i}`);
    await call("POST", "/v1/handoffs", { session_id: id, source_agent: "cdesk", target_agent: "cbill", reason: "x" });
    await new Promise((r) => setTimeout(r, 100));
    log.push(`---- return ${i}`);
    await call("POST", "/v1/handoffs", { session_id: id, source_agent: "cbill", mode: "return", reason: "x" });
    await new Promise((r) => setTimeout(r, 100));
  }
  proto.exec = orig;
  console.log(log.join("\n"));
});
