import { peerQueryTimeoutS } from "../../../src/collaboration/peer-query";
import type { Env } from "../../../src/env";
import { oneTurn } from "../../../src/outbound/one-turn";
import { collaborationRpc } from "../../../src/rpc/stubs";
import type { AgentDefinition } from "../../../src/schemas/agent";
import type { WorkCall } from "../../../src/schemas/run";
import type { AgentModels } from "../../../src/services/agent-models";
import { agentOutbound } from "../../../src/services/outbound";
import type { TraceContext } from "../../../src/telemetry/trace-context";

/**
 * An agent's turn talking to other agents (docs/collaboration.md, In an agent's turn): `ask_agent`, `notify_agent` and
 * `broadcast`, carried through the session's collaboration — one CollaborationDO per
 * session, its id made from the session's, joined by each agent that speaks in it — so
 * every exchange is in a collaboration's ordered, audited log and the asker is blocked on
 * the asked agent (deadlock probes included) while it answers. The asked agent answers in
 * one turn of its own (model or webhook), within its turn timeout.
 */

export interface PeerCallResult {
  ok: boolean;
  output: string;
  duration_ms: number;
}

/** The session's collaboration id: `col_` + the ULID of the session id (`ses_<ulid><random>`). */
export function sessionCollaborationId(sessionId: string): string {
  return `col_${sessionId.slice(4, 30)}`;
}

export interface PeerContext {
  env: Env;
  tenant: string;
  session_id: string;
  agent: AgentDefinition;
  directory: ReadonlyMap<string, AgentDefinition>;
  models: AgentModels;
  /** The run's trace with its turn's span, sent on the asked agent's model or webhook call (docs/observability.md). */
  trace?: TraceContext;
}

export async function runPeerCall(ctx: PeerContext, call: WorkCall): Promise<PeerCallResult> {
  const started = Date.now();
  const done = (ok: boolean, output: string): PeerCallResult => ({ ok, output, duration_ms: Date.now() - started });
  const args = JSON.parse(call.arguments || "{}") as {
    agent?: string;
    question?: string;
    message?: string;
    capabilities?: string[];
  };
  const peers = ctx.agent.handoffs.map((h) => h.to).filter((name) => ctx.directory.get(name)?.enabled);
  const id = sessionCollaborationId(ctx.session_id);
  const rpc = collaborationRpc(ctx.env, ctx.tenant, id);
  const joined = await rpc.create(ctx.tenant, id, {
    initiator: ctx.agent.name,
    participants: peers,
    context: { session_id: ctx.session_id },
  });
  if (!joined.ok) return done(false, `Error: the agents could not be reached (${joined.error.code}).`);
  switch (call.kind) {
    case "notify": {
      const sent = await rpc.send({
        type: "notify",
        from: ctx.agent.name,
        to: args.agent!,
        payload: { message: args.message },
        priority: "normal",
      });
      return sent.ok
        ? done(true, `Sent to '${args.agent}'.`)
        : done(false, `Error: not sent (${sent.error.code}): ${sent.error.message}`);
    }
    case "broadcast": {
      const sent = await rpc.send({
        type: "broadcast",
        from: ctx.agent.name,
        payload: { message: args.message, ...(args.capabilities ? { capabilities: args.capabilities } : {}) },
        priority: "normal",
      });
      if (!sent.ok) return done(false, `Error: not sent (${sent.error.code}): ${sent.error.message}`);
      if (!sent.value.matches) return done(true, "Sent to every agent you work with.");
      return done(
        true,
        JSON.stringify({
          matches: sent.value.matches.map((m) => ({ agent: m.agent, score: m.score, missing: m.missing })),
        }),
      );
    }
    default: {
      const peer = ctx.directory.get(args.agent!)!;
      const timeoutS = peerQueryTimeoutS(peer);
      const query = await rpc.send({
        type: "query",
        from: ctx.agent.name,
        to: peer.name,
        subject: args.question!.slice(0, 200),
        payload: { question: args.question },
        priority: "normal",
        timeout_s: timeoutS,
      });
      if (!query.ok) return done(false, `Error: not asked (${query.error.code}): ${query.error.message}`);
      const answer = await oneTurn({
        agent: peer,
        instruction: args.question!,
        session_id: ctx.session_id,
        run_id: call.id,
        timeoutMs: timeoutS * 1000,
        provider: ctx.models.provider,
        default_model: ctx.models.default_model,
        outbound: () => agentOutbound(ctx.env, ctx.tenant, peer),
        trace: ctx.trace,
      });
      const correlation_id = query.value.message.id;
      if (!answer.ok) {
        await rpc.send({
          type: "cancel",
          from: ctx.agent.name,
          correlation_id,
          payload: { reason: answer.code },
          priority: "normal",
        });
        return done(false, `Error: '${peer.name}' did not answer (${answer.code}).`);
      }
      const text = answer.response.content ?? "";
      await rpc.send({
        type: "response",
        from: peer.name,
        to: ctx.agent.name,
        correlation_id,
        payload: { answer: text },
        priority: "normal",
      });
      return done(true, text);
    }
  }
}
