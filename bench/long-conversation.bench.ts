/**
 * A turn late in a long conversation (docs/benchmarks.md, Long conversations): its latency at
 * the client and what the model is sent, as the history grows to 50, 200 and 800 messages, for
 * an agent that never compacts (`memory.strategy: none`, a budget far past the conversation)
 * and one that summarises past a small budget (`max_input_tokens` 4,000, `summarize`). Each
 * agent holds one conversation of turns, one message in flight: the user says something, the
 * agent answers. Around each length the bench times WINDOW turns of each agent, alternating
 * between the two, whose history runs from WINDOW messages below the length to WINDOW above;
 * the turns between windows are not timed.
 *
 *   npx tsx bench/long-conversation.bench.ts
 *
 * The model is an OpenAI-compatible fake in this process, on loopback, that answers at once,
 * whole (as a server that cannot stream does), with the real `completion_tokens` of its answer (Relay stores that as the answer's count) and
 * keeps what it was sent; what it was sent is counted after each window with gpt-tokenizer's
 * cl100k_base, in OpenAI's chat format, so the counting never delays a turn. A summary request
 * is told apart by its system message ("You compact a conversation…").
 *
 * Baselines in the same run: `GET /health` one at a time, and the platform's floor for a
 * turn's storage work at each length (bench/lib/baseline-object.ts, `/history`): the smallest
 * SQLite-backed object reading the last N rows of a table of N history rows and appending one.
 * Ports: the first free ones of 8870–8879.
 */
import { createServer, type Server } from "node:http";
import { countTokens } from "gpt-tokenizer/encoding/cl100k_base";
import { apiClient } from "./lib/api-client";
import { floorCall, startBaselineObjects } from "./lib/baseline-object";
import { chatCompletion } from "./lib/chat-completion";
import { freePorts } from "./lib/free-port";
import { startWorkerdServer } from "./lib/workerd-server";
import { percentile } from "./lib/wrangler-dev";

const KEY = "bench-long-conversation-key";
const LENGTHS = [50, 200, 800];
/** Turns timed around each length; each turn adds two messages. */
const WINDOW = 20;
const HEALTH = 200;
const FLOOR_CALLS = 100;
const BUDGET = 4000;
const AGENTS = [
  { name: "bench-memory-none", label: "no compaction", memory: { strategy: "none", max_input_tokens: 1_000_000 } },
  {
    name: "bench-memory-summarize",
    label: "summarize, 4,000",
    memory: { strategy: "summarize", max_input_tokens: BUDGET },
  },
] as const;

/** What users say: support-desk sentences, about 250 characters a message. */
const SENTENCES = [
  "My order from last Tuesday still shows as processing and the tracking number does not work.",
  "I was charged twice for the annual plan, once on the 3rd and again on the 5th of this month.",
  "The invoice lists the old billing address in Leeds; it should be 14 Harbour Street, Bristol.",
  "Can you tell me whether the refund for the cancelled seats has gone through to my card yet?",
  "Two of my team cannot sign in since the password policy changed, and the reset link expires.",
  "We would like to move from monthly to yearly billing without losing the discount we have now.",
  "The export to CSV stops at ten thousand rows, but our account holds about forty thousand.",
];
const userMessage = (turn: number) =>
  `(${turn}) ${SENTENCES[turn % SENTENCES.length]} ${SENTENCES[(turn * 3 + 1) % SENTENCES.length]} What should I do next?`;
/** What the agent answers, about 300 characters, each counted once here. */
const REPLIES = [
  "Thanks for the details. I have checked the account and can see the issue you describe. I have opened a ticket with the team that handles it and added a note with the dates and amounts you gave me. You will get an email when it is resolved, usually within two working days.",
  "I understand. I have looked at the order history and the payment records for this account. The change you asked for is made now, and the next invoice will show it. If anything still looks wrong after that, reply here and I will pick it up again straight away.",
  "Good question. The setting you need is under Account, then Billing, then Plan. I have also sent you a link to the help page that walks through it step by step. Let me know if the option is not there for you, as that would mean your role lacks the permission.",
].map((content) => ({ content, tokens: countTokens(content) }));
const SUMMARY = {
  content:
    "The user is a customer of the support desk. They raised a duplicate annual-plan charge (3rd and 5th of the month), a wrong billing address (should be 14 Harbour Street, Bristol), a refund for cancelled seats, sign-in failures after a password policy change, a move to yearly billing keeping their discount, and CSV exports cut at ten thousand rows. Tickets were opened for each; no answer is pending from the user.",
  tokens: 0,
};
SUMMARY.tokens = countTokens(SUMMARY.content);

