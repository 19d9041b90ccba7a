import * as events from "../../src/audit/events";
import { type Actor, API_ACTOR } from "../../src/audit/record";
import { err, ok, type Result } from "../../src/errors";
import { ulid } from "../../src/lib/ulid";
import type { AddedMessage, HistoryPage } from "../../src/rpc/session";
import {
  type AgentTurnStatus,
  applyStatePatch,
  type SessionMessage,
  type SessionStatePatch,
  type SessionView,
} from "../../src/schemas/session";
import { messageActor, toHistoryItem, touch } from "../../src/sessions/model";
import type { SessionHandoffs } from "./handoffs/session-handoffs";
import { auditScope, type SessionKernel } from "./session-kernel";
import type { SessionTriggers } from "./triggers/session-triggers";

/** Session state is kept small enough to load on every call. */
export const MAX_STATE_BYTES = 256 * 1024;

/**
 * The conversation and state of a session outside a run: messages added by the caller, the
 * history, state patches (an evaluation point of the triggers) and the agents' turn status
 * (what a graceful handoff waits for). Each change is one commit with its audit record.
 */
export class SessionConversation {
  constructor(
    private readonly k: Pick<SessionKernel, "commit" | "live" | "now" | "outbox" | "store" | "view">,
    private readonly triggers: Pick<SessionTriggers, "fire">,
    private readonly handoffs: Pick<SessionHandoffs, "onAgentStatus">,
  ) {}

  async add(message: SessionMessage, caller: Actor = API_ACTOR): Promise<Result<AddedMessage>> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const now = this.k.now();
    const session = touch(loaded.value, now);
    const item = toHistoryItem(message, session.current_agent, `msg_${ulid(now)}`, now);
    let seq = 0;
    await this.k.commit(session, [], () => {
      seq = this.k.store.appendMessage(item, now);
      this.k.outbox.append([
        events.messageAdded(auditScope(session), messageActor(item, caller), now, item.agent ?? session.current_agent, {
          message_id: item.id,
          seq,
          role: item.role,
          author: item.agent ?? null,
          chars: item.content.length,
        }),
      ]);
    });
    return ok({ seq, message: item, history_length: this.k.store.historyLength() });
  }

  /** The conversation in order, `limit` items after sequence number `after`. */
  history({ after = 0, limit = 100 }: { after?: number; limit?: number } = {}): Result<HistoryPage> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const rows = this.k.store.history({ after, limit: limit + 1 });
    const page = rows.slice(0, limit);
    return ok({
      items: page.map((r) => ({ ...r.item, tokens: r.tokens })),
      next_after: rows.length > limit ? (page.at(-1)?.seq ?? null) : null,
    });
  }

  async patchState(patch: SessionStatePatch, actor: Actor = API_ACTOR): Promise<Result<SessionView>> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const state = applyStatePatch(loaded.value.state, patch);
    const bytes = new TextEncoder().encode(JSON.stringify(state)).byteLength;
    if (bytes > MAX_STATE_BYTES) {
      return err("PAYLOAD_TOO_LARGE", `Session state would be ${bytes} bytes; the limit is ${MAX_STATE_BYTES}.`, {
        limit_bytes: MAX_STATE_BYTES,
      });
    }
    const now = this.k.now();
    const session = { ...touch(loaded.value, now), state };
    const record = events.stateUpdated(auditScope(session), actor, now, {
      agent: session.current_agent,
      set: Object.keys(patch.set ?? {}),
      unset: patch.unset ?? [],
    });
    await this.k.commit(session, [record]);
    // A state change is a condition triggers' evaluation point; the answer shows where it led.
    await this.triggers.fire({ type: "condition" });
    return ok(this.k.view(this.k.store.load() ?? session));
  }

  /**
   * Reports an agent's turn status in this session (graceful handoffs wait for `idle`).
   * A report that changes nothing writes nothing.
   */
  async setAgentStatus(agent: string, status: AgentTurnStatus, actor?: Actor): Promise<Result<SessionView>> {
    const loaded = this.k.live();
    if (!loaded.ok) return loaded;
    const previous = this.k.store.agentStatus()[agent] ?? null;
    if (previous === status) return ok(this.k.view(loaded.value));
    const now = this.k.now();
    const session = touch(loaded.value, now);
    const who = actor ?? { actor: agent, actor_type: "agent" as const };
    await this.k.commit(
      session,
      [events.agentStatusChanged(auditScope(session), who, now, { agent, from: previous, to: status })],
      () => this.k.store.setAgentStatus(agent, status, now),
    );
    // A graceful handoff waiting for this agent proceeds now.
    await this.handoffs.onAgentStatus(agent, status);
    return ok(this.k.view(this.k.store.load() ?? session));
  }
}
