// A layered layout for directed graphs, drawn left to right (after Sugiyama et al.): cycles
// are broken by turning back edges round, nodes get ranks by longest path, every edge
// crosses a label column (so a label never sits on a node), long edges get waypoints, the
// order within each column is swept by barycenters to cut crossings, and each column's
// boxes are pulled towards their neighbours without overlapping. Pure: no DOM.

const NODE_GAP = 14;
const COLUMN_GAP = 36;
const MARGIN = 8;
const SWEEPS = 8;
/** A waypoint on an edge without a label: thin, so parallel edges stay apart. */
const POINT = { width: 0, height: 6 };

/**
 * @param {{ id: string, width: number, height: number }[]} nodes
 * @param {{ id: string, from: string, to: string, label?: { width: number, height: number } }[]} edges
 * @returns {{ width: number, height: number,
 *   nodes: Map<string, { x: number, y: number, width: number, height: number, rank: number }>,
 *   edges: { id: string, from: string, to: string, reversed: boolean, points: { x: number, y: number }[],
 *     label: { x: number, y: number, width: number, height: number } }[] }}
 */
export function layout(nodes, edges) {
  const known = new Set(nodes.map((n) => n.id));
  const live = edges.filter((e) => known.has(e.from) && known.has(e.to) && e.from !== e.to);
  const reversed = backEdges(nodes, live);
  const dag = live.map((e) => (reversed.has(e.id) ? { ...e, from: e.to, to: e.from } : e));
  const rank = ranks(nodes, dag);

  // Boxes: the nodes on even ranks, each edge's waypoints on the ranks between.
  const boxes = new Map(nodes.map((n) => [n.id, { id: n.id, width: n.width, height: n.height, rank: rank.get(n.id) }]));
  const chains = new Map();
  for (const e of dag) {
    const chain = [e.from];
    for (let r = rank.get(e.from) + 1; r < rank.get(e.to); r++) {
      const id = `${e.id}#${r}`;
      const size = r === rank.get(e.from) + 1 && e.label ? e.label : POINT;
      boxes.set(id, { id, width: size.width, height: size.height, rank: r });
      chain.push(id);
    }
    chain.push(e.to);
    chains.set(e.id, chain);
  }
  const preds = new Map([...boxes.keys()].map((id) => [id, []]));
  const succs = new Map([...boxes.keys()].map((id) => [id, []]));
  for (const chain of chains.values())
    for (let i = 1; i < chain.length; i++) {
      succs.get(chain[i - 1]).push(chain[i]);
      preds.get(chain[i]).push(chain[i - 1]);
    }

  const layers = order(boxes, preds, succs);
  place(layers, boxes, preds, succs);

  const width = Math.max(...[...boxes.values()].map((b) => b.x + b.width), 0) + MARGIN;
  const height = Math.max(...[...boxes.values()].map((b) => b.y + b.height), 0) + MARGIN;
  const placed = new Map(nodes.map((n) => [n.id, pick(boxes.get(n.id))]));
  const routed = live.map((e) => {
    const chain = chains.get(e.id);
    const points = [];
    chain.forEach((id, i) => {
      const b = boxes.get(id);
      const cy = b.y + b.height / 2;
      if (i === 0) points.push({ x: b.x + b.width, y: cy });
      else if (i === chain.length - 1) points.push({ x: b.x, y: cy });
      else points.push({ x: b.x, y: cy }, { x: b.x + b.width, y: cy });
    });
    const label = pick(boxes.get(chain[1]));
    return {
      id: e.id,
      from: e.from,
      to: e.to,
      reversed: reversed.has(e.id),
      points: reversed.has(e.id) ? points.reverse() : points,
      label,
    };
  });
  return { width, height, nodes: placed, edges: routed };
}

const pick = (b) => ({ x: b.x, y: b.y, width: b.width, height: b.height, rank: b.rank });

/**
 * The edges drawn against the flow, so that what is left has no cycle. Only an edge on a
 * cycle is ever turned round: first those leading back towards where the team starts (to an
 * agent fewer hops from an entry point than their source: a return to the desk), then
 * whatever still closes a cycle, found by a depth-first walk. Turning the returns round
 * first keeps a hub-and-spoke team a few columns deep.
 */
