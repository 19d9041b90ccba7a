/**
 * `npm run tokenizer:ranks`: writes public/tokenizer/cl100k_base.json from the installed
 * gpt-tokenizer, the rank table the Worker loads to count tokens (docs/memory.md, Token
 * accounting). Run it after upgrading gpt-tokenizer; test/memory/tokenizer.test.ts fails
 * while the committed file differs from what this writes.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import ranks from "gpt-tokenizer/bpeRanks/cl100k_base";
import { RANKS_ASSET, ranksJson } from "./lib/tokenizer-ranks";

const file = join(import.meta.dirname, "..", "public", RANKS_ASSET);
const text = ranksJson(ranks);
writeFileSync(file, text);
console.log(`Wrote ${file}: ${ranks.length} ranks, ${Buffer.byteLength(text)} bytes.`);
