import * as z from "zod";

/**
 * Webhooks out (docs/webhooks.md): where a tenant's handoff and run lifecycle notifications go.
 * `types` narrows them: exact actions (`handoff.completed`) or families (`run.*`); empty: all.
 */

/** The lifecycle actions delivered: every handoff transition and run status change. */
export const DELIVERED_FAMILIES = ["handoff.", "run."] as const;

export const EventType = z
  .string()
  .regex(/^(handoff|run)\.([a-z_]+|\*)$/, "must be a handoff or run action (handoff.completed) or family (run.*)");

export const EventSubscriptionInput = z.strictObject({
  url: z.url({ protocol: /^https?$/ }),
  types: z.array(EventType).max(50).default([]),
});
export type EventSubscriptionInput = z.infer<typeof EventSubscriptionInput>;

export const EventSubscription = EventSubscriptionInput.extend({
  /** `whsec_…`: verify deliveries with it (Standard Webhooks). */
  secret: z.string(),
  created_at: z.string(),
  updated_at: z.string(),
});
export type EventSubscription = z.infer<typeof EventSubscription>;

/** Whether a subscription takes an action. */
export function subscribed(types: readonly string[], action: string): boolean {
  if (!DELIVERED_FAMILIES.some((family) => action.startsWith(family))) return false;
  return (
    types.length === 0 || types.some((t) => t === action || (t.endsWith(".*") && action.startsWith(t.slice(0, -1))))
  );
}
