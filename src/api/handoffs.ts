import { type Context, Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-env";
import { queryAgentHandoffs } from "../audit/handoff-index";
import { RelayError, unwrap } from "../errors";
import { requestFingerprint } from "../handoff/fingerprint";
import { sessionOfHandoff } from "../handoff/record";
import type { SessionRpc, StartHandoffArgs } from "../rpc/session";
import { sessionRpc } from "../rpc/stubs";
import { AgentName } from "../schemas/agent";
import { HandoffRequest } from "../schemas/handoff";
import { readDatabase } from "../services/tenant-shards";
import { isSessionId } from "../sessions/ids";
import { compileConditionCached } from "../triggers/condition";
import { decodeCursor, listPage, pageAfterId, pagingQuery } from "./cursor";
import { HandoffPosition, sessionInboxPosition } from "./positions";
import { sessionMissing, settle } from "./session-result";
import { parseWith, readJson, readQuery } from "./validate";

/**
 * `/v1/handoffs`, `/v1/agents/:name/handoffs` and `/v1/sessions/:id/inbox`. The Worker
 * validates the body; the session's object reads the agents and runs the handoff.
 * A handoff id embeds its session id (`hof_<ulid>_<session id>`), so reads go straight to
 * the session's object, tenant-scoped like every session call.
 */

type Ctx = Context<AppEnv>;

function handoffRpc(c: Ctx, sessionId: string): SessionRpc {
  return sessionRpc(c.env, c.get("tenant"), sessionId);
}

const handoffMissing = (id: string) => () =>
  new RelayError("HANDOFF_NOT_FOUND", `No handoff '${id}'.`, { handoff_id: id });

/** The session a handoff id names, or 404. */
function sessionOf(id: string): string {
  const session = sessionOfHandoff(id);
  if (!session) throw handoffMissing(id)();
  return session;
}

const IdempotencyKey = z.string().trim().min(1).max(200);

export const handoffs = new Hono<AppEnv>()
  .post("/", async (c) => {
    const request = await readJson(c, HandoffRequest);
    const header = c.req.header("Idempotency-Key");
    const key = header === undefined ? undefined : parseWith(IdempotencyKey, header, "Idempotency-Key header");
    if (!isSessionId(request.session_id)) throw sessionMissing(request.session_id)();
    // A condition that does not compile is the request's fault: refused here, before the session
    // records a failed handoff.
    if (request.condition !== undefined) unwrap(compileConditionCached(request.condition));
    const args: StartHandoffArgs = { request };
    if (key !== undefined) args.idempotency = { key, fingerprint: await requestFingerprint(request) };
    const started = await settle(
      c,
      request.session_id,
      await handoffRpc(c, request.session_id).startHandoff(args),
      sessionMissing(request.session_id),
    );
    return c.json(started.handoff, started.accepted ? 202 : 200);
  })
  .get("/:id", async (c) => {
    const id = c.req.param("id");
    const session = sessionOf(id);
    return c.json(await settle(c, session, await handoffRpc(c, session).getHandoff(id), handoffMissing(id)));
  })
  .post("/:id/cancel", async (c) => {
    const id = c.req.param("id");
    const session = sessionOf(id);
    return c.json(await settle(c, session, await handoffRpc(c, session).cancelHandoff(id), handoffMissing(id)));
  });

export const PageQuery = z.strictObject(pagingQuery(200, 50));

/** Mounted at /agents beside the registry routes (which have no `/:name/handoffs`). */
export const agentHandoffs = new Hono<AppEnv>().get("/:name/handoffs", async (c) => {
  const name = parseWith(AgentName, c.req.param("name"), "agent name");
  const { limit, cursor } = readQuery(c, PageQuery);
  const page = await queryAgentHandoffs(await readDatabase(c.env, c.get("tenant")), c.get("tenant"), name, {
    limit,
    before: decodeCursor(cursor, HandoffPosition),
  });
  return c.json(listPage(page.handoffs, page.next));
});

/** Mounted at /sessions beside the session routes: the escalations of the session's handoffs. */
export const sessionInbox = new Hono<AppEnv>().get("/:id/inbox", async (c) => {
  const id = c.req.param("id");
  const { limit, cursor } = readQuery(c, PageQuery);
  if (!isSessionId(id)) throw sessionMissing(id)();
  const after = decodeCursor(cursor, sessionInboxPosition(id));
  // The object returns the whole inbox (escalations are few); the API pages it by item id.
  const items = await settle(c, id, await handoffRpc(c, id).inbox(), sessionMissing(id));
  return c.json(pageAfterId(items, { limit, after }));
});
