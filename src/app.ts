import { Hono } from "hono";
import { a2a, rootAgentCard } from "./api/a2a";
import { agents } from "./api/agents";
import { audit } from "./api/audit";
import { capabilities } from "./api/capabilities";
import { collaborations } from "./api/collaborations";
import { config } from "./api/config";
import { onError, onNotFound } from "./api/error-handler";
import { agentHandoffs, handoffs, sessionInbox } from "./api/handoffs";
import { inbox } from "./api/inbox";
import { mcp } from "./api/mcp";
import { operator } from "./api/operator";
import { route } from "./api/route";
import { secrets } from "./api/secrets";
import { securityHeaders } from "./api/security-headers";
import { sessionMemory } from "./api/session-memory";
import { sessions } from "./api/sessions";
import { tools } from "./api/tools";
import { usage } from "./api/usage";
import { webhookStats, webhooks } from "./api/webhooks";
import type { AppEnv } from "./app-env";
import { apiKeyAuth } from "./auth/middleware";

/**
 * The Hono app: public health check, then everything under /v1 behind tenant auth. The
 * dashboard, /docs and the API's description (/openapi.json, written by `npm run
 * client:generate`) are static assets (public/, with their headers in public/_headers),
 * served before the Worker.
 * Sub-apps are mounted per resource; errors meet HTTP only in `onError`.
 */
export function createApp() {
  const v1 = new Hono<AppEnv>()
    .use(apiKeyAuth())
    .route("/agents", agents)
    .route("/agents", agentHandoffs)
    .route("/tools", tools)
    .route("/secrets", secrets)
    .route("/route", route)
    .route("/config", config)
    .route("/sessions", sessions)
    .route("/sessions", sessionInbox)
    .route("/sessions", sessionMemory)
    .route("/handoffs", handoffs)
    .route("/inbox", inbox)
    .route("/capabilities", capabilities)
    .route("/collaborations", collaborations)
    .route("/audit", audit)
    .route("/usage", usage)
    .route("/webhooks", webhookStats);

  return (
    new Hono<AppEnv>()
      // First, so every answer has them: errors and not-found included (docs/security.md).
      .use(securityHeaders())
      .get("/health", (c) => c.json({ ok: true, service: "relay" }))
      // A2A 1.0 (docs/a2a.md): cards readable without a key (they then tell nothing), calls with it.
      .route("/a2a", a2a)
      .get("/.well-known/agent-card.json", rootAgentCard)
      // Relay as an MCP server (docs/mcp-server.md): the tenant's key, like /v1.
      .route("/mcp", mcp)
      // Signed by their source, not by an API key: mounted before /v1's key check.
      .route("/v1/webhooks", webhooks)
      // The operator's key, not a tenant's (docs/operations.md, Quotas): mounted before /v1's key check.
      .route("/v1/operator", operator)
      .route("/v1", v1)
      .onError(onError)
      .notFound(onNotFound)
  );
}

export const app = createApp();
