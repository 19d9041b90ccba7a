/**
 * Which vault secrets a definition names, pure: an agent's or tool's `signing_secret` and the
 * values of its `headers`. Registration checks each exists, the vault's listing shows who uses
 * each, and a secret in use is not deleted.
 */

/** A definition's fields that can name secrets (webhook and a2a agents; http and mcp tools). */
export interface NamesSecrets {
  name: string;
  signing_secret?: string | undefined;
  headers?: Readonly<Record<string, string>> | undefined;
}

/** One secret a definition names, and where (`signing_secret`, `headers.Authorization`). */
export interface SecretReference {
  field: string;
  name: string;
}

export function secretReferences(definition: NamesSecrets): SecretReference[] {
  const refs: SecretReference[] = [];
  if (definition.signing_secret !== undefined) refs.push({ field: "signing_secret", name: definition.signing_secret });
  for (const [header, name] of Object.entries(definition.headers ?? {}))
    refs.push({ field: `headers.${header}`, name });
  return refs;
}

/** Every secret named by the tenant's agents and tools, with the names of those using it (sorted). */
export function secretUsers(
  agents: readonly NamesSecrets[],
  tools: readonly NamesSecrets[],
): Map<string, { agents: string[]; tools: string[] }> {
  const users = new Map<string, { agents: Set<string>; tools: Set<string> }>();
  const add = (kind: "agents" | "tools", definition: NamesSecrets) => {
    for (const { name } of secretReferences(definition)) {
      let entry = users.get(name);
      if (!entry) {
        entry = { agents: new Set(), tools: new Set() };
        users.set(name, entry);
      }
      entry[kind].add(definition.name);
    }
  };
  for (const agent of agents) add("agents", agent);
  for (const tool of tools) add("tools", tool);
  return new Map(
    [...users].map(([name, entry]) => [name, { agents: [...entry.agents].sort(), tools: [...entry.tools].sort() }]),
  );
}
