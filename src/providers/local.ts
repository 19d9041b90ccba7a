/**
 * The local provider — NOT AN LLM. An offline, deterministic stand-in that picks a tool by
 * lexical overlap between the last user message and each tool's name and description, so
 * the LLM tier works end to end with no network and no keys (`npm run dev` on a bare
 * machine). It understands nothing: synonyms, negation and paraphrase all escape it.
 */
import { abortError } from "./failures";
import { extractiveDigest } from "./local-digest";
import type { ChatProvider, ChatRequest, ChatResponse, OnText, ToolSpec } from "./types";
import { fallbackCallId } from "./wire";

// Han, Hiragana, Katakana and Hangul have no reliable word boundaries without a
// dictionary, so each character is its own token.
const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu;
// "_" is not a word character here, so tool names like transfer_to_billing split into words.
const WORD = /[\p{L}\p{N}]+/gu;

// Function words that would otherwise make every tool overlap with every message.
const STOPWORDS = new Set([
  "a",
  "an",
  "and",
  "are",
  "as",
  "at",
  "be",
  "but",
  "by",
  "can",
  "do",
  "for",
  "from",
  "have",
  "i",
  "if",
  "in",
  "is",
  "it",
  "me",
  "my",
  "no",
  "not",
  "of",
  "on",
  "or",
  "our",
  "so",
  "that",
  "the",
  "their",
  "this",
  "to",
  "was",
  "we",
  "what",
  "when",
  "where",
  "which",
  "who",
  "will",
  "with",
  "you",
  "your",
  "的",
  "了",
  "是",
  "我",
  "你",
  "在",
  "和",
  "有",
  "吗",
  "呢",
  "吧",
  "啊",
  "の",
  "は",
  "が",
  "を",
  "に",
  "で",
  "と",
  "も",
]);

/** How many matched terms the reason names. */
const REASON_TERMS = 3;

/**
 * Folds common English plurals so "refunds" meets "refund" and "crashes" meets "crash".
 * Both sides go through it, so consistency matters more than linguistics.
 */
function foldPlural(token: string): string {
  if (token.length <= 3 || !/^[a-z]+$/.test(token)) return token;
  if (token.endsWith("ies")) return `${token.slice(0, -3)}y`;
  if (/(?:s|x|z|ch|sh)es$/.test(token)) return token.slice(0, -2);
  if (token.endsWith("s") && !/(?:ss|us|is)$/.test(token)) return token.slice(0, -1);
  return token;
}

/** Lower-case word tokens (plurals folded) and single CJK characters, stopwords removed, in text order. */
export function lexicalTokens(text: string): string[] {
  const spaced = text.normalize("NFKC").toLowerCase().replace(CJK, " $& ");
  return (spaced.match(WORD) ?? []).filter((token) => !STOPWORDS.has(token)).map(foldPlural);
}

/** One tool's score against a query: matched terms and the sum of their IDF weights. */
export interface LexicalScore {
  tool: string;
  score: number;
  /** Matched terms, most specific (highest IDF) first, ties alphabetical. */
  terms: string[];
}

/**
 * Scores every tool: each distinct query term found in a tool's name or description adds
 * its smoothed IDF, ln(1 + N/df), so a term shared by all tools weighs least. Tool order is kept.
 */
export function scoreTools(query: string, tools: readonly ToolSpec[]): LexicalScore[] {
  const docs = tools.map((tool) => new Set(lexicalTokens(`${tool.function.name} ${tool.function.description}`)));
  const df = new Map<string, number>();
  for (const doc of docs) for (const term of doc) df.set(term, (df.get(term) ?? 0) + 1);
  const queryTerms = [...new Set(lexicalTokens(query))];
  return tools.map((tool, i) => {
    const doc = docs[i] ?? new Set<string>();
    const matched = queryTerms.filter((term) => doc.has(term));
    const idf = (term: string): number => Math.log(1 + tools.length / (df.get(term) ?? 1));
    const terms = matched.sort((a, b) => idf(b) - idf(a) || (a < b ? -1 : a > b ? 1 : 0));
    return { tool: tool.function.name, score: terms.reduce((sum, term) => sum + idf(term), 0), terms };
  });
}

/** A local stream hands out this many words at a time, this far apart. */
const STREAM_WORDS = 3;
const STREAM_GAP_MS = 15;

/** How much of the user's message a local answer quotes. */
const QUOTE_CHARS = 120;

