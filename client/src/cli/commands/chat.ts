import { RelayApiError } from "../../errors.ts";
import type { RunStream } from "../../run-stream.ts";
import type { KnownLiveEvent, LiveEvent, MessageRun, Run, RunPending } from "../../types.ts";
import { isKnownLiveEvent, isLiveEvent } from "../../types.ts";
import { type ChatCommand, parseChatLine } from "../chat-commands.ts";
import { cancelRun, handOff, routed, startSession } from "../chat-turns.ts";
import { showView } from "../chat-views.ts";
import type { Command, Context } from "../command.ts";
import { text } from "../command.ts";
import { CliError, cliErrorOf, EXIT, type ExitCode, failureLine, usage } from "../exit.ts";
import { CUT_MARK, eventLine } from "../render.ts";
import { checked, checkedEvent, INBOX_ITEM, INBOX_RESOLVED, reply, WITH_RUN } from "../replies.ts";
import type { Strategy } from "./route.ts";

/**
 * `relay chat`: a conversation with the tenant's agents in the terminal (docs/cli.md, Chat).
 * The first message is routed (or goes to `--agent`); each message's run is streamed as it
 * happens; a run that pauses for a person — a human agent's turn, an escalation, an
 * approval, a client tool — is answered inline, and the resumed run is followed on the
 * session's WebSocket from the last event seen. A line that starts with `/` or `@` is an in-chat
 * command (chat-commands.ts); Ctrl-C while a run streams cancels that run.
 */

type RunView = Omit<Run, "events">;

const PAUSED = new Set(["awaiting_human", "awaiting_approval", "requires_action"]);
/** The events a followed run ends or pauses with; their data is the run. */
const ENDS = ["run_completed", "run_failed", "run_cancelled", "run_paused"] as const;
const isRunEnd = (event: LiveEvent): event is Extract<KnownLiveEvent, { type: (typeof ENDS)[number] }> =>
  isKnownLiveEvent(event) && (ENDS as readonly string[]).includes(event.type);
/** Where chat's live events come from, for a BAD_REPLY's message. */
const STREAM = "POST /v1/sessions/{id}/messages";
const SOCKET = "GET /v1/sessions/{id}/ws";
/** How a message picks its agent: the chat's default, one named (`@<agent>`), or the router (`@auto`). */
type Choice = { agent: string } | { route: true; strategy?: Strategy } | undefined;

class Chat {
  private sessionId: string | null;
  private lastEventId: string | null = null;
  /** Runs whose answer (or failure) is on screen already. */
  private readonly shown = new Set<string>();
  /** The message whose pieces are being written on the current line. */
  private writing: string | null = null;
  /** Messages shown piece by piece (their stored whole is not printed again). */
  private readonly written = new Set<string>();
  exitCode: ExitCode | undefined;

  private readonly ctx: Context;
  private readonly agent: string | undefined;

  constructor(ctx: Context, agent: string | undefined, session: string | undefined) {
    this.ctx = ctx;
    this.agent = agent;
    this.sessionId = session ?? null;
  }

  private get relay() {
    return this.ctx.relay();
  }

  /** Prints an event once it is one chat can read (`from`: the request it came on). */
  private print(received: LiveEvent, from: string): LiveEvent {
    const event = checkedEvent(received, this.relay.url, from);
    this.show(event);
    return event;
  }

  private show(event: LiveEvent): void {
    if (event.id) this.lastEventId = event.id;
    if (this.ctx.out.json) {
      this.ctx.out.data(event, true);
      return;
    }
    if (this.streamed(event)) return;
    const line = eventLine(event, "chat");
    if (!line) return;
    this.endPieces();
    if (event.run_id && (event.type === "run_failed" || event.type === "message")) this.shown.add(event.run_id);
    this.ctx.out.line(line.style ? this.ctx.out.paint(line.style, line.text) : line.text);
  }

