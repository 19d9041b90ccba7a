import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { isRelayError } from "../../src/errors";
import { parseAgentFile } from "../../src/registry/agent-file";
import { checkAgentPatterns } from "../../src/registry/check-agent";
import type { AgentDefinition } from "../../src/schemas/agent";

/**
 * Reads every `*.md` agent file in a folder with the same parser and checks the API uses,
 * so a file that loads here is one the Worker would accept. Any invalid file stops the
 * load, with every problem listed.
 */
export function readAgentDir(dir: string): AgentDefinition[] {
  const files = readdirSync(dir).filter((name) => name.endsWith(".md")).sort();
  const agents: AgentDefinition[] = [];
  const problems: string[] = [];
  for (const file of files) {
    try {
      const agent = parseAgentFile(readFileSync(join(dir, file), "utf8"), file);
      checkAgentPatterns(agent);
      agents.push(agent);
    } catch (error) {
      if (!isRelayError(error)) throw error;
      problems.push(`${error.message}${error.details ? ` ${JSON.stringify(error.details)}` : ""}`);
    }
  }
  if (problems.length > 0) throw new Error(`Invalid agent files in ${dir}:\n- ${problems.join("\n- ")}`);
  return agents;
}

/** Tenants named in a RELAY_API_KEYS value (`tenant:key,…`). */
export function tenantsOf(apiKeys: string): string[] {
  return [...new Set(apiKeys.split(",").map((entry) => entry.trim().split(":")[0] ?? "").filter(Boolean))];
}
