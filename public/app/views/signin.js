import { api, signIn } from "../api.js";
import { field, h } from "../h.js";

/** Sign in: the key is tried against the API before it is kept. */
export function render(view, _params, app) {
  const input = h("input", {
    type: "password",
    name: "key",
    required: true,
    autocomplete: "off",
    "data-testid": "api-key",
  });
  const error = h("p", { class: "error", role: "alert" });
  const form = h(
    "form",
    {
      class: "card narrow",
      "data-testid": "signin",
      onsubmit: async (event) => {
        event.preventDefault();
        error.textContent = "";
        const key = input.value.trim();
        try {
          await api("GET", "/v1/agents?limit=1", undefined, { key });
          signIn(key);
          app.signedIn();
        } catch (e) {
          error.textContent = e.status === 401 ? "That key was not accepted." : `Could not sign in: ${e.message}`;
          input.focus();
        }
      },
    },
    h("h1", {}, "Sign in"),
    h("p", { class: "muted" }, "Your API key is kept in this tab's session storage only, and sent as a bearer token."),
    field("API key", input),
    h("button", { type: "submit" }, "Sign in"),
    error,
  );
  view.replaceChildren(form);
  input.focus();
}
