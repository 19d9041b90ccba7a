import { api } from "../api.js";
import { duration, field, h, when } from "../h.js";
import { subscribe } from "../live.js";

/**
 * One session: who holds it, the conversation, and the handoff chain as a timeline, kept
 * current by the session's live events.
 */

/** Handoffs from the session's own audit trail: one entry per handoff, first record to last. */
export function handoffsOf(records) {
  const byId = new Map();
  for (const r of records) {
    if (!r.handoff_id || !r.action.startsWith("handoff.")) continue;
    const entry = byId.get(r.handoff_id) ?? { id: r.handoff_id, first: r, last: r, reason: null };
    if (r.at < entry.first.at) entry.first = r;
    if (r.at >= entry.last.at) entry.last = r;
    if (r.details.reason) entry.reason = r.details.reason;
    byId.set(r.handoff_id, entry);
  }
  return [...byId.values()]
    .map(({ id, first, last, reason }) => ({
      id,
      source: last.details.source,
      target: last.details.target,
      mode: last.details.mode,
      policy: last.details.policy,
      status: last.details.to,
      error: last.details.error_code ?? null,
      reason: reason ?? last.details.transition_reason ?? "",
      started_at: first.details.created_at ?? first.at,
      ms: Date.parse(last.at) - Date.parse(first.details.created_at ?? first.at),
    }))
    .sort((a, b) => (a.started_at < b.started_at ? -1 : 1));
}

function timeline(entries) {
  if (entries.length === 0) return h("p", { class: "muted" }, "No handoffs yet.");
  return h(
    "ol",
    { class: "timeline" },
    entries.map((e) =>
      h(
        "li",
        { "data-testid": "handoff-entry", class: `hop ${e.status}` },
        h(
          "div",
          { class: "hop-agents" },
          h("strong", {}, e.source),
          h("span", { class: "arrow", "aria-label": "handed to" }, " → "),
          h("strong", {}, e.target ?? "(back)"),
        ),
        h("div", { class: "hop-why" }, e.reason || "no reason given"),
        h(
          "div",
          { class: "hop-meta" },
          h("span", { class: `pill ${e.status}` }, e.status),
          ` ${e.mode} · ${e.policy} · ${duration(e.ms)} · `,
          when(e.started_at),
          e.error ? h("span", { class: "error" }, ` ${e.error}`) : null,
        ),
      ),
    ),
  );
}

function conversation(items) {
  if (items.length === 0) return h("p", { class: "muted" }, "No messages yet.");
  return h(
    "ol",
    { class: "messages" },
    items.map((m) => {
      const who = m.role === "user" ? "user" : (m.agent ?? m.role);
      const text = m.type === "tool_call" ? `calls ${(m.tool_calls ?? []).map((c) => c.name).join(", ")}` : m.content;
      return h(
        "li",
        { class: `msg ${m.role} ${m.type ?? "message"}` },
        h(
          "div",
          { class: "who" },
          who,
          m.type && m.type !== "message" ? h("span", { class: "muted" }, ` · ${m.type}`) : null,
        ),
        h("div", { class: "text" }, text),
      );
    }),
  );
}

export async function render(view, params, app) {
  const id = params.id;
  const header = h("section", { class: "card", "data-testid": "session-header" });
  const talk = h("section", { "data-testid": "conversation" });
  const chain = h("section", { "data-testid": "handoff-timeline" });
  const live = h("span", { class: "live", "data-testid": "live-status" }, "connecting");
  const input = h("textarea", { name: "content", rows: 2, required: true, "data-testid": "message-input" });
  const runStatus = h("p", { class: "muted", "data-testid": "run-status" });

  const refresh = async () => {
    try {
      const [session, messages, audit] = await Promise.all([
        api("GET", `/v1/sessions/${encodeURIComponent(id)}`),
        api("GET", `/v1/sessions/${encodeURIComponent(id)}/messages?limit=500`),
        api("GET", `/v1/sessions/${encodeURIComponent(id)}/audit?limit=500`),
      ]);
      header.replaceChildren(
        h("h1", {}, "Session ", h("code", {}, session.id)),
        h(
          "dl",
          { class: "facts" },
          h("dt", {}, "Current agent"),
          h("dd", { "data-testid": "current-agent" }, session.current_agent ?? "—"),
          h("dt", {}, "Status"),
          h("dd", {}, session.status),
          h("dt", {}, "Handoff stack"),
          h("dd", {}, session.handoff_stack.join(" › ") || "—"),
          h("dt", {}, "Messages"),
          h("dd", {}, session.history_length),
          h("dt", {}, "In flight"),
          h(
            "dd",
            {},
            session.in_flight_handoff ? `${session.in_flight_handoff.id} (${session.in_flight_handoff.status})` : "—",
          ),
          h("dt", {}, "Expires"),
          h("dd", {}, when(session.expires_at)),
          h("dt", {}, "Live"),
          h("dd", {}, live),
        ),
      );
      talk.replaceChildren(h("h2", {}, "Conversation"), conversation(messages.items));
      chain.replaceChildren(h("h2", {}, "Handoffs"), timeline(handoffsOf(audit.items)));
    } catch (e) {
      app.fail(e);
    }
  };

  let pending;
  const soon = () => {
    clearTimeout(pending);
    pending = setTimeout(refresh, 150);
  };

  const form = h(
    "form",
    {
      class: "send",
      onsubmit: async (event) => {
        event.preventDefault();
        const content = input.value.trim();
        if (!content) return;
        runStatus.textContent = "Running…";
        try {
          const answer = await api("POST", `/v1/sessions/${encodeURIComponent(id)}/messages`, {
            role: "user",
            content,
          });
          input.value = "";
          const run = answer.run;
          runStatus.textContent = run
            ? `Run ${run.status}${run.output_agent ? ` by ${run.output_agent}` : ""}${run.error ? `: ${run.error.code}` : ""}`
            : "Stored.";
          soon();
        } catch (e) {
          runStatus.textContent = "";
          app.fail(e);
        }
      },
    },
    field("Message as the user", input),
    h("button", { type: "submit" }, "Send"),
    runStatus,
  );

  view.replaceChildren(
    h("p", {}, h("a", { href: "#/sessions" }, "← Sessions")),
    header,
    h("div", { class: "split" }, h("div", {}, talk, form), chain),
  );
  await refresh();
  const stop = subscribe(id, soon, (state) => (live.textContent = state));
  return () => {
    clearTimeout(pending);
    stop();
  };
}
