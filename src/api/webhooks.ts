import { type Context, Hono } from "hono";
import type { AppEnv } from "../app-env";
import { writeAuditBatch } from "../audit/d1-store";
import { auditEvent } from "../audit/events";
import { claimReceipt, completeReceipt, type Receipt, releaseReceipt } from "../audit/webhook-receipts";
import { RejectionLog, rejectionStats, UNKNOWN_SOURCE, UNKNOWN_SOURCE_TENANT } from "../audit/webhook-rejections";
import { backgroundOf } from "../auth/middleware";
import { RelayError, type Result, statusOf } from "../errors";
import { issuesOf } from "../errors/issues";
import { requestFingerprint } from "../handoff/fingerprint";
import { checkDepth, jsonTextDepth } from "../lib/json-depth";
import { verifyWebhook } from "../lib/standard-webhooks";
import { sessionRpc } from "../rpc/stubs";
import { HandoffRequest } from "../schemas/handoff";
import { keyPaths } from "../schemas/reserved-keys";
import { MAX_WEBHOOK_BYTES, WebhookPayload, WebhookSourceName } from "../schemas/webhook";
import { setAgentStatus } from "../services/agent-capacity";
import { agentDirectory } from "../services/registry-cache";
import { readDatabase, writeDatabase } from "../services/tenant-shards";
import { type WebhookSource, webhookSource } from "../services/webhook-sources";
import { isSessionId } from "../sessions/ids";
import { readBody } from "./body";

/**
 * `POST /v1/webhooks/:source` (docs/webhooks.md): how other systems hand a conversation to an
 * agent. No API key: the Standard Webhooks signature is the credential (checked before
 * anything else is read). A verified delivery is handled once per webhook-id — a repeat,
 * even one racing the first, gets the first answer and changes nothing.
 *
 * A refusal before the signature verifies (unknown source, too large, unreadable, unsigned,
 * badly signed, stale) costs the sender as much as it costs Relay: it is counted in memory
 * and flushed as an aggregate at most once a second per isolate, with at most one
 * `webhook.rejected` audit sample per source per minute (src/audit/webhook-rejections.ts);
 * the tenant reads the counts at `GET /v1/webhooks/stats`. A signed delivery whose payload
 * is refused is the source's own mistake and is audited in full.
 */

type Ctx = Context<AppEnv>;

/** One per isolate: refusals from every request it serves are counted together. */
const refusals = new RejectionLog();

/** Counts a refusal of an unauthenticated delivery; no write of its own. */
function countRefusal(c: Ctx, source: WebhookSource | null, attempted: string, reason: string): void {
  refusals.record(
    (tenant) => writeDatabase(c.env, tenant),
    {
      tenant: source?.tenant ?? UNKNOWN_SOURCE_TENANT,
      source: source?.name ?? UNKNOWN_SOURCE,
      reason,
      webhook_id: c.req.header("webhook-id")?.slice(0, 200) ?? null,
      attempted: source ? null : attempted.slice(0, 64),
      at: Date.now(),
    },
    backgroundOf(c),
  );
}

/** A signed delivery's payload was refused: audited in full (the signature is the sender's cost). */
async function recordInvalidPayload(c: Ctx, source: WebhookSource, issues: unknown): Promise<void> {
  const record = auditEvent(
    { tenant: source.tenant, session_id: null },
    {
      action: "webhook.rejected",
      actor: { actor: `webhook:${source.name}`, actor_type: "webhook" },
      details: {
        source: source.name,
        reason: "invalid_payload",
        webhook_id: c.req.header("webhook-id") ?? null,
        issues,
      },
    },
    Date.now(),
  );
  // The refusal is answered whatever D1 says; a lost rejection record is logged, never thrown.
  await writeDatabase(c.env, source.tenant)
    .then((db) => writeAuditBatch(db, [record]))
    .catch((error: unknown) => console.error("webhook.rejected could not be recorded", error));
}

