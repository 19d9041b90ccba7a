import { beforeAll, describe, expect, it } from "vitest";
import { eventually, relay, testClient } from "./run-cli";

/** `relay usage` as a process against `wrangler dev`: what the tenant used, and its quotas now. */

const client = testClient();

beforeAll(async () => {
  const session = await client.api.POST("/v1/sessions", { body: { agent: "triage" } });
  const id = session.data!.id;
  await client.api.POST("/v1/sessions/{id}/messages", {
    params: { path: { id } },
    body: { role: "user", content: "I was charged twice" },
  });
  // Usage follows use by about a second: the run's model call, and its audit once flushed to D1.
  await eventually(async () => {
    const { data } = await client.api.GET("/v1/usage");
    const t = data?.totals;
    return t && t.runs > 0 && t.model_calls > 0 && t.d1_rows_written > 0 ? data : undefined;
  });
});

const today = () => new Date().toISOString().slice(0, 10);

describe("relay usage", () => {
  it("prints each day with use, the totals, the models and the quotas", async () => {
    const ran = await relay(["usage"]);
    expect(ran.code).toBe(0);
    const lines = ran.stdout.split("\n");
    expect(lines[0]).toMatch(/^dev: \d{4}-\d\d-\d\d 00:00Z to .+, by day$/);
    expect(lines[1]).toMatch(
      /^day\s+requests\s+sessions\s+runs\s+handoffs\s+tool calls\s+model calls\s+tokens\s+D1 rows\s+D1 bytes$/,
    );
    const day = lines.find((l) => l.startsWith(today()))!;
    const [, requests, sessions, runs] = day.split(/\s+/);
    expect(Number(requests!.replaceAll(",", ""))).toBeGreaterThan(0);
    expect(Number(sessions)).toBeGreaterThanOrEqual(1);
    expect(Number(runs)).toBeGreaterThanOrEqual(1);
    expect(ran.stdout).toMatch(/^total\s+[\d,]+/m);
    expect(ran.stdout).toMatch(/^D1 held now \(estimate\): [\d.]+ (B|kB|MB)$/m);
    expect(ran.stdout).toMatch(/^local\s+local\s+[\d,]+/m);
    // The suite's server has every quota off (bench/lib/wrangler-dev.ts): each says so.
    for (const limit of ["requests_per_minute", "sessions_per_day", "runs_per_minute", "model_tokens_per_day"])
      expect(ran.stdout).toMatch(new RegExp(`^${limit}\\s+none\\s+\\S+\\s+(minute|day)\\s+\\d{4}-`, "m"));
    expect(ran.stdout).toMatch(/^agents\s+none\s+\d+\s+-\s+by deleting one$/m);
    expect(ran.stderr).toMatch(/^\d+ of 30 days had no use\.$/m);
  });

  it("--json is the API's report; --hours asks by hour", async () => {
    const json = await relay(["usage", "--json"]);
    expect(json.code).toBe(0);
    const report = JSON.parse(json.stdout);
    expect(report).toMatchObject({ tenant: "dev", granularity: "day" });
    expect(report.buckets).toHaveLength(30);
    expect(report.quotas).toHaveLength(6);
    const hourly = JSON.parse((await relay(["usage", "--hours", "3", "--json"])).stdout);
    expect(hourly.granularity).toBe("hour");
    expect(hourly.buckets).toHaveLength(4);
    expect((await relay(["usage", "--days", "7", "--json"])).stdout).toMatch(/"granularity": "day"/);
    expect((await relay(["usage", "--hours", "2"])).stdout).toMatch(/\n hour\s+requests|\nhour\s+requests/);
  });

  it("refuses what it cannot ask (exit 2, nothing sent), and says what Relay refused (exit 1)", async () => {
    for (const [args, said] of [
      [["--days", "0"], /--days must be a whole number above 0/],
      [["--days", "3", "--hours", "2"], /name one of --days, --hours or --from/],
      [["--by", "week"], /--by must be day or hour/],
      [["--from", "last tuesday"], /--from must be an ISO time/],
      [["today"], /usage takes options, not arguments/],
    ] as const) {
      const ran = await relay(["usage", ...args]);
      expect(ran.code, args.join(" ")).toBe(2);
      expect(ran.stderr).toMatch(new RegExp(`^relay: USAGE: ${said.source}`));
    }
    const refused = await relay(["usage", "--from", "2020-01-01T00:00:00Z"]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toMatch(/^relay: VALIDATION_FAILED: .+ \(HTTP 400\)\n$/);
  });
});
