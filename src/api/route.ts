import { Hono } from "hono";
import type { AppEnv } from "../app-env";
import { RelayError } from "../errors";
import { MAX_INPUT_BYTES, RouteRequest } from "../schemas/routing";
import { routeInput, routingContext } from "../services/routing";
import { readJson } from "./validate";

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
    const { decision, timings } = await routeInput(c.env, c.get("tenant"), body.input, body);
    c.header("Server-Timing", timings.map((t) => `${t.name};dur=${t.dur.toFixed(3)}`).join(", "));
    return c.json(decision);
  })
  /** The compiled router this isolate holds for the tenant: version, size, compile time, memory. */
  .get("/stats", async (c) => {
    const { registry } = await routingContext(c.env, c.get("tenant"));
    return c.json({
      registry_version: registry.version,
      agents: registry.agents.length,
      enabled_agents: registry.agents.filter((agent) => agent.enabled).length,
      compile_ms: registry.compile_ms,
      memory_bytes: registry.rules.memoryBytes,
    });
  });
