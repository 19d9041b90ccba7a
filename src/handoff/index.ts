/** The pure handoff domain (design §4): what the Durable Objects call. */
export { commandAfterValidation, commandOnSessionEnd, recoveryOf, type Recovery } from "./flow-rules";
export { ValidatedHandoff } from "./plan";
export {
  advance,
  handoffError,
  HandoffRow,
  HandoffStep,
  inFlightOf,
  maxDepthOf,
  must,
  newHandoff,
  newHandoffId,
  sessionOfHandoff,
  stored,
  switchedSession,
  type Advanced,
  type StepContext,
} from "./record";
export { HANDOFF_STATUSES, isOpen, isOrphanable, isTerminal, OPEN_STATUSES, ORPHANABLE_STATUSES, TERMINAL_STATUSES } from "./statuses";
export { depth, nextStack, returnTarget, topOf } from "./chain";
export { buildHandoffContext, handoffPreamble, PREAMBLE_JSON_LIMIT, type BuildContextInput } from "./context";
export { handoffErrors } from "./errors";
export {
  applyFilters,
  describeFilters,
  dropHistory,
  historyFilters,
  isToolItem,
  keepHistory,
  redactPiiItems,
  removeToolItems,
  type FilterSpec,
  type HistoryFilter,
} from "./filters";
export { luhnValid, PII_TOKENS, redactPii } from "./pii";
export {
  allowedCommands,
  commandAfterTimeout,
  HANDOFF_AUDIT_ACTIONS,
  HANDOFF_TABLE,
  HandoffCommand,
  initiate,
  transition,
  type HandoffAuditAction,
  type HandoffCommandInput,
  type HandoffEffect,
  type HandoffMachineState,
  type TransitionResult,
} from "./state-machine";
export {
  DEFAULT_MAX_DEPTH,
  validateHandoff,
  type CandidateReport,
  type HandoffValidationInput,
  type SessionSnapshot,
} from "./validate";
