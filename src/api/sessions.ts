import { type Context, Hono } from "hono";
import type { AppEnv } from "../app-env";
import { API_ACTOR } from "../audit/record";
import { backgroundOf } from "../auth/middleware";
import { RelayError, unwrap } from "../errors";
import type { Ask } from "../quotas/admission";
import type { MessageTask, SessionRpc } from "../rpc/session";
import { sessionFetch, sessionRpc } from "../rpc/stubs";
import { sessionOfRun } from "../runtime/run-record";
import { FanoutStart } from "../schemas/collaboration";
import type { RouteDecision } from "../schemas/routing";
import { ToolOutputs } from "../schemas/run";
import {
  AgentStatusUpdate,
  SessionCreate,
  SessionEvent,
  SessionMessage,
  SessionStatePatch,
  TriggerFire,
} from "../schemas/session";
import { admit, release } from "../services/admissions";
import { agentDirectory } from "../services/registry-cache";
import { routeInput } from "../services/routing";
import { isSessionId, newSessionId } from "../sessions/ids";
import { incomingTrace } from "../telemetry/propagation";
import { readAfter } from "./cursor";
import { LiveEventPosition } from "./positions";
import { recordRouted } from "./route-history";
import { historyPage, listSessions, sessionAuditPage, tracePage } from "./session-lists";
import { RUN_CALL_DEADLINE_MS, settle } from "./session-result";
import { readJson } from "./validate";

/**
 * `/v1/sessions`: validate → SessionDO RPC → Result → JSON. A session's object is named
 * by tenant and id, so another tenant's key reaches an empty object and gets 404.
 */

type Ctx = Context<AppEnv>;

function sessionStub(c: Ctx, id: string): SessionRpc {
  if (!isSessionId(id)) throw new RelayError("SESSION_NOT_FOUND", `No session '${id}'.`, { session_id: id });
  return sessionRpc(c.env, c.get("tenant"), id);
}

/**
 * The agent a new session starts with: the one named (it must exist and be enabled), else
 * the router's pick; with its capacity limit (null: none), so the session need not read the registry.
 */
async function startingAgent(
  c: Ctx,
  body: SessionCreate,
): Promise<{ agent: string; route?: RouteDecision; capacity: number | null }> {
  const tenant = c.get("tenant");
  if (body.agent) {
    const definition = (await agentDirectory(c.env.DB, tenant)).byName.get(body.agent);
    if (!definition) throw new RelayError("AGENT_NOT_FOUND", `No agent named '${body.agent}'.`, { agent: body.agent });
    if (!definition.enabled)
      throw new RelayError("AGENT_UNAVAILABLE", `Agent '${body.agent}' is disabled.`, {
        agent: body.agent,
        reason: "disabled",
      });
    return { agent: body.agent, capacity: definition.max_concurrent_sessions ?? null };
  }
  if (body.input === undefined) {
    throw new RelayError("VALIDATION_FAILED", "Name an agent, or give an input for the router.", {
      issues: [{ path: "agent", message: "required when there is no input to route" }],
    });
  }
  const { decision, registry } = await routeInput(c.env, tenant, body.input);
  if (!decision.agent) {
    throw new RelayError("NO_ROUTE", "The router found no agent for this input; name one.", { route: decision });
  }
  return {
    agent: decision.agent,
    route: decision,
    capacity: registry.byName.get(decision.agent)?.max_concurrent_sessions ?? null,
  };
}

/**
 * `make`, once the tenant's object admitted `ask` (else its QUOTA_EXCEEDED, and nothing is
 * done); when `make` fails, the admission is taken back.
 */
async function admitted<T>(c: Ctx, ask: Ask, make: () => Promise<T>): Promise<T> {
  const tenant = c.get("tenant");
  const background = backgroundOf(c);
  const admission = unwrap(await admit(c.env, tenant, ask, background));
  try {
    return await make();
  } catch (error) {
    background(release(c.env, tenant, admission));
    throw error;
  }
}

