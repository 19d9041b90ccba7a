import { runInDurableObject } from "cloudflare:test";
import { it } from "vitest";
import { call } from "../api/helpers";
import { sessionStub } from "../durable-objects/helpers";

it("dumps", async () => {
  await call("PUT", "/v1/agents/cdesk", { name: "cdesk", description: "d" });
  const id = (await call("POST", "/v1/sessions", { agent: "cdesk" })).json.id;
  await runInDurableObject(sessionStub("alpha", id).stub, (_i, state) => {
    for (const r of state.storage.sql.exec("SELECT type, name, sql FROM sqlite_master ORDER BY type DESC, name").toArray()) console.log(`${r.type} ${r.name}: ${r.sql}`);
  });
});
