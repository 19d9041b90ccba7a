/** The pure handoff domain (design §4): what the Durable Objects call. */
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
  isTerminal,
  TERMINAL_STATUSES,
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
  type ValidatedHandoff,
} from "./validate";
