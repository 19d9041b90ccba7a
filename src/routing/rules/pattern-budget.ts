/**
 * The work budget of the pattern tier (docs/scaling.md, "The work budget"). A pattern runs on
 * the tier's NFA (`pattern-verifier.ts`), whose work per input code unit is at most its
 * program's charge (`pattern-cost.ts`: each instruction weighted by the measured worst cost of
 * its kind, in ASCII literal steps); so two limits bound a route's pattern work whatever the
 * tenant registers and whatever the input:
 *
 * - PATTERN_BUDGET: the charge of a tenant's admitted pattern programs, summed over its enabled
 *   agents (repetition expanded: `a{3}` is three literals). Admission refuses a registration
 *   past it (PATTERN_BUDGET_EXCEEDED), and the link skips, in registry order, whatever would
 *   pass it (a registry admission never saw: older rows, direct writes).
 * - PATTERN_PREFIX: the pattern tier reads at most this many UTF-16 code units of the input; a
 *   pattern matches when a match lies within them (`$` still means the input's real end).
 *   Keywords and the classifier read the whole input.
 *
 * Each pattern runs at most one pass over the prefix (anchored tries are bounded too, see
 * rule-scanner.ts), so a route's pattern work is at most
 * (MAX_ANCHORED_TRIES + 1) × PATTERN_BUDGET × PATTERN_PREFIX ASCII literal steps; the measured
 * worst case is in docs/scaling.md. The budget is what keeps that worst case, on any alphabet,
 * within 0.5 s of one isolate's time on the development machine.
 */
/** Charge of admitted pattern programs per tenant (enabled agents), in ASCII literal steps. */
export const PATTERN_BUDGET = 131_072;

/** UTF-16 code units of the input the pattern tier reads. */
export const PATTERN_PREFIX = 1024;
