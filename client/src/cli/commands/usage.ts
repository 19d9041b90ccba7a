import type { UsageReport } from "../../types.ts";
import type { Command, Context } from "../command.ts";
import { text } from "../command.ts";
import { usage as usageError } from "../exit.ts";
import { table } from "../output.ts";
import { reply, USAGE_REPORT } from "../replies.ts";

/**
 * `relay usage`: what the tenant used (docs/cli.md) — each day (or hour) with any use, the
 * period's totals, the model calls by provider and model, and each quota with its use now.
 */

type Bucket = UsageReport["buckets"][number];

const n = (value: number) => value.toLocaleString("en");
const bytes = (value: number) =>
  value < 1000
    ? `${value} B`
    : value < 1_000_000
      ? `${(value / 1000).toFixed(1)} kB`
      : `${(value / 1e6).toFixed(1)} MB`;
const time = (iso: string) =>
  iso
    .replace("T", " ")
    .replace(/:00\.000Z$/, "Z")
    .replace(/\.\d+Z$/, "Z");

/** A whole number of at least 1 from `--name`, or a usage error. */
function count(ctx: Context, name: string): number | undefined {
  const typed = text(ctx, name);
  if (typed === undefined) return undefined;
  const value = Number(typed);
  if (!Number.isInteger(value) || value < 1)
    throw usageError(`--${name} must be a whole number above 0 (got ${JSON.stringify(typed)})`);
  return value;
}

/** The query: the last `--days` days by day, the last `--hours` hours by hour, or `--from`/`--to`. */
function queryOf(ctx: Context, now = Date.now()): { from?: string; to?: string; granularity: "day" | "hour" } {
  const days = count(ctx, "days");
  const hours = count(ctx, "hours");
  const from = text(ctx, "from");
  const to = text(ctx, "to");
  if ((days !== undefined ? 1 : 0) + (hours !== undefined ? 1 : 0) + (from !== undefined ? 1 : 0) > 1)
    throw usageError("name one of --days, --hours or --from");
  for (const [name, value] of [
    ["from", from],
    ["to", to],
  ] as const)
    if (value !== undefined && Number.isNaN(Date.parse(value)))
      throw usageError(`--${name} must be an ISO time (got ${JSON.stringify(value)})`);
  const by = text(ctx, "by") ?? (hours !== undefined ? "hour" : "day");
  if (by !== "day" && by !== "hour") throw usageError(`--by must be day or hour (got ${JSON.stringify(by)})`);
  const iso = (ms: number) => new Date(ms).toISOString();
  if (days !== undefined) return { from: iso(now - (days - 1) * 86_400_000), granularity: by };
  if (hours !== undefined) return { from: iso(now - hours * 3_600_000), granularity: by };
  return {
    ...(from ? { from: iso(Date.parse(from)) } : {}),
    ...(to ? { to: iso(Date.parse(to)) } : {}),
    granularity: by,
  };
}

const row = (label: string, b: Omit<Bucket, "start">) => [
  label,
  n(b.requests),
  n(b.sessions),
  n(b.runs),
  n(b.handoffs),
  n(b.tool_calls),
  n(b.model_calls),
  n(b.input_tokens + b.output_tokens),
  n(b.d1_rows_written),
  bytes(b.d1_bytes_written),
];

function print(ctx: Context, report: UsageReport): void {
  const { out } = ctx;
  const used = report.buckets.filter((b) => b.requests + b.sessions + b.runs + b.model_calls + b.d1_rows_written > 0);
  const label = (b: Bucket) => (report.granularity === "day" ? b.start.slice(0, 10) : time(b.start));
  out.line(`${report.tenant}: ${time(report.from)} to ${time(report.to)}, by ${report.granularity}`);
  table(
    out,
    [
      report.granularity,
      "requests",
      "sessions",
      "runs",
      "handoffs",
      "tool calls",
      "model calls",
      "tokens",
      "D1 rows",
      "D1 bytes",
    ],
    [...used.map((b) => row(label(b), b)), row("total", report.totals)],
  );
  if (used.length < report.buckets.length)
    out.note(`${report.buckets.length - used.length} of ${report.buckets.length} ${report.granularity}s had no use.`);
  out.line(`D1 held now (estimate): ${bytes(report.d1_bytes_stored_estimate)}`);
  const refused = Object.entries(report.totals.refused);
  if (refused.length > 0) out.line(`refused: ${refused.map(([limit, k]) => `${limit} ${n(k)}`).join(", ")}`);
  if (report.totals.models.length > 0) {
    out.line();
    table(
      out,
      ["provider", "model", "calls", "input tokens", "output tokens"],
      report.totals.models.map((m) => [m.provider, m.model, n(m.calls), n(m.input_tokens), n(m.output_tokens)]),
    );
  }
  out.line();
  table(
    out,
    ["quota", "value", "used now", "window", "frees"],
    report.quotas.map((q) => [
      q.limit,
      q.value === null ? "none" : n(q.value),
      q.used === null ? "-" : n(q.used),
      q.window ?? "-",
      q.resets_at ? time(q.resets_at) : "by deleting one",
    ]),
  );
}

export const usage: Command = {
  name: "usage",
  summary: "What the tenant used, day by day, and its quotas now",
  usage: [
    "relay usage                           the last 30 days by UTC day: each day used, totals, models, quotas",
    "relay usage --days <n>                the last n days (today included)",
    "relay usage --hours <n> [--by day]    the last n hours, by hour",
    "relay usage --from <ISO> [--to <ISO>] [--by day|hour]",
  ].join("\n"),
  options: {
    days: { type: "string" },
    hours: { type: "string" },
    from: { type: "string" },
    to: { type: "string" },
    by: { type: "string" },
  },
  async run(ctx) {
    if (ctx.positionals.length > 0) throw usageError("usage takes options, not arguments");
    const query = queryOf(ctx);
    const relay = ctx.relay();
    const report = await reply<UsageReport>(
      relay,
      relay.api.GET("/v1/usage", { params: { query } }),
      USAGE_REPORT,
      "GET /v1/usage",
    );
    if (ctx.out.json) ctx.out.data(report);
    else print(ctx, report);
    return undefined;
  },
};
