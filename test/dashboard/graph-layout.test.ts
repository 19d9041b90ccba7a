import { describe, expect, it } from "vitest";
import { crossings, layout } from "../../public/app/graph-layout.js";

/** The dashboard's layered layout of the handoff graph: boxes apart, edges joined to their ends, few crossings. */

type Box = { x: number; y: number; width: number; height: number };

const node = (id: string) => ({ id, width: 160, height: 52 });
const edge = (from: string, to: string, label?: { width: number; height: number }) => ({
  id: `${from}->${to}`,
  from,
  to,
  ...(label ? { label } : {}),
});

function overlapping(boxes: [string, Box][]): string[] {
  const found: string[] = [];
  for (let i = 0; i < boxes.length; i++)
    for (let j = i + 1; j < boxes.length; j++) {
      const [a, p] = boxes[i]!;
      const [b, q] = boxes[j]!;
      if (p.x < q.x + q.width && q.x < p.x + p.width && p.y < q.y + q.height && q.y < p.y + p.height)
        found.push(`${a} × ${b}`);
    }
  return found;
}

/** Every node and every label as a named box. */
function boxesOf(result: ReturnType<typeof layout>): [string, Box][] {
  return [
    ...[...result.nodes].map(([id, b]) => [id, b] as [string, Box]),
    ...result.edges.filter((e) => e.label.width > 0).map((e) => [`label ${e.id}`, e.label] as [string, Box]),
  ];
}

/** The demo team of agents/*.md. */
const demoNodes = ["triage", "billing", "technical", "sales", "supervisor"].map(node);
const label = { width: 150, height: 34 };
const demoEdges = [
  edge("triage", "billing"),
  edge("triage", "technical"),
  edge("triage", "sales"),
  edge("triage", "supervisor", label),
  edge("billing", "technical"),
  edge("billing", "supervisor", label),
  edge("sales", "billing"),
  edge("sales", "supervisor"),
  edge("technical", "billing"),
  edge("technical", "supervisor"),
];

