import { api, query } from "../api.js";
import { field, h, shortId, table, when } from "../h.js";

/** The tenant's sessions, newest first, from the sessions index. */
export async function render(view, _params, app) {
  const status = h(
    "select",
    { name: "status" },
    ["active", "expired", "deleted", ""].map((s) => h("option", { value: s }, s || "all")),
  );
  const body = h("tbody");
  const more = h("button", { type: "button", class: "quiet", hidden: true }, "Load more");
  let cursor = null;

  const row = (s) =>
    h(
      "tr",
      { "data-testid": "session-row" },
      h("td", {}, h("a", { href: `#/sessions/${s.id}`, title: s.id }, shortId(s.id))),
      h("td", {}, h("span", { class: `pill ${s.status}` }, s.status)),
      h("td", {}, s.current_agent),
      h("td", {}, s.initial_agent ?? "—"),
      h("td", { class: "num" }, s.message_count),
      h("td", { class: "num" }, s.handoff_count),
      h("td", {}, when(s.updated_at)),
    );

  const load = async (append) => {
    try {
      const page = await api(
        "GET",
        `/v1/sessions${query({ status: status.value, limit: 50, cursor: append ? cursor : undefined })}`,
      );
      if (!append) body.replaceChildren();
      body.append(...page.items.map(row));
      if (!append && page.items.length === 0)
        body.append(
          h("tr", {}, h("td", { colspan: 7, class: "muted" }, "No sessions yet. Start one from the playground.")),
        );
      cursor = page.next_cursor;
      more.hidden = !cursor;
    } catch (e) {
      app.fail(e);
    }
  };
  status.addEventListener("change", () => load(false));
  more.addEventListener("click", () => load(true));

  const headings = ["Session", "Status", "Current agent", "Started with", "Messages", "Handoffs", "Updated"];
  const list = table("sessions-table", headings, []);
  list.querySelector("tbody").replaceWith(body);
  view.replaceChildren(
    h(
      "div",
      { class: "head" },
      h("h1", {}, "Sessions"),
      h(
        "div",
        { class: "tools" },
        field("Status", status),
        h("button", { type: "button", class: "quiet", onclick: () => load(false) }, "Refresh"),
      ),
    ),
    h("p", { class: "muted" }, "From the sessions index: a session shows a moment after it changes."),
    list,
    more,
  );
  await load(false);
}
