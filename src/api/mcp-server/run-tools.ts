import type { McpServer, ServerContext } from "@modelcontextprotocol/server";
import * as z from "zod";
import { RelayError } from "../../errors";
import { issuesOf } from "../../errors/issues";
import { AgentName } from "../../schemas/agent";
import { ContentText } from "../../schemas/handoff";
import { InboxResolve } from "../../schemas/inbox";
import type { LiveEvent } from "../../schemas/live";
import { answerInbox } from "./answer-inbox";
import { inCallTrace, type McpContext } from "./context";
import { toolValue } from "./results";
import { inboxAnswerItem, progressMessage, runAnswer, runFailed } from "./run-answer";
import { sendMessage } from "./send-message";
import { advertised, checked } from "./tool-input";

/**
 * The tools that run agents (docs/mcp-server.md, Tools): `send_message` and `answer_inbox`.
 * A run that failed or was cancelled is a tool error carrying its error's code.
 */

export const SendMessageArgs = z.strictObject({
  session_id: z.string().min(1).max(200).optional().describe("The session to continue; a new one when left out."),
  agent: AgentName.optional().describe("Only for a new session: who takes it; the router picks when left out."),
  content: ContentText.pipe(z.string().min(1)).describe("The user's message."),
});

export const AnswerInboxArgs = z.strictObject({
  inbox_id: z.string().min(1).max(200).describe("The item's id: a run's waiting_for names it (inb_…)."),
  decision: z.enum(["approve", "deny"]).optional().describe("An approval's answer."),
  reason: z.string().optional().describe("Why, with a decision."),
  reply: z.string().optional().describe("A question's answer: a human agent's turn, or an escalation."),
  by: z.string().optional().describe("Who answered, for the audit trail (default 'mcp')."),
});

/** A progress notification per live event worth naming, when the client gave a progressToken. */
function progressReporter(mcp: ServerContext): (event: LiveEvent) => Promise<void> {
  const token = mcp.mcpReq._meta?.progressToken;
  let progress = 0;
  return async (event) => {
    if (token === undefined) return;
    const message = progressMessage(event);
    if (message === null) return;
    progress += 1;
    // A client that went away does not fail the run's answer.
    await mcp.mcpReq
      .notify({ method: "notifications/progress", params: { progressToken: token, progress, message } })
      .catch(() => undefined);
  };
}

/** Registers `send_message` and `answer_inbox` on `server`. */
export function registerRunTools(server: McpServer, ctx: McpContext): void {
  server.registerTool(
    "send_message",
    {
      title: "Send a message",
      description:
        "Sends a user message and waits for the run: the answer, the agent that gave it and the handoffs taken, or what the run waits for (an approval, a person) with the inbox ids answer_inbox takes. Without session_id, starts a session (with the agent named, or the router's pick). Sends progress notifications when given a progressToken.",
      inputSchema: advertised(SendMessageArgs),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async (raw: unknown, mcp: ServerContext) =>
      checked(SendMessageArgs, async (args) => {
        const sent = await sendMessage(inCallTrace(ctx, mcp.mcpReq._meta), args, progressReporter(mcp));
        return toolValue({ ...runAnswer(sent.run), session_created: sent.created }, runFailed(sent.run));
      })(raw),
  );

  server.registerTool(
    "answer_inbox",
    {
      title: "Answer the inbox",
      description:
        "Approves or denies a tool call waiting for approval, or answers a person's turn or an escalation with a reply; then waits for the run it resumed.",
      inputSchema: advertised(AnswerInboxArgs),
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: true },
    },
    async (raw: unknown, mcp: ServerContext) =>
      checked(AnswerInboxArgs, async ({ inbox_id, ...answer }) => {
        const parsed = InboxResolve.safeParse(answer);
        if (!parsed.success)
          throw new RelayError("VALIDATION_FAILED", "Invalid tool arguments.", { issues: issuesOf(parsed.error) });
        const { item, run } = await answerInbox(inCallTrace(ctx, mcp.mcpReq._meta), inbox_id, parsed.data);
        return toolValue(
          { item: inboxAnswerItem(item), run: run ? runAnswer(run) : null },
          run !== null && runFailed(run),
        );
      })(raw),
  );
}
