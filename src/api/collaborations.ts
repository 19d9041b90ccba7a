import { type Context, Hono } from "hono";
import type { AppEnv } from "../app-env";
import { RelayError, type Result } from "../errors";
import { ulid } from "../lib/ulid";
import { collaborationRpc } from "../rpc/stubs";
import {
  CollabMessageInput,
  CollaborationComplete,
  CollaborationCreate,
  EscalationResolve,
} from "../schemas/collaboration";
import { agentDirectory } from "../services/registry-cache";
import { readJson } from "./validate";

/**
 * `/v1/collaborations` (docs/collaboration.md): agents working together — the message log, phases and
 * negotiation live in the collaboration's own Durable Object, named by tenant and id.
 */

type Ctx = Context<AppEnv>;

const COLLABORATION_ID = /^col_[0-9a-z]{26}$/;

function rpc(c: Ctx, id: string) {
  if (!COLLABORATION_ID.test(id)) throw missing(id);
  return collaborationRpc(c.env, c.get("tenant"), id);
}

const missing = (id: string) =>
  new RelayError("COLLABORATION_NOT_FOUND", `No collaboration '${id}'.`, { collaboration_id: id });

function value<T>(result: Result<T>, id: string): T {
  if (result.ok) return result.value;
  if (result.error.code === "COLLABORATION_NOT_FOUND") throw missing(id);
  throw RelayError.fromBody(result.error);
}

export const collaborations = new Hono<AppEnv>()
  .post("/", async (c) => {
    const body = await readJson(c, CollaborationCreate);
    const directory = await agentDirectory(c.env.DB, c.get("tenant"));
    for (const agent of [body.initiator, ...body.participants]) {
      if (!directory.byName.has(agent))
        throw new RelayError("AGENT_NOT_FOUND", `No agent named '${agent}'.`, { agent });
    }
    const id = `col_${ulid().toLowerCase()}`;
    const created = value(await collaborationRpc(c.env, c.get("tenant"), id).create(c.get("tenant"), id, body), id);
    c.header("Location", `/v1/collaborations/${id}`);
    return c.json(created, 201);
  })
  .get("/:id", async (c) => {
    const id = c.req.param("id");
    return c.json(value(await rpc(c, id).get(), id));
  })
  .post("/:id/messages", async (c) => {
    const id = c.req.param("id");
    const message = await readJson(c, CollabMessageInput);
    return c.json(value(await rpc(c, id).send(message), id), 201);
  })
  .post("/:id/messages/:message_id/resolve", async (c) => {
    const id = c.req.param("id");
    const body = await readJson(c, EscalationResolve);
    return c.json(value(await rpc(c, id).resolveEscalation(c.req.param("message_id"), body), id));
  })
  .post("/:id/complete", async (c) => {
    const id = c.req.param("id");
    const body = await readJson(c, CollaborationComplete);
    return c.json(value(await rpc(c, id).complete(body), id));
  });