function backEdges(nodes, edges) {
  const hops = distances(nodes, edges);
  const group = components(nodes, edges);
  const back = new Set(
    edges.filter((e) => group.get(e.from) === group.get(e.to) && hops.get(e.to) < hops.get(e.from)).map((e) => e.id),
  );
  const out = new Map(nodes.map((n) => [n.id, []]));
  const indegree = new Map(nodes.map((n) => [n.id, 0]));
  for (const e of edges) {
    if (back.has(e.id)) continue;
    out.get(e.from).push(e);
    indegree.set(e.to, indegree.get(e.to) + 1);
  }
  const starts = [...nodes.filter((n) => indegree.get(n.id) === 0), ...nodes].map((n) => n.id);
  const state = new Map(); // 1: on the walk's path, 2: done
  for (const start of starts) {
    if (state.has(start)) continue;
    const stack = [[start, 0]];
    state.set(start, 1);
    while (stack.length > 0) {
      const top = stack[stack.length - 1];
      const edge = out.get(top[0])[top[1]++];
      if (!edge) {
        state.set(top[0], 2);
        stack.pop();
      } else if (state.get(edge.to) === 1) back.add(edge.id);
      else if (!state.has(edge.to)) {
        state.set(edge.to, 1);
        stack.push([edge.to, 0]);
      }
    }
  }
  return back;
}

/** Strongly connected components (Tarjan's, without recursion): node id → component number. */
function components(nodes, edges) {
  const out = new Map(nodes.map((n) => [n.id, []]));
  for (const e of edges) out.get(e.from).push(e.to);
  const index = new Map();
  const low = new Map();
  const group = new Map();
  const stack = [];
  let counter = 0;
  for (const root of nodes.map((n) => n.id)) {
    if (index.has(root)) continue;
    const walk = [[root, 0]];
    index.set(root, counter);
    low.set(root, counter++);
    stack.push(root);
    while (walk.length > 0) {
      const top = walk[walk.length - 1];
      const [id] = top;
      const next = out.get(id)[top[1]++];
      if (next !== undefined) {
        if (!index.has(next)) {
          index.set(next, counter);
          low.set(next, counter++);
          stack.push(next);
          walk.push([next, 0]);
        } else if (!group.has(next)) low.set(id, Math.min(low.get(id), index.get(next)));
        continue;
      }
      walk.pop();
      if (walk.length > 0) {
        const parent = walk[walk.length - 1][0];
        low.set(parent, Math.min(low.get(parent), low.get(id)));
      }
      if (low.get(id) === index.get(id)) {
        let member;
        do {
          member = stack.pop();
          group.set(member, id);
        } while (member !== id);
      }
    }
  }
  return group;
}

/**
 * Hops from the entry points: the agents nobody hands to (or, in a part of the team that is
 * all cycles, its hub: the one handing to the most others, then taking from the fewest), breadth first.
 */
function distances(nodes, edges) {
  const out = new Map(nodes.map((n) => [n.id, []]));
  const into = new Map(nodes.map((n) => [n.id, 0]));
  for (const e of edges) {
    out.get(e.from).push(e.to);
    into.set(e.to, into.get(e.to) + 1);
  }
  const hub = (a, b) => out.get(b).length - out.get(a).length || into.get(a) - into.get(b);
  const entered = new Set(edges.map((e) => e.to));
  const hops = new Map();
  const walk = (roots) => {
    const queue = [...roots];
    for (const r of roots) hops.set(r, 0);
    while (queue.length > 0) {
      const id = queue.shift();
      for (const next of out.get(id))
        if (!hops.has(next)) {
          hops.set(next, hops.get(id) + 1);
          queue.push(next);
        }
    }
  };
  walk(nodes.map((n) => n.id).filter((id) => !entered.has(id)));
  for (;;) {
    const left = nodes.map((n) => n.id).filter((id) => !hops.has(id));
    if (left.length === 0) return hops;
    walk([left.reduce((best, id) => (hub(id, best) < 0 ? id : best))]);
  }
}

/** Longest-path ranks (doubled: labels sit on the odd ranks between), sources pulled next to what they feed. */
function ranks(nodes, dag) {
  const rank = new Map(nodes.map((n) => [n.id, 0]));
  const indegree = new Map(nodes.map((n) => [n.id, 0]));
  for (const e of dag) indegree.set(e.to, indegree.get(e.to) + 1);
  const queue = nodes.filter((n) => indegree.get(n.id) === 0).map((n) => n.id);
  const topo = [];
  while (queue.length > 0) {
    const id = queue.shift();
    topo.push(id);
    for (const e of dag)
      if (e.from === id) {
        rank.set(e.to, Math.max(rank.get(e.to), rank.get(id) + 1));
        indegree.set(e.to, indegree.get(e.to) - 1);
        if (indegree.get(e.to) === 0) queue.push(e.to);
      }
  }
  for (const id of topo.reverse()) {
    const next = dag.filter((e) => e.from === id).map((e) => rank.get(e.to));
    const fed = dag.some((e) => e.to === id);
    if (!fed && next.length > 0) rank.set(id, Math.min(...next) - 1);
  }
  for (const [id, r] of rank) rank.set(id, r * 2);
  return rank;
}

