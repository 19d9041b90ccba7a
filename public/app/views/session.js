import { api, mapLimited, query } from "../api.js";
import { duration, field, h, when } from "../h.js";
import { subscribe } from "../live.js";
import { runSpan } from "../run-steps.js";
import { fanoutView, runTimeline, tick } from "./runs.js";
import { memoryPanel } from "./session-memory.js";

/**
 * One session: who holds it, the conversation, the handoff chain, its memory of facts, each
 * run as a timeline of its steps and each fan-out as lanes, kept current by the session's
 * live events.
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

/**
 * The conversation. `pieces`: how many streamed pieces the page showed of each message as it
 * was written (kept on the stored message, `data-pieces`); a message cut short is marked.
 */
function conversation(items, pieces) {
  if (items.length === 0) return h("p", { class: "muted" }, "No messages yet.");
  return h(
    "ol",
    { class: "messages" },
    items.map((m) => {
      const who = m.role === "user" ? "user" : (m.agent ?? m.role);
      const text = m.type === "tool_call" ? `calls ${(m.tool_calls ?? []).map((c) => c.name).join(", ")}` : m.content;
      const streamed = m.id ? pieces.get(m.id) : undefined;
      return h(
        "li",
        {
          class: `msg ${m.role} ${m.type ?? "message"}`,
          ...(m.id ? { "data-message-id": m.id } : {}),
          ...(streamed ? { "data-pieces": String(streamed) } : {}),
        },
        h(
          "div",
          { class: "who" },
          who,
          m.type && m.type !== "message" ? h("span", { class: "muted" }, ` · ${m.type}`) : null,
          m.cut ? h("span", { class: "muted", title: "stopped before it was finished" }, " · cut") : null,
        ),
        h("div", { class: "text" }, text),
      );
    }),
  );
}

/**
 * Answers being written: each `message.delta` goes into the message's bubble at once; the
 * bubble goes when the stored message arrives (the conversation shows it whole) or when it is
 * retracted. Latecomers get the pieces so far from the socket first.
 */
function writingBox() {
  const list = h("ol", { class: "messages writing", "data-testid": "writing", "aria-live": "polite" });
  const open = new Map();
  const pieces = new Map();
  return {
    element: list,
    pieces,
    add(delta) {
      const { message_id, agent, delta: text } = delta.data;
      let entry = open.get(message_id);
      if (!entry) {
        const body = h("div", { class: "text" });
        const item = h(
          "li",
          { class: "msg assistant message", "data-message-id": message_id },
          h("div", { class: "who" }, agent),
          body,
        );
        entry = { item, body };
        open.set(message_id, entry);
        list.append(item);
      }
      entry.body.textContent += text;
      pieces.set(message_id, (pieces.get(message_id) ?? 0) + 1);
    },
    /** Drops the bubbles of messages the conversation now holds, or that were retracted. */
    drop(ids) {
      for (const id of ids) {
        open.get(id)?.item.remove();
        open.delete(id);
      }
    },
  };
}

/** Runs shown at first, newest first; the rest behind a button. */
const RUNS_SHOWN = 10;
/** How often the page looks for what sends no live event (a fan-out started through the API), and while something runs. */
const IDLE_POLL_MS = 4000;
const LIVE_POLL_MS = 1000;

/** Redraws a section only when what it shows changed, so scroll positions and focus survive a refresh. */
function redraw(section, signature, build) {
  if (section.dataset.signature === signature) return;
  section.dataset.signature = signature;
  section.replaceChildren(
    ...build()
      .flat(Infinity)
      .filter((child) => child !== null && child !== undefined),
  );
}

