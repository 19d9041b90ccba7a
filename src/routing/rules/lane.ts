/**
 * The isolate's lane for heavy pattern work (docs/scaling.md, "The work budget"). A route whose
 * pattern work could pass SLICE_STEPS runs it in slices, and between two slices waits for its
 * turn here: one slice per macrotask, whoever's it is, in the order they asked. Requests that
 * arrive meanwhile are events of their own and run between two turns; so however many heavy
 * routes are in flight, another request waits for at most about one slice of theirs.
 */

/** Instruction steps of pattern work a route may do before it waits for its turn. */
export const SLICE_STEPS = 1 << 18;

const waiting: (() => void)[] = [];
let scheduled = false;

function pump(): void {
  const next = waiting.shift();
  if (next === undefined) {
    scheduled = false;
    return;
  }
  // The next turn is a timer of its own: events that came in during this slice go first.
  setTimeout(pump, 0);
  next();
}

/** Resolves at this caller's turn in the lane. */
export function nextTurn(): Promise<void> {
  return new Promise((resolve) => {
    waiting.push(resolve);
    if (!scheduled) {
      scheduled = true;
      setTimeout(pump, 0);
    }
  });
}
