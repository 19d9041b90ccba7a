import { runInDurableObject } from "cloudflare:test";
import { env } from "cloudflare:workers";
import fc from "fast-check";
import ranks from "gpt-tokenizer/bpeRanks/cl100k_base";
import { countTokens, encode } from "gpt-tokenizer/encoding/cl100k_base";
import { describe, expect, it } from "vitest";
import { ranksJson } from "../../scripts/lib/tokenizer-ranks";
import type { Env } from "../../src/env";
import { utf8Length } from "../../src/memory/tokens";
import { RANKS_ASSET, TokenizerLoader } from "../../src/services/tokenizer";
import { spyOnConsoleError } from "../console-spy";
import type { SessionDO } from "../worker";

/** The tokenizer (src/services/tokenizer.ts): its rank table read from the static assets. */

/** gpt-tokenizer's own count, special-token text counted as text (its countTokens refuses it). */
const reference = (text: string) => encode(text, { disallowedSpecial: new Set() }).length;

const samples = [
  "The locker code is 7319.",
  "我想申请退款，订单号是 4411。",
  "Ünïcödé façade — naïve café, 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 and emoji 👩🏽‍💻🚀🇫🇷.",
  "Привет, как дела? مرحبا كيف حالك؟ नमस्ते 안녕하세요 こんにちは",
  JSON.stringify({ id: 42, items: [{ sku: "A-1", qty: 3, note: "tab\there, newline\nthere" }] }, null, 2),
  "2026-11-29T16:20:00Z INFO  request id=01J... status=200 latency_ms=12.5\n".repeat(20),
  "    indented code();\r\n\r\n\t\tif (x) { return y; }   ",
  "a stray surrogate \ud800 and \udfff alone",
  "user text naming <|endoftext|> and <|im_start|> is text",
];

describe("the rank table", () => {
  it("is served as `npm run tokenizer:ranks` writes it from the installed gpt-tokenizer", async () => {
    const response = await env.ASSETS.fetch(new Request(`http://relay.test${RANKS_ASSET}`));
    expect(response.status).toBe(200);
    // Compared whole: a table written from another version of the package, or edited, fails here.
    expect(await response.text()).toBe(ranksJson(ranks));
  });

  it("is public rank data served as inert JSON: its type, never sniffed, never framed", async () => {
    const response = await env.ASSETS.fetch(new Request(`http://relay.test${RANKS_ASSET}`));
    expect(response.headers.get("Content-Type")).toMatch(/^application\/json/);
    expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(response.headers.get("Content-Security-Policy")).toMatch(/default-src 'none'/);
    expect(response.headers.get("Content-Security-Policy")).toMatch(/frame-ancestors 'none'/);
    await response.body?.cancel();
  });
});

describe("counting", () => {
  it("loads once per loader and counts as gpt-tokenizer's cl100k_base does", async () => {
    const loader = new TokenizerLoader();
    const [first, second] = await Promise.all([loader.load(env.ASSETS), loader.load(env.ASSETS)]);
    expect(first.exact).toBe(true);
    expect(second).toBe(first);
    expect(await loader.load(env.ASSETS)).toBe(first);
    expect(loader.loaded()).toBe(first.count);
    expect(first.count("")).toBe(0);
    for (const text of samples) expect(first.count(text), text).toBe(reference(text));
    expect(first.count("The locker code is 7319.")).toBe(countTokens("The locker code is 7319."));
  });

  it("agrees with gpt-tokenizer on any text: ASCII, full Unicode, lone surrogates", async () => {
    const { count } = await new TokenizerLoader().load(env.ASSETS);
    fc.assert(
      fc.property(
        fc.oneof(
          fc.string({ maxLength: 300 }),
          fc.string({ unit: "grapheme", maxLength: 200 }),
          fc.string({ unit: "binary", maxLength: 200 }),
          fc.json(),
        ),
        (text) => {
          expect(count(text)).toBe(reference(text));
        },
      ),
      { numRuns: 500 },
    );
  });

  it("a session's Durable Object reaches the table through its own ASSETS binding", async () => {
    const stub = env.SESSIONS.get(
      env.SESSIONS.idFromName("tokenizer-reach"),
    ) as unknown as DurableObjectStub<SessionDO>;
    const exact = await runInDurableObject(stub, async (instance) => {
      const own = (instance as unknown as { env: Env }).env;
      return (await new TokenizerLoader().load(own.ASSETS)).exact;
    });
    expect(exact).toBe(true);
  });
});

describe("when the table cannot be read", () => {
  it("without an ASSETS binding, counts are UTF-8 lengths, said so in the log", async () => {
    const logged = spyOnConsoleError();
    const loader = new TokenizerLoader();
    const tokenizer = await loader.load(undefined);
    expect(tokenizer.exact).toBe(false);
    expect(tokenizer.count).toBe(utf8Length);
    expect(loader.loaded()).toBeUndefined();
    expect(logged).toHaveBeenCalledWith(
      expect.stringMatching(/^tokenizer: the Worker has no ASSETS binding; .*upper bound/),
    );
  });

  it.each([
    ["a missing table", "/tokenizer/missing.json", /answered 404/],
    ["a file that is not the table", "/index.html", /could not be read|is not a table/],
  ])("%s falls back to the bound, and is tried again only after a while", async (_, path, reason) => {
    const logged = spyOnConsoleError();
    const loader = new TokenizerLoader(path);
    expect((await loader.load(env.ASSETS)).exact).toBe(false);
    expect((await loader.load(env.ASSETS)).exact).toBe(false);
    expect(logged).toHaveBeenCalledTimes(1);
    expect(logged).toHaveBeenCalledWith(expect.stringMatching(reason));
  });
});
