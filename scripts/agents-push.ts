/**
 * Pushes agent files to a running Relay: `npm run agents:push -- --url
 * https://relay.example.workers.dev [--dir agents]`
 * with the API key in RELAY_API_KEY. Every file is validated locally first; nothing is
 * sent unless all of them are valid. A relative --dir is read from where the command was
 * typed; without --dir, the repository's agents/ folder is pushed.
 */
import { join } from "node:path";
import { parseArgs } from "node:util";
import { formatProblems } from "./lib/agent-check";
import { readAgentDir } from "./lib/agent-files";
import { CliError, runCli } from "./lib/cli-error";
import { currentInvocation, resolveUserPath } from "./lib/paths";

const USAGE =
  "usage: RELAY_API_KEY=<key> npm run agents:push -- --url <relay base URL> [--dir <folder of *.md agent files>]";

await runCli(async () => {
  let values: { url?: string; dir?: string };
  try {
    ({ values } = parseArgs({ options: { url: { type: "string" }, dir: { type: "string" } } }));
  } catch (error) {
    throw new CliError(`${(error as Error).message}\n${USAGE}`, 2);
  }
  const key = process.env.RELAY_API_KEY;
  if (!values.url || !key) throw new CliError(USAGE, 2);
  if (!URL.canParse(values.url))
    throw new CliError(
      `--url must be an absolute URL such as https://relay.example.workers.dev (got ${JSON.stringify(values.url)}).`,
      2,
    );

  const dir =
    values.dir === undefined
      ? join(import.meta.dirname, "..", "agents")
      : resolveUserPath(values.dir, currentInvocation());
  const { agents, problems } = readAgentDir(dir);
  if (problems.length > 0) {
    const total = agents.length + problems.length;
    throw new CliError(
      [
        `Nothing sent: ${problems.length} of ${total} agent files in ${dir} are invalid.`,
        ...formatProblems(problems),
      ].join("\n"),
    );
  }

  let failed = 0;
  let sent = 0;
  for (const agent of agents) {
    const url = new URL(`/v1/agents/${agent.name}`, values.url);
    let response: Response;
    try {
      response = await fetch(url, {
        method: "PUT",
        headers: { Authorization: `Bearer ${key}`, "Content-Type": "application/json" },
        body: JSON.stringify(agent),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      const why = cause?.code ?? cause?.message ?? (error as Error).message;
      throw new CliError(
        `${agent.name}: cannot reach ${url.origin} (${why}); stopped with ${sent} of ${agents.length} agents sent.`,
      );
    }
    sent++;
    const outcome =
      response.status === 201 ? "created" : response.status === 200 ? "replaced" : `failed ${response.status}`;
    if (!response.ok) {
      failed++;
      console.error(`${agent.name}: ${outcome} ${await response.text()}`);
    } else {
      console.log(`${agent.name}: ${outcome}`);
    }
  }
  if (failed > 0) process.exit(1);
});
