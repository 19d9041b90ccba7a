import { layout } from "../graph-layout.js";
import { h, svg } from "../h.js";

/**
 * The handoff graph as SVG: agents as boxes (name, kind, status, load), handoff entries as
 * arrows labelled with their terms. Each box is a link (Tab reaches it, Enter opens the
 * agent); focusing or pointing at one brings its edges forward and says them in words.
 */

const NODE = { width: 180, height: 60 };
const LABEL_FONT = "11px system-ui, sans-serif";
const LABEL_MAX = 230;
const LINE = 14;

let canvas;
/** Text width in px as the label font draws it (a canvas measures without laying anything out). */
function measure(text, font = LABEL_FONT) {
  canvas ??= document.createElement("canvas").getContext("2d");
  canvas.font = font;
  return canvas.measureText(text).width;
}

/** The text cut with "…" to fit `max` px. */
function clip(text, max, font = LABEL_FONT) {
  if (measure(text, font) <= max) return text;
  let cut = text;
  while (cut.length > 1 && measure(`${cut}…`, font) > max) cut = cut.slice(0, -1);
  return `${cut}…`;
}

/** A smooth path through the edge's points: horizontal tangents, so edges leave and enter boxes level. */
function pathOf(points) {
  let d = `M${points[0].x},${points[0].y}`;
  for (let i = 1; i < points.length; i++) {
    const a = points[i - 1];
    const b = points[i];
    const dx = (b.x - a.x) / 2;
    d += a.y === b.y ? ` L${b.x},${b.y}` : ` C${a.x + dx},${a.y} ${b.x - dx},${b.y} ${b.x},${b.y}`;
  }
  return d;
}

const edgeWords = (e) => [`${e.from} → ${e.to}`, ...e.label, e.description].filter(Boolean).join("; ");

/**
 * `{ element, details }`: the drawing, and a live region that says what the focused agent
 * hands to and takes from. `position` (from a session) marks its chain, its agent and its edge.
 */
