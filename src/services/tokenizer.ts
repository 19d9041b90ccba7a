import { BytePairEncodingCore, type RawBytePairRanks } from "gpt-tokenizer/BytePairEncodingCore";
import { Cl100KBase } from "gpt-tokenizer/encodingParams/cl100k_base";
import { deadline } from "../lib/deadline";
import { type CountTokens, utf8Length } from "../memory/tokens";

/**
 * The cl100k_base tokenizer (docs/memory.md, Token accounting). Its rank table is a static
 * asset (public/tokenizer/cl100k_base.json, written by `npm run tokenizer:ranks`), not part of
 * the Worker: a megabyte no isolate evaluates unless a conversation nears its budget. It is
 * read through the ASSETS binding once per isolate; when it cannot be, counting falls back to
 * the UTF-8 length, an upper bound, and the log says so.
 */

/** Where the rank table is served. */
export const RANKS_ASSET = "/tokenizer/cl100k_base.json";
/** cl100k_base's mergeable tokens: a table of any other length is not the one the counts need. */
export const RANKS_COUNT = 100_256;
/** How long the table's read may take, body included (it is about 0.9 MiB, from the platform's own store). */
export const RANKS_DEADLINE_MS = 5_000;
/** After a failed read, how long counting stays on the upper bound before the next try. */
export const RANKS_RETRY_MS = 60_000;

/** A token counter, and whether its counts are exact (false: the UTF-8 length stands in). */
export interface Tokenizer {
  count: CountTokens;
  exact: boolean;
}

const FALLBACK: Tokenizer = { count: utf8Length, exact: false };

/** Reads the rank table, or says why not. */
async function readRanks(assets: Fetcher | undefined, path: string): Promise<RawBytePairRanks | string> {
  if (!assets) return "the Worker has no ASSETS binding";
  const limit = deadline(RANKS_DEADLINE_MS);
  try {
    const response = await assets.fetch(new Request(new URL(path, "https://assets.invalid")), {
      signal: limit.signal,
    });
    if (!response.ok) {
      await response.body?.cancel();
      return `${path} answered ${response.status}`;
    }
    const ranks: unknown = await response.json();
    if (!Array.isArray(ranks) || ranks.length !== RANKS_COUNT) return `${path} is not a table of ${RANKS_COUNT} ranks`;
    for (const token of ranks)
      if (typeof token !== "string" && !Array.isArray(token))
        return `${path} holds a token that is neither text nor bytes`;
    return ranks as RawBytePairRanks;
  } catch (error) {
    return `${path} could not be read (${error instanceof Error ? `${error.name}: ${error.message}` : String(error)})`;
  } finally {
    limit.clear();
  }
}

/**
 * One isolate's tokenizer: loaded on first need, shared by concurrent callers; a failure is
 * remembered for RANKS_RETRY_MS so that a missing table costs one read a minute, not one per turn.
 */
export class TokenizerLoader {
  private exact: Tokenizer | undefined;
  private loading: Promise<Tokenizer> | undefined;
  private failedAt: number | undefined;

  constructor(private readonly path = RANKS_ASSET) {}

  load(assets: Fetcher | undefined): Promise<Tokenizer> {
    if (this.exact) return Promise.resolve(this.exact);
    if (this.failedAt !== undefined && Date.now() - this.failedAt < RANKS_RETRY_MS) return Promise.resolve(FALLBACK);
    this.loading ??= this.read(assets).finally(() => {
      this.loading = undefined;
    });
    return this.loading;
  }

  /** The exact counter when this isolate has loaded it, else undefined. */
  loaded(): CountTokens | undefined {
    return this.exact?.count;
  }

  private async read(assets: Fetcher | undefined): Promise<Tokenizer> {
    const ranks = await readRanks(assets, this.path);
    if (typeof ranks === "string") {
      this.failedAt = Date.now();
      console.error(`tokenizer: ${ranks}; token counts are UTF-8 lengths (an upper bound) for now`);
      return FALLBACK;
    }
    const core = new BytePairEncodingCore(Cl100KBase(ranks));
    // No special tokens are honoured: "<|endoftext|>" in a message is text, counted as such.
    const count = (text: string) => (text === "" ? 0 : core.countNative(text));
    this.exact = { count, exact: true };
    this.failedAt = undefined;
    return this.exact;
  }
}

const isolate = new TokenizerLoader();

/** This isolate's tokenizer (ASSETS is the Worker's binding: a Durable Object has it too). */
export function loadTokenizer(assets: Fetcher | undefined): Promise<Tokenizer> {
  return isolate.load(assets);
}

/** The exact counter when this isolate has loaded it, else undefined. */
export function loadedTokenizer(): CountTokens | undefined {
  return isolate.loaded();
}
