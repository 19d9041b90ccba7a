import { api, query } from "../api.js";
import { h, table, when } from "../h.js";

/**
 * What the routing history holds for one agent's page (`GET /v1/route/history`, docs/routing.md,
 * The routing history): the recent inputs routed to the agent with low confidence, and the
 * tenant's recent inputs the fallback took, each with one click to add it to the agent's
 * examples through the registry write (`PUT /v1/agents/:name`), as an edit would.
 */

const ROWS = 20;

/** The two lists for `name`; a list that could not be read is its error, shown in its place. */
export async function loadHistory(name) {
  const read = (params) => api("GET", `/v1/route/history${query({ ...params, limit: ROWS })}`).catch((e) => e);
  const [low, fallback] = await Promise.all([
    read({ agent: name, kind: "low_confidence" }),
    read({ kind: "fallback" }),
  ]);
  return { low, fallback };
}

/** The agent's definition with `input` as one more example (the schema trims examples, so the page does too). */
async function addExample(name, input) {
  const path = `/v1/agents/${encodeURIComponent(name)}`;
  const { definition } = await api("GET", path);
  const example = input.trim();
  if (definition.triggers.examples.includes(example)) return;
  const triggers = { ...definition.triggers, examples: [...definition.triggers.examples, example] };
  await api("PUT", path, { ...definition, triggers });
}

function rows(items, name, known, app, onChanged, { agentColumn }) {
  return items.map((item) => {
    const action = known.has(item.input.trim())
      ? h("span", { class: "muted", "data-testid": "history-example-known" }, `in ${name}'s examples`)
      : h("button", { type: "button", "data-testid": "add-example" }, `Add as example of ${name}`);
    if (action.tagName === "BUTTON")
      action.addEventListener("click", async () => {
        action.disabled = true;
        try {
          await addExample(name, item.input);
          await onChanged();
          app.say(`Added to ${name}'s examples.`);
        } catch (e) {
          action.disabled = false;
          app.fail(e);
        }
      });
    return h(
      "tr",
      { "data-testid": "history-row", "data-input": item.input },
      h("td", {}, item.input),
      agentColumn ? h("td", {}, h("a", { href: `#/agents/${encodeURIComponent(item.agent)}` }, item.agent)) : null,
      h("td", {}, item.method),
      h("td", {}, item.confidence),
      h("td", {}, when(item.at)),
      h("td", {}, action),
    );
  });
}

function list(testId, answer, name, known, app, onChanged, agentColumn) {
  if (answer instanceof Error)
    return h("p", { class: "muted" }, `Could not read the routing history: ${answer.code ?? ""} ${answer.message}`);
  if (answer.items.length === 0) return h("p", { class: "muted", "data-testid": `${testId}-none` }, "None recorded.");
  const headings = ["Input", ...(agentColumn ? ["Given to"] : []), "Decided by", "Confidence", "When", ""];
  return table(testId, headings, rows(answer.items, name, known, app, onChanged, { agentColumn }));
}

/** The two cards. `examples`: the agent's examples now; `onChanged` redraws the page after a write. */
export function historyCards(name, examples, { low, fallback }, app, onChanged) {
  const known = new Set(examples);
  const threshold = low instanceof Error ? null : low.threshold;
  return [
    h(
      "section",
      { class: "card", "data-testid": "agent-low-confidence-card" },
      h("h2", {}, "Inputs it took unsure"),
      h(
        "p",
        { class: "muted" },
        `The newest ${ROWS} recorded inputs routed to ${name} with a confidence below the threshold`,
        threshold === null ? "" : ` (${threshold})`,
        ": the rules alone would not have taken them. An input that is ",
        name,
        "'s makes a good example.",
      ),
      list("agent-low-confidence", low, name, known, app, onChanged, false),
    ),
    h(
      "section",
      { class: "card", "data-testid": "fallback-inputs-card" },
      h("h2", {}, "Inputs the fallback took"),
      h(
        "p",
        { class: "muted" },
        `The tenant's newest ${ROWS} recorded inputs no tier was sure of, given to the default agent. `,
        `Add one to ${name}'s examples if it is ${name}'s.`,
      ),
      list("fallback-inputs", fallback, name, known, app, onChanged, true),
    ),
  ];
}
