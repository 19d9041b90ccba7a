import { type Context, Hono } from "hono";
import type { AppEnv } from "../app-env";
import type { SessionRpc } from "../rpc/session";
import { sessionRpc } from "../rpc/stubs";
import { MemoryFactWrite, MemoryKey } from "../schemas/memory";
import { isSessionId } from "../sessions/ids";
import { sessionMissing, settle } from "./session-result";
import { parseWith, readJson } from "./validate";

/**
 * `/v1/sessions/:id/memory`: the session's memory of facts (docs/memory.md, Facts), which
 * every agent of the session gets in its prompt. People read it, write a fact and delete
 * one; the session's object checks the bounds and audits each change (the key, never the
 * value). Mounted at /sessions beside the session routes.
 */

/** A fact's value is at most 500 characters; a body much larger than that is refused unread. */
const FACT_BODY_LIMIT = 16 * 1024;

/** The session's object (404 for an id that names no session, without calling one). */
function stubOf(c: Context<AppEnv>, id: string): SessionRpc {
  if (!isSessionId(id)) throw sessionMissing(id)();
  return sessionRpc(c.env, c.get("tenant"), id);
}

const keyOf = (raw: string) => parseWith(MemoryKey, raw, "memory key");

export const sessionMemory = new Hono<AppEnv>()
  .get("/:id/memory", async (c) => {
    const id = c.req.param("id");
    return c.json(await settle(c, id, await stubOf(c, id).memory()));
  })
  .put("/:id/memory/:key", async (c) => {
    const id = c.req.param("id");
    const key = keyOf(c.req.param("key"));
    const { value } = await readJson(c, MemoryFactWrite, FACT_BODY_LIMIT);
    return c.json(await settle(c, id, await stubOf(c, id).writeFact(key, value)));
  })
  .delete("/:id/memory/:key", async (c) => {
    const id = c.req.param("id");
    const key = keyOf(c.req.param("key"));
    await settle(c, id, await stubOf(c, id).deleteFact(key));
    return c.body(null, 204);
  });
