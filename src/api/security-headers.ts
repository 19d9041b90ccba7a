import type { MiddlewareHandler } from "hono";

/**
 * The security headers of everything the Worker answers (docs/security.md): the API, its
 * errors, /health, A2A. None of it is a page to render, so its policy allows nothing — a
 * JSON body opened in a tab, or a response an attacker frames, runs no script and loads
 * nothing. The dashboard, /docs and /openapi.json are static assets with their headers in
 * public/_headers (the document's are these), since the platform serves them before the
 * Worker runs.
 */
export const API_SECURITY_HEADERS: Readonly<Record<string, string>> = {
  "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
  "X-Content-Type-Options": "nosniff",
  "X-Frame-Options": "DENY",
  "Referrer-Policy": "no-referrer",
};

function apply(headers: Headers): void {
  for (const [name, value] of Object.entries(API_SECURITY_HEADERS)) headers.set(name, value);
}

/**
 * Sets API_SECURITY_HEADERS on every answer; mounted first in the app (src/app.ts), so
 * that errors and not-found answers have them too. Not hono's secure-headers: it sets
 * headers in place, and a response the Worker passes on from a session's object (the live
 * WebSocket's) has immutable headers. Such a response is copied before its headers are
 * set; a WebSocket upgrade (101) is left as it is: it carries no document, and copying it
 * would have to carry the socket across.
 */
export function securityHeaders(): MiddlewareHandler {
  return async (c, next) => {
    await next();
    if (c.res.status === 101) return;
    try {
      apply(c.res.headers);
    } catch {
      // Immutable (passed on from elsewhere): a copy has headers of its own.
      c.res = new Response(c.res.body, c.res);
      apply(c.res.headers);
    }
  };
}