/** The caller's metadata with the run settings the session keeps there. */
function sessionMetadata(body: SessionCreate): Record<string, unknown> {
  const metadata: Record<string, unknown> = { ...body.metadata };
  if (body.after_turn !== undefined) metadata.after_turn = body.after_turn;
  if (body.max_turns !== undefined) metadata.max_turns = body.max_turns;
  return metadata;
}

/** What the message asks beyond its text. */
function taskOf(message: SessionMessage): MessageTask {
  return message.required_capabilities ? { required_capabilities: message.required_capabilities } : {};
}

/** True when the caller asks for Server-Sent Events. */
function wantsEventStream(c: Ctx): boolean {
  return (c.req.header("Accept") ?? "").split(",").some((type) => type.trim().split(";")[0] === "text/event-stream");
}

export const sessions = new Hono<AppEnv>()
  .get("/", listSessions)
  .post("/", async (c) => {
    const body = await readJson(c, SessionCreate);
    // Admitted against the tenant's sessions a day before anything is routed or made.
    const { view, id, route } = await admitted(c, { sessions: true }, async () => {
      const { agent, route, capacity } = await startingAgent(c, body);
      const id = newSessionId();
      const view = await settle(
        c,
        id,
        await sessionStub(c, id).create(c.get("tenant"), id, {
          agent,
          metadata: sessionMetadata(body),
          ttl_s: body.ttl_s,
          input: body.input,
          route,
          capacity,
        }),
      );
      if (route)
        recordRouted(c.env, c.get("tenant"), backgroundOf(c), { session_id: id, input: body.input!, decision: route });
      return { view, id, route };
    });
    c.header("Location", `/v1/sessions/${id}`);
    return c.json(route ? { ...view, route } : view, 201);
  })
  .get("/:id", async (c) => {
    const id = c.req.param("id");
    return c.json(await settle(c, id, await sessionStub(c, id).get()));
  })
  .get("/:id/messages", async (c) => {
    const id = c.req.param("id");
    return historyPage(c, id, (query) => sessionStub(c, id).history(query));
  })
  .get("/:id/compactions", async (c) => {
    const id = c.req.param("id");
    return c.json(await settle(c, id, await sessionStub(c, id).compactions()));
  })
  .post("/:id/messages", async (c) => {
    const id = c.req.param("id");
    const message = await readJson(c, SessionMessage);
    if (message.role !== "user" || message.run === false)
      return c.json(await settle(c, id, await sessionStub(c, id).addMessage(message)), 201);
    if (wantsEventStream(c)) {
      // The run as Server-Sent Events: its live events as they happen, then `result` (this endpoint's JSON answer).
      const { stream } = await settle(
        c,
        id,
        await sessionRpc(c.env, c.get("tenant"), id).streamMessage(
          message.content,
          undefined,
          taskOf(message),
          incomingTrace(c.req.raw.headers),
        ),
      );
      return new Response(stream, {
        headers: {
          "Content-Type": "text/event-stream; charset=utf-8",
          "Cache-Control": "no-cache",
          "X-Accel-Buffering": "no",
        },
      });
    }
    // The run answers when it ends or pauses, or after RUN_WAIT_MS still running (202: poll the run).
    const started = await settle(
      c,
      id,
      await sessionRpc(c.env, c.get("tenant"), id, RUN_CALL_DEADLINE_MS).sendMessage(
        message.content,
        undefined,
        taskOf(message),
        incomingTrace(c.req.raw.headers),
      ),
    );
    return c.json(started, started.run.status === "running" ? 202 : 200);
  })
  .post("/:id/events", async (c) => {
    const id = c.req.param("id");
    const event = await readJson(c, SessionEvent);
    const fired = await settle(c, id, await sessionStub(c, id).postEvent(event.name, event.data ?? null));
    return c.json(fired, fired.queued ? 202 : 200);
  })
  .post("/:id/triggers", async (c) => {
    const id = c.req.param("id");
    const { target } = await readJson(c, TriggerFire);
    return c.json(await settle(c, id, await sessionStub(c, id).fireTrigger(target)));
  })
  .post("/:id/fan-out", async (c) => {
    const id = c.req.param("id");
    const body = await readJson(c, FanoutStart);
    if (!isSessionId(id)) throw new RelayError("SESSION_NOT_FOUND", `No session '${id}'.`, { session_id: id });
    const fanout = await settle(c, id, await sessionRpc(c.env, c.get("tenant"), id, RUN_CALL_DEADLINE_MS).fanOut(body));
    return c.json(fanout, fanout.state === "EXECUTING" ? 202 : 200);
  })
  .get("/:id/fan-outs/:fanout_id", async (c) => {
    const id = c.req.param("id");
    const fanoutId = c.req.param("fanout_id");
    return c.json(await settle(c, id, await sessionStub(c, id).getFanout(fanoutId)));
  })
  .post("/:id/tool-outputs", async (c) => {
    const id = c.req.param("id");
    const body = await readJson(c, ToolOutputs);
    if (!isSessionId(id)) throw new RelayError("SESSION_NOT_FOUND", `No session '${id}'.`, { session_id: id });
    const resumed = await settle(
      c,
      id,
      await sessionRpc(c.env, c.get("tenant"), id, RUN_CALL_DEADLINE_MS).submitToolOutputs(
        body,
        API_ACTOR,
        incomingTrace(c.req.raw.headers).trace,
      ),
    );
    return c.json(resumed, resumed.run.status === "running" ? 202 : 200);
  })
  .get("/:id/ws", async (c) => {
    const id = c.req.param("id");
    if (!isSessionId(id)) throw new RelayError("SESSION_NOT_FOUND", `No session '${id}'.`, { session_id: id });
    if (c.req.header("Upgrade")?.toLowerCase() !== "websocket") {
      throw new RelayError("VALIDATION_FAILED", "Open this endpoint as a WebSocket (Upgrade: websocket).", {
        issues: [{ path: "Upgrade", message: "must be websocket" }],
      });
    }
    const raw = c.req.query("after");
    const after = raw === undefined ? undefined : readAfter(raw, LiveEventPosition);
    const forwarded = new Request(`https://session/ws${after ? `?after=${after}` : ""}`, {
      headers: c.req.raw.headers,
    });
    const response = await sessionFetch(c.env, c.get("tenant"), id, forwarded);
    if (response.status === 404) throw new RelayError("SESSION_NOT_FOUND", `No session '${id}'.`, { session_id: id });
    return response;
  })
  .get("/:id/runs/:run_id", async (c) => {
    const id = c.req.param("id");
    const runId = c.req.param("run_id");
    const missing = () => new RelayError("RUN_NOT_FOUND", `No run '${runId}'.`, { run_id: runId });
    if (sessionOfRun(runId) !== id) throw missing();
    return c.json(await settle(c, id, await sessionStub(c, id).getRun(runId), missing));
  })
  .post("/:id/runs/:run_id/cancel", async (c) => {
    const id = c.req.param("id");
    const runId = c.req.param("run_id");
    const missing = () => new RelayError("RUN_NOT_FOUND", `No run '${runId}'.`, { run_id: runId });
    if (sessionOfRun(runId) !== id) throw missing();
    return c.json(await settle(c, id, await sessionStub(c, id).cancelRun(runId), missing));
  })
  .get("/:id/trace", async (c) => {
    const id = c.req.param("id");
    return tracePage(c, id, (query) => sessionStub(c, id).traceEvents(query));
  })
  .patch("/:id/state", async (c) => {
    const id = c.req.param("id");
    const patch = await readJson(c, SessionStatePatch);
    return c.json(await settle(c, id, await sessionStub(c, id).patchState(patch)));
  })
  .post("/:id/agent-status", async (c) => {
    const id = c.req.param("id");
    const { agent, status } = await readJson(c, AgentStatusUpdate);
    return c.json(await settle(c, id, await sessionStub(c, id).setAgentStatus(agent, status)));
  })
  .get("/:id/audit", async (c) => {
    const id = c.req.param("id");
    return sessionAuditPage(c, id, (query) => sessionStub(c, id).audit(query));
  })
  .delete("/:id", async (c) => {
    const id = c.req.param("id");
    await settle(c, id, await sessionStub(c, id).delete());
    return c.body(null, 204);
  });