function fromResult<T>(result: Result<T>, ok: (value: T) => Receipt): Receipt {
  return result.ok ? ok(result.value) : { http_status: statusOf(result.error.code), body: { error: result.error } };
}

const actorOf = (source: WebhookSource) => ({ actor: `webhook:${source.name}`, actor_type: "webhook" as const });

async function handle(c: Ctx, source: WebhookSource, webhookId: string, payload: WebhookPayload): Promise<Receipt> {
  const tenant = source.tenant;
  const missingSession = (id: string): Receipt => ({
    http_status: 404,
    body: { error: { code: "SESSION_NOT_FOUND", message: `No session '${id}'.`, details: { session_id: id } } },
  });
  switch (payload.type) {
    case "handoff.requested": {
      const d = payload.data;
      if (!isSessionId(d.session_id)) return missingSession(d.session_id);
      const rpc = sessionRpc(c.env, tenant, d.session_id);
      let sourceAgent = d.source_agent;
      if (sourceAgent === undefined) {
        const view = await rpc.get();
        if (!view.ok) return fromResult(view, () => ({ http_status: 200, body: null }));
        sourceAgent = view.value.current_agent ?? undefined;
      }
      const { source_agent: _named, ...rest } = d;
      const parsed = HandoffRequest.safeParse({ ...rest, source_agent: sourceAgent });
      if (!parsed.success)
        return {
          http_status: 400,
          body: {
            error: {
              code: "VALIDATION_FAILED",
              message: "The handoff request is not valid.",
              details: { issues: issuesOf(parsed.error) },
            },
          },
        };
      const request = parsed.data;
      const started = await rpc.startHandoff(
        {
          request,
          idempotency: { key: `webhook:${source.name}:${webhookId}`, fingerprint: await requestFingerprint(request) },
        },
        actorOf(source),
      );
      return fromResult(started, (v) => ({
        http_status: v.accepted ? 202 : 200,
        body: { type: payload.type, handoff: v.handoff },
      }));
    }
    case "session.event": {
      const d = payload.data;
      if (!isSessionId(d.session_id)) return missingSession(d.session_id);
      const fired = await sessionRpc(c.env, tenant, d.session_id).postEvent(d.name, d.data ?? null);
      return fromResult(fired, (v) => ({ http_status: v.queued ? 202 : 200, body: { type: payload.type, ...v } }));
    }
    case "agent.status": {
      const d = payload.data;
      const definition = (await agentDirectory(c.env.DB, tenant)).byName.get(d.agent);
      if (!definition) {
        return {
          http_status: 404,
          body: {
            error: { code: "AGENT_NOT_FOUND", message: `No agent named '${d.agent}'.`, details: { agent: d.agent } },
          },
        };
      }
      if (d.session_id !== undefined) {
        if (!isSessionId(d.session_id)) return missingSession(d.session_id);
        const set = await sessionRpc(c.env, tenant, d.session_id).setAgentStatus(
          d.agent,
          d.status as "busy" | "idle",
          actorOf(source),
        );
        return fromResult(set, (v) => ({ http_status: 200, body: { type: payload.type, session: v } }));
      }
      // At every shard of the agent's capacity (src/services/agent-capacity.ts).
      const set = await setAgentStatus(
        c.env,
        tenant,
        d.agent,
        definition.max_concurrent_sessions ?? null,
        d.status === "paused" ? "paused" : "active",
      );
      return fromResult(set, (v) => ({ http_status: 200, body: { type: payload.type, agent: d.agent, load: v } }));
    }
  }
}

