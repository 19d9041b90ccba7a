import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { err, ok, type Result } from "../../src/errors";
import { sessionRpc, withDeadline } from "../../src/rpc/stubs";
import { newSessionId } from "../../src/sessions/ids";

interface Echo {
  echo(value: string): Promise<Result<string>>;
  never(): Promise<Result<string>>;
  broken(): Promise<Result<string>>;
  reset(): Promise<Result<string>>;
  overloaded(): Promise<Result<string>>;
}

const target = {
  echo: async (value: string) => ok(value),
  never: () => new Promise<Result<string>>(() => {}),
  broken: async (): Promise<Result<string>> => {
    throw new Error("a bug");
  },
  // What the platform rejects a call with when the object is reset or overloaded under it.
  reset: async (): Promise<Result<string>> => {
    throw Object.assign(new Error("crash"), { durableObjectReset: true });
  },
  overloaded: async (): Promise<Result<string>> => {
    throw Object.assign(new Error("Durable Object is overloaded"), { overloaded: true, retryable: true });
  },
};

describe("calls with a deadline", () => {
  it("passes a call that answers in time through unchanged", async () => {
    const handle = withDeadline<Echo>(target, "Echo", 1_000);
    expect(await handle.echo("hi")).toEqual(ok("hi"));
  });

  it("answers DEPENDENCY_UNAVAILABLE naming the deadline when the callee never answers", async () => {
    const handle = withDeadline<Echo>(target, "Echo", 20);
    expect(await handle.never()).toEqual(
      err("DEPENDENCY_UNAVAILABLE", "Echo did not answer within 20 ms.", {
        reason: "deadline",
        deadline_ms: 20,
        call: "never",
      }),
    );
  });

  it("answers DEPENDENCY_UNAVAILABLE when the platform reset or overloaded the object under the call", async () => {
    const handle = withDeadline<Echo>(target, "Echo", 1_000);
    expect(await handle.reset()).toEqual(
      err("DEPENDENCY_UNAVAILABLE", "Echo was interrupted (reset); try again.", { reason: "reset", call: "reset" }),
    );
    expect(await handle.overloaded()).toMatchObject({
      ok: false,
      error: { code: "DEPENDENCY_UNAVAILABLE", details: { reason: "overloaded" } },
    });
  });

  it("keeps a thrown error of the callee's own thrown (a bug is not a timeout)", async () => {
    const handle = withDeadline<Echo>(target, "Echo", 1_000);
    await expect(handle.broken()).rejects.toThrow("a bug");
  });

  it("is never mistaken for a promise", async () => {
    const handle = withDeadline<Echo>(target, "Echo", 1_000);
    expect((handle as unknown as { then?: unknown }).then).toBeUndefined();
    expect(await Promise.resolve(handle)).toBe(handle);
  });

  it("reaches a real Durable Object through the typed handle", async () => {
    const missing = await sessionRpc(env, "alpha", newSessionId()).get();
    expect(missing).toMatchObject({ ok: false, error: { code: "SESSION_NOT_FOUND" } });
  });
});
