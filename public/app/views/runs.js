import { fanoutLanes, noAggregateReason } from "../fanout-lanes.js";
import { duration, h, hueOf, shortId, when } from "../h.js";
import { runSpan, runSteps } from "../run-steps.js";

/**
 * A session's runs as horizontal timelines (each step with its agent, offset and duration,
 * errors marked) and its fan-outs as parallel lanes. Durations still going on carry
 * `data-since` so the page can tick them without redrawing.
 */

const KIND_WORDS = {
  model: "model call",
  tool: "tool call",
  approval: "approval",
  person: "a person's turn",
  handoff: "handoff",
  guardrail: "guardrail",
  compaction: "compaction",
  error: "error",
  restart: "restart",
  answer: "answer",
  working: "working",
  client: "client tools",
};

/** A duration that keeps counting while it is open. */
function ticking(ms, since) {
  return h("span", { class: "dur", "data-since": since ?? null }, duration(ms));
}

function step(s, run) {
  const offset = s.start - Date.parse(run.started_at);
  // Longer steps take more room, by the logarithm: a 2-minute wait stays on screen with 1 ms calls.
  const width = 7.5 + Math.min(8, Math.log10(1 + s.ms) * 1.6);
  return h(
    "li",
    {
      class: `step kind-${s.kind}${s.error ? " failed" : ""}${s.denied ? " denied" : ""}${s.open ? " open" : ""}`,
      style: `--agent-hue: ${hueOf(s.agent)}; flex-basis: ${width.toFixed(1)}rem`,
      "data-testid": "run-step",
      "data-kind": s.kind,
      "data-agent": s.agent,
      "data-error": s.error ?? null,
      title: [s.label, s.detail, s.outcome].filter(Boolean).join(" — "),
    },
    h("span", { class: "step-kind" }, KIND_WORDS[s.kind] ?? s.kind),
    h("span", { class: "step-label" }, s.label),
    h("span", { class: "step-agent" }, s.agent),
    h("span", { class: "step-time" }, `+${duration(Math.max(0, offset))} · `, ticking(s.ms, s.open ? s.start : null)),
    s.outcome && s.kind !== "answer" && s.kind !== "restart" ? h("span", { class: "step-outcome" }, s.outcome) : null,
    s.error ? h("span", { class: "step-error" }, `✕ ${s.error}`) : null,
  );
}

/** One run: its header and its steps left to right. */
export function runTimeline(run, now = Date.now()) {
  const steps = runSteps(run, now);
  const span = runSpan(run, now);
  const agents = [...new Set(steps.map((s) => s.agent))];
  return h(
    "article",
    { class: "card run", "data-testid": "run", "data-run": run.id, "data-status": run.status },
    h(
      "div",
      { class: "run-head" },
      h("strong", {}, "Run ", h("code", { title: run.id }, shortId(run.id))),
      " ",
      h("span", { class: `pill ${run.status}`, "data-testid": "run-status" }, run.status.replace("_", " ")),
      " started ",
      when(run.started_at),
      " · ",
      ticking(span.ms, span.live ? span.start : null),
      ` · ${run.turns} of ${run.max_turns} turns`,
      run.output_agent ? ` · answered by ${run.output_agent}` : "",
      run.error ? h("span", { class: "error" }, ` · ${run.error.code}`) : null,
    ),
    agents.length > 1 ? h("p", { class: "muted run-agents" }, agents.join(" → ")) : null,
    steps.length === 0
      ? h("p", { class: "muted" }, "No steps yet.")
      : h(
          "div",
          { class: "run-track", role: "region", tabindex: 0, "aria-label": `Steps of run ${run.id}, in order` },
          h(
            "ol",
            { class: "steps", "data-testid": "run-steps" },
            steps.map((s) => step(s, run)),
          ),
        ),
    steps.length ? ruler(steps, span) : null,
  );
}

/** The same steps on a true time scale: where the run's time went (a person's wait next to 1 ms model calls). */
function ruler(steps, span) {
  const total = Math.max(1, span.ms);
  const pct = (ms) => `${Math.min(100, Math.max(0, (ms / total) * 100)).toFixed(2)}%`;
  return h(
    "div",
    { class: "run-ruler", "aria-hidden": "true" },
    steps.map((s) =>
      h("span", {
        class: `seg kind-${s.kind}${s.error ? " failed" : ""}`,
        style: `left: ${pct(s.start - span.start)}; width: ${pct(s.ms)}`,
        title: `${KIND_WORDS[s.kind] ?? s.kind}: ${s.label}, ${duration(s.ms)}`,
      }),
    ),
  );
}

