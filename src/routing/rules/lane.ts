/**
 * The isolate's lane for heavy pattern work (docs/scaling.md, "The work budget"). A route whose
 * pattern work could pass SLICE_STEPS runs it in slices, and between two slices waits for its
 * turn here: the routes waiting form one queue, and only the one at its head runs a slice.
 * Each waiting route polls with a zero-delay timer of its own (a Worker's request may only be
 * woken by its own events), so the routes' timers and the requests that arrive meanwhile
 * alternate in the event loop: however many heavy routes are in flight, another request waits
 * for about one slice of theirs.
 */

/** Charged steps of pattern work (pattern-cost.ts) a route may do before it waits for its turn. */
export const SLICE_STEPS = 1 << 16;

interface Waiter {
  /** The poll count when this waiter last looked. */
  seen: number;
}

const queue: Waiter[] = [];
let polls = 0;

const poll = () => new Promise<void>((resolve) => setTimeout(resolve, 0));

/** Resolves at this caller's turn: when it is at the head of the queue. */
export async function nextTurn(): Promise<void> {
  const me: Waiter = { seen: polls };
  queue.push(me);
  try {
    for (;;) {
      await poll();
      me.seen = ++polls;
      const head = queue[0];
      if (head === me) return;
      // A head that stopped polling (its request went away) must not hold the lane.
      if (head !== undefined && polls - head.seen > 8 * queue.length) queue.shift();
    }
  } finally {
    const at = queue.indexOf(me);
    if (at >= 0) queue.splice(at, 1);
  }
}
