/**
 * CLINC150 loader for the routing-quality bench and the calibration fit.
 * Data: CLINC150 by Larson et al., 2019 (github.com/clinc/oos-eval), CC BY 3.0,
 * read from ../shared/datasets/clinc150 beside the repository.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

/** One labelled utterance. `domain` and `intent` are "oos" for out-of-scope rows. */
export interface ClincRow {
  text: string;
  intent: string;
  domain: string;
}

export interface Clinc {
  train: ClincRow[];
  val: ClincRow[];
  /** Domain → its 15 intents, in the file's order. */
  domains: Record<string, string[]>;
}

export const CLINC_CREDIT = "CLINC150 by Larson et al., 2019, CC BY 3.0";

/** The repository root (bench/lib/ is two levels down). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** Reads the dataset; throws with the expected location when it is missing. */
export function loadClinc(dir = path.resolve(repoRoot, "../shared/datasets/clinc150")): Clinc {
  const read = (f: string) => JSON.parse(readFileSync(path.join(dir, f), "utf8")) as unknown;
  const split = read("train_val.json") as { train: ClincRow[]; val: ClincRow[] };
  const domains = read("domains.json") as Record<string, string[]>;
  return { train: split.train, val: split.val, domains };
}

/** In-scope rows of a split grouped by domain, optionally keeping the first `perIntent` rows of each intent. */
export function examplesByDomain(rows: readonly ClincRow[], perIntent = Infinity): Map<string, string[]> {
  const seen = new Map<string, number>();
  const out = new Map<string, string[]>();
  for (const r of rows) {
    if (r.domain === "oos") continue;
    const k = seen.get(r.intent) ?? 0;
    if (k >= perIntent) continue;
    seen.set(r.intent, k + 1);
    const list = out.get(r.domain) ?? [];
    list.push(r.text);
    out.set(r.domain, list);
  }
  return out;
}
