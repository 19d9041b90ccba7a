import { api } from "../api.js";
import { field, h, table } from "../h.js";

/** Type an input, see which agent the router picks and why; start a session with it. */
export function render(view, _params, app) {
  const input = h("textarea", {
    name: "input",
    rows: 3,
    required: true,
    "data-testid": "route-input",
    placeholder: "I was charged twice on my last invoice",
  });
  const strategy = h(
    "select",
    { name: "strategy" },
    ["", "rules", "llm", "hybrid"].map((s) => h("option", { value: s }, s || "tenant default")),
  );
  const out = h("section", { "aria-live": "polite" });

  const decisionView = (d) =>
    h(
      "div",
      { class: "card", "data-testid": "route-decision" },
      h(
        "dl",
        { class: "facts" },
        h("dt", {}, "Agent"),
        h("dd", { "data-testid": "decided-agent" }, d.agent ?? "none"),
        h("dt", {}, "Method"),
        h("dd", {}, `${d.method} (strategy ${d.strategy})`),
        h("dt", {}, "Confidence"),
        h("dd", {}, `${d.confidence} (threshold ${d.threshold})`),
        h("dt", {}, "Keywords"),
        h("dd", {}, d.matched_keywords.join(", ") || "—"),
        h("dt", {}, "Patterns"),
        h("dd", {}, d.matched_patterns.join(", ") || "—"),
        d.llm
          ? [
              h("dt", {}, "LLM"),
              h(
                "dd",
                {},
                `${d.llm.provider} ${d.llm.model}, ${Math.round(d.llm.duration_ms)} ms${d.llm.error ? `: ${d.llm.error}` : ""}`,
              ),
            ]
          : null,
        d.fallback ? [h("dt", {}, "Fallback"), h("dd", {}, `${d.fallback.strategy}: ${d.fallback.reason}`)] : null,
        // latency_us is the whole route by the Workers clock (millisecond steps, registry read
        // included), not the rule tier's µs.
        h("dt", {}, "Server time"),
        h(
          "dd",
          {
            title:
              "The whole route on the server, registry read included, by the Workers clock (it moves in milliseconds)",
          },
          `${Math.round(d.latency_us / 1000)} ms`,
        ),
      ),
      d.candidates.length
        ? table(
            "route-candidates",
            ["Candidate", "Confidence", "Score", "Matched"],
            d.candidates.map((c) =>
              h(
                "tr",
                {},
                h("td", {}, c.agent),
                h("td", { class: "num" }, c.confidence),
                h("td", { class: "num" }, c.score),
                h("td", {}, [...c.matched_keywords, ...c.matched_patterns].join(", ")),
              ),
            ),
          )
        : null,
      d.explanation
        ? h(
            "details",
            {},
            h("summary", {}, "Explanation"),
            h("pre", { "data-testid": "route-explanation" }, JSON.stringify(d.explanation, null, 2)),
          )
        : null,
      h(
        "button",
        { type: "button", "data-testid": "start-session", onclick: start },
        d.agent ? `Start a session with ${d.agent}` : "Start a session",
      ),
    );

  async function start() {
    try {
      const session = await api("POST", "/v1/sessions", { input: input.value.trim() });
      app.say(`Session ${session.id} started with ${session.current_agent}.`);
      location.hash = `#/sessions/${session.id}`;
    } catch (e) {
      app.fail(e);
    }
  }

  const form = h(
    "form",
    {
      class: "card",
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          const body = { input: input.value.trim() };
          if (strategy.value) body.strategy = strategy.value;
          out.replaceChildren(decisionView(await api("POST", "/v1/route", body)));
        } catch (e) {
          app.fail(e);
        }
      },
    },
    field("Input", input),
    field("Strategy", strategy),
    h("button", { type: "submit", "data-testid": "route-submit" }, "Route"),
  );
  // Enter routes; Shift+Enter is a new line.
  input.addEventListener("keydown", (event) => {
    if (event.key === "Enter" && !event.shiftKey) {
      event.preventDefault();
      form.requestSubmit();
    }
  });
  view.replaceChildren(
    h("h1", {}, "Routing playground"),
    h("p", { class: "muted" }, "A dry run: routing changes nothing until you start a session."),
    form,
    out,
  );
  input.focus();
}
