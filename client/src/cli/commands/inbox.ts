import type { InboxListItem } from "../../types.ts";
import type { Command, Context } from "../command.ts";
import { text } from "../command.ts";
import { usage } from "../exit.ts";
import { table } from "../output.ts";
import { checked, INBOX_ITEM, INBOX_LIST_ITEM, INBOX_RESOLVED, reply } from "../replies.ts";

const STATUSES = ["open", "resolved", "expired", "cancelled", "all"] as const;
const KINDS = ["handoff_escalation", "human_turn", "escalation", "approval"] as const;

function clip(text: string, max: number): string {
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

function positiveInt(ctx: Context, name: string): number | undefined {
  const typed = text(ctx, name);
  if (typed === undefined) return undefined;
  const n = Number(typed);
  if (!Number.isInteger(n) || n < 1)
    throw usage(`--${name} must be a whole number above 0 (got ${JSON.stringify(typed)})`);
  return n;
}

async function list(ctx: Context): Promise<undefined> {
  const status = text(ctx, "status") ?? "open";
  if (!(STATUSES as readonly string[]).includes(status)) throw usage(`--status must be one of ${STATUSES.join(", ")}`);
  const kind = text(ctx, "kind");
  if (kind !== undefined && !(KINDS as readonly string[]).includes(kind))
    throw usage(`--kind must be one of ${KINDS.join(", ")}`);
  const relay = ctx.relay();
  const query = {
    ...(status === "all" ? {} : { status: status as Exclude<(typeof STATUSES)[number], "all"> }),
    ...(kind ? { kind: kind as (typeof KINDS)[number] } : {}),
    ...(text(ctx, "agent") ? { agent: text(ctx, "agent")! } : {}),
    ...(text(ctx, "session") ? { session_id: text(ctx, "session")! } : {}),
    limit: 200,
  };
  const items: InboxListItem[] = [];
  for await (const item of relay.list("/v1/inbox", { query }, { limit: positiveInt(ctx, "limit") ?? 100 }))
    items.push(checked<InboxListItem>(item, INBOX_LIST_ITEM, relay.url, "GET /v1/inbox", `item ${items.length + 1}`));
  if (ctx.out.json) {
    ctx.out.data(items);
    return undefined;
  }
  if (items.length === 0) {
    ctx.out.note(`Nothing ${status === "all" ? "in the inbox" : status}.`);
    return undefined;
  }
  table(
    ctx.out,
    ["kind", "status", "agent", "created", "reason", "id"],
    items.map((i) => [i.kind, i.status, i.agent ?? "", i.created_at.slice(0, 19), clip(i.reason, 48), i.id]),
  );
  return undefined;
}

async function resolve(ctx: Context, verb: "approve" | "deny" | "reply", args: string[]): Promise<undefined> {
  const [id, ...words] = args;
  if (!id) throw usage(`inbox ${verb} needs an inbox item id`);
  const reason = text(ctx, "reason");
  const by = text(ctx, "by");
  let body: { reply: string } | { decision: "approve" | "deny"; reason?: string };
  if (verb === "reply") {
    const reply = words.join(" ").trim();
    if (!reply) throw usage("inbox reply needs the reply's text");
    if (reason !== undefined) throw usage("--reason goes with approve or deny");
    body = { reply };
  } else {
    if (words.length > 0) throw usage(`inbox ${verb} takes one id (a reason goes in --reason)`);
    body = { decision: verb, ...(reason ? { reason } : {}) };
  }
  const relay = ctx.relay();
  const answer = await reply(
    relay,
    relay.api.POST("/v1/inbox/{id}/resolve", { params: { path: { id } }, body: { ...body, ...(by ? { by } : {}) } }),
    INBOX_RESOLVED,
    "POST /v1/inbox/{id}/resolve",
  );
  if (ctx.out.json) {
    ctx.out.data(answer);
    return undefined;
  }
  const done = verb === "reply" ? "answered" : verb === "approve" ? "approved" : "denied";
  ctx.out.line(`${answer.item.id}: ${done}`);
  const run = answer.run;
  if (run) {
    const outcome =
      run.status === "completed"
        ? `completed: ${run.output_agent ?? run.agent}: ${run.output ?? ""}`
        : run.status === "failed"
          ? `failed: ${run.error?.code ?? ""} ${run.error?.message ?? ""}`
          : run.status;
    ctx.out.line(`run ${run.id} ${outcome}`);
  }
  return undefined;
}

async function show(ctx: Context, args: string[]): Promise<undefined> {
  if (args.length !== 1) throw usage("inbox show takes one id");
  const relay = ctx.relay();
  const item = await reply(
    relay,
    relay.api.GET("/v1/inbox/{id}", { params: { path: { id: args[0]! } } }),
    INBOX_ITEM,
    "GET /v1/inbox/{id}",
  );
  if (ctx.out.json) {
    ctx.out.data(item);
    return undefined;
  }
  const rows: [string, string | null][] = [
    ["id", item.id],
    ["kind", item.kind],
    ["status", item.status],
    ["agent", item.agent],
    ["session", item.session_id],
    ["run", item.run_id],
    ["reason", item.reason],
    ["details", Object.keys(item.details).length ? JSON.stringify(item.details) : null],
    ["expires", item.expires_at],
    ["answer", item.decision ?? item.reply],
    ["by", item.resolved_by],
  ];
  for (const [label, value] of rows) if (value) ctx.out.line(`${ctx.out.paint("dim", label.padEnd(8))} ${value}`);
  return undefined;
}

export const inbox: Command = {
  name: "inbox",
  summary: "What waits for a person: list, show, approve, deny, reply",
  usage: [
    "relay inbox ls [--status open|resolved|expired|cancelled|all] [--kind <kind>] [--agent <name>] [--session <id>] [--limit <n>]",
    "relay inbox show <id>",
    "relay inbox approve <id> [--reason <text>] [--by <who>]",
    "relay inbox deny <id> [--reason <text>] [--by <who>]",
    "relay inbox reply <id> <text…> [--by <who>]",
  ].join("\n"),
  options: {
    status: { type: "string" },
    kind: { type: "string" },
    agent: { type: "string" },
    session: { type: "string" },
    limit: { type: "string" },
    reason: { type: "string" },
    by: { type: "string" },
  },
  async run(ctx) {
    const [sub, ...args] = ctx.positionals;
    if (sub === "ls") {
      if (args.length > 0) throw usage("inbox ls takes options, not arguments");
      return list(ctx);
    }
    if (sub === "show") return show(ctx, args);
    if (sub === "approve" || sub === "deny" || sub === "reply") return resolve(ctx, sub, args);
    throw usage(sub ? `unknown inbox command "${sub}"` : "inbox needs ls, show, approve, deny or reply");
  },
};
