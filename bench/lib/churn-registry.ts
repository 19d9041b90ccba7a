/**
 * The churn bench's registry (docs/benchmarks.md, "Heavy tenant and churn"): agent i has 2
 * keywords, 1 pattern and 3 examples drawn from the synthetic vocabulary, the same for a given
 * i and version in every run. The router-memory bench measures the router of the same registry.
 */
import { seededRandom } from "../../src/lib/prng";
import { AgentDefinition } from "../../src/schemas/agent";
import { corpus } from "./rules-synthetic-registry";

export const words = corpus();

export const sentence = (rand: ReturnType<typeof seededRandom>, n: number) =>
  Array.from({ length: n }, () => rand.pick(rand.int(2) === 0 ? words.vocabulary : words.filler)).join(" ");

/** Agent i of the registry (`version` > 0: a changed definition of it). */
export function churnAgent(i: number, version = 0): AgentDefinition {
  const rand = seededRandom(1000 + i + 7919 * version);
  return AgentDefinition.parse({
    name: `agent-${String(i).padStart(5, "0")}`,
    description: `synthetic agent ${i}`,
    triggers: {
      keywords: [rand.pick(words.vocabulary), rand.pick(words.vocabulary)],
      patterns: [`tk${i.toString(36)}-\\d{4}`],
      examples: [sentence(rand, 8), sentence(rand, 8), sentence(rand, 8)],
    },
  });
}

/** A registry of `agents` agents straight into D1, 50 rows a batch, and the version bumped once. */
export async function seedChurnTenant(db: D1Database, tenant: string, agents: number): Promise<void> {
  const now = new Date().toISOString();
  for (let start = 0; start < agents; start += 50) {
    const batch: D1PreparedStatement[] = [];
    for (let i = start; i < Math.min(agents, start + 50); i++) {
      const definition = churnAgent(i);
      batch.push(
        db
          .prepare(
            "INSERT OR REPLACE INTO agents (tenant, name, definition, created_at, updated_at) VALUES (?1, ?2, ?3, ?4, ?4)",
          )
          .bind(tenant, definition.name, JSON.stringify(definition), now),
      );
    }
    await db.batch(batch);
  }
  await db
    .prepare(
      `INSERT INTO registry_versions (tenant, version, stamp) VALUES (?1, 1, ?2)
       ON CONFLICT (tenant) DO UPDATE SET version = version + 1, stamp = excluded.stamp`,
    )
    .bind(tenant, crypto.randomUUID())
    .run();
}
