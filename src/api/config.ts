import { Hono } from "hono";
import type { AppEnv } from "../app-env";
import { RelayError } from "../errors";
import { deleteTenantConfig, getTenantConfig, putTenantConfig } from "../registry/config-store";
import { deleteSubscription, getSubscription, putSubscription } from "../registry/event-subscriptions";
import { deleteMcpConfig, getMcpConfig, putMcpConfig } from "../registry/mcp-config-store";
import { ensureSigningSecret, rotateSigningSecret } from "../registry/signing-secrets";
import {
  deleteTelemetryConfig,
  getTelemetryConfig,
  getTelemetryStats,
  putTelemetryConfig,
} from "../registry/telemetry-config-store";
import { configProblems, patchFromVars, type ResolvedConfig, resolveConfig } from "../routing/config";
import { EventSubscriptionInput } from "../schemas/events";
import { McpConfigInput } from "../schemas/mcp-server";
import { RoutingConfigPatch } from "../schemas/routing";
import { type ConfigView, SigningSecretRotate } from "../schemas/signing";
import { TelemetryConfigInput, type TelemetryView } from "../schemas/telemetry";
import { allowLocalEndpoints, assertEndpointAllowed, forgetSigningSecret, outboundPolicy } from "../services/outbound";
import { invalidateTenant } from "../services/registry-cache";
import { assertSecretsKnown } from "../services/secret-references";
import { flushHeldStats } from "../services/telemetry-stats";
import { parseJsonText, readJson, readText } from "./validate";

function view({ config, sources, warnings }: ResolvedConfig, stored: RoutingConfigPatch | null) {
  return { config, sources, stored, warnings };
}

async function telemetryView(db: D1Database, tenant: string): Promise<TelemetryView> {
  // What this isolate holds of the counters first (the rest is at most STATS_FLUSH_MS behind).
  await flushHeldStats(db, tenant);
  const [config, stats] = await Promise.all([getTelemetryConfig(db, tenant), getTelemetryStats(db, tenant)]);
  return { config, stats };
}

/**
 * `/v1/config`: what the deployment lets Relay call (the outbound policy's settings), the
 * tenant's signing secret and events URL, and `/v1/config/routing`, the tenant layer of
 * routing config: GET shows every resolved value with the layer it came from; PUT replaces
 * the tenant layer; DELETE clears it. `/v1/config/mcp`: what Relay's MCP server offers
 * (docs/mcp-server.md). `/v1/config/telemetry`: where the tenant's run spans are exported, with
 * the export's counters (docs/observability.md, Export).
 */
export const config = new Hono<AppEnv>()
  .get("/", (c) => {
    const hosts = outboundPolicy(c.env, c.req.url).relayHosts;
    const view: ConfigView = {
      outbound: {
        allow_local_endpoints: allowLocalEndpoints(c.env),
        relay_hosts: [...new Set(hosts.map((h) => (h.port === null ? h.hostname : `${h.hostname}:${h.port}`)))],
      },
    };
    return c.json(view);
  })
  // The secret Relay signs deliveries to the tenant's webhook agents and http tools with (made on first read).
  .get("/signing-secret", async (c) => c.json(await ensureSigningSecret(c.env.DB, c.get("tenant"))))
  .post("/signing-secret/rotate", async (c) => {
    // The body is optional: none rotates with the default grace period. Read once: a stream is read only once.
    const text = await readText(c);
    const { grace_s } = parseJsonText(text.trim() === "" ? "{}" : text, SigningSecretRotate);
    const rotated = await rotateSigningSecret(c.env.DB, c.get("tenant"), grace_s);
    // Sessions in this isolate sign with the new secret at once; others within SIGNING_TTL_MS.
    forgetSigningSecret(c.get("tenant"));
    return c.json(rotated);
  })
  .get("/routing", async (c) => {
    const stored = await getTenantConfig(c.env.DB, c.get("tenant"));
    const { patch, warnings } = patchFromVars(c.env);
    return c.json(view(resolveConfig({ env: patch, tenant: stored, warnings }), stored));
  })
  .put("/routing", async (c) => {
    const stored = await readJson(c, RoutingConfigPatch);
    const { patch, warnings } = patchFromVars(c.env);
    const resolved = resolveConfig({ env: patch, tenant: stored, warnings });
    const problems = configProblems(resolved.config);
    if (problems.length > 0) {
      throw new RelayError("INVALID_CONFIG", `Routing configuration is inconsistent: ${problems.join("; ")}.`, {
        problems,
      });
    }
    await putTenantConfig(c.env.DB, c.get("tenant"), stored);
    invalidateTenant(c.get("tenant"));
    return c.json(view(resolved, stored));
  })
  // Webhooks out: where the tenant's handoff and run notifications go, and the secret that signs them.
  .get("/events", async (c) => {
    const subscription = await getSubscription(c.env.DB, c.get("tenant"));
    if (!subscription) throw new RelayError("NOT_FOUND", "No events_url is set: PUT /v1/config/events { url }.");
    return c.json(subscription);
  })
  .put("/events", async (c) => {
    const input = await readJson(c, EventSubscriptionInput);
    assertEndpointAllowed(outboundPolicy(c.env, c.req.url), input.url, "url");
    const { created, subscription } = await putSubscription(c.env.DB, c.get("tenant"), input);
    // Sessions of this isolate queue notifications from now on (others within the head's TTL).
    invalidateTenant(c.get("tenant"));
    return c.json(subscription, created ? 201 : 200);
  })
  .delete("/events", async (c) => {
    if (!(await deleteSubscription(c.env.DB, c.get("tenant"))))
      throw new RelayError("NOT_FOUND", "No events_url is set.");
    invalidateTenant(c.get("tenant"));
    return c.body(null, 204);
  })
  // Relay as an MCP server (docs/mcp-server.md): which agents an MCP client is offered. Read per /mcp request.
  .get("/mcp", async (c) => c.json(await getMcpConfig(c.env.DB, c.get("tenant"))))
  .put("/mcp", async (c) => {
    const input = await readJson(c, McpConfigInput);
    return c.json(await putMcpConfig(c.env.DB, c.get("tenant"), input));
  })
  .delete("/mcp", async (c) => c.json(await deleteMcpConfig(c.env.DB, c.get("tenant"))))
  .get("/telemetry", async (c) => c.json(await telemetryView(c.env.DB, c.get("tenant"))))
  .put("/telemetry", async (c) => {
    const input = await readJson(c, TelemetryConfigInput);
    assertEndpointAllowed(outboundPolicy(c.env, c.req.url), input.endpoint, "endpoint");
    await assertSecretsKnown(c.env, c.get("tenant"), { name: "telemetry", headers: input.headers });
    await putTelemetryConfig(c.env.DB, c.get("tenant"), input);
    // Sessions of this isolate queue exports at the new ratio at once (others within the head's TTL).
    invalidateTenant(c.get("tenant"));
    return c.json(await telemetryView(c.env.DB, c.get("tenant")));
  })
  .delete("/telemetry", async (c) => {
    await deleteTelemetryConfig(c.env.DB, c.get("tenant"));
    invalidateTenant(c.get("tenant"));
    return c.json(await telemetryView(c.env.DB, c.get("tenant")));
  })
  .delete("/routing", async (c) => {
    await deleteTenantConfig(c.env.DB, c.get("tenant"));
    invalidateTenant(c.get("tenant"));
    const { patch, warnings } = patchFromVars(c.env);
    return c.json(view(resolveConfig({ env: patch, warnings }), null));
  });