/** Columns ordered to cut crossings: barycenter sweeps down and up, keeping the best order seen. */
function order(boxes, preds, succs) {
  const count = Math.max(...[...boxes.values()].map((b) => b.rank), 0) + 1;
  let layers = Array.from({ length: count }, () => []);
  for (const b of boxes.values()) layers[b.rank].push(b.id);
  let best = layers.map((l) => [...l]);
  let fewest = crossings(best, succs);
  for (let sweep = 0; sweep < SWEEPS && fewest > 0; sweep++) {
    const down = sweep % 2 === 0;
    const range = down ? [...Array(count).keys()].slice(1) : [...Array(count).keys()].reverse().slice(1);
    for (const r of range) {
      const fixed = layers[down ? r - 1 : r + 1];
      const at = new Map(fixed.map((id, i) => [id, i]));
      const weight = (id, i) => {
        const near = (down ? preds : succs).get(id).filter((n) => at.has(n));
        return near.length === 0 ? i : near.reduce((s, n) => s + at.get(n), 0) / near.length;
      };
      const keyed = layers[r].map((id, i) => [id, weight(id, i), i]);
      keyed.sort((a, b) => a[1] - b[1] || a[2] - b[2]);
      layers[r] = keyed.map((k) => k[0]);
    }
    const found = crossings(layers, succs);
    if (found < fewest) {
      fewest = found;
      best = layers.map((l) => [...l]);
    } else layers = best.map((l) => [...l]);
  }
  return best;
}

/** Pairs of edges that cross between neighbouring columns. */
export function crossings(layers, succs) {
  let total = 0;
  for (let r = 0; r + 1 < layers.length; r++) {
    const at = new Map(layers[r + 1].map((id, i) => [id, i]));
    const ends = layers[r].flatMap((id, i) => succs.get(id).map((s) => [i, at.get(s)]));
    for (let a = 0; a < ends.length; a++)
      for (let b = a + 1; b < ends.length; b++) if ((ends[a][0] - ends[b][0]) * (ends[a][1] - ends[b][1]) < 0) total++;
  }
  return total;
}

/**
 * Columns left to right; within a column, boxes in their order as close as they can be to
 * the middle of their neighbours (a least-squares fit under the no-overlap constraints).
 */
function place(layers, boxes, preds, succs) {
  let x = MARGIN;
  for (const layer of layers) {
    const width = Math.max(...layer.map((id) => boxes.get(id).width), 0);
    for (const id of layer) {
      const b = boxes.get(id);
      b.x = x + (width - b.width) / 2;
    }
    x += width + COLUMN_GAP;
  }
  const centre = (id) => boxes.get(id).y + boxes.get(id).height / 2;
  for (const layer of layers) pack(layer, boxes, () => 0);
  const passes = [preds, succs, preds, succs, null, null];
  for (const near of passes) {
    const order = near === succs ? [...layers].reverse() : layers;
    for (const layer of order)
      pack(layer, boxes, (id) => {
        const ns = near ? near.get(id) : [...preds.get(id), ...succs.get(id)];
        return ns.length === 0 ? centre(id) : ns.reduce((s, n) => s + centre(n), 0) / ns.length;
      });
  }
  const top = Math.min(...[...boxes.values()].map((b) => b.y));
  for (const b of boxes.values()) b.y += MARGIN - top;
}

/**
 * Places one column's boxes, in order and NODE_GAP apart, minimising the squared distance
 * of each centre from where it wants to be: boxes that would overlap merge into a block
 * placed at the mean of its members' wishes (pool adjacent violators).
 */
function pack(ids, boxes, want) {
  const blocks = [];
  for (const id of ids) {
    const b = boxes.get(id);
    let block = { ids: [id], offsets: [0], height: b.height, sum: want(id) - b.height / 2, n: 1 };
    block.top = block.sum;
    while (blocks.length > 0) {
      const prev = blocks[blocks.length - 1];
      if (prev.top + prev.height + NODE_GAP <= block.top) break;
      const shift = prev.height + NODE_GAP;
      prev.ids.push(...block.ids);
      prev.offsets.push(...block.offsets.map((o) => o + shift));
      prev.sum += block.sum - block.n * shift;
      prev.n += block.n;
      prev.height = shift + block.height;
      prev.top = prev.sum / prev.n;
      block = blocks.pop();
    }
    blocks.push(block);
  }
  for (const block of blocks) for (const [i, id] of block.ids.entries()) boxes.get(id).y = block.top + block.offsets[i];
}
