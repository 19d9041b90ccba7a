import { api } from "../api.js";
import { h, when } from "../h.js";

/**
 * What Relay may call for this tenant, and the secret it signs those calls with. The secret
 * is fetched and shown only when asked for, and gone when the user leaves the view.
 */
export async function render(view, _params, app) {
  const shown = h("div", { "data-testid": "signing-secret" });

  const show = (secret) =>
    shown.replaceChildren(
      h(
        "p",
        {},
        "Verify deliveries with ",
        h("code", { class: "secret", "data-testid": "signing-secret-value" }, secret.secret),
      ),
      secret.previous
        ? h(
            "p",
            { class: "muted" },
            "The replaced secret ",
            h("code", { class: "secret" }, secret.previous.secret),
            " still signs beside it until ",
            when(secret.previous.expires_at),
            ".",
          )
        : null,
      h(
        "p",
        { class: "muted" },
        "Copy it into your endpoints' configuration; it is hidden again when you leave this page.",
      ),
    );

  const reveal = h("button", { type: "button", "data-testid": "signing-secret-show" }, "Show the signing secret");
  reveal.addEventListener("click", async () => {
    try {
      show(await api("GET", "/v1/config/signing-secret"));
      reveal.hidden = true;
    } catch (e) {
      app.fail(e);
    }
  });
  const rotate = h("button", { type: "button", class: "danger", "data-testid": "signing-secret-rotate" }, "Rotate");
  rotate.addEventListener("click", async () => {
    if (!confirm("Make a new signing secret? The current one keeps signing beside it for a day.")) return;
    try {
      show(await api("POST", "/v1/config/signing-secret/rotate"));
      reveal.hidden = true;
      app.say("Signing secret rotated.");
    } catch (e) {
      app.fail(e);
    }
  });

  let outbound = null;
  try {
    outbound = (await api("GET", "/v1/config")).outbound;
  } catch (e) {
    app.fail(e);
  }
  view.replaceChildren(
    h("h1", {}, "Settings"),
    h(
      "section",
      { class: "card" },
      h("h2", {}, "Signing secret"),
      h(
        "p",
        { class: "muted" },
        "Relay signs every call to your webhook agents and http tools with it (Standard Webhooks), unless the operator set that agent's or tool's own secret, or its definition says signing: none.",
      ),
      shown,
      h("div", { class: "tools" }, reveal, rotate),
    ),
    outbound
      ? h(
          "section",
          { class: "card" },
          h("h2", {}, "Outbound addresses"),
          h(
            "p",
            { "data-testid": "local-endpoints" },
            outbound.allow_local_endpoints
              ? "Local endpoints are allowed (RELAY_ALLOW_LOCAL_ENDPOINTS): http: and this machine, named by a loopback address or localhost, are called. For local development only."
              : "Only public https addresses are called.",
          ),
          h("p", { class: "muted" }, `Relay's own hosts, never called: ${outbound.relay_hosts.join(", ") || "—"}.`),
        )
      : null,
  );
  return () => shown.replaceChildren();
}