export async function render(view, params, app) {
  const id = params.id;
  const enc = encodeURIComponent(id);
  const header = h("section", { class: "card", "data-testid": "session-header" });
  const talk = h("section", { "data-testid": "conversation" });
  const chain = h("section", { "data-testid": "handoff-timeline" });
  const runsBox = h("section", { "data-testid": "run-timelines", "aria-labelledby": "runs-title" });
  const fanoutsBox = h("section", { "data-testid": "fanouts" });
  const live = h("span", { class: "live", "data-testid": "live-status" }, "connecting");
  const input = h("textarea", { name: "content", rows: 2, required: true, "data-testid": "message-input" });
  const runStatus = h("p", { class: "muted", "data-testid": "run-status" });
  const writing = writingBox();
  const memory = memoryPanel((suffix) => `/v1/sessions/${enc}${suffix}`, app);

  // The audit trail, read on from the last record seen; runs and fan-outs are found in it.
  const records = [];
  const runs = new Map();
  const fanouts = new Map();
  let showAllRuns = false;
  const readAudit = async () => {
    for (let page = 0; page < 20; page++) {
      const after = records.at(-1)?.id;
      const answer = await api("GET", `/v1/sessions/${enc}/audit${query({ limit: 500, after })}`);
      records.push(...answer.items);
      if (!answer.next_cursor) return;
    }
  };
  const idsOf = (action, field) => [
    ...new Set(records.filter((r) => r.action === action).map((r) => r.details[field])),
  ];
  const readRuns = async () => {
    const ids = idsOf("run.started", "run_id").reverse();
    const shown = showAllRuns ? ids : ids.slice(0, RUNS_SHOWN);
    // An ended run does not change: only the new, running and paused ones are read again.
    const stale = shown.filter((r) => !runs.has(r) || runSpan(runs.get(r)).live);
    await mapLimited(stale, 4, async (r) =>
      runs.set(r, await api("GET", `/v1/sessions/${enc}/runs/${encodeURIComponent(r)}`)),
    );
    return { shown: shown.map((r) => runs.get(r)), total: ids.length };
  };
  const readFanouts = async () => {
    const ids = idsOf("fanout.started", "fanout_id").reverse();
    const stale = ids.filter((f) => !["COMPLETED", "FAILED"].includes(fanouts.get(f)?.state));
    await mapLimited(stale, 4, async (f) =>
      fanouts.set(f, await api("GET", `/v1/sessions/${enc}/fan-outs/${encodeURIComponent(f)}`)),
    );
    return ids.map((f) => fanouts.get(f));
  };

  let busy = false;
  let gone = false;
  const showAll = () => {
    showAllRuns = true;
    soon();
  };
  const load = async () => {
    try {
      const [session, messages, facts] = await Promise.all([
        api("GET", `/v1/sessions/${enc}`),
        api("GET", `/v1/sessions/${enc}/messages?limit=500`),
        api("GET", `/v1/sessions/${enc}/memory`),
        readAudit(),
      ]);
      memory.show(facts);
      const [shownRuns, shownFanouts] = await Promise.all([readRuns(), readFanouts()]);
      busy =
        shownRuns.shown.some((r) => r.status === "running") ||
        shownFanouts.some((f) => !["COMPLETED", "FAILED"].includes(f.state));
      redraw(header, JSON.stringify(session), () => [
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
        h(
          "p",
          {},
          h(
            "a",
            { href: `#/agents?session=${enc}`, "data-testid": "session-graph-link" },
            "Show it on the team's handoff graph",
          ),
        ),
      ]);
      redraw(talk, JSON.stringify(messages.items.map((m) => m.id ?? m.content)), () => [
        h("h2", {}, "Conversation"),
        conversation(messages.items, writing.pieces),
      ]);
      writing.drop(messages.items.map((m) => m.id).filter(Boolean));
      const hops = handoffsOf(records);
      redraw(chain, JSON.stringify(hops), () => [h("h2", {}, "Handoffs"), timeline(hops)]);
      redraw(runsBox, JSON.stringify([shownRuns, showAllRuns]), () => [
        h("h2", { id: "runs-title" }, "Runs"),
        shownRuns.total === 0 ? h("p", { class: "muted" }, "No runs yet: send a message.") : null,
        shownRuns.shown.map((r) => runTimeline(r)),
        shownRuns.total > shownRuns.shown.length
          ? h("button", { type: "button", class: "quiet", onclick: showAll }, `Show all ${shownRuns.total} runs`)
          : null,
      ]);
      redraw(fanoutsBox, JSON.stringify(shownFanouts), () =>
        shownFanouts.length ? [h("h2", {}, "Fan-outs"), shownFanouts.map((f) => fanoutView(f))] : [],
      );
      tick(view);
    } catch (e) {
      // A session deleted or expired under the page: say so once, and stop looking.
      if (e.status === 404 || e.status === 410) gone = true;
      app.fail(e);
    }
  };
  // One refresh at a time (the audit trail is read on from where the last one stopped); a
  // refresh asked for meanwhile runs once more after it.
  let running = null;
  let again = false;
  const refresh = async () => {
    if (running) {
      again = true;
      return running;
    }
    running = (async () => {
      do {
        again = false;
        await load();
      } while (again);
    })();
    try {
      await running;
    } finally {
      running = null;
    }
  };

  let pending;
  const soon = () => {
    clearTimeout(pending);
    pending = setTimeout(refresh, 150);
  };
  // A fan-out started through the API sends no live event: look now and then, often while something runs.
  let polling;
  const poll = async () => {
    if (!document.hidden) await refresh();
    if (!gone) polling = setTimeout(poll, busy ? LIVE_POLL_MS : IDLE_POLL_MS);
  };
  const ticker = setInterval(() => tick(view), 1000);

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
          const answer = await api("POST", `/v1/sessions/${enc}/messages`, {
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
    h("div", { class: "split" }, h("div", {}, talk, writing.element, form), chain),
    memory.element,
    runsBox,
    fanoutsBox,
  );
  await refresh();
  // A piece of an answer is shown at once; anything else refreshes the page's sections.
  const onEvent = (event) => {
    if (event.type === "message.delta") {
      writing.add(event);
      return;
    }
    if (event.type === "message.retracted") writing.drop([event.data.message_id]);
    soon();
  };
  const stop = subscribe(id, onEvent, (state) => (live.textContent = state));
  if (!gone) polling = setTimeout(poll, busy ? LIVE_POLL_MS : IDLE_POLL_MS);
  return () => {
    clearTimeout(pending);
    clearTimeout(polling);
    clearInterval(ticker);
    stop();
  };
}
