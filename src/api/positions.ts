import * as z from "zod";
import { sessionOfHandoff } from "../handoff/record";
import { escalationOfInboxItem, sessionOfInboxItem } from "../runtime/inbox";
import { sessionOfRun } from "../runtime/run-record";
import { AgentName } from "../schemas/agent";
import { SecretName } from "../schemas/vault";
import { isSessionId } from "../sessions/ids";

/**
 * The grammar of each list's positions: what a page starts after, as its store writes it.
 * A cursor's position (./cursor.ts) and an `after=` value must parse with the list's own
 * one; the description names it in the INVALID_CURSOR message. Each is the exact shape the
 * store makes, no looser: a position outside it is one no page of the list ever ended on.
 */

/** A position as it is read from a cursor or from `after=`: text in, the store's value out. */
export type Position<T> = z.ZodType<T, string>;

/** An audit record id: a ULID (48-bit time, so its first character is at most 7). */
export const AUDIT_RECORD_ID = /^[0-7][0-9A-HJKMNP-TV-Z]{25}$/;

/** A live or trace event id: `evt_` and a lower-case ULID. */
export const EVENT_ID = /^evt_[0-9a-z]{26}$/;

const id = (what: string, test: (text: string) => boolean): Position<string> => z.string().refine(test).describe(what);

/** A count: digits with no sign, exponent or leading zero, so it reads back as it was written. */
const count = (what: string): Position<number> =>
  z
    .string()
    .regex(/^(0|[1-9]\d{0,14})$/)
    .transform(Number)
    .describe(what);

/** `GET /v1/agents`: agents in name order. */
export const AgentPosition: Position<string> = AgentName.describe("an agent name");

/** `GET /v1/tools`: tools in name order (the name's grammar without its reserved-name rule, which is not an order). */
export const ToolPosition = id("a tool name", (text) => /^[A-Za-z0-9_-]{1,64}$/.test(text));

/** `GET /v1/secrets`: the vault's secrets in name order. */
export const SecretPosition: Position<string> = SecretName.describe("a secret name");

/** `GET /v1/audit` (and A2A ListTasks over the tenant's runs): audit_log ids, newest first. */
export const AuditRecordPosition = id("an audit record id (a ULID)", (text) => AUDIT_RECORD_ID.test(text));

/** `GET /v1/sessions`: the sessions index, newest first. */
export const SessionPosition = id("a session id (ses_…)", isSessionId);

/** `GET /v1/agents/:name/handoffs`: the handoffs index, newest first. */
export const HandoffPosition = id("a handoff id (hof_…)", (text) => sessionOfHandoff(text) !== null);

/** `GET /v1/inbox`: a session's item, or a collaboration's escalation, oldest first. */
export const InboxPosition = id(
  "an inbox item id (inb_…)",
  (text) => sessionOfInboxItem(text) !== null || escalationOfInboxItem(text) !== null,
);

/** `GET /v1/sessions/:id/inbox`: only that session's items. */
export const sessionInboxPosition = (session: string): Position<string> =>
  id("an inbox item id of this session (inb_…)", (text) => sessionOfInboxItem(text) === session);

/** A2A ListTasks with a contextId: that session's runs, newest first. */
export const sessionRunPosition = (session: string): Position<string> =>
  id("a run id of this session (run_…)", (text) => sessionOfRun(text) === session);

/** `GET /v1/sessions/:id/messages`: history sequence numbers (0: from the start). */
export const SequencePosition = count("a sequence number (a message's seq)");

/** `GET /v1/capabilities/match`: an offset into the ranking. */
export const OffsetPosition = count("an offset into the ranking");

/** `GET /v1/sessions/:id/trace`: trace event ids, in order. */
export const TraceEventPosition = id("a trace event id (evt_…)", (text) => EVENT_ID.test(text));

/** `GET /v1/sessions/:id/ws?after=`: the live event to replay after. */
export const LiveEventPosition = id("a live event id (evt_…)", (text) => EVENT_ID.test(text));

/** `GET /v1/route/history`: the routing history's rows, newest first. */
export const RouteHistoryPosition = count("a routing history row's sequence number");