  /**
   * An answer written as it comes: its agent's name before the first piece, each piece as it
   * arrives; the stored message with the same id ends the line instead of being printed again.
   * True when the event was taken care of here.
   */
  private streamed(event: LiveEvent): boolean {
    if (isLiveEvent(event, "message.delta")) {
      if (this.writing !== event.data.message_id) {
        this.endPieces();
        this.writing = event.data.message_id;
        this.written.add(event.data.message_id);
        this.ctx.out.write(`${event.data.agent}: `);
      }
      this.ctx.out.write(event.data.delta);
      return true;
    }
    if (isLiveEvent(event, "message") && event.data.id !== undefined && this.written.has(event.data.id)) {
      if (event.data.cut && this.writing === event.data.id) this.ctx.out.write(this.ctx.out.paint("yellow", CUT_MARK));
      this.endPieces();
      if (event.run_id) this.shown.add(event.run_id);
      return true;
    }
    return false;
  }

  /** Ends the line of pieces, before anything else is printed. */
  private endPieces(): void {
    if (this.writing === null) return;
    this.writing = null;
    this.ctx.out.line();
  }

  /** A session for the first message: the agent named, or the router's choice (chat-turns.ts). */
  private async ensureSession(input: string, choice: Choice): Promise<boolean> {
    if (this.sessionId) return true;
    const agent = choice === undefined ? this.agent : "agent" in choice ? choice.agent : undefined;
    const strategy = choice && "route" in choice ? choice.strategy : undefined;
    this.sessionId = await startSession(this.ctx, input, agent, strategy);
    return this.sessionId !== null;
  }

  /** Prints what a run ended with, unless its events showed it already. */
  private finish(run: RunView): RunView {
    this.endPieces();
    const { out } = this.ctx;
    if (out.json) return run;
    if (!this.shown.has(run.id)) {
      if (run.status === "completed" && run.output) out.line(`${run.output_agent ?? run.agent}: ${run.output}`);
      if (run.status === "failed")
        out.line(
          out.paint(
            "red",
            `✗ the run failed: ${run.error ? `${run.error.code}: ${run.error.message}` : "no reason given"}`,
          ),
        );
      this.shown.add(run.id);
    }
    if (run.status === "failed") this.exitCode = EXIT.FAILED;
    return run;
  }

  /**
   * Sends a message and streams its run. Ctrl-C meanwhile cancels the run (once its id is
   * known, from its first event) and the stream goes on to its end: what was written stays,
   * marked cut. A second Ctrl-C is not claimed, so it leaves.
   */
  async send(content: string, choice?: Choice): Promise<RunView | null> {
    if (!(await this.ensureSession(content, choice))) return null;
    const stream: RunStream = await this.relay.streamMessage(this.sessionId!, content, { signal: this.ctx.signal });
    let runId: string | null = null;
    let interrupted = false;
    const release = this.ctx.claimInterrupt(() => {
      interrupted = true;
      if (runId) void this.cancel(runId);
    });
    try {
      for await (const event of stream) {
        if (runId === null && event.run_id) {
          runId = event.run_id;
          if (interrupted) void this.cancel(runId);
        }
        this.print(event, STREAM);
      }
    } finally {
      release();
    }
    const result = checked<MessageRun>(await stream.result(), WITH_RUN, this.relay.url, STREAM);
    if (this.ctx.out.json) this.ctx.out.data({ type: "result", ...result }, true);
    this.lastEventId = stream.lastEventId ?? this.lastEventId;
    return this.finish(result.run);
  }

  /** Ctrl-C: cancels the run; nothing is thrown (chat-turns.ts). */
  private cancel(runId: string): Promise<void> {
    return cancelRun(this.ctx, this.sessionId!, runId);
  }

  /**
   * `@<agent> "…"`: the message for a named agent. A new session starts with it; in a session
   * held by another agent, a handoff to it comes first (a refusal is said and nothing is sent).
   */
  async sendTo(agent: string, content: string): Promise<RunView | null> {
    if (this.sessionId) await handOff(this.ctx, this.sessionId, agent, "asked for by the user in relay chat");
    return this.send(content, { agent });
  }

