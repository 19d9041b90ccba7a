/** The compiled rule tier: compile a registry snapshot once, then `match` each input. */
export { type CompiledRuleSet, type CompileOptions, compileRules, type RuleStats } from "./compile-rules";
export { MIN_FACTOR_LENGTH, requiredFactors } from "./literal-factors";
export { checkPattern, PATTERN_FLAGS } from "./pattern-safety";
export { normalizeKeyword } from "./text";
