/**
 * Waits until `read` gives a value `done` accepts, reading again every 25 ms; fails after
 * `timeout` ms saying what never happened and what was last read.
 */
export async function eventually<T>(
  read: () => Promise<T>,
  done: (value: T) => boolean,
  { timeout = 10_000, what }: { timeout?: number; what: string },
): Promise<T> {
  const deadline = Date.now() + timeout;
  for (;;) {
    const value = await read();
    if (done(value)) return value;
    if (Date.now() > deadline)
      throw new Error(`never happened within ${timeout} ms: ${what}; last read ${JSON.stringify(value)}`);
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
