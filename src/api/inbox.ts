import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../app-env";
import { queryInbox } from "../audit/inbox-index";
import { RelayError } from "../errors";
import { sessionRpc } from "../rpc/stubs";
import { sessionOfInboxItem } from "../runtime/inbox";
import { AgentName } from "../schemas/agent";
import { InboxKind, InboxResolve, InboxStatus, type InboxAnswer } from "../schemas/inbox";
import { decodeCursor, listPage, pagingQuery } from "./cursor";
import { RUN_CALL_DEADLINE_MS, settle } from "./session-result";
import { readJson, readQuery } from "./validate";

/**
 * `/v1/inbox`: what waits for a person, tenant-wide. The list reads the D1 index (eventually
 * consistent: an item shows once its session's outbox has flushed); one item and its
 * resolve go to the session the item's id names (`inb_<ulid>_<session id>`), live.
 */

const itemMissing = (id: string) => () => new RelayError("INBOX_ITEM_NOT_FOUND", `No inbox item '${id}'.`, { inbox_id: id });

/** The session an inbox id names, or 404. */
function sessionOf(id: string): string {
  const session = sessionOfInboxItem(id);
  if (!session) throw itemMissing(id)();
  return session;
}

const ListQuery = z.strictObject({
  status: InboxStatus.optional(),
  agent: AgentName.optional(),
  kind: InboxKind.optional(),
  session_id: z.string().max(100).optional(),
  ...pagingQuery(200, 50),
});

export const inbox = new Hono<AppEnv>()
  .get("/", async (c) => {
    const { cursor, ...filters } = readQuery(c, ListQuery);
    const page = await queryInbox(c.env.DB, c.get("tenant"), { ...filters, after: cursor === undefined ? undefined : decodeCursor(cursor) });
    return c.json(listPage(page.items, page.next));
  })
  .get("/:id", async (c) => {
    const id = c.req.param("id");
    const session = sessionOf(id);
    const items = await settle(c, session, await sessionRpc(c.env, c.get("tenant"), session).inbox(), itemMissing(id));
    const item = items.find((i) => i.id === id);
    if (!item) throw itemMissing(id)();
    return c.json(item);
  })
  .post("/:id/resolve", async (c) => {
    const id = c.req.param("id");
    const session = sessionOf(id);
    const body = await readJson(c, InboxResolve);
    const actor = { actor: body.by ?? "api", actor_type: "user" as const };
    const answer: InboxAnswer = body.decision !== undefined ? { decision: body.decision, ...(body.reason === undefined ? {} : { reason: body.reason }) } : { reply: body.reply! };
    // An approval resumes the run, and the answer waits for it like a message does.
    const rpc = sessionRpc(c.env, c.get("tenant"), session, RUN_CALL_DEADLINE_MS);
    return c.json(await settle(c, session, await rpc.resolveInbox(id, answer, actor), itemMissing(id)));
  });
