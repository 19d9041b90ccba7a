import { RelayError } from "../../errors";
import { readSse } from "../../lib/sse";
import { readLiveFrame } from "../../runtime/live-events";
import type { MessageRun } from "../../schemas/api";
import type { LiveEvent } from "../../schemas/live";
import type { Run } from "../../schemas/run";
import { sessionValue } from "../../services/session-results";
import { MCP_ACTOR, type McpContext } from "./context";
import { assertExposed } from "./expose";
import { readSession, sessionOf, startSession } from "./sessions";

/**
 * `send_message` (docs/mcp-server.md): a user message to a session — a new one when none is
 * named, with the agent named or the router's pick — and its run waited for. The run is
 * streamed from its session (the same stream `POST /v1/sessions/:id/messages` serves as
 * Server-Sent Events), so each live event can become a progress notification; the answer is
 * the stream's `result`. The run is detached from the stream: a caller that goes away, or
 * waits longer than SEND_WAIT_MS, leaves it running.
 */

/** How long a call waits for its run before answering `running` (MCP clients commonly give up at 60 s). */
export const SEND_WAIT_MS = 50_000;

export interface SendArgs {
  session_id?: string | undefined;
  agent?: string | undefined;
  content: string;
}

/** What send_message did: the session the message went to (new or not) and the run as it stands. */
export interface Sent {
  session_id: string;
  created: boolean;
  run: Run;
}

/**
 * Sends the message and waits for its run to end or pause (at most `waitMs`), calling
 * `onEvent` with each live event of the run meanwhile.
 */
export async function sendMessage(
  ctx: McpContext,
  args: SendArgs,
  onEvent: (event: LiveEvent) => Promise<void> | void,
  waitMs = SEND_WAIT_MS,
): Promise<Sent> {
  let sessionId = args.session_id;
  let admitted = false;
  if (sessionId !== undefined) {
    if (args.agent !== undefined)
      throw new RelayError(
        "VALIDATION_FAILED",
        "`agent` chooses who starts a new session; leave it out with session_id.",
        {
          issues: [{ path: "agent", message: "only without session_id" }],
        },
      );
    // A conversation an MCP client continues must be with an agent the tenant exposes.
    if (ctx.exposure !== null) {
      const current = (await readSession(ctx, sessionId)).current_agent;
      if (current !== null) assertExposed(ctx.exposure, current);
    }
  } else {
    const started = await startSession(ctx, { agent: args.agent, input: args.content }, true);
    sessionId = started.view.id;
    admitted = true;
  }
  const id = sessionId;
  const opened = await sessionOf(ctx, id).streamMessage(
    args.content,
    MCP_ACTOR,
    {},
    {
      detached: true,
      admitted,
      ...(ctx.trace ? { trace: ctx.trace } : {}),
    },
  );
  const { stream } = await sessionValue(ctx.env, ctx.tenant, id, opened);
  const run = await followRun(ctx, id, stream, onEvent, waitMs);
  return { session_id: id, created: args.session_id === undefined, run };
}

/** Reads the run's stream to its `result`; past `waitMs`, stops reading and answers the run as it stands. */
async function followRun(
  ctx: McpContext,
  sessionId: string,
  stream: ReadableStream<Uint8Array>,
  onEvent: (event: LiveEvent) => Promise<void> | void,
  waitMs: number,
): Promise<Run> {
  // Read through a pipe that can be cut: past the wait, the pipe is aborted, which cancels our
  // end of the run's stream (detached: the run goes on) and ends a read still pending.
  const cut = new AbortController();
  const pipe = new TransformStream<Uint8Array, Uint8Array>();
  stream.pipeTo(pipe.writable, { signal: cut.signal }).catch(() => undefined);
  const frames = readSse(pipe.readable)[Symbol.asyncIterator]();
  let runId: string | null = null;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => {
    timer = setTimeout(() => resolve("late"), waitMs);
  });
  try {
    for (;;) {
      const next = await Promise.race([frames.next(), late]);
      if (next === "late" || next.done) break;
      const frame = next.value;
      if (frame.event === "result") return (JSON.parse(frame.data) as MessageRun).run;
      if (frame.event === "message.delta") continue;
      const event = readLiveFrame(frame);
      // One this version cannot read (a newer type, say) is skipped, as a forward-compatible reader does.
      if (event === null || event.type === "message.delta") continue;
      runId ??= event.run_id;
      await onEvent(event);
    }
  } finally {
    clearTimeout(timer);
    cut.abort();
  }
  if (runId === null) throw new RelayError("INTERNAL", "The run's stream ended before it named its run.");
  return sessionValue(ctx.env, ctx.tenant, sessionId, await sessionOf(ctx, sessionId).getRun(runId));
}
