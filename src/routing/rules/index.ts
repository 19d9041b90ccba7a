/** The compiled rule tier: compile a registry snapshot once, then `match` each input. */
export { compileRules, type CompiledRuleSet, type CompileOptions, type RuleStats } from "./compile-rules";
export { checkPattern, PATTERN_FLAGS } from "./pattern-safety";
export { requiredFactors, MIN_FACTOR_LENGTH } from "./literal-factors";
export { normalizeKeyword } from "./text";