  /**
   * `@auto "…"`: the message routed as a first one is; in a session, handed to the agent the
   * router names when another holds it. When nothing fits, nothing is sent.
   */
  async sendRouted(content: string, strategy: Strategy | undefined): Promise<RunView | null> {
    if (!this.sessionId) return this.send(content, { route: true, ...(strategy ? { strategy } : {}) });
    const decision = await routed(this.ctx, content, strategy);
    await handOff(this.ctx, this.sessionId, decision.agent, `routed via ${decision.method} (relay chat @auto)`);
    return this.send(content);
  }

  /** Runs one typed line; false when it asks to leave or input ended with a run still waiting. */
  async run(command: ChatCommand): Promise<boolean> {
    let run: RunView | null = null;
    switch (command.kind) {
      case "quit":
        return false;
      case "refused":
        throw usage(command.message);
      case "message":
        run = await this.send(command.text);
        break;
      case "to":
        run = await this.sendTo(command.agent, command.text);
        break;
      case "auto":
        run = await this.sendRouted(command.text, command.strategy);
        break;
      default:
        await showView(this.ctx.out, this.relay, this.sessionId, command);
        return true;
    }
    return run === null || (await this.answerPauses(run));
  }

  /** The question a pause asks, and its inbox item's reason when it has one. */
  private async reasonOf(inboxId: string): Promise<string> {
    try {
      const item = await reply(
        this.relay,
        this.relay.api.GET("/v1/inbox/{id}", { params: { path: { id: inboxId } } }),
        INBOX_ITEM,
        "GET /v1/inbox/{id}",
      );
      return item.reason;
    } catch {
      return "";
    }
  }

  /**
   * Sends `answer` and follows the resumed run on the session's WebSocket from the last event
   * seen, until the run ends or pauses again.
   */
  private async resume(run: RunView, answer: () => Promise<RunView | null>): Promise<RunView | null> {
    const sub = this.relay.subscribe(this.sessionId!, {
      ...(this.lastEventId ? { after: this.lastEventId } : {}),
      signal: this.ctx.signal,
    });
    const release = this.ctx.claimInterrupt(() => void this.cancel(run.id));
    try {
      await sub.ready;
      const answered = await answer();
      if (answered === null || answered.status === "awaiting_approval") return answered;
      for await (const event of sub) {
        if (event.run_id !== run.id) continue;
        // Run events' data were checked as runs by print.
        const seen = this.print(event, SOCKET);
        if (isRunEnd(seen)) return this.finish(seen.data);
      }
      return answered;
    } finally {
      release();
      sub.close();
    }
  }

  private async resolve(id: string, body: { reply: string } | { decision: "approve" | "deny"; reason?: string }) {
    const { run } = await reply(
      this.relay,
      this.relay.api.POST("/v1/inbox/{id}/resolve", { params: { path: { id } }, body: { ...body, by: "relay chat" } }),
      INBOX_RESOLVED,
      "POST /v1/inbox/{id}/resolve",
    );
    return run;
  }

