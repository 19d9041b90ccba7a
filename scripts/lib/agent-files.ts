import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { type AgentFilesChecked, type AgentFileText, checkAgentFiles } from "./agent-check";
import { CliError } from "./cli-error";

/**
 * Reads every `*.md` agent file in a folder and checks them all (see checkAgentFiles). A
 * folder that is missing or holds no agent file is a CliError; a file that cannot be read is
 * one more problem line, like an invalid one.
 */
export function readAgentDir(dir: string): AgentFilesChecked {
  let names: string[];
  try {
    if (!statSync(dir).isDirectory()) throw new CliError(`${dir} is not a folder.`);
    names = readdirSync(dir)
      .filter((name) => name.endsWith(".md"))
      .sort();
  } catch (error) {
    if (error instanceof CliError) throw error;
    if (systemReason(error) === "ENOENT") throw new CliError(`Agent folder not found: ${dir}`);
    throw new CliError(`Cannot read the agent folder ${dir}: ${systemReason(error)}.`);
  }
  if (names.length === 0) throw new CliError(`No agent files (*.md) in ${dir}.`);
  const files: AgentFileText[] = [];
  const unreadable: AgentFilesChecked["problems"] = [];
  for (const file of names) {
    try {
      files.push({ file, text: readFileSync(join(dir, file), "utf8") });
    } catch (error) {
      unreadable.push({ file, reason: `cannot be read (${systemReason(error)})` });
    }
  }
  const checked = checkAgentFiles(files);
  return {
    agents: checked.agents,
    problems: [...unreadable, ...checked.problems].sort((a, b) => a.file.localeCompare(b.file)),
  };
}

/** `ENOENT`, `EACCES`…: the part of a file-system error a user can act on. */
function systemReason(error: unknown): string {
  return (error as { code?: string }).code ?? (error instanceof Error ? error.message : String(error));
}
