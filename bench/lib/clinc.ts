/**
 * CLINC150 loader for the routing-quality bench and the calibration fit.
 * Data: CLINC150 by Larson et al., 2019 (github.com/clinc/oos-eval), CC BY 3.0. It is not in
 * the repository: it is read from CLINC150_DIR, by default ../shared/datasets/clinc150 beside
 * the repository.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { currentInvocation, resolveUserPath } from "../../scripts/lib/paths";

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

/** The environment variable naming the data folder. */
export const CLINC_DIR_VAR = "CLINC150_DIR";

/** The repository root (bench/lib/ is two levels down). */
export const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** The data folder: CLINC150_DIR (relative to where the command was typed) or the workspace copy. */
export function clincDir(env: Record<string, string | undefined> = process.env): string {
  const typed = env[CLINC_DIR_VAR];
  return typed ? resolveUserPath(typed, currentInvocation()) : path.resolve(repoRoot, "../shared/datasets/clinc150");
}

/** The data is missing or unreadable; the message says where it was looked for and how to get it. */
export class ClincDataError extends Error {
  override readonly name = "ClincDataError";
}

/**
 * Builds the data set from the files of one folder, read through `file` (a name → its text, or
 * undefined when the folder has no such file). Two layouts are accepted, both with the
 * original `domains.json` (domain → its intents):
 * - `train_val.json`: `{ train, val }`, rows `{ text, intent, domain }` (the workspace copy);
 * - `data_full.json` as published in github.com/clinc/oos-eval: `train`, `val`, `oos_train`,
 *   `oos_val` as `[text, intent]` pairs, converted here in memory (in-scope rows first, then
 *   the out-of-scope ones, as in the workspace copy).
 */
export function clincFromFiles(dir: string, file: (name: string) => string | undefined): Clinc {
  const domainsText = file("domains.json");
  const splitText = file("train_val.json");
  const fullText = splitText === undefined ? file("data_full.json") : undefined;
  if (domainsText === undefined || (splitText === undefined && fullText === undefined)) {
    const missing = [
      domainsText === undefined ? "domains.json" : null,
      splitText === undefined && fullText === undefined ? "train_val.json or data_full.json" : null,
    ];
    throw new ClincDataError(
      missingMessage(
        dir,
        missing.filter((m): m is string => m !== null),
      ),
    );
  }
  const domains = parse(dir, "domains.json", domainsText);
  if (!isDomains(domains))
    throw new ClincDataError(badFile(dir, "domains.json", "expected an object of domain → array of intent names"));
  if (splitText !== undefined) {
    const split = parse(dir, "train_val.json", splitText) as { train?: unknown; val?: unknown } | null;
    if (!isRows(split?.train) || !isRows(split?.val)) {
      throw new ClincDataError(
        badFile(dir, "train_val.json", "expected { train, val }, each an array of { text, intent, domain }"),
      );
    }
    return { train: split.train, val: split.val, domains };
  }
  const full = parse(dir, "data_full.json", fullText as string) as Record<string, unknown> | null;
  const domainOf = new Map(
    Object.entries(domains).flatMap(([domain, intents]) => intents.map((intent) => [intent, domain] as const)),
  );
  const rows = (key: string, oos: boolean): ClincRow[] => {
    const pairs = full?.[key];
    if (!isPairs(pairs))
      throw new ClincDataError(
        badFile(dir, "data_full.json", `expected "${key}" to be an array of [text, intent] pairs`),
      );
    return pairs.map(([text, intent]) => {
      const domain = oos ? "oos" : domainOf.get(intent);
      if (domain === undefined)
        throw new ClincDataError(badFile(dir, "data_full.json", `intent "${intent}" is in no domain of domains.json`));
      return { text, intent: oos ? "oos" : intent, domain };
    });
  };
  return {
    train: [...rows("train", false), ...rows("oos_train", true)],
    val: [...rows("val", false), ...rows("oos_val", true)],
    domains,
  };
}

/**
 * Reads the data set from `dir`; throws ClincDataError, with the expected location and how to get the
 * data, when it is missing.
 */
export function loadClinc(dir = clincDir()): Clinc {
  return clincFromFiles(dir, (name) => {
    const file = path.join(dir, name);
    return existsSync(file) ? readFileSync(file, "utf8") : undefined;
  });
}

/** loadClinc for a bench's entry point: a ClincDataError ends the process with its message and exit code 1. */
export function loadClincOrExit(dir = clincDir()): Clinc {
  try {
    return loadClinc(dir);
  } catch (error) {
    if (!(error instanceof ClincDataError)) throw error;
    console.error(error.message);
    process.exit(1);
  }
}

/** The message a user without the data reads: where it was looked for, how to point elsewhere, how to get it. */
function missingMessage(dir: string, missing: string[]): string {
  return [
    "This benchmark needs the CLINC150 data set, which is not part of the repository.",
    `  Looked in:  ${dir} (missing: ${missing.join(", and ")})`,
    `  Elsewhere:  set ${CLINC_DIR_VAR}=<folder> (default: ../shared/datasets/clinc150 beside the repository)`,
    "  Format:     domains.json plus either train_val.json ({ train, val } rows of { text, intent, domain })",
    "              or the original data_full.json (converted when loaded)",
    "  Get it:     CLINC150, Larson et al. 2019, CC BY 3.0: data/data_full.json and data/domains.json",
    "              from https://github.com/clinc/oos-eval, then e.g.",
    `              ${CLINC_DIR_VAR}=/path/to/oos-eval/data npm run bench:routing`,
  ].join("\n");
}

function badFile(dir: string, name: string, what: string): string {
  return `${path.join(dir, name)} is not CLINC150 data in a format this loader reads: ${what}.`;
}

function parse(dir: string, name: string, text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch (error) {
    throw new ClincDataError(badFile(dir, name, `not JSON (${(error as Error).message})`));
  }
}

const isObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);

function isDomains(value: unknown): value is Record<string, string[]> {
  return (
    isObject(value) &&
    Object.values(value).every((intents) => Array.isArray(intents) && intents.every((i) => typeof i === "string"))
  );
}

function isRows(value: unknown): value is ClincRow[] {
  return (
    Array.isArray(value) &&
    value.every(
      (row) =>
        isObject(row) &&
        typeof row.text === "string" &&
        typeof row.intent === "string" &&
        typeof row.domain === "string",
    )
  );
}

function isPairs(value: unknown): value is [string, string][] {
  return (
    Array.isArray(value) &&
    value.every((pair) => Array.isArray(pair) && pair.length === 2 && pair.every((x) => typeof x === "string"))
  );
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

/** Utterances per intent (and out-of-scope rows) of train held out as the unseen split. */
export const HOLDOUT_PER_INTENT = 20;

/**
 * Train split in two: the rows to learn and tune from, and an unseen split nothing is fitted
 * or tuned on — a stand-in for the test split the project does not have. The last
 * HOLDOUT_PER_INTENT rows of each intent (out-of-scope counted as one intent) are held out.
 */
export function splitHoldout(rows: readonly ClincRow[]): { learn: ClincRow[]; unseen: ClincRow[] } {
  const total = new Map<string, number>();
  for (const r of rows) total.set(r.intent, (total.get(r.intent) ?? 0) + 1);
  const seen = new Map<string, number>();
  const learn: ClincRow[] = [];
  const unseen: ClincRow[] = [];
  for (const r of rows) {
    const k = seen.get(r.intent) ?? 0;
    seen.set(r.intent, k + 1);
    ((total.get(r.intent) ?? 0) - k <= HOLDOUT_PER_INTENT ? unseen : learn).push(r);
  }
  return { learn, unseen };
}