const LANE_WORDS = {
  succeeded: "succeeded",
  failed: "failed",
  timed_out: "timed out",
  running: "running",
  "not run": "not run",
};

function lane(l, scale, start) {
  const pct = (ms) => `${Math.min(100, (ms / scale) * 100).toFixed(2)}%`;
  const timeoutShown = l.timeout_ms <= scale;
  return h(
    "li",
    {
      class: `lane ${l.state.replace(" ", "-")}`,
      "data-testid": "fanout-lane",
      "data-task": l.task_id,
      "data-agent": l.agent,
      "data-state": l.state,
      style: `--agent-hue: ${hueOf(l.agent)}`,
    },
    h(
      "div",
      { class: "lane-head" },
      h("strong", {}, l.task_id),
      " · ",
      l.agent,
      h("span", { class: "muted" }, ` · ${l.instruction}`),
    ),
    h(
      "div",
      {
        class: "lane-track",
        role: "img",
        "aria-label": `${l.task_id} on ${l.agent}: ${LANE_WORDS[l.state]} after ${duration(l.ms)}, timeout ${duration(l.timeout_ms)}`,
      },
      h("div", { class: "lane-bar", style: `width: ${pct(l.ms)}` }),
      timeoutShown
        ? h("div", {
            class: "lane-timeout",
            style: `left: ${pct(l.timeout_ms)}`,
            title: `timeout ${duration(l.timeout_ms)}`,
          })
        : null,
    ),
    h(
      "div",
      { class: "lane-end" },
      h("span", { class: `pill ${l.state.replace(" ", "-")}`, "data-testid": "lane-state" }, LANE_WORDS[l.state]),
      " ",
      ticking(l.ms, l.state === "running" ? start : null),
      ` of ${duration(l.timeout_ms)}${timeoutShown ? "" : " allowed"}`,
      l.error ? h("span", { class: "error" }, ` ✕ ${l.error}`) : null,
    ),
    l.output ? h("div", { class: "lane-output muted" }, l.output) : null,
  );
}

/** One fan-out: its states, a lane per task on one time scale, and the aggregate below. */
export function fanoutView(fanout, now = Date.now()) {
  const view = fanoutLanes(fanout, now);
  const reason = noAggregateReason(fanout);
  return h(
    "article",
    { class: "card fanout", "data-testid": "fanout", "data-fanout": fanout.id, "data-state": fanout.state },
    h(
      "div",
      { class: "run-head" },
      h("strong", {}, "Fan-out ", h("code", { title: fanout.id }, shortId(fanout.id))),
      ` by ${fanout.supervisor} `,
      h("span", { class: `pill ${fanout.state.toLowerCase()}`, "data-testid": "fanout-state" }, fanout.state),
      ` · ${fanout.decomposition.tasks.length} tasks · split by ${fanout.decomposed_by} · `,
      ticking(view.ms, null),
      fanout.run_id ? ` · in run ${shortId(fanout.run_id)}` : "",
    ),
    h(
      "p",
      { class: "muted" },
      fanout.states.map((s) => s.state).join(" → "),
      fanout.decomposition.original_query ? ` · “${fanout.decomposition.original_query}”` : "",
    ),
    h(
      "ol",
      { class: "lanes", "aria-label": `Tasks of fan-out ${fanout.id}`, "data-testid": "fanout-lanes" },
      view.lanes.map((l) => lane(l, view.scale, Date.parse(fanout.started_at))),
    ),
    h(
      "p",
      { class: "muted lane-scale" },
      `The lanes span ${duration(view.scale)}; a mark shows a task's timeout when it falls inside.`,
    ),
    h(
      "div",
      { class: "aggregate", "data-testid": "fanout-aggregate" },
      h("strong", {}, "Aggregate"),
      view.aggregate !== null
        ? h("div", { class: "text" }, view.aggregate)
        : h("p", { class: "muted" }, reason ?? "Waiting for every task."),
    ),
  );
}

/** Ticks every open duration on the page (set by `ticking`) to `now`. */
export function tick(root, now = Date.now()) {
  for (const el of root.querySelectorAll("[data-since]")) el.textContent = duration(now - Number(el.dataset.since));
}
