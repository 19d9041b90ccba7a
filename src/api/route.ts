import { Hono } from "hono";
import type { AppEnv } from "../app-env";
import { RelayError } from "../errors";
import { MAX_INPUT_BYTES, RouteRequest } from "../schemas/routing";
import { routeInput } from "../services/routing";
import { readJson } from "./validate";

/** Room for the input at its limit plus the rest of the request, JSON-escaped. */
const ROUTE_BODY_LIMIT = 8 * MAX_INPUT_BYTES;

/** `POST /v1/route`: the dry run. Which agent would take this input, how sure, and why. */
export const route = new Hono<AppEnv>().post("/", async (c) => {
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
});
