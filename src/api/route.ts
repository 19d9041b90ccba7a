import { type Context, Hono } from "hono";
import type * as z from "zod";
import type { AppEnv } from "../app-env";
import { RelayError } from "../errors";
import { heldRouters, routerBudget } from "../routing/router-budget";
import { PATTERN_PREFIX } from "../routing/rules";
import { routerRpc } from "../rpc/stubs";
import type { RouteStats as RouteStatsSchema } from "../schemas/api";
import { MAX_INPUT_BYTES, RouteRequest } from "../schemas/routing";
import { holdsRouter } from "../services/registry-cache";
import { routeInput, routingContext } from "../services/routing";
import { replay } from "./replay";
import { clearHistory, listHistory } from "./route-history";
import { readJson } from "./validate";

type RouteStats = z.infer<typeof RouteStatsSchema>;

/** Room for the input at its limit plus the rest of the request, JSON-escaped. */
const ROUTE_BODY_LIMIT = 8 * MAX_INPUT_BYTES;

export const route = new Hono<AppEnv>()
  /** The dry run: which agent would take this input, how sure, and why. Changes nothing. */
  .post("/", async (c) => {
    const body = await readJson(c, RouteRequest, ROUTE_BODY_LIMIT);
    const bytes = new TextEncoder().encode(body.input).byteLength;
    if (bytes > MAX_INPUT_BYTES) {
      throw new RelayError("PAYLOAD_TOO_LARGE", `input is ${bytes} bytes; the limit is ${MAX_INPUT_BYTES}.`, {
        limit_bytes: MAX_INPUT_BYTES,
        input_bytes: bytes,
      });
    }
    const { decision, timings } = await routeInput(c.env, c.get("tenant"), body.input, {
      ...body,
      background: waitUntil(c),
    });
    c.header("Server-Timing", timings.map((t) => `${t.name};dur=${t.dur.toFixed(3)}`).join(", "));
    return c.json(decision);
  })
  /** A draft team against recorded or uploaded inputs, beside the current one (docs/routing.md, Replay). */
  .post("/replay", replay)
  /** The tenant's recorded inputs and their decisions, newest first, by agent and kind. */
  .get("/history", listHistory)
  /** Forgets the tenant's recorded inputs (audited). */
  .delete("/history", clearHistory)
  /** The router this isolate holds for the tenant: version, how it was built and loaded, size, pattern budget. */
  .get("/stats", async (c) => {
    const { registry } = await routingContext(c.env, c.get("tenant"), undefined, waitUntil(c));
    const { build } = registry;
    const stats: RouteStats = {
      registry_version: registry.version,
      agents: registry.agents.length,
      enabled_agents: registry.agents.filter((agent) => agent.enabled).length,
      compile_ms: build.compile_ms,
      compiled_agents: build.compiled_count,
      linked_shards: build.linked_shards,
      link_ms: build.link_ms,
      build_ms: build.build_ms,
      shards: registry.shards.length,
      load_ms: registry.load_ms,
      memory_bytes: registry.rules.memoryBytes,
      object_memory_bytes: await objectMemory(c.env, c.get("tenant")),
      router_budget: {
        bytes: routerBudget(c.env),
        held_bytes: heldRouters().bytes,
        held: holdsRouter(c.get("tenant"), registry),
      },
      pattern_budget: { used: build.pattern_instructions, limit: build.pattern_budget, prefix: PATTERN_PREFIX },
    };
    return c.json(stats);
  });

/** The router object's own router's memory, or null when the object does not answer in time. */
async function objectMemory(env: AppEnv["Bindings"], tenant: string): Promise<number | null> {
  const held = await routerRpc(env, tenant).memory();
  return held.ok ? held.value.memory_bytes : null;
}

/** `ctx.waitUntil` when the Worker runs with an execution context (tests may call the app without one). */
function waitUntil(c: Context<AppEnv>): ((work: Promise<unknown>) => void) | undefined {
  try {
    const ctx = c.executionCtx;
    return (work) => ctx.waitUntil(work);
  } catch {
    return undefined;
  }
}
