/** The pure handoff domain (docs/handoffs.md): what the Durable Objects call. */

export { depth, nextStack, returnTarget, topOf } from "./chain";
export { type BuildContextInput, buildHandoffContext, handoffPreamble, PREAMBLE_JSON_LIMIT } from "./context";
export { handoffErrors } from "./errors";
export {
  applyFilters,
  describeFilters,
  dropHistory,
  type FilterSpec,
  type HistoryFilter,
  historyFilters,
  isToolItem,
  keepHistory,
  redactPiiItems,
  removeToolItems,
} from "./filters";
export { commandAfterValidation, commandOnSessionEnd, type Recovery, recoveryOf } from "./flow-rules";
export { luhnValid, PII_TOKENS, redactPii } from "./pii";
export { ValidatedHandoff } from "./plan";
export {
  type Advanced,
  advance,
  HandoffRow,
  HandoffStep,
  handoffError,
  inFlightOf,
  maxDepthOf,
  must,
  newHandoff,
  newHandoffId,
  type StepContext,
  sessionOfHandoff,
  stored,
  switchedSession,
} from "./record";
export {
  allowedCommands,
  commandAfterTimeout,
  HANDOFF_AUDIT_ACTIONS,
  HANDOFF_TABLE,
  type HandoffAuditAction,
  HandoffCommand,
  type HandoffCommandInput,
  type HandoffEffect,
  type HandoffMachineState,
  initiate,
  type TransitionResult,
  transition,
} from "./state-machine";
export {
  HANDOFF_STATUSES,
  isOpen,
  isOrphanable,
  isTerminal,
  OPEN_STATUSES,
  ORPHANABLE_STATUSES,
  TERMINAL_STATUSES,
} from "./statuses";
export {
  type CandidateReport,
  DEFAULT_MAX_DEPTH,
  type HandoffValidationInput,
  type SessionSnapshot,
  validateHandoff,
} from "./validate";
