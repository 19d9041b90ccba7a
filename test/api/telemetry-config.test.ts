import { describe, expect, it } from "vitest";
import { BETA_KEY, call, putSecret } from "./helpers";

/**
 * `GET|PUT|DELETE /v1/config/telemetry` (docs/observability.md, Export): the tenant's settings
 * with their defaults, checked against the outbound address policy and the tenant's own vault,
 * and the export counters beside them.
 */

const ENDPOINT = "https://collector.test/v1/traces";
const NO_STATS = { exported_spans: 0, dropped_spans: 0, last_error: null, last_error_at: null };

describe("/v1/config/telemetry", () => {
  it("starts empty; PUT stores the settings with their defaults; DELETE removes them and keeps the counters", async () => {
    expect((await call("GET", "/v1/config/telemetry")).json).toEqual({ config: null, stats: NO_STATS });
    const put = await call("PUT", "/v1/config/telemetry", { endpoint: ENDPOINT });
    expect(put.status).toBe(200);
    expect(put.json).toEqual({
      config: {
        endpoint: ENDPOINT,
        headers: {},
        sample_ratio: 1,
        capture_content: false,
        updated_at: expect.any(String),
      },
      stats: NO_STATS,
    });
    expect((await call("GET", "/v1/config/telemetry")).json.config.endpoint).toBe(ENDPOINT);
    // Another tenant sees none of it.
    expect((await call("GET", "/v1/config/telemetry", undefined, { key: BETA_KEY })).json.config).toBeNull();
    const deleted = await call("DELETE", "/v1/config/telemetry");
    expect(deleted.status).toBe(200);
    expect(deleted.json).toEqual({ config: null, stats: NO_STATS });
  });

  it("headers name secrets of the tenant's own vault, else UNKNOWN_SECRET naming the header", async () => {
    const missing = await call("PUT", "/v1/config/telemetry", {
      endpoint: ENDPOINT,
      headers: { Authorization: "otel-key" },
    });
    expect(missing.status).toBe(400);
    expect(missing.json.error.code).toBe("UNKNOWN_SECRET");
    expect(missing.json.error.message).toContain("headers.Authorization names the secret 'otel-key'");
    // A secret of another tenant's vault is not this tenant's.
    await putSecret("otel-key", "Bearer beta", BETA_KEY);
    expect(
      (await call("PUT", "/v1/config/telemetry", { endpoint: ENDPOINT, headers: { Authorization: "otel-key" } })).json
        .error.code,
    ).toBe("UNKNOWN_SECRET");
    await putSecret("otel-key", "Bearer alpha");
    const ok = await call("PUT", "/v1/config/telemetry", {
      endpoint: ENDPOINT,
      headers: { Authorization: "otel-key" },
      sample_ratio: 0.25,
      capture_content: true,
    });
    expect(ok.status).toBe(200);
    expect(ok.json.config).toMatchObject({
      headers: { Authorization: "otel-key" },
      sample_ratio: 0.25,
      capture_content: true,
    });
    // The value is never shown.
    expect(JSON.stringify(ok.json)).not.toContain("Bearer alpha");
  });

  it("an endpoint the outbound address policy refuses is ENDPOINT_NOT_ALLOWED, and nothing is stored", async () => {
    await call("DELETE", "/v1/config/telemetry");
    for (const [endpoint, rule] of [
      ["https://10.0.0.5/v1/traces", "private_address"],
      ["https://127.0.0.1:4318/v1/traces", "loopback_address"],
      ["http://collector.test/v1/traces", "https_only"],
      ["https://relay.test/v1/traces", "relay_host"],
    ] as const) {
      const res = await call("PUT", "/v1/config/telemetry", { endpoint });
      expect(res.status, endpoint).toBe(400);
      expect(res.json.error.code, endpoint).toBe("ENDPOINT_NOT_ALLOWED");
      expect(res.json.error.details, endpoint).toMatchObject({ field: "endpoint", rule });
    }
    expect((await call("GET", "/v1/config/telemetry")).json.config).toBeNull();
  });

  it("refuses a bad body with VALIDATION_FAILED", async () => {
    for (const body of [
      {},
      { endpoint: "ftp://collector.test/v1/traces" },
      { endpoint: ENDPOINT, sample_ratio: 1.5 },
      { endpoint: ENDPOINT, sample_ratio: -0.1 },
      { endpoint: ENDPOINT, capture_content: "yes" },
      { endpoint: ENDPOINT, headers: { "Content-Type": "otel-key" } },
      { endpoint: ENDPOINT, extra: true },
    ]) {
      const res = await call("PUT", "/v1/config/telemetry", body);
      expect(res.status, JSON.stringify(body)).toBe(400);
      expect(res.json.error.code, JSON.stringify(body)).toBe("VALIDATION_FAILED");
    }
  });
});