/** The best-scoring tool with a term in common with `query` (ties: the earlier tool), or null. */
function bestTool(query: string, tools: readonly ToolSpec[]): LexicalScore | null {
  let best: LexicalScore | null = null;
  for (const candidate of scoreTools(query, tools)) {
    if (candidate.score > 0 && (best === null || candidate.score > best.score)) best = candidate;
  }
  return best;
}

function callOf(best: LexicalScore): ChatResponse {
  const reason = `local lexical match: ${best.terms.slice(0, REASON_TERMS).join(", ")}`;
  return {
    tool_calls: [{ id: fallbackCallId("local", 0), name: best.tool, arguments: JSON.stringify({ reason }) }],
    content: null,
  };
}

function quote(text: string): string {
  const line = text.replace(/\s+/g, " ").trim();
  return line.length > QUOTE_CHARS ? `${line.slice(0, QUOTE_CHARS - 1)}…` : line;
}

/**
 * The offline provider.
 *
 * `tool_choice: "required"` (the router): one call to the best-scoring tool, with arguments
 * `{"reason": "local lexical match: <top terms>"}`, or content only when no tool shares a
 * term with the last user message.
 *
 * `tool_choice: "auto"` (an agent's turn): the same choice among the tools not yet called
 * since the last user message — so an agent handed a conversation can pass it on once more
 * but two agents never bounce the same message back and forth — and a plain answer that
 * quotes the message when no tool matches (or none is offered). `"none"`: an extractive
 * digest of the last user message (a summary request's transcript). No tools otherwise:
 * content only.
 */
export class LocalProvider implements ChatProvider {
  readonly name = "local" as const;

  /** `pieceGapMs`: the pause between the pieces a stream hands out, so the demo is seen to stream. */
  constructor(private readonly pieceGapMs = STREAM_GAP_MS) {}

  /** The same answer as `complete`, its text handed out a few words at a time. */
  async stream(req: ChatRequest, signal: AbortSignal, onText: OnText): Promise<ChatResponse> {
    const sent = Date.now();
    const response = await this.complete(req, signal);
    const words = (response.content ?? "").split(/(?<=\s)/);
    let first: number | undefined;
    for (let i = 0; i < words.length; i += STREAM_WORDS) {
      if (i > 0 && this.pieceGapMs > 0) await new Promise((resolve) => setTimeout(resolve, this.pieceGapMs));
      if (signal.aborted) throw abortError(signal, this.name);
      first ??= Date.now() - sent;
      onText(words.slice(i, i + STREAM_WORDS).join(""));
    }
    return { ...response, streamed: true, ...(first === undefined ? {} : { first_chunk_ms: first }) };
  }

  /** The answer, finished as a model's would be: `tool_calls` when it calls one, else `stop`. */
  async complete(req: ChatRequest, signal: AbortSignal): Promise<ChatResponse> {
    if (signal.aborted) throw abortError(signal, this.name);
    const response = answerOf(req);
    return { ...response, finish_reasons: [response.tool_calls.length > 0 ? "tool_calls" : "stop"] };
  }
}

function answerOf(req: ChatRequest): ChatResponse {
  // An agent's turn answers even with no tools to offer (a fan-out task): it quotes the message.
  if (req.tool_choice === "auto") return agentTurn(req);
  // No tools to choose from: what a summary request asks (docs/memory.md), a digest of the message.
  if (req.tool_choice === "none") {
    const last = req.messages.findLast((message) => message.role === "user");
    return { tool_calls: [], content: last ? extractiveDigest(last.content) : "" };
  }
  if (req.tools.length === 0) {
    return { tool_calls: [], content: "local provider: no tools offered" };
  }
  const last = req.messages.findLast((message) => message.role === "user");
  const best = bestTool(last?.content ?? "", req.tools);
  if (best === null) return { tool_calls: [], content: "local lexical match: no tool shares a term with the message" };
  return callOf(best);
}

function agentTurn(req: ChatRequest): ChatResponse {
  const lastUser = req.messages.findLastIndex((message) => message.role === "user");
  const message = req.messages[lastUser];
  if (message?.role !== "user")
    return { tool_calls: [], content: "local provider (offline, not a model): there is no user message to answer." };
  const called = new Set(
    req.messages
      .slice(lastUser + 1)
      .flatMap((m) => (m.role === "assistant" ? (m.tool_calls ?? []).map((call) => call.name) : [])),
  );
  const best = bestTool(
    message.content,
    req.tools.filter((tool) => !called.has(tool.function.name)),
  );
  if (best !== null) return callOf(best);
  return { tool_calls: [], content: `local provider (offline, not a model) answering: “${quote(message.content)}”` };
}
