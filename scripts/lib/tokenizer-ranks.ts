/**
 * The cl100k_base rank table the Worker loads from its static assets (docs/memory.md, Token
 * accounting): gpt-tokenizer's own array, index = rank, each token a string when its bytes are
 * UTF-8 and an array of bytes when not — the form its encoder takes, and JSON, which a Worker
 * parses faster than anything it would have to decode token by token.
 */

/** Where the table is served, and where it is written in the repository (under `public/`). */
export const RANKS_ASSET = "/tokenizer/cl100k_base.json";

/** The table's text, from gpt-tokenizer's ranks (`gpt-tokenizer/bpeRanks/cl100k_base`). */
export function ranksJson(ranks: readonly (string | readonly number[])[]): string {
  return `${JSON.stringify(ranks)}\n`;
}
