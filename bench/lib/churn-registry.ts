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
