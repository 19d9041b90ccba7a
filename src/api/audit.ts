import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-env";
import { archiveSummary } from "../audit/archive";
import { queryAudit } from "../audit/d1-store";
import { AuditRecord } from "../audit/record";
import { archiveKey, archivePrefix } from "../audit/retention";
import { AgentName } from "../schemas/agent";
import { Page } from "../schemas/api";
import { readDatabase } from "../services/tenant-shards";
import { decodeCursor, listPage, pagingQuery } from "./cursor";
import { AuditRecordPosition } from "./positions";
import { readQuery } from "./validate";

/** `GET /v1/audit`: the tenant's audit log from D1, newest first, cursor paging; where older records went. */

export const AuditQuery = z.strictObject({
  session_id: z.string().min(1).max(128).optional(),
  agent: AgentName.optional(),
  action: z.string().min(1).max(100).optional(),
  since: z.iso.datetime({ offset: true }).optional(),
  ...pagingQuery(200, 50),
});

const Day = z.string().regex(/^\d{4}-\d{2}-\d{2}$/);

/** Where the tenant's records older than the retention age are (null: none has left D1). */
export const AuditArchive = z.strictObject({
  /** The R2 bucket (AUDIT_ARCHIVE_BUCKET; null when the deployment does not name it). */
  bucket: z.string().nullable(),
  prefix: z.string(),
  /** One object per day: this key with the day (`YYYY-MM-DD`, UTC) in place of `{day}`. */
  objects: z.string(),
  first_day: Day,
  /** Records made on or before this day (UTC) are in the archive, not in this log. */
  through: Day,
  days: z.number().int().min(1),
  records: z.number().int().min(0),
});

export const AuditPage = Page(AuditRecord).extend({ archive: AuditArchive.nullable() });

export const audit = new Hono<AppEnv>().get("/", async (c) => {
  const { cursor, since, ...filters } = readQuery(c, AuditQuery);
  const tenant = c.get("tenant");
  const db = await readDatabase(c.env, tenant);
  const [page, archived] = await Promise.all([
    queryAudit(db, tenant, {
      ...filters,
      since: since === undefined ? undefined : Date.parse(since),
      before: decodeCursor(cursor, AuditRecordPosition),
    }),
    archiveSummary(db, tenant),
  ]);
  const archive: z.infer<typeof AuditArchive> | null = archived && {
    bucket: c.env.AUDIT_ARCHIVE_BUCKET ?? null,
    prefix: archivePrefix(tenant),
    objects: archiveKey(tenant, "{day}"),
    ...archived,
  };
  return c.json({ ...listPage(page.records, page.next), archive });
});
