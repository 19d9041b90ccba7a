import { env } from "cloudflare:workers";
import { wellFormed } from "./inputs";

/**
 * Values no answer may hold (docs/security.md, The tenant vault: a value goes in and never
 * comes out): every value the fuzz suite stores in a vault — the fixtures' and those a 2xx
 * PUT /v1/secrets accepted — and the Worker's own secrets. Each is looked for in an answer's
 * body and headers as it is, as JSON writes it inside a string, and percent-encoded.
 */

/** In every value the suite stores but signing secrets: an answer holding it holds a value, or part of one. */
export const MARKER = "fuzz-secret-value-";

const hex = (bytes: number) =>
  [...crypto.getRandomValues(new Uint8Array(bytes))].map((b) => b.toString(16).padStart(2, "0")).join("");

/** A vault value that cannot turn up by chance: the marker, what it is, random text. */
export const markedValue = (what: string): string => `${MARKER}${what}-${hex(12)}`;

/** A Standard Webhooks secret (whsec_ + base64 of 32 random bytes): what a `signing_secret` must hold. */
export const signingValue = (): string =>
  `whsec_${btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))}`;

/** The Worker's settings that hold secrets: API keys, the operator's key, the vault key, webhook and model secrets. */
const WORKER_SECRET =
  /^(RELAY_API_KEYS|RELAY_OPERATOR_KEY|RELAY_VAULT_KEY|OPENAI_API_KEY|(AGENT|TOOL|WEBHOOK)_SECRET_.+)$/;

/** The Worker's secrets in the test env, one value each (a key list split; an API key without its tenant). */
export function workerSecrets(): string[] {
  const values: string[] = [];
  for (const [name, setting] of Object.entries(env as unknown as Record<string, unknown>)) {
    if (!WORKER_SECRET.test(name) || typeof setting !== "string") continue;
    for (const part of setting.split(",").map((p) => p.trim())) {
      const value = name === "RELAY_API_KEYS" ? part.slice(part.indexOf(":") + 1) : part;
      if (value) values.push(value);
    }
  }
  return values;
}

/**
 * Whether a value is worth looking for: a value the fuzzer stored may be `x` or `null`, which
 * any answer can hold without leaking anything; twelve characters of four kinds cannot.
 */
export const distinctive = (value: string): boolean => value.length >= 12 && new Set(value).size >= 4;

/** How a value can appear in an answer's text. */
function forms(value: string): string[] {
  const out = new Set([value, JSON.stringify(value).slice(1, -1)]);
  if (wellFormed(value) === value) out.add(encodeURIComponent(value));
  return [...out];
}

/** The values watched, each with the forms it is looked for in. */
export class Watch {
  readonly #values = new Map<string, { forms: string[]; sent: boolean }>();

  /** Watches a value the suite chose (a fixture's, the Worker's): unless marked, since the marker is looked for anyway. */
  add(value: string): void {
    if (!value.includes(MARKER)) this.#values.set(value, { forms: forms(value), sent: false });
  }

  /**
   * Watches a value a case stored, and the text it is stored as (lone surrogates replaced),
   * when distinctive: another case's request may carry it too, and its answer quote it.
   */
  addSent(value: string): void {
    for (const v of new Set([value, wellFormed(value)]))
      if (!v.includes(MARKER) && distinctive(v) && !this.#values.has(v))
        this.#values.set(v, { forms: forms(v), sent: true });
  }

  /**
   * What of a watched value an answer holds (null: nothing). `request` is the request's URL and
   * body: an answer may quote a value a case stored when the request carried it again, unless
   * `own` holds it — the value a PUT /v1/secrets sent, which its answer never quotes.
   */
  find(body: string, headers: Headers, request: string, own: string | null = null): string | null {
    const texts = [body, ...[...headers].map(([name, value]) => `${name}: ${value}`)];
    const ownForms = own !== null && distinctive(own) ? forms(own) : [];
    for (const text of texts) {
      if (text.includes(MARKER)) return `'${excerptAround(text, MARKER)}' (a stored value's marker)`;
      const mine = ownForms.find((s) => text.includes(s));
      if (mine) return `'${excerptAround(text, mine)}' (the value this request sent)`;
      for (const [value, { forms, sent }] of this.#values) {
        if (sent && request.includes(value)) continue;
        const shape = forms.find((s) => text.includes(s));
        if (shape) return `'${excerptAround(text, shape)}' (a stored value or a Worker secret)`;
      }
    }
    return null;
  }
}

function excerptAround(text: string, found: string): string {
  const at = text.indexOf(found);
  return text.slice(Math.max(0, at - 40), at + found.length + 40);
}

/** The suite's watch: the Worker's secrets from the start, stored values as they are stored. */
export const watch = new Watch();
for (const value of workerSecrets()) watch.add(value);
