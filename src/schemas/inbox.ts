import * as z from "zod";
import { AgentName } from "./agent";

/**
 * The human inbox (docs/runs.md, People): what waits for a person. Items live in their session's
 * Durable Object; the tenant-wide list reads an index in D1 built from their audit records.
 */

/**
 * Why a person is asked: a graceful handoff timed out, a human agent holds the turn, an
 * agent escalated, or a tool call (or handoff) waits for approval.
 */
export const InboxKind = z.enum(["handoff_escalation", "human_turn", "escalation", "approval"]);
export type InboxKind = z.infer<typeof InboxKind>;

export const INBOX_STATUSES = ["open", "resolved", "expired", "cancelled"] as const;
export const InboxStatus = z.enum(INBOX_STATUSES);
export type InboxStatus = z.infer<typeof InboxStatus>;

/** A person's answer to an approval item. */
export const ApprovalDecision = z.enum(["approve", "deny"]);
export type ApprovalDecision = z.infer<typeof ApprovalDecision>;

/** Inbox ids carry their session (`inb_<ulid>_<session id>`), so a resolve reaches the session directly. */
export const InboxItemId = z.string().regex(/^inb_[0-9a-z]{26}_ses_[0-9a-z]{52}$/, "must be an inbox item id");

export const InboxItem = z.object({
  id: z.string(),
  kind: InboxKind,
  status: InboxStatus,
  session_id: z.string(),
  /** The agent the item is for: the human agent, or the agent that escalated. */
  agent: AgentName.nullable(),
  run_id: z.string().nullable(),
  handoff_id: z.string().nullable(),
  source_agent: AgentName.nullable(),
  target_agent: AgentName.nullable(),
  reason: z.string(),
  details: z.record(z.string(), z.unknown()),
  created_at: z.string(),
  /** When it expires unanswered (null: never). */
  expires_at: z.string().nullable(),
  resolved_at: z.string().nullable(),
  /** Who resolved it (the API caller), and the answer: a reply, or an approval's decision (its reason in `reply`). */
  resolved_by: z.string().nullable(),
  reply: z.string().nullable(),
  decision: ApprovalDecision.nullable().default(null),
});
export type InboxItem = z.infer<typeof InboxItem>;

/**
 * `POST /v1/inbox/:id/resolve`: `{ reply }` answers a question (a human turn, an
 * escalation); `{ decision, reason? }` answers an approval.
 */
export const InboxResolve = z
  .strictObject({
    reply: z
      .string()
      .trim()
      .min(1)
      .max(32 * 1024)
      .optional(),
    decision: ApprovalDecision.optional(),
    /** Why, with a decision; a denied call's output carries it to the model. */
    reason: z.string().trim().min(1).max(4000).optional(),
    /** Who answered, for the audit trail (default "api"): the API key names a tenant, not a person. */
    by: z.string().trim().min(1).max(200).optional(),
  })
  .superRefine((body, ctx) => {
    if ((body.reply === undefined) === (body.decision === undefined))
      ctx.addIssue({
        code: "custom",
        path: ["reply"],
        message: "give either a reply (a question) or a decision (an approval)",
      });
    if (body.reason !== undefined && body.decision === undefined)
      ctx.addIssue({ code: "custom", path: ["reason"], message: "a reason goes with a decision" });
  });
export type InboxResolve = z.infer<typeof InboxResolve>;

/** An answer as the session receives it. */
export type InboxAnswer = { reply: string } | { decision: ApprovalDecision; reason?: string };

/** One inbox item as `GET /v1/inbox` lists it (the D1 inbox index): never the conversation or the reply. */
export const InboxIndexRow = z.strictObject({
  id: z.string(),
  kind: InboxKind,
  status: InboxStatus,
  session_id: z.string(),
  agent: z.string().nullable(),
  run_id: z.string().nullable(),
  handoff_id: z.string().nullable(),
  reason: z.string(),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  closed_at: z.string().nullable(),
  resolved_by: z.string().nullable(),
});
export type InboxIndexRow = z.infer<typeof InboxIndexRow>;
