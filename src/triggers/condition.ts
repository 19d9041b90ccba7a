import { err, ok, type Result } from "../errors";
import { ConditionSyntaxError } from "./condition-lexer";
import { type ConditionNode, MAX_CONDITION_DEPTH, MAX_CONDITION_LENGTH, parseCondition } from "./condition-parser";

/**
 * Condition expressions over session state (docs/handoffs.md, Conditions): a safe language, compiled once
 * to a plain-data AST and evaluated by a tree walk — never `eval` or `Function`.
 *
 * Syntax: names with dot paths (`user.tier`, `items.0.price`), numbers (`-` only before a
 * number literal), strings in '…' or "…" with escapes (\\ \' \" \n \t \r \/ \0 \uXXXX),
 * `true`, `false`, `null`, `== != < > <= >=`, `and or not` (also `&& || !`), parentheses.
 * At most 2,000 characters and 32 levels of nesting.
 *
 * Semantics:
 * - A path reads own properties only; `__proto__`, `constructor` and `prototype` are not
 *   names at all (INVALID_CONDITION: state keys cannot be them either). A segment through a
 *   non-object, or an unknown name, gives undefined.
 * - `==` is strict (no coercion: `1 == "1"` is false); arrays and objects compare by value.
 * - Missing values never satisfy a comparison — every comparison with undefined is false —
 *   except `x == null`, which is true when x is missing or null. So `x != null` means
 *   "x is present and not null", and both `missing == 5` and `missing != 5` are false.
 * - `< > <= >=` compare two numbers, or two strings (by UTF-16 code units); any other pair is false.
 * - An operand used as a boolean (`user.vip`, `not cart.items`) is false when it is
 *   undefined, null, false, 0 or "", and true otherwise.
 * - `and`/`or` short-circuit and yield booleans.
 */

/** A compiled condition: its source and AST (plain data). */
export interface Condition {
  source: string;
  root: ConditionNode;
}

export { type ConditionNode, MAX_CONDITION_DEPTH, MAX_CONDITION_LENGTH };

/** Details of an INVALID_CONDITION error. */
export interface ConditionErrorDetails {
  condition: string;
  /** 0-based character offset. */
  position: number;
  expected: string;
  found: string;
}

/** Compiles a condition, or INVALID_CONDITION with the position and the expected token. */
export function compileCondition(source: string): Result<Condition> {
  try {
    return ok({ source, root: parseCondition(source) });
  } catch (cause) {
    if (!(cause instanceof ConditionSyntaxError)) throw cause;
    const details: ConditionErrorDetails = {
      condition: source.length > 200 ? `${source.slice(0, 200)}…` : source,
      position: cause.position,
      expected: cause.expected,
      found: cause.found,
    };
    return err("INVALID_CONDITION", cause.message, details);
  }
}

const CACHE_LIMIT = 256;
const cache = new Map<string, Result<Condition>>();

/**
 * `compileCondition` memoized per isolate (bounded, oldest evicted first): agent
 * definitions repeat the same few conditions on every handoff.
 */
export function compileConditionCached(source: string): Result<Condition> {
  const hit = cache.get(source);
  if (hit) return hit;
  const compiled = compileCondition(source);
  if (cache.size >= CACHE_LIMIT) cache.delete(cache.keys().next().value!);
  cache.set(source, compiled);
  return compiled;
}

/** Evaluates a compiled condition against a state object. Never throws. */
export function evaluateCondition(condition: Condition, state: Record<string, unknown>): boolean {
  return truthy(evaluate(condition.root, state));
}

/** Compiles (cached) and evaluates in one call: INVALID_CONDITION, or the boolean. */
export function checkCondition(source: string, state: Record<string, unknown>): Result<boolean> {
  const compiled = compileConditionCached(source);
  return compiled.ok ? ok(evaluateCondition(compiled.value, state)) : compiled;
}

/** The dotted paths a condition reads, in order of first appearance (for error details). */
export function conditionPaths(condition: Condition): string[] {
  const seen = new Set<string>();
  const walk = (node: ConditionNode): void => {
    switch (node.type) {
      case "path":
        seen.add(node.path.join("."));
        return;
      case "compare":
        walk(node.left);
        walk(node.right);
        return;
      case "and":
      case "or":
        node.operands.forEach(walk);
        return;
      case "not":
        walk(node.operand);
        return;
      case "literal":
        return;
    }
  };
  walk(condition.root);
  return [...seen];
}

/** Reads a dotted path from state with the language's rules (own properties only). */
export function readPath(state: unknown, path: readonly string[]): unknown {
  let value: unknown = state;
  for (const segment of path) {
    if (value === null || typeof value !== "object" || !Object.hasOwn(value, segment)) return undefined;
    value = (value as Record<string, unknown>)[segment];
  }
  return value;
}

function evaluate(node: ConditionNode, state: Record<string, unknown>): unknown {
  switch (node.type) {
    case "literal":
      return node.value;
    case "path":
      return readPath(state, node.path);
    case "not":
      return !truthy(evaluate(node.operand, state));
    case "and":
      return node.operands.every((operand) => truthy(evaluate(operand, state)));
    case "or":
      return node.operands.some((operand) => truthy(evaluate(operand, state)));
    case "compare":
      return compare(node.op, evaluate(node.left, state), evaluate(node.right, state));
  }
}

function compare(op: string, left: unknown, right: unknown): boolean {
  if (left === undefined || right === undefined) {
    return op === "==" && (left ?? null) === null && (right ?? null) === null;
  }
  switch (op) {
    case "==":
      return equal(left, right);
    case "!=":
      return !equal(left, right);
    default:
      return order(op, left, right);
  }
}

function order(op: string, left: unknown, right: unknown): boolean {
  const comparable =
    (typeof left === "number" && typeof right === "number") || (typeof left === "string" && typeof right === "string");
  if (!comparable) return false;
  const a = left as number | string;
  const b = right as number | string;
  switch (op) {
    case "<":
      return a < b;
    case ">":
      return a > b;
    case "<=":
      return a <= b;
    default:
      return a >= b;
  }
}

/** Structural equality; values nested deeper than 64 levels compare unequal rather than overflow the stack. */
function equal(a: unknown, b: unknown, depth = 0): boolean {
  if (a === b) return true;
  if (depth > 64) return false;
  if (a === null || b === null || typeof a !== "object" || typeof b !== "object") return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const keysA = Object.keys(a);
  const keysB = Object.keys(b);
  if (keysA.length !== keysB.length) return false;
  return keysA.every(
    (key) =>
      Object.hasOwn(b, key) &&
      equal((a as Record<string, unknown>)[key], (b as Record<string, unknown>)[key], depth + 1),
  );
}

function truthy(value: unknown): boolean {
  return !(
    value === undefined ||
    value === null ||
    value === false ||
    value === 0 ||
    value === "" ||
    Number.isNaN(value)
  );
}
