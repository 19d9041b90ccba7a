import { describe, expect, it } from "vitest";
import {
  cycleAgents,
  onProbe,
  type Probe,
  startProbes,
  victimOf,
  type WaitEdge,
} from "../../src/collaboration/deadlock";

/**
 * Edge-chasing over a simulated set of agents: each agent knows only its own outgoing
 * edges, and probes travel as messages between them, as they would between AgentDOs.
 * Every waiting agent starts probes (as its alarm would); the victims chosen must break
 * exactly the cycles.
 */

let t = 0;
const edge = (from: string, to: string): WaitEdge => ({ from, to, since: ++t, message_id: `msg_${from}_${to}` });

/** Runs every waiting agent's probes to quiescence; returns each detected cycle's victim edge and the messages sent. */
function simulate(edges: WaitEdge[]): { victims: WaitEdge[]; cycles: string[][]; messages: number } {
  const owned = (agent: string) => edges.filter((e) => e.from === agent);
  const queue: { to: string; probe: Probe }[] = [];
  for (const agent of new Set(edges.map((e) => e.from))) queue.push(...startProbes(agent, owned(agent)));
  const victims = new Map<string, WaitEdge>();
  const cycles: string[][] = [];
  let messages = 0;
  while (queue.length > 0) {
    const { to, probe } = queue.shift()!;
    messages++;
    const step = onProbe(to, probe, owned(to));
    if (step.cycle) {
      const victim = victimOf(step.cycle);
      if (!victims.has(victim.message_id)) cycles.push(cycleAgents(step.cycle));
      victims.set(victim.message_id, victim);
    }
    queue.push(...step.forward);
  }
  return { victims: [...victims.values()], cycles, messages };
}

describe("deadlock detection by edge-chasing probes", () => {
  it("breaks a 2-agent cycle at its earliest waiter", () => {
    const ab = edge("a", "b");
    const ba = edge("b", "a");
    const { victims, cycles } = simulate([ab, ba]);
    expect(victims).toEqual([ab]);
    expect(cycles).toEqual([["a", "b"]]);
  });

  it("breaks a 3-agent and a 5-agent cycle, once each", () => {
    const three = [edge("c", "d"), edge("d", "e"), edge("e", "c")];
    const five = [edge("p", "q"), edge("q", "r"), edge("r", "s"), edge("s", "u"), edge("u", "p")];
    const { victims, cycles } = simulate([...three, ...five]);
    expect(victims.map((v) => v.from).sort()).toEqual(["c", "p"]);
    expect(cycles.map((c) => c.length).sort()).toEqual([3, 5]);
    expect(cycles.find((c) => c.length === 5)).toEqual(["p", "q", "r", "s", "u"]);
  });

  it("a chain with no cycle breaks nothing", () => {
    const { victims } = simulate([edge("w", "x"), edge("x", "y"), edge("y", "z")]);
    expect(victims).toEqual([]);
  });

  it("a chain leading into a cycle breaks only the cycle; the chain's agents are not victims", () => {
    const tail = edge("h", "i");
    const loop = [edge("i", "j"), edge("j", "i")];
    const { victims } = simulate([tail, ...loop]);
    expect(victims).toEqual([loop[0]]);
  });

  it("the earliest waiter is chosen whichever member detects the cycle", () => {
    const late = { from: "m", to: "n", since: 500, message_id: "late" };
    const early = { from: "n", to: "o", since: 100, message_id: "early" };
    const mid = { from: "o", to: "m", since: 300, message_id: "mid" };
    for (const rotation of [
      [late, early, mid],
      [early, mid, late],
      [mid, late, early],
    ])
      expect(victimOf(rotation)).toBe(early);
    expect(cycleAgents([late, early, mid])).toEqual(["n", "o", "m"]);
  });

  it("a probe back at an agent it passed (not its initiator) stops there", () => {
    const step = onProbe("b", { initiator: "a", edges: [edge("a", "b"), edge("b", "c"), edge("c", "b")] }, [
      edge("b", "c"),
    ]);
    expect(step).toEqual({ cycle: null, forward: [] });
  });
});
