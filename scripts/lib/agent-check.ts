import { isRelayError } from "../../src/errors";
import { parseAgentFile } from "../../src/registry/agent-file";
import { checkAgent } from "../../src/registry/check-agent";
import type { AgentDefinition } from "../../src/schemas/agent";

/** One agent file's name and text, as read from disk. */
export interface AgentFileText {
  file: string;
  text: string;
}

/** Why one file cannot be loaded, in one line. */
export interface AgentFileProblem {
  file: string;
  reason: string;
}

export interface AgentFilesChecked {
  agents: AgentDefinition[];
  problems: AgentFileProblem[];
}

/**
 * Checks agent files with the parser and pattern checks the API uses, so a file that passes
 * here is one the Worker accepts. Every file is checked (not just up to the first bad one), and
 * two files defining the same agent name are a problem too: the second would silently replace
 * the first.
 */
export function checkAgentFiles(files: readonly AgentFileText[]): AgentFilesChecked {
  const agents: AgentDefinition[] = [];
  const problems: AgentFileProblem[] = [];
  const fileOfName = new Map<string, string>();
  for (const { file, text } of files) {
    let agent: AgentDefinition;
    try {
      agent = parseAgentFile(text, file);
      checkAgent(agent);
    } catch (error) {
      problems.push({ file, reason: problemReason(error, file) });
      continue;
    }
    const first = fileOfName.get(agent.name);
    if (first !== undefined) {
      problems.push({ file, reason: `agent name '${agent.name}' is already defined by ${first}` });
      continue;
    }
    fileOfName.set(agent.name, file);
    agents.push(agent);
  }
  return { agents, problems };
}

/**
 * One line saying why a file was refused: the parser's message without the file name it
 * starts with, the schema issues as `field: message`, and only the first line of multi-line
 * messages (the YAML parser appends a code excerpt).
 */
export function problemReason(error: unknown, file: string): string {
  if (!isRelayError(error)) return firstLine(error instanceof Error ? error.message : String(error));
  const message = firstLine(
    error.message.startsWith(`${file}: `) ? error.message.slice(file.length + 2) : error.message,
  );
  const issues = (error.details as { issues?: { path: string; message: string }[] } | undefined)?.issues;
  if (Array.isArray(issues) && issues.length > 0) {
    return `${message.replace(/\.$/, "")}: ${issues.map((issue) => `${issue.path}: ${firstLine(issue.message)}`).join("; ")}`;
  }
  return message;
}

/** The problems as the lines a user reads: `file: reason`, one per file. */
export function formatProblems(problems: readonly AgentFileProblem[]): string[] {
  return problems.map(({ file, reason }) => `${file}: ${reason}`);
}

/** The first non-empty line, without the colon that introduces what the line dropped. */
function firstLine(text: string): string {
  return (text.split(/\r?\n/).find((line) => line.trim() !== "") ?? text).trim().replace(/:$/, "");
}
