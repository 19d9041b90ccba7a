import { api, query } from "../api.js";
import { field, h, when } from "../h.js";

/** What waits for a person. The list is the D1 index: an item shows a moment after it opens. */
export async function render(view, _params, app) {
  const status = h(
    "select",
    { name: "status" },
    ["open", "resolved", "expired", "cancelled", ""].map((s) => h("option", { value: s }, s || "all")),
  );
  const kind = h(
    "select",
    { name: "kind" },
    ["", "approval", "human_turn", "escalation", "handoff_escalation"].map((s) =>
      h("option", { value: s }, s || "any"),
    ),
  );
  const list = h("ul", { class: "inbox", "data-testid": "inbox-list" });

  const resolve = async (item, answer, button) => {
    button.disabled = true;
    try {
      const result = await api("POST", `/v1/inbox/${encodeURIComponent(item.id)}/resolve`, answer);
      const run = result.run ? `; run ${result.run.status}` : "";
      app.say(
        `${item.kind === "approval" ? (answer.decision === "approve" ? "Approved" : "Denied") : "Answered"} ${item.id}${run}.`,
      );
      await load();
    } catch (e) {
      button.disabled = false;
      app.fail(e);
    }
  };

  const actions = (item) => {
    if (item.status !== "open" || item.kind === "handoff_escalation") return null;
    if (item.kind === "approval") {
      const reason = h("input", { name: "reason", placeholder: "reason (optional)" });
      const decide = (decision) => (event) =>
        resolve(
          item,
          reason.value.trim() ? { decision, reason: reason.value.trim() } : { decision },
          event.currentTarget,
        );
      return h(
        "div",
        { class: "actions" },
        field("Reason", reason),
        h("button", { type: "button", "data-testid": "approve", onclick: decide("approve") }, "Approve"),
        h("button", { type: "button", class: "danger", "data-testid": "deny", onclick: decide("deny") }, "Deny"),
      );
    }
    const reply = h("textarea", { name: "reply", rows: 2, required: true });
    return h(
      "form",
      {
        class: "actions",
        onsubmit: (event) => {
          event.preventDefault();
          if (reply.value.trim()) resolve(item, { reply: reply.value.trim() }, event.submitter);
        },
      },
      field("Reply", reply),
      h("button", { type: "submit", "data-testid": "resolve" }, "Resolve"),
    );
  };

  const card = (item) =>
    h(
      "li",
      { class: "card", "data-testid": "inbox-item", "data-id": item.id, "data-session": item.session_id },
      h(
        "div",
        { class: "item-head" },
        h("span", { class: `pill ${item.kind}` }, item.kind),
        " ",
        h("strong", {}, item.reason),
      ),
      h(
        "p",
        { class: "muted" },
        item.session_id.startsWith("ses_")
          ? h("a", { href: `#/sessions/${item.session_id}` }, item.session_id)
          : item.session_id,
        ` · ${item.agent ?? "—"} · ${item.status} · opened `,
        when(item.created_at),
        item.expires_at ? [" · expires ", when(item.expires_at)] : null,
      ),
      actions(item),
    );

  const load = async () => {
    try {
      const page = await api("GET", `/v1/inbox${query({ status: status.value, kind: kind.value, limit: 100 })}`);
      // Keep what a person is typing: only redraw when the items changed.
      const signature = JSON.stringify(page.items.map((i) => [i.id, i.status]));
      if (signature === list.dataset.signature) return;
      list.dataset.signature = signature;
      list.replaceChildren(
        ...(page.items.length ? page.items.map(card) : [h("li", { class: "muted" }, "Nothing waits for a person.")]),
      );
    } catch (e) {
      app.fail(e);
    }
  };
  for (const select of [status, kind]) select.addEventListener("change", load);

  view.replaceChildren(
    h(
      "div",
      { class: "head" },
      h("h1", {}, "Inbox"),
      h(
        "div",
        { class: "tools" },
        field("Status", status),
        field("Kind", kind),
        h("button", { type: "button", class: "quiet", onclick: load }, "Refresh"),
      ),
    ),
    list,
  );
  await load();
  const timer = setInterval(load, 3000);
  return () => clearInterval(timer);
}
