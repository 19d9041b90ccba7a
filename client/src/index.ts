/**
 * Relay's typed client (docs/client.md): the generated API types, the client, and helpers
 * for streams, live events, webhooks and lists.
 */
export {
  createRelayClient,
  type ListItem,
  type ListPath,
  type RelayClient,
  type RelayClientOptions,
  unwrap,
} from "./client.ts";
export { type ErrorBody, RelayApiError, RelayConnectionError, RelayReplyError } from "./errors.ts";
export type { LiveSubscription, SubscribeOptions, WebSocketConstructor } from "./live.ts";
export { type Page, paginate } from "./pagination.ts";
export type { RunStream } from "./run-stream.ts";
export * from "./types.ts";
export {
  type AgentTurnDelivery,
  DEFAULT_TOLERANCE_S,
  type EventNotification,
  type HeaderSource,
  type ToolCallDelivery,
  type VerifiedWebhook,
  type VerifyOptions,
  verifyWebhook,
  type WebhookRefusal,
  WebhookVerificationError,
} from "./webhooks.ts";
