/** The compiled rule tier: compile a registry snapshot once, then `match` each input. */
export {
  type CompiledRuleSet,
  type CompileOptions,
  compileRulePart,
  compileRules,
  linkRuleImage,
  linkRules,
  patternCost,
  type RuleImage,
  type RulePart,
  type RuleStats,
  rulesFromImage,
} from "./compile-rules";
export { MIN_FACTOR_LENGTH, requiredFactors } from "./literal-factors";
export { PATTERN_BUDGET, PATTERN_PREFIX } from "./pattern-budget";
export { checkPattern, PATTERN_FLAGS } from "./pattern-safety";
export { normalizeKeyword } from "./text";
