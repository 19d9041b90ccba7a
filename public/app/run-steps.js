// A run's trace events (docs/runs.md, Traces) as the steps of a timeline: model calls,
// tool calls, approvals, a person's turn, handoffs, compactions, guardrails and errors, each with its
// agent, start, duration and error. Pure: no DOM.

/**
 * @typedef {{ kind: string, agent: string, label: string, detail: string, outcome: string | null,
 *   start: number, end: number | null, open: boolean, error: string | null, ms: number, denied?: boolean }} Step
 */

const HANDOFF_TOOL = /^(transfer_to_|return_to_)/;
const PAUSED = new Set(["awaiting_human", "awaiting_approval", "requires_action"]);

const at = (iso) => Date.parse(iso);
/** Any status but running or paused is an end (completed, failed, and whatever ends a run later). */
const ended = (run) => run.status !== "running" && !PAUSED.has(run.status);

/**
 * The steps of a run, in the order they began. A step is `{ kind, agent, label, detail,
 * start, end, open, error, outcome }`: times in ms since the epoch, `end` null and `open`
 * true while it goes on (a person not yet answered, a call still running). `now` closes
 * nothing: it is what an open step's duration is measured to.
 * @returns {Step[]}
 */
export function runSteps(/** @type {any} */ run, now = Date.now()) {
  /** @type {Step[]} */
  const steps = [];
  const waiting = new Map(); // approvals asked and not yet decided, by tool name, oldest first
  /** @type {Step | null} */
  let person = null; // a person's turn not yet answered
  const closePerson = (time) => {
    if (!person) return;
    if (person.outcome === "waiting for a person") person.outcome = "not answered";
    person.end = time;
    person.open = false;
    person = null;
  };
  for (const e of run.events ?? []) {
    const d = e.details ?? {};
    const time = at(e.timestamp);
    const span = { start: time - (e.duration_ms ?? 0), end: time, open: false, error: e.error ?? null };
    const step = (kind, label, extra = {}) =>
      steps.push({ kind, agent: e.agent_name, label, detail: "", outcome: d.outcome ?? null, ...span, ...extra });
    if (e.event_type !== "agent_complete") closePerson(time);
    switch (e.event_type) {
      case "llm_call":
        step("model", d.executor === "webhook" ? "webhook turn" : `model ${d.model ?? ""}`.trim(), {
          detail: d.tokens ? `${d.tokens.total} tokens` : d.outcome === "repair" ? "asked to repair" : "",
        });
        break;
      case "tool_call": {
        const name = d.tool_name ?? "tool";
        if (d.outcome === "approval required") {
          step("approval", `approval of ${name}`, { end: null, open: true, outcome: "waiting" });
          waiting.set(name, [...(waiting.get(name) ?? []), steps[steps.length - 1]]);
        } else if (/^(approved|denied)/.test(d.outcome ?? "") && waiting.get(name)?.length) {
          const asked = waiting.get(name).shift();
          Object.assign(asked, { end: time, open: false, outcome: d.outcome, denied: d.outcome.startsWith("denied") });
        } else if (!d.outcome && (HANDOFF_TOOL.test(name) || name === "escalate_to_human")) {
          // The model's call; the handoff (or the person's turn) it leads to is the step.
        } else
          step("tool", name, {
            error: e.error ?? (d.outcome === "error" ? "tool error" : null),
            detail: d.outcome ?? "",
          });
        break;
      }
      case "handoff":
        step("handoff", `${d.from_agent ?? e.agent_name} → ${d.to_agent ?? "(back)"}`, {
          detail: d.handoff_reason ?? "",
          error: e.error ?? (d.outcome && d.outcome !== "completed" ? d.outcome : null),
        });
        break;
      case "agent_start":
        if (d.executor === "human") {
          step("person", `${e.agent_name}'s turn`, { end: null, open: true, outcome: "waiting for a person" });
          person = steps[steps.length - 1];
        } else if ((d.outcome ?? "").startsWith("resumed")) step("restart", d.outcome);
        break;
      case "agent_complete":
        if (d.executor === "human" && person) {
          person.outcome = d.outcome;
          closePerson(time);
        } else step("answer", d.outcome ?? "final answer");
        break;
      case "guardrail":
        step("guardrail", `guardrail ${d.outcome ?? ""}`.trim(), {
          error: /^rejected/.test(d.outcome ?? "") ? "GUARDRAIL_FAILED" : null,
        });
        break;
      case "compaction": {
        const c = d.compaction ?? {};
        step("compaction", `${c.strategy === "trim" ? "trimmed" : "summarized"} ${c.items ?? "?"} items`, {
          detail: `${c.tokens_before ?? "?"} → ${c.tokens_after ?? "?"} tokens${d.model ? ` by ${d.model}` : ""}`,
        });
        break;
      }
      case "agent_error":
        step("error", d.executor === "webhook" ? "webhook turn" : `model ${d.model ?? ""}`.trim(), {
          error: e.error ?? "error",
        });
        break;
      default:
        break;
    }
  }
  const end = ended(run) ? at(run.ended_at ?? run.updated_at) : null;
  for (const s of steps)
    if (s.open && end !== null) {
      // The run ended without an answer to this one (expired, cancelled, the run failed).
      s.end = end;
      s.open = false;
      s.outcome = s.outcome === "waiting" || s.outcome === "waiting for a person" ? "not answered" : s.outcome;
    }
  const last = steps.reduce((t, s) => Math.max(t, s.end ?? s.start), at(run.started_at));
  if (run.status === "failed" && run.error && !steps.some((s) => s.error === run.error.code))
    steps.push({
      kind: "error",
      agent: run.agent,
      label: "run failed",
      detail: run.error.message ?? "",
      outcome: null,
      start: end ?? last,
      end: end ?? last,
      open: false,
      error: run.error.code,
    });
  if (run.status === "running" && !steps.some((s) => s.open))
    steps.push({
      kind: "working",
      agent: run.agent,
      label: `${run.agent} working`,
      detail: "",
      outcome: null,
      start: last,
      end: null,
      open: true,
      error: null,
    });
  if (run.status === "requires_action")
    steps.push({
      kind: "client",
      agent: run.agent,
      label: "waiting for the client's tool outputs",
      detail: (run.pending?.tool_calls ?? []).map((c) => c.name).join(", "),
      outcome: null,
      start: at(run.updated_at),
      end: null,
      open: true,
      error: null,
    });
  for (const s of steps) s.ms = Math.max(0, (s.end ?? now) - s.start);
  return steps;
}

/** A run's span and state for its header: start, end (null while it goes on), duration so far. */
export function runSpan(/** @type {any} */ run, now = Date.now()) {
  const start = at(run.started_at);
  const end = ended(run) ? at(run.ended_at ?? run.updated_at) : null;
  return { start, end, ms: (end ?? now) - start, live: !ended(run), paused: PAUSED.has(run.status) };
}
