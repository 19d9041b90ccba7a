import * as z from "zod";

/** An evaluation point of handoff triggers (docs/triggers.md), as the session queues it while busy. */
export const TriggerPoint = z.discriminatedUnion("type", [
  z.object({ type: z.literal("condition") }),
  z.object({ type: z.literal("event"), name: z.string(), data: z.unknown() }),
  z.object({ type: z.literal("explicit"), target: z.string() }),
  z.object({ type: z.literal("timeout"), idle_ms: z.number() }),
  z.object({ type: z.literal("error"), code: z.string() }),
  z.object({ type: z.literal("capability"), required: z.array(z.string()) }),
]);
export type TriggerPoint = z.infer<typeof TriggerPoint>;