interface WireRequest {
  model: string;
  messages: {
    role: string;
    content: string | null;
    tool_calls?: { function: { name: string; arguments: string } }[];
  }[];
  tools?: unknown[];
}

/** The input tokens of a request as it went over the wire (OpenAI's chat format: 3 + 4 a message). */
function inputTokens(body: WireRequest): number {
  let tokens = 3;
  for (const m of body.messages) {
    tokens += 4 + countTokens(m.content ?? "");
    for (const c of m.tool_calls ?? []) tokens += 3 + countTokens(c.function.name) + countTokens(c.function.arguments);
  }
  if (body.tools?.length) tokens += countTokens(JSON.stringify(body.tools));
  return tokens;
}

/** One request the fake received: a summary request or a turn's, and its body until counted. */
interface Received {
  summary: boolean;
  body: WireRequest | null;
  tokens: number;
}

/** The fake model: answers at once; keeps every summary request, and a turn's while `keep` is set. */
function fakeModel() {
  const received: Received[] = [];
  let keep = false;
  const server = createServer((req, res) => {
    let text = "";
    req.on("data", (chunk) => (text += chunk));
    req.on("end", () => {
      const body = JSON.parse(text) as WireRequest;
      const summary = (body.messages[0]?.content ?? "").startsWith("You compact a conversation");
      const reply = summary ? SUMMARY : REPLIES[received.length % REPLIES.length]!;
      received.push({ summary, body: summary || keep ? body : null, tokens: 0 });
      res.writeHead(200, { "content-type": "application/json" });
      // Relay stores completion_tokens as the answer's count; prompt_tokens only meters usage, so an estimate does.
      const usage = { prompt_tokens: Math.ceil(text.length / 4), completion_tokens: reply.tokens };
      res.end(chatCompletion(received.length, body.model, { content: reply.content }, usage));
    });
  });
  return {
    received,
    server,
    setKeep: (on: boolean) => {
      keep = on;
    },
    /** Counts what was kept and not yet counted (between windows: never on a turn's clock). */
    count: () => {
      for (const r of received)
        if (r.body) {
          r.tokens = inputTokens(r.body);
          r.body = null;
        }
    },
  };
}

function listen(server: Server, port: number): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, "127.0.0.1", () => resolve());
  });
}

interface Turn {
  ms: number;
  /** Relay's wait for the model, by its own clock. */
  modelMs: number;
  /** The fake's requests during the turn. */
  requests: Received[];
}

const [relayPort, modelPort, floorPort] = await freePorts(3, 8870, 8879);
const model = fakeModel();
await listen(model.server, modelPort!);
const health = async (url: string) => {
  const started = performance.now();
  await floorCall(`${url}/health`);
  return performance.now() - started;
};
/** What to stop at the end, last started first, whether the run got there or not. */
const stops: (() => Promise<void> | void)[] = [() => void model.server.close()];

