import { parse as parseYaml } from "yaml";
import { RelayError } from "../errors";
import { issuesOf } from "../errors/issues";
import { AgentDefinition } from "../schemas/agent";

/**
 * Agents as Markdown files (the seed format): YAML front matter between `---` lines holds
 * the definition's fields; the body below it is the agent's instructions.
 */
const FRONT_MATTER = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/;

export function parseAgentFile(text: string, fileName: string): AgentDefinition {
  const match = FRONT_MATTER.exec(text);
  if (!match) {
    throw new RelayError("INVALID_AGENT_FILE", `${fileName}: no YAML front matter (the file must start with a '---' line).`, {
      file: fileName,
    });
  }
  let front: unknown;
  try {
    front = parseYaml(match[1] ?? "");
  } catch (error) {
    throw new RelayError("INVALID_AGENT_FILE", `${fileName}: front matter is not valid YAML: ${(error as Error).message}`, {
      file: fileName,
    });
  }
  if (typeof front !== "object" || front === null || Array.isArray(front)) {
    throw new RelayError("INVALID_AGENT_FILE", `${fileName}: front matter must be a mapping of fields.`, { file: fileName });
  }
  const body = (match[2] ?? "").trim();
  const candidate = { ...(front as Record<string, unknown>) };
  if (body && candidate.instructions === undefined) candidate.instructions = body;
  const parsed = AgentDefinition.safeParse(candidate);
  if (!parsed.success) {
    throw new RelayError("INVALID_AGENT_FILE", `${fileName}: not a valid agent definition.`, {
      file: fileName,
      issues: issuesOf(parsed.error),
    });
  }
  return parsed.data;
}
