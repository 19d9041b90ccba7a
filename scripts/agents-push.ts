/**
 * Pushes agent files to a running Relay: `npm run agents:push -- --url https://relay.example.workers.dev [--dir agents]`
 * with the API key in RELAY_API_KEY. Every file is validated locally first; nothing is
 * sent unless all of them are valid.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { readAgentDir } from "./lib/agent-files";

const { values } = parseArgs({
  options: { url: { type: "string" }, dir: { type: "string", default: "agents" } },
});
const key = process.env.RELAY_API_KEY;
if (!values.url || !key) {
  console.error("usage: RELAY_API_KEY=<key> npm run agents:push -- --url <relay base URL> [--dir agents]");
  process.exit(2);
}
const agents = readAgentDir(join(process.cwd(), values.dir ?? "agents"));
let failed = 0;
for (const agent of agents) {
  const response = await fetch(new URL(`/v1/agents/${agent.name}`, values.url), {
    method: "PUT",
    headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
    body: JSON.stringify(agent),
  });
  const outcome = response.status === 201 ? "created" : response.status === 200 ? "replaced" : `failed ${response.status}`;
  if (!response.ok) {
    failed++;
    console.error(`${agent.name}: ${outcome} ${await response.text()}`);
  } else {
    console.log(`${agent.name}: ${outcome}`);
  }
}
process.exit(failed > 0 ? 1 : 0);
