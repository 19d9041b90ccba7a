import { TaskState } from "@a2a-js/sdk";

/**
 * A2A 1.0 request params the SDK's JSON-RPC transport takes without complaint but the spec
 * refuses (docs/a2a.md, Errors), checked on the raw JSON before it parses them: a negative or
 * fractional `historyLength`, a ListTasks `status` that names no task state, a
 * `statusTimestampAfter` that is no time, a message without its `messageId`; and one limit of
 * Relay's own, a `messageId` over MAX_MESSAGE_ID characters (it is stored). Pure.
 */

/** The task state names a ListTasks `status` may give, and UNRECOGNIZED (what the SDK's client sends for none). */
const STATE_NAMES = new Set(Object.keys(TaskState).filter((key) => Number.isNaN(Number(key))));

/** The longest client messageId taken (UUIDs and ULIDs are far shorter). */
export const MAX_MESSAGE_ID = 256;

const field = (value: unknown, name: string): unknown =>
  value !== null && typeof value === "object" ? (value as Record<string, unknown>)[name] : undefined;

/** An RFC 3339 time, as the protobuf JSON mapping writes a Timestamp (Date.parse alone takes "-1"). */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d{1,9})?([Zz]|[+-]\d{2}:\d{2})$/;

const isTime = (value: unknown): boolean =>
  typeof value === "string" && RFC3339.test(value) && !Number.isNaN(Date.parse(value));

function historyLengthError(value: unknown): string | null {
  if (value === undefined || value === null) return null;
  return typeof value === "number" && Number.isInteger(value) && value >= 0
    ? null
    : "historyLength must be a whole number, 0 or more.";
}

/** Why a request's params are invalid (-32602), or null when the SDK may have them. */
export function paramsError(method: unknown, params: unknown): string | null {
  switch (method) {
    case "GetTask":
      return historyLengthError(field(params, "historyLength"));
    case "ListTasks": {
      const status = field(params, "status");
      if (status !== undefined && status !== null && !(typeof status === "string" && STATE_NAMES.has(status)))
        return `status must be a task state (${[...STATE_NAMES].filter((s) => s !== "UNRECOGNIZED").join(", ")}).`;
      const after = field(params, "statusTimestampAfter");
      if (after !== undefined && after !== null && !isTime(after))
        return "statusTimestampAfter must be an RFC 3339 time.";
      return historyLengthError(field(params, "historyLength"));
    }
    case "SendMessage":
    case "SendStreamingMessage": {
      const message = field(params, "message");
      const id = field(message, "messageId");
      if (message !== undefined && (typeof id !== "string" || id.trim() === ""))
        return "message.messageId is required: a client-chosen id of the message.";
      // Kept with the stored message and shown in the task's history (docs/a2a.md): an id, not a payload.
      if (typeof id === "string" && id.length > MAX_MESSAGE_ID)
        return `message.messageId must be at most ${MAX_MESSAGE_ID} characters.`;
      return historyLengthError(field(field(params, "configuration"), "historyLength"));
    }
    default:
      return null;
  }
}