export function handoffGraph(graph, position = null) {
  const labels = new Map(
    graph.edges.map((e) => {
      const lines = e.label.map((line) => clip(line, LABEL_MAX));
      const width = lines.length ? Math.max(...lines.map((l) => measure(l))) + 12 : 0;
      return [e.id, { lines, size: { width, height: lines.length * LINE + 6 } }];
    }),
  );
  const placed = layout(
    graph.nodes.map((n) => ({ id: n.id, ...NODE })),
    graph.edges.map((e) => ({ id: e.id, from: e.from, to: e.to, label: labels.get(e.id).size })),
  );
  const onEdge = (e) => position?.edge && position.edge.from === e.from && position.edge.to === e.to;
  const chain = new Set(position?.chain ?? []);

  const edges = placed.edges.map((p) => {
    const e = graph.edges.find((g) => g.id === p.id);
    const { lines } = labels.get(e.id);
    const current = onEdge(e);
    const classes = [
      "edge",
      e.condition || e.when !== "manual" ? "conditional" : "",
      e.requires_approval ? "approval" : "",
      e.trigger ? "triggered" : "",
      current ? "current" : "",
    ];
    return svg(
      "g",
      {
        class: classes.filter(Boolean).join(" "),
        "data-testid": "graph-edge",
        "data-from": e.from,
        "data-to": e.to,
        "data-current": current ? "true" : null,
      },
      svg("title", {}, edgeWords(e)),
      svg("path", {
        class: "edge-line",
        d: pathOf(p.points),
        "marker-end": current ? "url(#arrow-current)" : "url(#arrow)",
      }),
      lines.length
        ? svg(
            "g",
            { class: "edge-label", transform: `translate(${p.label.x},${p.label.y})` },
            svg("rect", { class: "label-box", width: p.label.width, height: p.label.height, rx: 4 }),
            lines.map((line, i) => svg("text", { class: "label-text", x: 6, y: 14 + i * LINE }, line)),
          )
        : null,
    );
  });

  const nodes = graph.nodes.map((n) => {
    const b = placed.nodes.get(n.id);
    const out = graph.edges.filter((e) => e.from === n.id).map((e) => e.to);
    const words = `${n.id}${n.title !== n.id ? ` (${n.title})` : ""}: ${n.missing ? "not registered" : `${n.kind} agent, ${n.status}, ${n.load}`}. ${out.length ? `Hands off to ${out.join(", ")}.` : "Hands off to nobody."}`;
    const classes = [
      "node",
      `kind-${n.kind}`,
      `status-${n.status.replace(/\s+/g, "-")}`,
      chain.has(n.id) ? "on-chain" : "",
      position?.current === n.id ? "current" : "",
    ];
    return svg(
      "a",
      {
        href: n.missing ? null : `#/agents/${encodeURIComponent(n.id)}`,
        tabindex: 0,
        class: classes.filter(Boolean).join(" "),
        "data-testid": "graph-node",
        "data-agent": n.id,
        "data-kind": n.kind,
        "data-status": n.status,
        "data-current": position?.current === n.id ? "true" : null,
        "aria-label": words,
        transform: `translate(${b.x},${b.y})`,
      },
      svg("title", {}, words),
      svg("rect", { class: "node-box", width: NODE.width, height: NODE.height, rx: 8 }),
      svg("circle", { class: "status-dot", cx: NODE.width - 12, cy: 12, r: 5 }),
      svg("text", { class: "node-name", x: 10, y: 19 }, clip(n.id, NODE.width - 34, "600 13px system-ui, sans-serif")),
      svg(
        "text",
        { class: "node-meta", x: 10, y: 36 },
        clip(n.missing ? "not registered" : `${n.kind} · ${n.status}`, NODE.width - 20),
      ),
      svg("text", { class: "node-meta", x: 10, y: 51 }, clip(n.load, NODE.width - 20)),
    );
  });

  const drawing = svg(
    "svg",
    {
      class: "graph",
      width: placed.width,
      height: placed.height,
      viewBox: `0 0 ${placed.width} ${placed.height}`,
      role: "group",
      "aria-label": `Handoff graph: ${graph.nodes.length} agents, ${graph.edges.length} handoff entries. The table below says the same in words.`,
      "data-testid": "graph-svg",
    },
    svg(
      "defs",
      {},
      ["arrow", "arrow-current"].map((id) =>
        svg(
          "marker",
          {
            id,
            class: id,
            viewBox: "0 0 10 10",
            refX: 9,
            refY: 5,
            markerWidth: 7,
            markerHeight: 7,
            orient: "auto-start-reverse",
          },
          svg("path", { class: "arrow-head", d: "M0,0 L10,5 L0,10 z" }),
        ),
      ),
    ),
    svg("g", { class: "edges" }, edges),
    svg("g", { class: "nodes" }, nodes),
  );

  const details = h(
    "p",
    { class: "graph-details muted", "aria-live": "polite", "data-testid": "graph-details" },
    "Focus or point at an agent to see its handoffs.",
  );
  const show = (id) => {
    drawing.classList.toggle("focusing", id !== null);
    for (const el of edges) el.classList.toggle("near", el.dataset.from === id || el.dataset.to === id);
    if (id === null) return;
    const out = graph.edges.filter((e) => e.from === id);
    const into = graph.edges.filter((e) => e.to === id).map((e) => e.from);
    details.textContent = `${id} hands off to ${out.length ? out.map((e) => (e.label.length ? `${e.to} (${e.label.join("; ")})` : e.to)).join(", ") : "nobody"}; ${into.length ? `takes over from ${into.join(", ")}` : "nobody hands off to it"}.`;
  };
  for (const el of nodes) {
    el.addEventListener("focus", () => show(el.dataset.agent));
    el.addEventListener("mouseenter", () => show(el.dataset.agent));
    el.addEventListener("blur", () => show(null));
    el.addEventListener("mouseleave", () => show(null));
  }

  const fitButton = h(
    "button",
    { type: "button", class: "quiet", "aria-pressed": "false", "data-testid": "graph-fit" },
    "Fit to width",
  );
  const box = h("div", { class: "graph-box", "data-testid": "graph-box" }, drawing);
  fitButton.addEventListener("click", () => {
    const fitted = box.classList.toggle("fitted");
    fitButton.setAttribute("aria-pressed", String(fitted));
  });
  return {
    element: h("div", {}, h("div", { class: "tools graph-tools" }, legend(), fitButton), box, details),
    details,
  };
}

function legend() {
  return h(
    "ul",
    { class: "legend", "aria-label": "Legend" },
    h("li", { class: "lg-llm" }, "model agent"),
    h("li", { class: "lg-webhook" }, "webhook agent"),
    h("li", { class: "lg-human" }, "person"),
    h("li", { class: "lg-conditional" }, "conditional or automatic"),
    h("li", { class: "lg-approval" }, "needs approval"),
    h("li", { class: "lg-current" }, "the session's edge"),
  );
}