export const webhooks = new Hono<AppEnv>().post("/:source", async (c) => {
  const name = c.req.param("source");
  const source = WebhookSourceName.safeParse(name).success ? webhookSource(c.env, name) : null;
  if (!source) {
    countRefusal(c, null, name, "unknown_source");
    throw new RelayError(
      "WEBHOOK_SOURCE_NOT_FOUND",
      `No webhook source '${name}': set WEBHOOK_SECRET_<SOURCE> and WEBHOOK_TENANT_<SOURCE>.`,
      { source: name },
    );
  }
  // Read once, capped (./body.ts): a declared length past the cap is refused unread, a longer
  // chunked body is refused at the cap — with or without signature headers.
  const read = await readBody(c.req.raw, MAX_WEBHOOK_BYTES, { fatal: true });
  if (!read.ok) {
    countRefusal(c, source, name, read.reason === "oversize" ? "too_large" : "unreadable");
    if (read.reason === "oversize")
      throw new RelayError("PAYLOAD_TOO_LARGE", `Webhook body is larger than ${MAX_WEBHOOK_BYTES} bytes.`, {
        limit_bytes: MAX_WEBHOOK_BYTES,
      });
    throw new RelayError("INVALID_JSON", "The webhook body could not be read as UTF-8 text.", { reason: read.message });
  }
  const verified = await verifyWebhook(source.secrets, c.req.raw.headers, read.text, Math.floor(Date.now() / 1000));
  if (!verified.ok) {
    countRefusal(c, source, name, verified.reason);
    throw new RelayError("WEBHOOK_REJECTED", `The webhook was refused: ${verified.reason.replace(/_/g, " ")}.`, {
      reason: verified.reason,
    });
  }
  const key = { tenant: source.tenant, source: source.name, id: verified.id };
  const claim = await claimReceipt(c.env.DB, key);
  if (!claim.claimed) {
    if (claim.receipt) return c.json(claim.receipt.body as object, claim.receipt.http_status as 200);
    throw new RelayError("HANDOFF_IN_PROGRESS", `Webhook '${verified.id}' is still being handled; retry later.`, {
      webhook_id: verified.id,
    });
  }
  let receipt: Receipt;
  try {
    const payload = parsePayload(read.text);
    if (!payload.ok) {
      await recordInvalidPayload(c, source, payload.issues);
      receipt = {
        http_status: 400,
        body: {
          error: {
            code: payload.code,
            message: "The webhook payload is not { type, data } of a known type.",
            details: { issues: payload.issues },
          },
        },
      };
    } else {
      receipt = await handle(c, source, verified.id, payload.value);
    }
  } catch (error) {
    await releaseReceipt(c.env.DB, key).catch(() => undefined);
    throw error;
  }
  // A transient failure is not the answer for good: the sender's retry is handled afresh.
  if (receipt.http_status >= 500) await releaseReceipt(c.env.DB, key);
  else await completeReceipt(c.env.DB, key, receipt);
  return c.json(receipt.body as object, receipt.http_status as 200);
});

function parsePayload(
  text: string,
):
  | { ok: true; value: WebhookPayload }
  | { ok: false; code: "INVALID_JSON" | "VALIDATION_FAILED" | "JSON_TOO_DEEP"; issues: unknown } {
  try {
    checkDepth(jsonTextDepth(text));
  } catch {
    return { ok: false, code: "JSON_TOO_DEEP", issues: [{ path: "", message: "nested too deeply" }] };
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, code: "INVALID_JSON", issues: [{ path: "", message: String((error as Error).message) }] };
  }
  // As for every JSON body (./validate.ts): a `__proto__` key is refused, not dropped.
  const proto = keyPaths(value, ["__proto__"]);
  if (proto.length > 0)
    return {
      ok: false,
      code: "VALIDATION_FAILED",
      issues: proto.map((path) => ({ path: path.join("."), message: "'__proto__' is not allowed as a key" })),
    };
  const parsed = WebhookPayload.safeParse(value);
  return parsed.success
    ? { ok: true, value: parsed.data }
    : { ok: false, code: "VALIDATION_FAILED", issues: issuesOf(parsed.error) };
}

/**
 * `GET /v1/webhooks/stats`, behind the API key (mounted under /v1, unlike the deliveries):
 * the tenant's refused deliveries per source and reason, as the isolates have flushed them
 * (about a second behind).
 */
export const webhookStats = new Hono<AppEnv>().get("/stats", async (c) =>
  c.json({ sources: await rejectionStats(await readDatabase(c.env, c.get("tenant")), c.get("tenant")) }),
);
