import { RelayError } from "../../errors";
import { collaborationRpc } from "../../rpc/stubs";
import { escalationItem, escalationOfInboxItem, sessionOfInboxItem } from "../../runtime/inbox";
import type { InboxAnswer, InboxItem, InboxResolve } from "../../schemas/inbox";
import type { Run } from "../../schemas/run";
import { sessionValue } from "../../services/session-results";
import { MCP_ACTOR, type McpContext } from "./context";
import { RUN_CALL_DEADLINE_MS, sessionOf } from "./sessions";

/**
 * `answer_inbox` (docs/mcp-server.md): a person's answer to what waits in the inbox — an
 * approval's decision, a reply to a human agent's turn or an escalation — as
 * `POST /v1/inbox/:id/resolve` gives it (src/api/inbox.ts), through the same RPCs. An answer
 * that resumes a run waits for it like a message does.
 */

const itemMissing = (id: string) => () =>
  new RelayError("INBOX_ITEM_NOT_FOUND", `No inbox item '${id}'.`, { inbox_id: id });

export async function answerInbox(
  ctx: McpContext,
  id: string,
  body: InboxResolve,
): Promise<{ item: InboxItem; run: Run | null }> {
  const by = body.by ?? MCP_ACTOR.actor;
  const collab = escalationOfInboxItem(id);
  if (collab) {
    if (body.reply === undefined)
      throw new RelayError("INBOX_ANSWER_MISMATCH", `Inbox item '${id}' asks a question: answer with a reply.`, {
        inbox_id: id,
        kind: "escalation",
      });
    const rpc = collaborationRpc(ctx.env, ctx.tenant, collab.collaboration_id);
    const resolved = await rpc.resolveEscalation(collab.message_id, { reply: body.reply, by });
    if (!resolved.ok) {
      if (resolved.error.code === "COLLABORATION_NOT_FOUND" || resolved.error.code === "NOT_FOUND")
        throw itemMissing(id)();
      throw RelayError.fromBody(resolved.error);
    }
    const read = await rpc.get();
    const message = read.ok ? read.value.messages.find((m) => m.id === collab.message_id) : undefined;
    if (!read.ok || !message) throw itemMissing(id)();
    return { item: escalationItem(id, read.value, message), run: null };
  }
  const session = sessionOfInboxItem(id);
  if (!session) throw itemMissing(id)();
  const answer: InboxAnswer =
    body.decision !== undefined
      ? { decision: body.decision, ...(body.reason === undefined ? {} : { reason: body.reason }) }
      : { reply: body.reply! };
  // The answering request's trace is linked from the run's resumed step (docs/observability.md).
  const resolved = await sessionOf(ctx, session, RUN_CALL_DEADLINE_MS).resolveInbox(
    id,
    answer,
    { actor: by, actor_type: "user" },
    ctx.trace,
  );
  return sessionValue(ctx.env, ctx.tenant, session, resolved, itemMissing(id));
}
