import { env } from "cloudflare:workers";
import { Hono } from "hono";
import { beforeAll, describe, expect, it } from "vitest";
import { API_SECURITY_HEADERS, securityHeaders } from "../../src/api/security-headers";
import { call, putAgents } from "./helpers";

/**
 * The security headers (docs/security.md): the Worker's on everything it answers, errors
 * and pass-through answers included; the static files' from public/_headers, as the
 * platform's assets service (the ASSETS binding) serves them: the pages' policy, and the
 * Worker's own headers on the OpenAPI document.
 */

function expectApiHeaders(headers: Headers, what: string): void {
  for (const [name, value] of Object.entries(API_SECURITY_HEADERS))
    expect(headers.get(name), `${what}: ${name}`).toBe(value);
}

/** A CSP header as directive → sources, so a test names what a page may load. */
function directives(csp: string | null): Record<string, string[]> {
  return Object.fromEntries(
    (csp ?? "")
      .split(";")
      .map((d) => d.trim().split(/\s+/))
      .filter((parts) => parts[0])
      .map(([name, ...sources]) => [name!, sources]),
  );
}

beforeAll(async () => {
  await putAgents([{ name: "desk" }]);
});

describe("the Worker's answers", () => {
  it("allow nothing to load or frame them: JSON, health, A2A cards", async () => {
    expect(directives(API_SECURITY_HEADERS["Content-Security-Policy"]!)).toEqual({
      "default-src": ["'none'"],
      "frame-ancestors": ["'none'"],
    });
    for (const path of ["/health", "/v1/agents", "/v1/sessions?limit=1", "/a2a/desk/.well-known/agent-card.json"]) {
      const res = await call("GET", path);
      expect(res.status, path).toBe(200);
      expectApiHeaders(res.headers, path);
    }
    // Set beside what a route sets itself, not instead of it.
    const card = await call("GET", "/a2a/desk/.well-known/agent-card.json");
    expect(card.headers.get("Cache-Control")).toBe("private, max-age=60");
    expect(card.headers.get("Content-Type")).toMatch(/^application\/json/);
  });

  it("errors have them too: no key, a bad query, an unknown path, a refused cursor, a bad body", async () => {
    const cases: [string, string, unknown, string | null, number][] = [
      ["GET", "/v1/agents", undefined, null, 401],
      ["GET", "/v1/agents?limit=0", undefined, "alpha-test-key", 400],
      ["GET", "/v1/audit?cursor=fg", undefined, "alpha-test-key", 400],
      ["GET", "/v1/nowhere", undefined, "alpha-test-key", 404],
      ["POST", "/v1/sessions", "{not json", "alpha-test-key", 400],
    ];
    for (const [method, path, body, key, status] of cases) {
      const res = await call(method, path, body, { key });
      expect(res.status, path).toBe(status);
      expect(res.json.error.code, path).toEqual(expect.any(String));
      expectApiHeaders(res.headers, `${method} ${path}`);
    }
  });

  it("a run streamed as Server-Sent Events keeps its stream and gets them", async () => {
    const { json: session } = await call("POST", "/v1/sessions", { agent: "desk" });
    const res = await call(
      "POST",
      `/v1/sessions/${session.id}/messages`,
      { role: "user", content: "hi" },
      {
        headers: { Accept: "text/event-stream" },
      },
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toMatch(/^text\/event-stream/);
    expect(res.json).toMatch(/^(id|event):/m);
    expectApiHeaders(res.headers, "SSE");
  });

  it("an answer with immutable headers (one passed on from elsewhere) is copied to get them; an upgrade is left alone", async () => {
    // Response.redirect's headers are immutable, like those of a response from a session's object.
    const redirect = () => Response.redirect("https://relay.test/elsewhere", 302);
    expect(() => redirect().headers.set("X-Test", "1")).toThrow();
    const app = new Hono().use(securityHeaders()).get("/moved", redirect);
    const res = await app.request("http://relay.test/moved");
    expect(res.status).toBe(302);
    expect(res.headers.get("Location")).toBe("https://relay.test/elsewhere");
    expectApiHeaders(res.headers, "immutable 302");

    const { 0: client, 1: server } = new WebSocketPair();
    server.accept();
    const upgrade = new Hono()
      .use(securityHeaders())
      .get(
        "/ws",
        () => new Response(null, { status: 101, webSocket: client, headers: { "Sec-WebSocket-Protocol": "relay.v1" } }),
      );
    const upgraded = await upgrade.request("http://relay.test/ws");
    expect(upgraded.status).toBe(101);
    expect(upgraded.webSocket).toBe(client);
    expect(upgraded.headers.get("Sec-WebSocket-Protocol")).toBe("relay.v1");
    expect(upgraded.headers.get("Content-Security-Policy")).toBeNull();
  });
});

describe("the static files, as the platform serves them (public/_headers)", () => {
  const asset = (path: string) => env.ASSETS.fetch(new Request(`http://relay.test${path}`));

  it.each(["/", "/docs"])(
    "%s may load only its own scripts and styles, a data: icon, and talk to its origin",
    async (path) => {
      const response = await asset(path);
      expect(response.status).toBe(200);
      expect(response.headers.get("Content-Type")).toMatch(/^text\/html/);
      expect(directives(response.headers.get("Content-Security-Policy"))).toEqual({
        "default-src": ["'none'"],
        "script-src": ["'self'"],
        "style-src": ["'self'"],
        "img-src": ["data:"],
        "connect-src": ["'self'"],
        "base-uri": ["'none'"],
        "form-action": ["'none'"],
        "frame-ancestors": ["'none'"],
        "require-trusted-types-for": ["'script'"],
      });
      expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
      expect(response.headers.get("X-Frame-Options")).toBe("DENY");
      expect(response.headers.get("Referrer-Policy")).toBe("no-referrer");
    },
  );

  it.each([
    ["/app/main.js", /javascript/],
    ["/app/app.css", /^text\/css/],
    ["/reference.js", /javascript/],
    ["/reference.css", /^text\/css/],
  ])("%s is never sniffed as another type", async (path, type) => {
    const response = await asset(path);
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toMatch(type);
    expect(response.headers.get("X-Content-Type-Options")).toBe("nosniff");
  });

  it("/openapi.json, an answer of the API and not a page, has exactly the Worker's headers", async () => {
    const response = await asset("/openapi.json");
    expect(response.status).toBe(200);
    expectApiHeaders(response.headers, "/openapi.json");
    expect(response.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("Cache-Control")).toBe("public, max-age=300");
    await response.body?.cancel();
  });

  it("the rules file itself is not served", async () => {
    expect((await asset("/_headers")).status).toBe(404);
  });
});
