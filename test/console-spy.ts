import { type MockInstance, onTestFinished, vi } from "vitest";

/**
 * For a test that makes code fail on purpose: swallows `console.error` for the rest of the
 * test (so a green run prints nothing alarming) and returns the spy, so the test can assert
 * the failure was reported. Durable Objects run in the test's isolate, so the spy sees what
 * they log too. Restored when the test finishes.
 */
export function spyOnConsoleError(): MockInstance<typeof console.error> {
  const spy = vi.spyOn(console, "error").mockImplementation(() => {});
  onTestFinished(() => spy.mockRestore());
  return spy;
}