try {
  const server = await startWorkerdServer(relayPort!, KEY, {
    OPENAI_BASE_URL: `http://127.0.0.1:${modelPort}/v1`,
    OPENAI_API_KEY: "sk-bench",
  });
  stops.unshift(server.stop);
  const floor = await startBaselineObjects(floorPort!);
  stops.unshift(floor.stop);
  const api = apiClient(`${server.url}/v1`, KEY).ok;
  for (const agent of AGENTS)
    await api("PUT", `/agents/${agent.name}`, {
      name: agent.name,
      description: "Answers a support desk's customers",
      instructions: "Answer the customer briefly and say what you did.",
      memory: agent.memory,
    });
  await api("PUT", "/config/routing", { llm: { provider: "openai", model: "fake-memory" } });

  /** One user message and the agent's answer, timed at the client. */
  async function turn(session: string, n: number): Promise<Turn> {
    const from = model.received.length;
    const started = performance.now();
    const { run } = await api("POST", `/sessions/${session}/messages`, { role: "user", content: userMessage(n) });
    const ms = performance.now() - started;
    if (run?.status !== "completed") throw new Error(`turn ${n}: ${JSON.stringify(run).slice(0, 400)}`);
    let modelMs = 0;
    for (const e of run.events) if (e.event_type === "llm_call") modelMs += e.duration_ms;
    return { ms, modelMs, requests: model.received.slice(from) };
  }

  // Warm-up: the isolate, the objects and the model path, on a conversation of its own per agent.
  for (let i = 0; i < 100; i++) await health(server.url);
  for (const agent of AGENTS) {
    const { id } = await api("POST", "/sessions", { agent: agent.name, ttl_s: 86_400 });
    for (let i = 0; i < 10; i++) await turn(id, i);
    await api("DELETE", `/sessions/${id}`);
  }
  const healthMs: number[] = [];
  for (let i = 0; i < HEALTH; i++) healthMs.push(await health(server.url));

  const conversationsStart = model.received.length;
  const sessions = new Map<string, { id: string; turns: number }>();
  for (const agent of AGENTS) {
    const { id } = await api("POST", "/sessions", { agent: agent.name, ttl_s: 86_400 });
    sessions.set(agent.name, { id, turns: 0 });
  }
  const windows = new Map<string, Turn[]>();
  // Both conversations reach each window untimed; in it their turns alternate (and which goes
  // first), so a busy moment of the shared machine falls on both agents alike.
  for (const length of LENGTHS) {
    for (const agent of AGENTS) {
      const s = sessions.get(agent.name)!;
      while (s.turns * 2 < length - WINDOW) await turn(s.id, s.turns++);
    }
    model.setKeep(true);
    for (let i = 0; i < WINDOW; i++)
      for (const agent of i % 2 === 0 ? AGENTS : [...AGENTS].reverse()) {
        const s = sessions.get(agent.name)!;
        const key = `${agent.name}@${length}`;
        windows.set(key, [...(windows.get(key) ?? []), await turn(s.id, s.turns++)]);
      }
    model.setKeep(false);
    model.count();
    console.log(`history ${length - WINDOW}–${length + WINDOW - 2}: done`);
  }

  // The floor: the same history lengths in the smallest object, rows as long as the stored items.
  const storedChars = Math.round(
    [...SENTENCES.map((_, i) => userMessage(i)), ...REPLIES.map((r) => r.content)].reduce((a, t) => a + t.length, 0) /
      (SENTENCES.length + REPLIES.length),
  );
  // A stored item is its JSON: the text and about 130 characters of id, role, agent and time.
  const rowChars = storedChars + 130;
  const floorMs = new Map<number, number>();
  const floorHealth: number[] = [];
  for (let i = 0; i < HEALTH; i++) floorHealth.push(await health(floor.url));
  for (const length of LENGTHS) {
    const call = () =>
      floorCall(`${floor.url}/history/floor-${length}?n=${length}&chars=${rowChars}`, { method: "POST" });
    for (let i = 0; i < 20; i++) await call();
    const ms: number[] = [];
    for (let i = 0; i < FLOOR_CALLS; i++) {
      const started = performance.now();
      await call();
      ms.push(performance.now() - started);
    }
    floorMs.set(length, percentile(ms, 50));
  }

  report({ healthMs, floorHealth, floorMs, rowChars, windows, summaries: model.received.slice(conversationsStart) });
} finally {
  for (const stop of stops) await stop();
}

