import { Hono } from "hono";
import { describe, expect, it } from "vitest";
import { onError } from "../../src/api/error-handler";
import { RelayError } from "../../src/errors";
import { countRefusal, quotaExceeded, windowRefusal } from "../../src/quotas/admission";

/** The one place errors become HTTP: a quota's refusal is 429 with the seconds to wait in Retry-After. */

const throwing = (error: Error) => new Hono().get("/", () => Promise.reject(error)).onError(onError);

describe("onError", () => {
  it("answers QUOTA_EXCEEDED with 429 and Retry-After from details.retry_after_s", async () => {
    const body = quotaExceeded(windowRefusal("runs_per_minute", 2, 2, "minute", Date.parse("2026-03-04T10:20:30Z")));
    const res = await throwing(RelayError.fromBody(body)).request("/");
    expect(res.status).toBe(429);
    expect(res.headers.get("Retry-After")).toBe("30");
    expect(await res.json()).toEqual({ error: body });
  });

  it("sends no Retry-After for a count limit, which no wait frees, nor for other codes", async () => {
    const full = await throwing(RelayError.fromBody(quotaExceeded(countRefusal("tools", 3, 3)))).request("/");
    expect(full.status).toBe(429);
    expect(full.headers.get("Retry-After")).toBeNull();
    const other = await throwing(new RelayError("VAULT_FULL", "full", { retry_after_s: 5 })).request("/");
    expect(other.status).toBe(409);
    expect(other.headers.get("Retry-After")).toBeNull();
  });
});
