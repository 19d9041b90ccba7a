import { Hono, type Context } from "hono";
import { z } from "zod";
import { sessionOfHandoff } from "../../durable-objects/handoff-record";
import type { SessionDO } from "../../durable-objects/session";
import type { StartHandoffArgs } from "../../durable-objects/session-handoffs";
import { sessionStubFor } from "../../durable-objects/stubs";
import type { AppEnv } from "../app-env";
import { queryAgentHandoffs } from "../audit/handoff-index";
import { RelayError } from "../errors";
import { agentsByName } from "../registry/store";
import { AgentName } from "../schemas/agent";
import { requestFingerprint } from "../handoff/fingerprint";
import { HandoffRequest } from "../schemas/handoff";
import { isSessionId } from "../sessions/ids";
import { decodeCursor, listPage, pageAfterId, pagingQuery } from "./cursor";
import { sessionMissing, settle } from "./session-result";
import { parseWith, readJson, readQuery } from "./validate";

/**
 * `/v1/handoffs`, `/v1/agents/:name/handoffs` and `/v1/sessions/:id/inbox`. The Worker
 * validates the body and reads the registry; the session's object runs the handoff.
 * A handoff id embeds its session id (`hof_<ulid>_<session id>`), so reads go straight to
 * the session's object, tenant-scoped like every session call.
 */

type Ctx = Context<AppEnv>;
type HandoffRpc = Pick<SessionDO, "startHandoff" | "getHandoff" | "cancelHandoff" | "inbox">;

/** Typed like `sessionRpc` (stubs.ts), for the handoff methods. */
function handoffRpc(c: Ctx, sessionId: string): HandoffRpc {
  return sessionStubFor(c.env, c.get("tenant"), sessionId) as unknown as HandoffRpc;
}

const handoffMissing = (id: string) => () => new RelayError("HANDOFF_NOT_FOUND", `No handoff '${id}'.`, { handoff_id: id });

/** The session a handoff id names, or 404. */
function sessionOf(id: string): string {
  const session = sessionOfHandoff(id);
  if (!session) throw handoffMissing(id)();
  return session;
}

/**
 * The definitions validation needs, in one registry query: source and named target, then
 * (by capability) the source's whitelist. A return leaves its target to the SessionDO,
 * the only one who knows whom the session returns to; it reads source and target together.
 */
async function loadAgents(c: Ctx, request: HandoffRequest): Promise<StartHandoffArgs> {
  if (request.mode === "return") return { request, source: undefined };
  const db = c.env.DB;
  const tenant = c.get("tenant");
  const named = request.target_agent;
  const found = await agentsByName(db, tenant, named === undefined ? [request.source_agent] : [request.source_agent, named]);
  const source = found.get(request.source_agent) ?? null;
  const args: StartHandoffArgs = { request, source };
  if (named !== undefined) args.target = found.get(named) ?? null;
  if (request.required_capabilities && source) {
    args.candidates = [...(await agentsByName(db, tenant, source.handoffs.map((h) => h.to))).values()];
  }
  return args;
}

const IdempotencyKey = z.string().trim().min(1).max(200);

export const handoffs = new Hono<AppEnv>()
  .post("/", async (c) => {
    const request = await readJson(c, HandoffRequest);
    const header = c.req.header("Idempotency-Key");
    const key = header === undefined ? undefined : parseWith(IdempotencyKey, header, "Idempotency-Key header");
    if (!isSessionId(request.session_id)) throw sessionMissing(request.session_id)();
    const args = await loadAgents(c, request);
    if (key !== undefined) args.idempotency = { key, fingerprint: await requestFingerprint(request) };
    const started = await settle(c, request.session_id, await handoffRpc(c, request.session_id).startHandoff(args), sessionMissing(request.session_id));
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

const PageQuery = z.strictObject(pagingQuery(200, 50));

/** Mounted at /agents beside the registry routes (which have no `/:name/handoffs`). */
export const agentHandoffs = new Hono<AppEnv>().get("/:name/handoffs", async (c) => {
  const name = parseWith(AgentName, c.req.param("name"), "agent name");
  const { limit, cursor } = readQuery(c, PageQuery);
  const page = await queryAgentHandoffs(c.env.DB, c.get("tenant"), name, { limit, before: cursor === undefined ? undefined : decodeCursor(cursor) });
  return c.json(listPage(page.handoffs, page.next));
});

/** Mounted at /sessions beside the session routes: the escalations of the session's handoffs. */
export const sessionInbox = new Hono<AppEnv>().get("/:id/inbox", async (c) => {
  const id = c.req.param("id");
  const query = readQuery(c, PageQuery);
  if (!isSessionId(id)) throw sessionMissing(id)();
  // The object returns the whole inbox (escalations are few); the API pages it by item id.
  return c.json(pageAfterId(await settle(c, id, await handoffRpc(c, id).inbox(), sessionMissing(id)), query));
});