describe("layout", () => {
  it("lays the demo team out left to right: no box on another, each edge from its source's side to its target's", () => {
    const result = layout(demoNodes, demoEdges);
    expect(overlapping(boxesOf(result))).toEqual([]);
    expect(result.edges).toHaveLength(demoEdges.length);
    for (const e of result.edges) {
      const from = result.nodes.get(e.from)!;
      const to = result.nodes.get(e.to)!;
      const first = e.points[0]!;
      const last = e.points.at(-1)!;
      expect([from.x, from.x + from.width]).toContain(first.x);
      expect(first.y).toBeCloseTo(from.y + from.height / 2);
      expect([to.x, to.x + to.width]).toContain(last.x);
      expect(last.y).toBeCloseTo(to.y + to.height / 2);
    }
    for (const b of result.nodes.values()) {
      expect(b.x + b.width).toBeLessThanOrEqual(result.width);
      expect(b.y + b.height).toBeLessThanOrEqual(result.height);
    }
    // triage hands to everyone and nobody hands to it: leftmost. The supervisor hands to nobody: rightmost.
    const xs = Object.fromEntries([...result.nodes].map(([id, b]) => [id, b.x]));
    expect(Math.min(...Object.values(xs))).toBe(xs.triage);
    expect(Math.max(...Object.values(xs))).toBe(xs.supervisor);
  });

  it("turns one edge of a cycle round and still draws it from its own source to its own target", () => {
    const result = layout([node("a"), node("b")], [edge("a", "b"), edge("b", "a")]);
    const reversed = result.edges.filter((e) => e.reversed);
    expect(reversed).toHaveLength(1);
    const back = reversed[0]!;
    const from = result.nodes.get(back.from)!;
    const to = result.nodes.get(back.to)!;
    // Drawn right to left: it leaves its source's left side and reaches its target's right side.
    expect(back.points[0]!.x).toBe(from.x);
    expect(back.points.at(-1)!.x).toBe(to.x + to.width);
    expect(overlapping(boxesOf(result))).toEqual([]);
  });

  it("puts a labelled edge's label between the two columns it joins, never on a node", () => {
    const result = layout([node("a"), node("b")], [edge("a", "b", label)]);
    const [e] = result.edges;
    const a = result.nodes.get("a")!;
    const b = result.nodes.get("b")!;
    expect(e!.label.x).toBeGreaterThanOrEqual(a.x + a.width);
    expect(e!.label.x + e!.label.width).toBeLessThanOrEqual(b.x);
    expect(e!.label.width).toBe(label.width);
  });

  it("orders columns to undo a crossing the input order makes", () => {
    // In input order a→d and b→c cross; swapping c and d undoes it.
    const nodes = ["a", "b", "c", "d"].map(node);
    const edges = [edge("a", "d"), edge("b", "c")];
    const result = layout(nodes, edges);
    const y = (id: string) => result.nodes.get(id)!.y;
    expect(Math.sign(y("a") - y("b"))).toBe(Math.sign(y("d") - y("c")));
  });

  it("routes a long edge through waypoints in the columns it passes", () => {
    const result = layout([node("a"), node("b"), node("c")], [edge("a", "b"), edge("b", "c"), edge("a", "c")]);
    const long = result.edges.find((e) => e.id === "a->c")!;
    // a's side, the label column, b's column, the next label column, c's side.
    expect(long.points.length).toBeGreaterThan(2);
    const xs = long.points.map((p) => p.x);
    expect([...xs].sort((p, q) => p - q)).toEqual(xs);
    expect(overlapping(boxesOf(result))).toEqual([]);
  });

  it("ignores edges to nodes it was not given, and is the same for the same input", () => {
    const once = layout(demoNodes, [...demoEdges, edge("triage", "ghost")]);
    expect(once.edges.map((e) => e.id)).not.toContain("triage->ghost");
    const twice = layout(demoNodes, [...demoEdges, edge("triage", "ghost")]);
    expect(JSON.stringify([...twice.nodes])).toBe(JSON.stringify([...once.nodes]));
  });

  it("keeps fifty agents apart: a front desk handing to 49 specialists, each handing back to two neighbours", () => {
    const names = Array.from({ length: 49 }, (_, i) => `agent-${String(i).padStart(2, "0")}`);
    const nodes = [node("desk"), ...names.map(node)];
    const edges = [
      ...names.map((n) => edge("desk", n)),
      ...names.flatMap((n, i) => [edge(n, names[(i + 1) % 49]!), edge(n, names[(i + 7) % 49]!, label)]),
    ];
    const result = layout(nodes, edges);
    expect(result.nodes.size).toBe(50);
    expect(result.edges).toHaveLength(edges.length);
    expect(overlapping(boxesOf(result))).toEqual([]);
    for (const e of result.edges)
      expect(e.points.every((p) => Number.isFinite(p.x) && Number.isFinite(p.y))).toBe(true);
  });
});

describe("layout of a hub-and-spoke team", () => {
  it("keeps returns and escalations from stretching it: a desk, seven leads, 42 specialists in three columns", () => {
    const leads = Array.from({ length: 7 }, (_, i) => `lead-${i + 1}`);
    const specialists = Array.from({ length: 42 }, (_, i) => `spec-${i + 1}`);
    const edges = [
      ...leads.map((l) => edge("desk", l)),
      ...specialists.map((s, i) => edge(leads[i % 7]!, s)),
      // Each specialist hands back to its lead, across to the next department's, and up to the desk.
      ...specialists.flatMap((s, i) => [edge(s, leads[i % 7]!), edge(s, leads[(i + 1) % 7]!, label), edge(s, "desk")]),
    ];
    const result = layout(["desk", ...leads, ...specialists].map(node), edges);
    const columns = new Set([...result.nodes.values()].map((b) => b.x));
    expect(columns.size).toBe(3);
    expect(result.edges.filter((e) => e.reversed)).toHaveLength(42 * 3);
    expect(overlapping(boxesOf(result))).toEqual([]);
  });
});

describe("crossings", () => {
  it("counts the pairs of edges that cross between neighbouring columns", () => {
    const succs = new Map([
      ["a", ["d"]],
      ["b", ["c"]],
      ["c", []],
      ["d", []],
    ]);
    expect(
      crossings(
        [
          ["a", "b"],
          ["c", "d"],
        ],
        succs,
      ),
    ).toBe(1);
    expect(
      crossings(
        [
          ["a", "b"],
          ["d", "c"],
        ],
        succs,
      ),
    ).toBe(0);
  });
});