  /** Answers the run's pauses one after another; false when input ended with the run still waiting. */
  async answerPauses(first: RunView): Promise<boolean> {
    const { out } = this.ctx;
    let run: RunView | null = first;
    while (run && PAUSED.has(run.status) && run.pending) {
      const pending: RunPending = run.pending;
      const current: RunView = run;
      if (pending.kind === "human") {
        const reason = await this.reasonOf(pending.inbox_id);
        const who =
          pending.tool_call_id === null
            ? `${pending.agent} is a person: answer as ${pending.agent}`
            : `${pending.agent} asks a person`;
        out.line(out.paint("yellow", `✋ ${who}${reason ? ` (${reason})` : ""}`));
        const reply = await this.ask("reply> ", `relay inbox reply ${pending.inbox_id} <text>`);
        if (reply === null) return false;
        run = await this.resume(current, () => this.resolve(pending.inbox_id, { reply }));
      } else if (pending.kind === "input") {
        // A remote agent asked for more: the next message continues its task.
        out.line(
          out.paint("yellow", `✋ ${pending.agent} (a remote agent) asks for more: your next message answers it`),
        );
        return true;
      } else if (pending.kind === "approval") {
        const open: typeof pending.approvals = pending.approvals.filter((a) => a.decision === null);
        let answered: RunView | null = current;
        for (let i = 0; i < open.length; i++) {
          const approval = open[i]!;
          const reason = await this.reasonOf(approval.inbox_id);
          out.line(
            out.paint(
              "yellow",
              `✋ ${reason || `${pending.agent} wants to call ${approval.tool_call.name}(${approval.tool_call.arguments})`}`,
            ),
          );
          const typed = await this.ask(
            "approve? [y/n, or n <reason>] ",
            `relay inbox approve|deny ${approval.inbox_id}`,
          );
          if (typed === null) return false;
          const [word, ...why] = typed.trim().split(/\s+/);
          const decision = /^y(es)?$/i.test(word ?? "") ? "approve" : "deny";
          const body = {
            decision,
            ...(decision === "deny" && why.length > 0 ? { reason: why.join(" ") } : {}),
          } as const;
          const last: boolean = i === open.length - 1;
          answered = last
            ? await this.resume(current, () => this.resolve(approval.inbox_id, body))
            : await this.resolve(approval.inbox_id, body);
        }
        run = answered;
      } else {
        const outputs: { tool_call_id: string; output: string }[] = [];
        for (const call of pending.tool_calls) {
          out.line(out.paint("yellow", `✋ ${pending.agent} called the client tool ${call.name}(${call.arguments})`));
          const output = await this.ask("output> ", `session ${this.sessionId} needs the outputs of its client tools`);
          if (output === null) return false;
          outputs.push({ tool_call_id: call.id, output });
        }
        run = await this.resume(current, async () => {
          const answer = await reply(
            this.relay,
            this.relay.api.POST("/v1/sessions/{id}/tool-outputs", {
              params: { path: { id: this.sessionId! } },
              body: { run_id: current.id, outputs },
            }),
            WITH_RUN,
            "POST /v1/sessions/{id}/tool-outputs",
          );
          return answer.run;
        });
      }
    }
    return true;
  }

  /** One answer from standard input; at its end, says what is left waiting. */
  private async ask(prompt: string, later: string): Promise<string | null> {
    const line = await this.ctx.readLine(prompt);
    if (line === null) this.ctx.out.note(`Left waiting: ${later}`);
    return line;
  }
}

export const chat: Command = {
  name: "chat",
  summary: "Talk to the agents: routing, handoffs and the run as they happen; answer people's turns inline",
  usage: [
    "relay chat [--agent <name>] [--session <id>]",
    "  Each line you type is a message; /help lists the in-chat commands (@auto, @<agent>, /agents …);",
    "  /quit, Ctrl-C at the prompt (or the end of input) leaves; Ctrl-C while a run streams cancels it.",
    "  Without --agent the first message is routed; --session continues a session.",
  ].join("\n"),
  options: { agent: { type: "string", short: "a" }, session: { type: "string" } },
  async run(ctx) {
    const session = text(ctx, "session");
    const conversation = new Chat(ctx, text(ctx, "agent"), session);
    if (!ctx.out.json)
      ctx.out.note(
        ctx.out.paint("dim", `Relay at ${ctx.settings().url}. Type a message; /help for commands, /quit to leave.`),
      );
    for (;;) {
      const line = await ctx.readLine("you> ");
      if (line === null || ctx.signal.aborted) break;
      const message = line.trim();
      if (message === "") continue;
      try {
        if (!(await conversation.run(parseChatLine(message)))) break;
      } catch (error) {
        if (ctx.signal.aborted) break;
        // A refusal (Relay's 4xx, or a command chat cannot run) is said and the conversation goes on;
        // anything else (no answer, one that cannot be read) ends it.
        const refusal = (error instanceof RelayApiError && error.status < 500) || error instanceof CliError;
        if (!refusal) throw error;
        const cli = cliErrorOf(error);
        if (ctx.out.json) ctx.out.data({ type: "error", error: { code: cli.code, message: cli.plain } }, true);
        else ctx.out.error(ctx.out.paint("red", failureLine(cli)));
        conversation.exitCode = cli.exitCode;
      }
    }
    return conversation.exitCode;
  },
};
