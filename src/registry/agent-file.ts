import { type CST, Parser, parse as parseYaml } from "yaml";
import { RelayError } from "../errors";
import { issuesOf } from "../errors/issues";
import { checkDepth, valueDepth } from "../lib/json-depth";
import { AgentDefinition } from "../schemas/agent";

/**
 * Agents as Markdown files (docs/agents.md, Agent files): YAML front matter between `---` lines holds
 * the definition's fields; the body below it is the agent's instructions.
 */
const FRONT_MATTER = /^\uFEFF?---\r?\n([\s\S]*?)\r?\n---[ \t]*(?:\r?\n|$)([\s\S]*)$/;

/**
 * The deepest nesting of collections (block or flow maps and sequences) in YAML text. The
 * yaml package's CST parser keeps its own stack rather than recursing, and the tree is
 * walked here with an explicit stack too; only a document within the limit is then
 * composed (which recurses) into values.
 */
export function yamlDepth(text: string): number {
  let max = 0;
  for (const token of new Parser().parse(text)) {
    const stack: [CST.Token | undefined, number][] = [[token, 0]];
    while (stack.length > 0) {
      const [node, parentDepth] = stack.pop()!;
      if (node === undefined) continue;
      if (node.type === "document") stack.push([node.value, parentDepth]);
      else if (node.type === "block-map" || node.type === "block-seq" || node.type === "flow-collection") {
        const depth = parentDepth + 1;
        max = Math.max(max, depth);
        for (const item of node.items) {
          if ("key" in item && item.key) stack.push([item.key, depth]);
          stack.push([item.value, depth]);
        }
      }
    }
  }
  return max;
}

export function parseAgentFile(text: string, fileName: string): AgentDefinition {
  const match = FRONT_MATTER.exec(text);
  if (!match) {
    throw new RelayError(
      "INVALID_AGENT_FILE",
      `${fileName}: no YAML front matter (the file must start with a '---' line).`,
      {
        file: fileName,
      },
    );
  }
  const frontText = match[1] ?? "";
  checkDepth(yamlDepth(frontText), `${fileName}: front matter`, { file: fileName });
  let front: unknown;
  try {
    front = parseYaml(frontText);
  } catch (error) {
    throw new RelayError(
      "INVALID_AGENT_FILE",
      `${fileName}: front matter is not valid YAML: ${(error as Error).message}`,
      {
        file: fileName,
      },
    );
  }
  // Aliases can nest deeper than the text does; the parsed value is bounded by the alias limit.
  checkDepth(valueDepth(front), `${fileName}: front matter`, { file: fileName });
  if (typeof front !== "object" || front === null || Array.isArray(front)) {
    throw new RelayError("INVALID_AGENT_FILE", `${fileName}: front matter must be a mapping of fields.`, {
      file: fileName,
    });
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
