import { type AgentPart, compileAgentPart } from "../../src/routing/router-image";
import type { AgentDefinition } from "../../src/schemas/agent";

/** Lets other events in (and lets the Workers clock, which stands still while code runs, catch up). */
const tick = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** Timed compiles of one part at most (see `timedCompile`). */
const COMPILE_TRIES = 5;

/**
 * One agent's part and the time its compile took. The Workers clock stands still while code
 * runs and is read again only in a later event, after whatever other events were queued
 * (locally, the routes of every tenant): one reading is an upper bound that can hold other
 * work. The same part is compiled again, up to COMPILE_TRIES times, while the reading is not
 * 0, and the least reading is kept — still an upper bound, the tightest of them.
 */
export async function timedCompile(definition: AgentDefinition): Promise<{ part: AgentPart; ms: number }> {
  let best: { part: AgentPart; ms: number } | null = null;
  for (let attempt = 0; attempt < COMPILE_TRIES && (best === null || best.ms > 0); attempt++) {
    // A tick first, so the clock is read at the start of the event the compile runs in.
    await tick();
    const started = Date.now();
    const part = compileAgentPart(definition);
    await tick();
    const ms = Date.now() - started;
    if (best === null || ms < best.ms) best = { part, ms };
  }
  return best!;
}
