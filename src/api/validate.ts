import type { Context } from "hono";
import type * as z from "zod";
import { RelayError } from "../errors";
import { issuesOf } from "../errors/issues";
import { checkDepth, jsonTextDepth } from "../lib/json-depth";
import { keyPaths } from "../schemas/reserved-keys";
import { readBody } from "./body";

/** Default ceiling for JSON bodies; routes with larger documents pass their own. */
export const DEFAULT_BODY_LIMIT = 1024 * 1024;

/** Parses a value with a schema, or throws VALIDATION_FAILED naming every bad field. */
export function parseWith<S extends z.ZodType>(schema: S, value: unknown, what = "request body"): z.output<S> {
  const parsed = schema.safeParse(value);
  if (!parsed.success) {
    throw new RelayError("VALIDATION_FAILED", `Invalid ${what}.`, { issues: issuesOf(parsed.error) });
  }
  return parsed.data;
}

/**
 * Reads the body as text, refusing it (413) when it is over `limit` bytes: by its declared
 * length before reading it, else once the read passes the limit (./body.ts).
 */
export async function readText(c: Context, limit = DEFAULT_BODY_LIMIT): Promise<string> {
  const read = await readBody(c.req.raw, limit);
  if (read.ok) return read.text;
  if (read.reason === "oversize") throw tooLarge(limit);
  throw new RelayError("INVALID_JSON", "The request body could not be read.", { reason: read.message });
}

function tooLarge(limit: number): RelayError {
  return new RelayError("PAYLOAD_TOO_LARGE", `Request body is larger than ${limit} bytes.`, { limit_bytes: limit });
}

/**
 * Reads a JSON body: size limit (413), then nesting depth by a linear scan of the text
 * (JSON_TOO_DEEP, before anything recursive sees it), then JSON syntax (INVALID_JSON),
 * then the schema. Every JSON body the API reads comes through here.
 */
export async function readJson<S extends z.ZodType>(
  c: Context,
  schema: S,
  limit = DEFAULT_BODY_LIMIT,
): Promise<z.output<S>> {
  return parseJsonText(await readText(c, limit), schema);
}

/** A body already read as text, checked as `readJson` checks it: depth, syntax, reserved keys, schema. */
export function parseJsonText<S extends z.ZodType>(text: string, schema: S): z.output<S> {
  checkDepth(jsonTextDepth(text));
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (cause) {
    throw new RelayError("INVALID_JSON", "Request body is not valid JSON.", {
      reason: String((cause as Error).message),
    });
  }
  refuseProtoKeys(value);
  return parseWith(schema, value);
}

/**
 * A `__proto__` key anywhere in a body is refused (VALIDATION_FAILED at its path) rather than
 * dropped: zod's records skip it without a word, and where it survives as an own key it is a
 * trap for any code that copies the object by assignment.
 */
function refuseProtoKeys(value: unknown): void {
  const paths = keyPaths(value, ["__proto__"]);
  if (paths.length === 0) return;
  throw new RelayError("VALIDATION_FAILED", "Invalid request body.", {
    issues: paths.map((path) => ({ path: path.join("."), message: "'__proto__' is not allowed as a key" })),
  });
}

/** Parses the query string with a schema (VALIDATION_FAILED on a bad value). */
export function readQuery<S extends z.ZodType>(c: Context, schema: S): z.output<S> {
  return parseWith(schema, c.req.query(), "query");
}
