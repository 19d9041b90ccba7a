/**
 * The one list of handoff statuses and what each means to the rest of the system. The
 * zod enum, the transition table, the SQL CHECK constraint and every SQL filter derive
 * from `HANDOFF_STATUS_CLASS`; no status list is written out anywhere else.
 *
 * - `running`: only a flow running in some instance puts a handoff here; found with no
 *   flow running, it is a crash's leftover (an orphan) and recovery ends it.
 * - `waiting`: parked on purpose (graceful, until the source is idle or its deadline).
 * - `terminal`: never left.
 */
export const HANDOFF_STATUS_CLASS = {
  initiated: "running",
  validating: "running",
  pending: "waiting",
  transferring: "running",
  completed: "terminal",
  failed: "terminal",
  rolled_back: "terminal",
  timed_out: "running",
  cancelled: "terminal",
  escalated: "terminal",
} as const;

export type HandoffStatusName = keyof typeof HANDOFF_STATUS_CLASS;
export type HandoffStatusClass = (typeof HANDOFF_STATUS_CLASS)[HandoffStatusName];

/** Every status, in lifecycle order (the zod enum's order). */
export const HANDOFF_STATUSES = Object.keys(HANDOFF_STATUS_CLASS) as [HandoffStatusName, ...HandoffStatusName[]];

const withClass = (...classes: HandoffStatusClass[]): readonly HandoffStatusName[] =>
  HANDOFF_STATUSES.filter((s) => (classes as string[]).includes(HANDOFF_STATUS_CLASS[s]));

/** Statuses that hold the session's handoff lock. */
export const OPEN_STATUSES = withClass("running", "waiting");
/** Open statuses no flow should be left in: after a crash, recovery ends them. */
export const ORPHANABLE_STATUSES = withClass("running");
/** Statuses a handoff never leaves. */
export const TERMINAL_STATUSES = withClass("terminal");

export const isOpen = (status: HandoffStatusName): boolean => HANDOFF_STATUS_CLASS[status] !== "terminal";
export const isOrphanable = (status: HandoffStatusName): boolean => HANDOFF_STATUS_CLASS[status] === "running";
export const isTerminal = (status: HandoffStatusName): boolean => HANDOFF_STATUS_CLASS[status] === "terminal";

/**
 * A status list as an SQL literal list, `('a', 'b')`, for CHECK constraints and filters (names are
 * fixed identifiers).
 */
export function sqlList(statuses: readonly HandoffStatusName[]): string {
  return `(${statuses.map((s) => `'${s}'`).join(", ")})`;
}
