import { agentMarkdown } from "../agent-file.js";
import { api, call } from "../api.js";
import { h, table } from "../h.js";

/**
 * An agent's definition as a Markdown agent file: read-only to copy or download, and, after
 * **Edit**, a draft to try before it is saved. **What would this change move?** replays the
 * tenant's routing history through the current router and one with the edited file
 * (`POST /v1/route/replay`, docs/routing.md, Replay) and shows the API's answer as it comes:
 * the page computes nothing of its own. **Save** is the registry write (`PUT /v1/agents/:name`).
 */

const TARGETS = { "@llm": "the LLM tier (not called)", "@fallback": "the fallback" };
const target = (name) => TARGETS[name] ?? name;
const signed = (n) => `${n > 0 ? "+" : ""}${Math.round(n * 10) / 10}`;
const examples = (list) =>
  list.length
    ? h(
        "ul",
        { class: "replay-examples" },
        list.map((e) => h("li", {}, e)),
      )
    : "—";

/** The replay's answer, as the API gave it. */
export function replayReport(report) {
  const { totals } = report;
  if (totals.inputs === 0)
    return h(
      "p",
      { "data-testid": "replay-empty" },
      "The routing history is empty: no routed session has been recorded, so there is nothing to replay. ",
      "Each session the router starts is recorded (unless the routing config says record_inputs: false).",
    );
  const moves = report.moves.map((m) =>
    h(
      "tr",
      { "data-testid": "replay-move", "data-from": m.from, "data-to": m.to },
      h("td", {}, target(m.from)),
      h("td", {}, target(m.to)),
      h("td", {}, m.count),
      h("td", {}, examples(m.examples)),
    ),
  );
  const { entered, left } = report.fallback;
  const shifts = report.confidence.largest.map((s) =>
    h(
      "tr",
      { "data-testid": "replay-shift" },
      h("td", {}, s.input),
      h("td", {}, s.from === s.to ? target(s.from) : `${target(s.from)} → ${target(s.to)}`),
      h("td", {}, `${s.before} → ${s.after}`),
      h("td", {}, signed(s.delta)),
    ),
  );
  return h(
    "div",
    { "data-testid": "replay-report" },
    h(
      "p",
      { "data-testid": "replay-summary" },
      h("strong", {}, `${totals.moved} of ${totals.replayed} recorded inputs would move.`),
      totals.complete ? "" : ` The replay ran out of time after ${totals.replayed} of ${totals.inputs} inputs.`,
      ` Left to the LLM tier: ${totals.would_ask_llm.current} now, ${totals.would_ask_llm.draft} after.`,
    ),
    moves.length
      ? table("replay-moves", ["From", "To", "Inputs", "Examples"], moves)
      : h("p", { class: "muted" }, "Nothing would move."),
    h(
      "dl",
      { class: "facts", "data-testid": "replay-fallback" },
      h("dt", {}, "Newly to the fallback"),
      h("dd", {}, entered.count, entered.count ? examples(entered.examples) : null),
      h("dt", {}, "Newly out of the fallback"),
      h("dd", {}, left.count, left.count ? examples(left.examples) : null),
    ),
    h(
      "p",
      { "data-testid": "replay-confidence" },
      `Confidence, after minus before: mean ${signed(report.confidence.mean_delta)}, median ${signed(report.confidence.median_delta)}.`,
    ),
    shifts.length ? table("replay-shifts", ["Input", "Where", "Confidence", "Shift"], shifts) : null,
  );
}

/** The definition card: the file, Copy and Download, and Edit → replay, Save, Cancel. `onSaved` redraws the page. */
export function definitionEditor(definition, app, { onSaved }) {
  const markdown = agentMarkdown(definition);
  const name = definition.name;
  const text = h("textarea", {
    readonly: true,
    rows: Math.min(30, markdown.split("\n").length + 1),
    class: "code",
    "data-testid": "agent-markdown",
    "aria-label": `${name}.md`,
  });
  text.value = markdown;
  const result = h("div", { "aria-live": "polite" });
  const copy = h("button", { type: "button", "data-testid": "agent-markdown-copy" }, "Copy");
  copy.addEventListener("click", async () => {
    try {
      await navigator.clipboard.writeText(text.value);
      app.say(`Copied ${name}.md.`);
    } catch {
      // No clipboard permission (an embedded or headless browser): select it for Ctrl+C.
      text.focus();
      text.select();
      app.say("Selected: press Ctrl+C (⌘C) to copy.");
    }
  });
  const download = h(
    "a",
    {
      href: `data:text/markdown;charset=utf-8,${encodeURIComponent(markdown)}`,
      download: `${name}.md`,
      class: "quiet",
    },
    `Download ${name}.md`,
  );
  const edit = h("button", { type: "button", "data-testid": "agent-edit" }, "Edit");
  const replay = h(
    "button",
    { type: "button", "data-testid": "agent-replay", hidden: true },
    "What would this change move?",
  );
  const save = h("button", { type: "button", "data-testid": "agent-save", hidden: true }, "Save");
  const cancel = h(
    "button",
    { type: "button", class: "quiet", "data-testid": "agent-edit-cancel", hidden: true },
    "Cancel",
  );
  const editing = (on) => {
    text.readOnly = !on;
    edit.hidden = on;
    for (const b of [replay, save, cancel]) b.hidden = !on;
  };
  edit.addEventListener("click", () => {
    editing(true);
    text.focus();
  });
  cancel.addEventListener("click", () => {
    text.value = markdown;
    result.replaceChildren();
    editing(false);
  });
  replay.addEventListener("click", async () => {
    replay.disabled = true;
    result.replaceChildren(h("p", { class: "muted" }, "Replaying the routing history…"));
    try {
      const report = await api("POST", "/v1/route/replay", { draft: { files: [{ name, markdown: text.value }] } });
      result.replaceChildren(replayReport(report));
    } catch (e) {
      result.replaceChildren();
      app.fail(e);
    } finally {
      replay.disabled = false;
    }
  });
  save.addEventListener("click", async () => {
    save.disabled = true;
    try {
      await call("PUT", `/v1/agents/${encodeURIComponent(name)}`, text.value, { type: "text/markdown" });
      await onSaved();
      app.say(`Saved ${name}.`);
    } catch (e) {
      app.fail(e);
    } finally {
      save.disabled = false;
    }
  });
  return [
    h(
      "p",
      { class: "muted" },
      "Edit it and see what the change would move over the recorded routing history before you save it; or save it as ",
      h("code", {}, `agents/${name}.md`),
      " and push the folder (",
      h("code", {}, "npm run agents:push -- --url <Relay>"),
      "), or send it with ",
      h("code", {}, `PUT /v1/agents/${name}`),
      " and Content-Type: text/markdown.",
    ),
    text,
    h("div", { class: "tools" }, edit, replay, save, cancel, copy, download),
    result,
  ];
}
