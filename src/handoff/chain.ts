import { ok, type Result } from "../errors";
import type { HandoffMode } from "../schemas/handoff";
import { handoffErrors } from "./errors";

/**
 * The handoff chain is a stack (docs/handoffs.md, Modes: transfer and return): root agent first, current agent last.
 * `transfer` pushes the target; `return` pops back to the agent that handed over. So
 * A→B then B returns to A is legal, while A→B→A as transfers is a cycle.
 */

/** Handoffs deep: 0 for a session still with its first agent. */
export function depth(stack: readonly string[]): number {
  return Math.max(0, stack.length - 1);
}

/** The agent holding the session: the top of the stack, or null for an empty stack. */
export function topOf(stack: readonly string[]): string | null {
  return stack.at(-1) ?? null;
}

/** The agent a `return` goes back to (the one below the top), or null when nobody handed over. */
export function returnTarget(stack: readonly string[]): string | null {
  return stack.length >= 2 ? stack[stack.length - 2]! : null;
}

/**
 * The stack after a handoff. Transfer: CIRCULAR_HANDOFF when the target is already on
 * the stack. Return: NOTHING_TO_RETURN when the stack is shorter than 2; a `target` that
 * is given must be the agent that handed over (HANDOFF_NOT_ALLOWED otherwise).
 * Depth limits are the validator's business, not the stack's.
 */
export function nextStack(stack: readonly string[], mode: HandoffMode, target?: string): Result<string[]> {
  if (mode === "transfer") {
    if (target === undefined) throw new TypeError("nextStack: a transfer needs a target");
    if (stack.includes(target)) return { ok: false, error: handoffErrors.circular([...stack, target], target) };
    return ok([...stack, target]);
  }
  const back = returnTarget(stack);
  if (back === null) return { ok: false, error: handoffErrors.nothingToReturn([...stack]) };
  if (target !== undefined && target !== back) {
    return { ok: false, error: handoffErrors.wrongReturnTarget(topOf(stack)!, target, back) };
  }
  return ok(stack.slice(0, -1));
}
