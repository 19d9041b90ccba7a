import { apiKey, onUnauthorized, signOut } from "./api.js";
import * as agent from "./views/agent.js";
import * as agents from "./views/agents.js";
import * as audit from "./views/audit.js";
import * as inbox from "./views/inbox.js";
import * as playground from "./views/playground.js";
import * as secrets from "./views/secrets.js";
import * as session from "./views/session.js";
import * as sessions from "./views/sessions.js";
import * as settings from "./views/settings.js";
import * as signin from "./views/signin.js";
import * as usage from "./views/usage.js";

// The dashboard: hash routes to views; each view renders into <main> and may return a
// cleanup (a socket to close, a timer to stop) run when the user leaves it.

const ROUTES = [
  [/^#\/sessions\/([^/]+)$/, session, (m) => ({ id: decodeURIComponent(m[1]) })],
  [/^#\/sessions$/, sessions],
  [/^#\/agents\/([^/?]+)$/, agent, (m) => ({ name: decodeURIComponent(m[1]) })],
  [/^#\/agents(?:\?(.*))?$/, agents, (m) => ({ query: new URLSearchParams(m[1] ?? "") })],
  [/^#\/inbox$/, inbox],
  [/^#\/audit$/, audit],
  [/^#\/playground$/, playground],
  [/^#\/secrets$/, secrets],
  [/^#\/usage$/, usage],
  [/^#\/settings$/, settings],
];

const view = document.getElementById("view");
const status = document.getElementById("status");
const nav = document.getElementById("nav");
const signOutButton = document.getElementById("signout");
let cleanup = null;
let rendering = 0;

const app = {
  say(text, kind = "info") {
    status.textContent = text;
    status.dataset.kind = kind;
  },
  fail(error) {
    if (!error.code) return app.say(String(error.message ?? error), "error");
    // A refused body says "Invalid request body."; the issues say which rule, which the user needs.
    const issues = Array.isArray(error.details?.issues)
      ? error.details.issues.map((i) => (i.path && i.path !== "(root)" ? `${i.path}: ${i.message}` : i.message))
      : [];
    app.say([`${error.code}: ${error.message}`, ...issues].join(" "), "error");
  },
  signedIn() {
    app.say("Signed in.");
    if (location.hash === "" || location.hash === "#/" || location.hash === "#/signin") location.hash = "#/sessions";
    else route();
  },
};

async function route() {
  const ticket = ++rendering;
  cleanup?.();
  cleanup = null;
  const signedIn = Boolean(apiKey());
  nav.hidden = !signedIn;
  signOutButton.hidden = !signedIn;
  if (!signedIn) {
    signin.render(view, {}, app);
    return;
  }
  const hash = location.hash || "#/sessions";
  for (const [pattern, module, params] of ROUTES) {
    const match = pattern.exec(hash);
    if (!match) continue;
    for (const link of nav.querySelectorAll("a"))
      link.toggleAttribute("aria-current", hash.startsWith(link.getAttribute("href")));
    const done = await module.render(view, params ? params(match) : {}, app);
    // A view the user already left while it loaded cleans up at once.
    if (ticket !== rendering) done?.();
    else cleanup = done ?? null;
    return;
  }
  location.hash = "#/sessions";
}

onUnauthorized(() => {
  signOut();
  app.say("The API key was refused; sign in again.", "error");
  route();
});
signOutButton.addEventListener("click", () => {
  signOut();
  app.say("Signed out.");
  route();
});
window.addEventListener("hashchange", () => {
  if (status.dataset.kind === "error") app.say("");
  route();
});
route();
