import { api } from "../api.js";
import { field, h, svg, table, when } from "../h.js";
import { amount, METRICS, usageBars } from "../usage-chart.js";

/** The chart's box, in SVG units (it scales to the page's width). */
const WIDTH = 900;
const HEIGHT = 200;

const LIMITS = {
  requests_per_minute: "Requests a minute (per key)",
  sessions_per_day: "Sessions a day",
  runs_per_minute: "Runs a minute",
  model_tokens_per_day: "Model tokens a day",
  agents: "Agents",
  tools: "Tools",
};

/** What the tenant used over the last 30 UTC days, a chart of one counter, and its quotas now. */
export async function render(view, _params, app) {
  const title = h("h1", {}, "Usage");
  let report;
  try {
    report = await api("GET", "/v1/usage?granularity=day");
  } catch (e) {
    view.replaceChildren(title);
    app.fail(e);
    return;
  }
  const metric = h(
    "select",
    { name: "metric", "data-testid": "usage-metric" },
    Object.entries(METRICS).map(([name, m]) => h("option", { value: name }, m.label)),
  );
  const chart = h("figure", { class: "usage-chart", "data-testid": "usage-chart" });
  const draw = () => {
    const { label } = METRICS[metric.value];
    const { top, bars } = usageBars(report.buckets, metric.value, { width: WIDTH, height: HEIGHT });
    const total = bars.reduce((n, b) => n + b.value, 0);
    chart.replaceChildren(
      svg(
        "svg",
        {
          viewBox: `0 0 ${WIDTH} ${HEIGHT + 24}`,
          class: "usage-svg",
          role: "img",
          "aria-label": `${label} a day, the last 30 days`,
        },
        svg("line", { x1: 0, y1: HEIGHT, x2: WIDTH, y2: HEIGHT, class: "usage-axis" }),
        bars.map((b) =>
          svg(
            "rect",
            { x: b.x, y: b.y, width: b.width, height: b.height, class: "usage-bar", "data-testid": "usage-bar" },
            svg("title", {}, `${b.day}: ${amount(b.value, metric.value)}`),
          ),
        ),
        bars.length > 0 ? svg("text", { x: 0, y: HEIGHT + 18, class: "usage-label" }, bars[0].day) : null,
        bars.length > 0 ? svg("text", { x: WIDTH, y: HEIGHT + 18, class: "usage-label end" }, bars.at(-1).day) : null,
      ),
      h(
        "figcaption",
        { class: "muted", "data-testid": "usage-caption" },
        `${label}: ${amount(total, metric.value)} in 30 days; the axis reaches ${amount(top, metric.value)} a day.`,
      ),
    );
  };
  metric.addEventListener("change", draw);
  draw();

  const t = report.totals;
  const counters = [
    ...Object.entries(METRICS).map(([name, m]) => [m.label, amount(m.of(t), name)]),
    ["Input tokens", amount(t.input_tokens)],
    ["Output tokens", amount(t.output_tokens)],
    ["D1 held now (estimate)", amount(report.d1_bytes_stored_estimate, "d1_bytes_written")],
    ...Object.entries(t.refused).map(([limit, n]) => [`Refused: ${LIMITS[limit] ?? limit}`, amount(n)]),
  ];
  const totals = table(
    "usage-totals",
    ["Counter", "Last 30 days"],
    counters.map(([name, value]) => h("tr", {}, h("th", { scope: "row" }, name), h("td", { class: "num" }, value))),
  );
  const models = table(
    "usage-models",
    ["Provider", "Model", "Calls", "Input tokens", "Output tokens"],
    t.models.length === 0
      ? [h("tr", {}, h("td", { colspan: 5, class: "muted" }, "No model calls."))]
      : t.models.map((m) =>
          h(
            "tr",
            {},
            h("td", {}, m.provider),
            h("td", {}, h("code", {}, m.model)),
            h("td", { class: "num" }, amount(m.calls)),
            h("td", { class: "num" }, amount(m.input_tokens)),
            h("td", { class: "num" }, amount(m.output_tokens)),
          ),
        ),
  );
  const quotas = table(
    "usage-quotas",
    ["Limit", "Value", "Used now", "Window", "Frees", "Set by"],
    report.quotas.map((q) =>
      h(
        "tr",
        { "data-testid": "quota-row", "data-limit": q.limit },
        h("th", { scope: "row" }, LIMITS[q.limit] ?? q.limit),
        h("td", { class: "num" }, q.value === null ? "none" : amount(q.value)),
        h("td", { class: "num" }, q.used === null ? "—" : amount(q.used)),
        h("td", {}, q.window ?? "—"),
        h("td", {}, q.resets_at ? when(q.resets_at) : "by deleting one"),
        h("td", {}, q.source === "override" ? "the operator" : "the deployment"),
      ),
    ),
  );
  view.replaceChildren(
    title,
    h("p", { class: "muted" }, "The last 30 days by UTC day, counted within about a second of use."),
    h("section", { class: "card" }, field("Show", metric), chart),
    h("h2", {}, "Totals"),
    totals,
    h("h2", {}, "Models"),
    models,
    h("h2", {}, "Quotas"),
    quotas,
  );
}
