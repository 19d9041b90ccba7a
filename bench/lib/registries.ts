/**
 * CLINC150 as Relay registries: one agent per domain. Shared by the routing-quality bench and
 * the calibration fit so both build agents the same way.
 */
import { AgentDefinition } from "../../src/schemas/agent";
import type { ClincRow } from "./clinc";

/** How many keywords `deriveKeywords` gives each domain. */
export const KEYWORDS_PER_DOMAIN = 10;

/**
 * Keywords a developer might write, derived from training rows only: words (surface form, as
 * the keyword matcher sees them) in ≥ 5 utterances of a domain and ≥ 90% of whose in-scope
 * occurrences are in that domain, the most frequent first.
 */
export function deriveKeywords(rows: readonly ClincRow[], perDomain = KEYWORDS_PER_DOMAIN): Map<string, string[]> {
  const byWord = new Map<string, Map<string, number>>();
  for (const r of rows) {
    if (r.domain === "oos") continue;
    const words = new Set(r.text.toLowerCase().match(/[a-z0-9]+/g) ?? []);
    for (const w of words) {
      if (w.length < 3) continue;
      const m = byWord.get(w) ?? new Map<string, number>();
      m.set(r.domain, (m.get(r.domain) ?? 0) + 1);
      byWord.set(w, m);
    }
  }
  const out = new Map<string, { word: string; n: number }[]>();
  for (const [word, m] of byWord) {
    let total = 0;
    for (const n of m.values()) total += n;
    for (const [domain, n] of m) {
      if (n < 5 || n / total < 0.9) continue;
      const list = out.get(domain) ?? [];
      list.push({ word, n });
      out.set(domain, list);
    }
  }
  const result = new Map<string, string[]>();
  for (const [domain, list] of out) {
    list.sort((a, b) => b.n - a.n || (a.word < b.word ? -1 : 1));
    result.set(
      domain,
      list.slice(0, perDomain).map((x) => x.word),
    );
  }
  return result;
}

/** One agent per domain (in `domains` order) with the given examples and keywords. */
export function domainAgents(
  domains: readonly string[],
  examples: Map<string, string[]>,
  keywords: Map<string, string[]> = new Map(),
): AgentDefinition[] {
  return domains.map((d) =>
    AgentDefinition.parse({
      name: d,
      title: d.replace(/_/g, " "),
      triggers: { examples: examples.get(d) ?? [], keywords: keywords.get(d) ?? [] },
    }),
  );
}
