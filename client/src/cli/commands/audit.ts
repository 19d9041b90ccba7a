import type { AuditRecord } from "../../types.ts";
import type { Command, Context } from "../command.ts";
import { text } from "../command.ts";
import { usage } from "../exit.ts";
import { table } from "../output.ts";
import { AUDIT_RECORD, checked } from "../replies.ts";

const UNITS: Record<string, number> = { s: 1, m: 60, h: 3600, d: 86_400 };

/** `--since`: an ISO time, or a span back from now (`30m`, `2h`, `7d`). */
export function sinceOf(typed: string, now = Date.now()): string {
  const span = /^(\d+)([smhd])$/.exec(typed.trim());
  if (span) return new Date(now - Number(span[1]) * UNITS[span[2]!]! * 1000).toISOString();
  if (Number.isNaN(Date.parse(typed)))
    throw usage(`--since is an ISO time or a span such as 30m, 2h, 7d (got ${JSON.stringify(typed)})`);
  return new Date(Date.parse(typed)).toISOString();
}

function limitOf(ctx: Context): number {
  const typed = text(ctx, "limit");
  if (typed === undefined) return 50;
  const n = Number(typed);
  if (!Number.isInteger(n) || n < 1)
    throw usage(`--limit must be a whole number above 0 (got ${JSON.stringify(typed)})`);
  return n;
}

function detailsOf(record: AuditRecord): string {
  const d = (record.details ?? {}) as Record<string, unknown>;
  const parts = ["from", "to", "target", "reason", "error_code", "status"]
    .filter((k) => d[k] !== undefined && d[k] !== null)
    .map((k) => `${k}=${typeof d[k] === "string" ? d[k] : JSON.stringify(d[k])}`);
  const line = parts.join(" ");
  return line.length > 60 ? `${line.slice(0, 59)}…` : line;
}

export const audit: Command = {
  name: "audit",
  summary: "The tenant's audit trail, newest first, with filters",
  usage:
    "relay audit [--session <id>] [--agent <name>] [--action <action>] [--since <ISO time|30m|2h|7d>] [--limit <n>]",
  options: {
    session: { type: "string" },
    agent: { type: "string" },
    action: { type: "string" },
    since: { type: "string" },
    limit: { type: "string" },
  },
  async run(ctx) {
    if (ctx.positionals.length > 0) throw usage("audit takes options, not arguments");
    const since = text(ctx, "since");
    const query = {
      ...(text(ctx, "session") ? { session_id: text(ctx, "session")! } : {}),
      ...(text(ctx, "agent") ? { agent: text(ctx, "agent")! } : {}),
      ...(text(ctx, "action") ? { action: text(ctx, "action")! } : {}),
      ...(since ? { since: sinceOf(since) } : {}),
    };
    const limit = limitOf(ctx);
    const relay = ctx.relay();
    const records: AuditRecord[] = [];
    for await (const record of relay.list("/v1/audit", { query: { ...query, limit: Math.min(limit, 200) } }, { limit }))
      records.push(
        checked<AuditRecord>(record, AUDIT_RECORD, relay.url, "GET /v1/audit", `item ${records.length + 1}`),
      );
    if (ctx.out.json) {
      ctx.out.data(records);
      return undefined;
    }
    if (records.length === 0) {
      ctx.out.note("No audit records match.");
      return undefined;
    }
    table(
      ctx.out,
      ["at", "action", "agent", "actor", "session", "details"],
      records.map((r) => [
        r.at.slice(0, 19),
        r.action,
        r.agent ?? "",
        r.actor ?? "",
        r.session_id ? `…${r.session_id.slice(-8)}` : "",
        detailsOf(r),
      ]),
    );
    return undefined;
  },
};
