import * as z from "zod";
import { AuditRecord } from "../audit/record";
import { ERROR_STATUS, type ErrorCode } from "../errors/codes";
import { CapabilityMatch, CollabMessage } from "./collaboration";
import { Handoff, HistoryItem } from "./handoff";
import { InboxItem } from "./inbox";
import { ConfigSource, RoutingConfig, RoutingConfigPatch } from "./routing";
import { Run } from "./run";

/**
 * Shapes only the HTTP API answers with: envelopes and compound answers around the domain
 * schemas. With those they are the responses of the OpenAPI document (src/api/spec), and
 * the test suite checks every real response against them.
 */

/** Every list: a page of items and the cursor of the next page (null on the last). */
export function Page<T extends z.ZodType>(item: T) {
  return z.strictObject({ items: z.array(item), next_cursor: z.string().nullable() });
}

export const ERROR_CODES = Object.keys(ERROR_STATUS) as [ErrorCode, ...ErrorCode[]];

/** Every error: a stable code (its HTTP status is fixed by the code), a sentence, and details when there are any. */
export function ErrorResponse(codes: readonly ErrorCode[] = ERROR_CODES) {
  return z.strictObject({
    error: z.strictObject({
      code: z.enum(codes as [ErrorCode, ...ErrorCode[]]),
      message: z.string(),
      details: z.unknown().optional(),
    }),
  });
}

export const Health = z.strictObject({ ok: z.literal(true), service: z.literal("relay") });

/** `GET /v1/route/stats`: the router this isolate holds and how its version was built (docs/scaling.md). */
export const RouteStats = z.strictObject({
  registry_version: z.number().int(),
  agents: z.number().int().min(0),
  enabled_agents: z.number().int().min(0),
  /** The build of this version by the tenant's router object: agents compiled and their time, ms. */
  compile_ms: z.number().min(0),
  compiled_agents: z.number().int().min(0),
  /** Shards relinked for this version, and the link's time in ms. */
  linked_shards: z.number().int().min(0),
  link_ms: z.number().min(0),
  build_ms: z.number().min(0),
  shards: z.number().int().min(1),
  /** This isolate's load of the version from the router object (no compiling), ms. */
  load_ms: z.number().min(0),
  memory_bytes: z.number().int().min(0),
  /**
   * The tenant's router object's own loaded router, which answers the routes of isolates that
   * hold none yet: its memory counted the same way (0 while it holds none; null when the
   * object did not answer).
   */
  object_memory_bytes: z.number().int().min(0).nullable(),
  /**
   * This isolate's budget for the routers it holds (docs/scaling.md, "Memory"): its size, what
   * the routers of every tenant it holds take of it now (a shard two share counted once), and
   * whether it holds this tenant's router (false: let go as the least recently used, or bigger
   * than the whole budget; it is loaded again when next asked).
   */
  router_budget: z.strictObject({
    bytes: z.number().int().min(0),
    held_bytes: z.number().int().min(0),
    held: z.boolean(),
  }),
  pattern_budget: z.strictObject({
    /** Instructions of the tenant's admitted patterns (enabled agents, after expansion). */
    used: z.number().int().min(0),
    limit: z.number().int().min(1),
    /** UTF-16 code units of an input the pattern tier reads. */
    prefix: z.number().int().min(1),
  }),
});

/** `GET|PUT|DELETE /v1/config/routing`: the resolved config, each value's layer, the stored tenant layer. */
export const RoutingConfigView = z.strictObject({
  config: RoutingConfig,
  sources: z.record(z.string(), ConfigSource),
  stored: RoutingConfigPatch.nullable(),
  warnings: z.array(z.string()),
});

/** A message stored without a run. */
export const AddedMessage = z.strictObject({
  seq: z.number().int().min(1),
  message: HistoryItem,
  history_length: z.number().int().min(0),
});
export type AddedMessage = z.infer<typeof AddedMessage>;

/** A user message and the run it started (or a run resumed: `message` absent). */
export const MessageRun = z.strictObject({ message: HistoryItem, run: Run });
export type MessageRun = z.infer<typeof MessageRun>;

export const RunOnly = z.strictObject({ run: Run });

export const EventFired = z.strictObject({ handoff: Handoff.nullable(), queued: z.boolean() });

export const InboxResolved = z.strictObject({ item: InboxItem, run: Run.nullable() });

/** A collaboration message as sent: a capability broadcast also carries the matcher's ranking. */
export const SentMessage = z.strictObject({ message: CollabMessage, matches: z.array(CapabilityMatch).optional() });
export type SentMessage = z.infer<typeof SentMessage>;

export const CapabilityMatchPage = Page(CapabilityMatch).extend({
  required: z.array(z.string()),
  exclude: z.array(z.string()),
  min_score: z.number(),
});

/** A session's own audit trail: each record says whether it has reached D1; `pending` counts those that have not. */
export const LocalAuditRecord = AuditRecord.extend({ flushed: z.boolean() });
export type LocalAuditRecord = z.infer<typeof LocalAuditRecord>;
export const SessionAuditPage = Page(LocalAuditRecord).extend({ pending: z.number().int().min(0) });

/** What a signed webhook did: its type and the handoff, trigger, session or agent load it touched. */
export const WebhookAnswer = z.looseObject({ type: z.string() });
