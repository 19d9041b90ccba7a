import type { CallToolResult, StandardSchemaWithJSON } from "@modelcontextprotocol/server";
import type * as z from "zod";
import { RelayError } from "../../errors";
import { issuesOf } from "../../errors/issues";
import { guarded } from "./results";

/**
 * A tool's arguments, checked by Relay rather than the SDK: the SDK lists the zod schema's
 * JSON Schema as the tool's `inputSchema`, but what it validates passes through, so that bad
 * arguments come back as a tool error with VALIDATION_FAILED and its issues (like every bad
 * input to Relay), not as the SDK's own message.
 */

/** The schema as the SDK sees it: zod's JSON Schema, a validator that accepts anything. */
export function advertised(schema: z.ZodType): StandardSchemaWithJSON {
  const standard = schema["~standard"] as unknown as StandardSchemaWithJSON["~standard"];
  return {
    "~standard": {
      ...standard,
      vendor: "relay",
      validate: (value: unknown) => ({ value }),
    },
  } as StandardSchemaWithJSON;
}

/** A tool's handler over arguments zod has checked; any failure comes back as a tool error. */
export function checked<S extends z.ZodType>(
  schema: S,
  work: (args: z.output<S>) => Promise<CallToolResult>,
): (raw: unknown) => Promise<CallToolResult> {
  return (raw) =>
    guarded(async () => {
      const parsed = schema.safeParse(raw ?? {});
      if (!parsed.success)
        throw new RelayError("VALIDATION_FAILED", "Invalid tool arguments.", { issues: issuesOf(parsed.error) });
      return work(parsed.data);
    });
}