function report({
  healthMs,
  floorHealth,
  floorMs,
  rowChars,
  windows,
  summaries: received,
}: {
  healthMs: number[];
  floorHealth: number[];
  floorMs: Map<number, number>;
  rowChars: number;
  windows: Map<string, Turn[]>;
  summaries: Received[];
}): void {
  const h50 = percentile(healthMs, 50);
  const mean = (xs: number[]) => xs.reduce((a, x) => a + x, 0) / xs.length;
  const f = (x: number, digits = 1) =>
    x.toLocaleString("en", { maximumFractionDigits: digits, minimumFractionDigits: digits });
  const date = new Date().toISOString().slice(0, 10);
  console.log(
    `\nLong conversations on workerd via Miniflare's API (state in memory), 1 in flight, ${WINDOW} turns timed per length, ${date}`,
  );
  console.log(
    `GET /health p50 ${f(h50, 2)} ms (the floor's Worker: ${f(percentile(floorHealth, 50), 2)} ms); the floor's rows ${rowChars} characters\n`,
  );
  console.log(
    "| history | agent | turn p50 ms | vs /health | vs floor | model wait p50 ms | input tokens, mean (max) | compactions |",
  );
  console.log("| --- | --- | --- | --- | --- | --- | --- | --- |");
  const summary = new Map<string, { inputs: number[]; p50: number[] }>();
  for (const length of LENGTHS)
    for (const agent of AGENTS) {
      const timed = windows.get(`${agent.name}@${length}`)!;
      const ms = timed.map((t) => t.ms);
      const inputs = timed.map((t) => t.requests.filter((r) => !r.summary).reduce((a, r) => a + r.tokens, 0));
      const compactions = timed.reduce((a, t) => a + t.requests.filter((r) => r.summary).length, 0);
      const p50 = percentile(ms, 50);
      const row = summary.get(agent.name) ?? { inputs: [], p50: [] };
      row.inputs.push(mean(inputs));
      row.p50.push(p50);
      summary.set(agent.name, row);
      console.log(
        `| ${length} | ${agent.label} | ${f(p50, 2)} | ${f(p50 / h50)}× | ${f(p50 / floorMs.get(length)!)}× (${f(floorMs.get(length)!, 2)} ms) | ` +
          `${f(
            percentile(
              timed.map((t) => t.modelMs),
              50,
            ),
            0,
          )} | ${f(mean(inputs), 0)} (${f(Math.max(...inputs), 0)}) | ${compactions} |`,
      );
    }
  const span = `${LENGTHS.at(-1)} / ${LENGTHS[0]}`;
  console.log(`\n| agent | input tokens ${span} | turn p50 ${span} |\n| --- | --- | --- |`);
  for (const agent of AGENTS) {
    const row = summary.get(agent.name)!;
    console.log(
      `| ${agent.label} | ${f(row.inputs.at(-1)! / row.inputs[0]!, 2)}× | ${f(row.p50.at(-1)! / row.p50[0]!, 2)}× |`,
    );
  }
  const all = [...windows.entries()].filter(([k]) => k.startsWith("bench-memory-summarize"));
  const turns = all.flatMap(([, t]) => t);
  const summaries = received.filter((r) => r.summary);
  const compacting = turns.filter((t) => t.requests.some((r) => r.summary)).map((t) => t.ms);
  const plain = turns.filter((t) => !t.requests.some((r) => r.summary)).map((t) => t.ms);
  const turnInputs = turns.flatMap((t) => t.requests.filter((r) => !r.summary).map((r) => r.tokens));
  const inputs = summaries.map((r) => r.tokens);
  console.log(
    `\nsummarize: ${summaries.length} summary calls in the whole conversation` +
      (inputs.length ? `; their input ${f(mean(inputs), 0)} tokens mean, ${f(Math.max(...inputs), 0)} max` : ""),
  );
  console.log(
    `summarize, timed turns: a turn that compacted p50 ${compacting.length ? `${f(percentile(compacting, 50), 2)} ms` : "—"} (${compacting.length} turns), one that did not ${f(percentile(plain, 50), 2)} ms`,
  );
  const within = Math.max(...turnInputs) <= BUDGET;
  console.log(
    `every timed turn's input within the ${BUDGET}-token budget (cl100k_base, as sent): ${within ? "met" : "MISSED"} (max ${Math.max(...turnInputs)})`,
  );
}
