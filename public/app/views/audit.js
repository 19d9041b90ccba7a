import { api, query } from "../api.js";
import { field, h, table, when } from "../h.js";

/** The tenant's audit trail in D1, newest first, by session, agent, action and time. */
export async function render(view, _params, app) {
  const session = h("input", { name: "session_id", "data-testid": "audit-session" });
  const agent = h("input", { name: "agent" });
  const action = h("input", { name: "action", placeholder: "handoff.completed" });
  const since = h("input", { name: "since", type: "datetime-local" });
  const body = h("tbody");
  const more = h("button", { type: "button", class: "quiet", hidden: true }, "Load more");
  let cursor = null;

  const summary = (details) => {
    const d = details ?? {};
    const parts = [
      d.source && d.target !== undefined ? `${d.source} → ${d.target ?? "(back)"}` : null,
      d.to ? `to ${d.to}` : null,
      d.reason ?? d.transition_reason ?? null,
      d.error_code ?? null,
    ];
    return parts.filter(Boolean).join(" · ") || JSON.stringify(d).slice(0, 120);
  };
  const row = (r) =>
    h(
      "tr",
      { "data-testid": "audit-row" },
      h("td", {}, when(r.at)),
      h("td", {}, h("code", {}, r.action)),
      h("td", {}, `${r.actor} (${r.actor_type})`),
      h("td", {}, r.session_id ? h("a", { href: `#/sessions/${r.session_id}` }, r.session_id) : "—"),
      h("td", {}, r.agent ?? "—"),
      h("td", {}, summary(r.details)),
    );

  const load = async (append) => {
    try {
      const filters = {
        session_id: session.value.trim(),
        agent: agent.value.trim(),
        action: action.value.trim(),
        since: since.value ? new Date(since.value).toISOString() : "",
      };
      const page = await api(
        "GET",
        `/v1/audit${query({ ...filters, limit: 100, cursor: append ? cursor : undefined })}`,
      );
      if (!append) body.replaceChildren();
      body.append(...page.items.map(row));
      if (!append && page.items.length === 0)
        body.append(h("tr", {}, h("td", { colspan: 6, class: "muted" }, "No records match.")));
      cursor = page.next_cursor;
      more.hidden = !cursor;
    } catch (e) {
      app.fail(e);
    }
  };
  more.addEventListener("click", () => load(true));

  const results = table("audit-results", ["Time", "Action", "Actor", "Session", "Agent", "Details"], []);
  results.querySelector("tbody").replaceWith(body);
  const form = h(
    "form",
    {
      class: "card filters",
      "data-testid": "audit-form",
      onsubmit: (event) => {
        event.preventDefault();
        load(false);
      },
    },
    field("Session", session),
    field("Agent", agent),
    field("Action", action),
    field("Since", since),
    h("button", { type: "submit", "data-testid": "audit-submit" }, "Search"),
  );
  view.replaceChildren(h("h1", {}, "Audit"), form, results, more);
  await load(false);
}
