import * as z from "zod";
import { AgentName } from "./agent";
import { HandoffMode, HandoffPolicy } from "./handoff";

/**
 * Webhooks in (docs/webhooks.md): `POST /v1/webhooks/:source`, a Standard Webhooks delivery whose
 * body is `{ "type", "data" }`. Three types: a handoff another system asks for, a session
 * event (for event triggers), and an agent's status.
 */

export const WebhookSourceName = z
  .string()
  .regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "must be a source name: lower-case letters, digits, '-' or '_'");

const SessionId = z.string().min(1).max(128);

export const WebhookPayload = z.discriminatedUnion("type", [
  z.strictObject({
    type: z.literal("handoff.requested"),
    data: z
      .strictObject({
        session_id: SessionId,
        /** The agent handing over; default: the session's current agent. */
        source_agent: AgentName.optional(),
        target_agent: AgentName.optional(),
        required_capabilities: z.array(z.string().trim().min(1).max(100)).min(1).max(20).optional(),
        mode: HandoffMode.optional(),
        policy: HandoffPolicy.optional(),
        reason: z.string().trim().min(1).max(2000),
        summary: z.string().max(8000).optional(),
        context: z.record(z.string(), z.unknown()).optional(),
        payload: z.record(z.string(), z.unknown()).optional(),
      })
      .refine(
        (d) => d.mode === "return" || (d.target_agent === undefined) !== (d.required_capabilities === undefined),
        {
          message: "a transfer needs exactly one of target_agent and required_capabilities",
          path: ["target_agent"],
        },
      ),
  }),
  z.strictObject({
    type: z.literal("session.event"),
    data: z.strictObject({
      session_id: SessionId,
      name: z.string().trim().min(1).max(100),
      data: z.unknown().optional(),
    }),
  }),
  z.strictObject({
    type: z.literal("agent.status"),
    data: z
      .strictObject({
        agent: AgentName,
        status: z.enum(["busy", "idle", "paused", "active"]),
        session_id: SessionId.optional(),
      })
      .refine((d) => (d.status === "busy" || d.status === "idle") === (d.session_id !== undefined), {
        message:
          "busy and idle are an agent's turn status in a session (give session_id); paused and active are the agent's own (no session_id)",
        path: ["session_id"],
      }),
  }),
]);
export type WebhookPayload = z.infer<typeof WebhookPayload>;

/** The most a webhook body may be. */
export const MAX_WEBHOOK_BYTES = 256 * 1024;

/** One source's refused deliveries (those refused before their signature verified), as counted so far. */
export const WebhookSourceRejections = z.strictObject({
  source: z.string(),
  rejected: z.number().int().min(0),
  /**
   * `too_large`, `unreadable`, `missing_headers`, `invalid_timestamp`, `stale`, `future`,
   * `bad_signature`, `invalid_secret`.
   */
  by_reason: z.record(z.string(), z.number().int().min(0)),
  first_rejected_at: z.string(),
  last_rejected_at: z.string(),
  /** The start of the newest minute with a `webhook.rejected` sample in the audit log. */
  last_sample_minute: z.string().nullable(),
});

/** `GET /v1/webhooks/stats`. */
export const WebhookStats = z.strictObject({ sources: z.array(WebhookSourceRejections) });
