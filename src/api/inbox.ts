import { type Context, Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-env";
import { queryInbox } from "../audit/inbox-index";
import { RelayError } from "../errors";
import { collaborationRpc, sessionRpc } from "../rpc/stubs";
import { escalationItem, escalationOfInboxItem, sessionOfInboxItem } from "../runtime/inbox";
import { AgentName } from "../schemas/agent";
import { type InboxAnswer, type InboxItem, InboxKind, InboxResolve, InboxStatus } from "../schemas/inbox";
import { readDatabase } from "../services/tenant-shards";
import { incomingTrace } from "../telemetry/propagation";
import { decodeCursor, listPage, pagingQuery } from "./cursor";
import { InboxPosition } from "./positions";
import { RUN_CALL_DEADLINE_MS, settle } from "./session-result";
import { readJson, readQuery } from "./validate";

/**
 * `/v1/inbox`: what waits for a person, tenant-wide. The list reads the D1 index (eventually
 * consistent: an item shows once its session's outbox has flushed); one item and its
 * resolve go to the session the item's id names (`inb_<ulid>_<session id>`), live.
 */

const itemMissing = (id: string) => () =>
  new RelayError("INBOX_ITEM_NOT_FOUND", `No inbox item '${id}'.`, { inbox_id: id });

/** The collaboration escalation an inbox id names (live), or 404. */
async function escalation(
  c: Context<AppEnv>,
  id: string,
  ref: { collaboration_id: string; message_id: string },
): Promise<InboxItem> {
  const read = await collaborationRpc(c.env, c.get("tenant"), ref.collaboration_id).get();
  const message = read.ok
    ? read.value.messages.find((m) => m.id === ref.message_id && m.type === "escalate")
    : undefined;
  if (!read.ok || !message) throw itemMissing(id)();
  return escalationItem(id, read.value, message);
}

/** The session an inbox id names, or 404. */
function sessionOf(id: string): string {
  const session = sessionOfInboxItem(id);
  if (!session) throw itemMissing(id)();
  return session;
}

export const InboxListQuery = z.strictObject({
  status: InboxStatus.optional(),
  agent: AgentName.optional(),
  kind: InboxKind.optional(),
  session_id: z.string().max(100).optional(),
  ...pagingQuery(200, 50),
});

export const inbox = new Hono<AppEnv>()
  .get("/", async (c) => {
    const { cursor, ...filters } = readQuery(c, InboxListQuery);
    const page = await queryInbox(await readDatabase(c.env, c.get("tenant")), c.get("tenant"), {
      ...filters,
      after: decodeCursor(cursor, InboxPosition),
    });
    return c.json(listPage(page.items, page.next));
  })
  .get("/:id", async (c) => {
    const id = c.req.param("id");
    const collab = escalationOfInboxItem(id);
    if (collab) return c.json(await escalation(c, id, collab));
    const session = sessionOf(id);
    const items = await settle(c, session, await sessionRpc(c.env, c.get("tenant"), session).inbox(), itemMissing(id));
    const item = items.find((i) => i.id === id);
    if (!item) throw itemMissing(id)();
    return c.json(item);
  })
  .post("/:id/resolve", async (c) => {
    const id = c.req.param("id");
    const collab = escalationOfInboxItem(id);
    if (collab) {
      const body = await readJson(c, InboxResolve);
      if (body.reply === undefined)
        throw new RelayError("INBOX_ANSWER_MISMATCH", `Inbox item '${id}' asks a question: answer { reply }.`, {
          inbox_id: id,
          kind: "escalation",
        });
      const resolved = await collaborationRpc(c.env, c.get("tenant"), collab.collaboration_id).resolveEscalation(
        collab.message_id,
        { reply: body.reply, ...(body.by ? { by: body.by } : {}) },
      );
      if (!resolved.ok) {
        if (resolved.error.code === "COLLABORATION_NOT_FOUND" || resolved.error.code === "NOT_FOUND")
          throw itemMissing(id)();
        throw RelayError.fromBody(resolved.error);
      }
      return c.json({ item: await escalation(c, id, collab), run: null });
    }
    const session = sessionOf(id);
    const body = await readJson(c, InboxResolve);
    const actor = { actor: body.by ?? "api", actor_type: "user" as const };
    const answer: InboxAnswer =
      body.decision !== undefined
        ? { decision: body.decision, ...(body.reason === undefined ? {} : { reason: body.reason }) }
        : { reply: body.reply! };
    // An approval resumes the run, and the answer waits for it like a message does.
    const rpc = sessionRpc(c.env, c.get("tenant"), session, RUN_CALL_DEADLINE_MS);
    // The deciding request's trace, when it sent one, is linked from the run's resumed step (docs/observability.md).
    const resumed = await rpc.resolveInbox(id, answer, actor, incomingTrace(c.req.raw.headers).trace);
    return c.json(await settle(c, session, resumed, itemMissing(id)));
  });
