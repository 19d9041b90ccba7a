import { Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../app-env";
import { queryAudit } from "../audit/d1-store";
import { AgentName } from "../schemas/agent";
import { decodeCursor, listPage, pagingQuery } from "./cursor";
import { readQuery } from "./validate";

/** `GET /v1/audit`: the tenant's audit log from D1, newest first, cursor paging. */

export const AuditQuery = z.strictObject({
  session_id: z.string().min(1).max(128).optional(),
  agent: AgentName.optional(),
  action: z.string().min(1).max(100).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  ...pagingQuery(200, 50),
});

export const audit = new Hono<AppEnv>().get("/", async (c) => {
  const { cursor, since, ...filters } = readQuery(c, AuditQuery);
  const page = await queryAudit(c.env.DB, c.get("tenant"), {
    ...filters,
    since: since === undefined ? undefined : Date.parse(since),
    before: cursor === undefined ? undefined : decodeCursor(cursor),
  });
  return c.json(listPage(page.records, page.next));
});
