import { describe, expect, it } from "vitest";
import {
  type ConditionErrorDetails,
  checkCondition,
  compileCondition,
  compileConditionCached,
  conditionPaths,
  evaluateCondition,
  MAX_CONDITION_DEPTH,
  MAX_CONDITION_LENGTH,
  readPath,
} from "../../src/triggers/condition";

const STATE = {
  user: { tier: "gold", age: 42, vip: true, email: "", nick: null, tags: ["a", "b"] },
  cart: { total: 129.5, items: [{ price: 10 }, { price: 119.5 }], currency: "EUR" },
  count: 0,
  flag: false,
  name: "O'Brien",
  "weird-key": 1,
};

function evalOk(src: string, state: Record<string, unknown> = STATE): boolean {
  const compiled = compileCondition(src);
  if (!compiled.ok) throw new Error(`${src}: ${compiled.error.message}`);
  return evaluateCondition(compiled.value, state);
}

function compileError(src: string): ConditionErrorDetails & { message: string } {
  const compiled = compileCondition(src);
  if (compiled.ok) throw new Error(`${src} compiled`);
  expect(compiled.error.code).toBe("INVALID_CONDITION");
  return { ...(compiled.error.details as ConditionErrorDetails), message: compiled.error.message };
}

describe("condition grammar", () => {
  it.each([
    ["user.tier == 'gold'", true],
    ['user.tier == "gold"', true],
    ["user.tier != 'gold'", false],
    ["cart.total > 100", true],
    ["cart.total >= 129.5", true],
    ["cart.total < 129.5", false],
    ["cart.total <= 129.5", true],
    ["cart.items.1.price == 119.5", true],
    ["user.age > -1", true],
    ["user.age == 4.2e1", true],
    ["user.vip == true", true],
    ["flag == false", true],
    ["user.nick == null", true],
    ["user.tier == 'gold' and cart.total > 100", true],
    ["user.tier == 'gold' && cart.total > 1000", false],
    ["user.tier == 'silver' or cart.total > 100", true],
    ["user.tier == 'silver' || cart.total > 1000", false],
    ["not user.vip", false],
    ["!flag", true],
    ["not not user.vip", true],
    ["(user.tier == 'silver' or user.tier == 'gold') and not (cart.total < 10)", true],
    ["user.tier == 'silver' or user.tier == 'gold' and cart.total < 10", false],
    ["true", true],
    ["false or null", false],
    ["name == 'O\\'Brien'", true],
    ['name == "O\'Brien"', true],
    ["'a\\tb' == 'a\tb'", true],
    ["'\\u0041' == 'A'", true],
    ["user.tags == user.tags", true],
    ["  user.tier\n==\t'gold'  ", true],
  ])("%s → %s", (src, expected) => {
    expect(evalOk(src)).toBe(expected);
  });

  it("binds and tighter than or, and not tighter than and", () => {
    expect(evalOk("true or false and false")).toBe(true);
    expect(evalOk("(true or false) and false")).toBe(false);
    expect(evalOk("not false and false")).toBe(false);
    expect(evalOk("not (false and false)")).toBe(true);
  });

  it("short-circuits and/or", () => {
    expect(evalOk("flag and missing.deep > 1")).toBe(false);
    expect(evalOk("user.vip or missing.deep > 1")).toBe(true);
  });
});

describe("condition semantics", () => {
  it("treats unknown names as missing: every comparison is false except == null", () => {
    expect(evalOk("missing == null")).toBe(true);
    expect(evalOk("missing != null")).toBe(false);
    expect(evalOk("missing == 5")).toBe(false);
    expect(evalOk("missing != 5")).toBe(false);
    expect(evalOk("missing < 5")).toBe(false);
    expect(evalOk("missing >= 5")).toBe(false);
    expect(evalOk("user.tier.deeper == 'x'")).toBe(false);
    expect(evalOk("missing == missing")).toBe(true);
    expect(evalOk("not missing")).toBe(true);
  });

  it("tells present null from missing with != null", () => {
    expect(evalOk("user.nick != null")).toBe(false);
    expect(evalOk("user.tier != null")).toBe(true);
    expect(evalOk("user.nick != 5")).toBe(true);
  });

  it("does not coerce types", () => {
    expect(evalOk("count == 0")).toBe(true);
    expect(evalOk("count == '0'")).toBe(false);
    expect(evalOk("count == false")).toBe(false);
    expect(evalOk("user.age < '50'")).toBe(false);
    expect(evalOk("user.age > '5'")).toBe(false);
    expect(evalOk("flag < true")).toBe(false);
  });

  it("orders strings by code units", () => {
    expect(evalOk("user.tier > 'bronze'")).toBe(true);
    expect(evalOk("'Z' < 'a'")).toBe(true);
  });

  it("uses truthiness for bare operands", () => {
    expect(evalOk("user.email")).toBe(false);
    expect(evalOk("count")).toBe(false);
    expect(evalOk("user.tier")).toBe(true);
    expect(evalOk("user.tags")).toBe(true);
    expect(evalOk("user.nick")).toBe(false);
  });

  it("compares arrays and objects by value", () => {
    const state = { a: { x: [1, 2] }, b: { x: [1, 2] }, c: { x: [2, 1] } };
    expect(evalOk("a == b", state)).toBe(true);
    expect(evalOk("a == c", state)).toBe(false);
    expect(evalOk("a != c", state)).toBe(true);
  });

  it("never reads through the prototype", () => {
    expect(evalOk("user.toString == null")).toBe(true);
    expect(evalOk("hasOwnProperty == null", {})).toBe(true);
    expect(evalOk("user.tags.length == 2")).toBe(true);
    expect(readPath({ a: "str" }, ["a", "length"])).toBeUndefined();
  });

  it.each([
    ["__proto__ == 1", 0, "__proto__"],
    ["constructor", 0, "constructor"],
    ["user.__proto__.x == null", 5, "__proto__"],
    ["a == 1 and user.prototype", 16, "prototype"],
    ["items.0.constructor != null", 8, "constructor"],
  ])("refuses the reserved name in %j (INVALID_CONDITION at its segment)", (src, position, name) => {
    const error = compileError(src);
    expect(error).toMatchObject({ position, found: `'${name}'` });
    expect(error.expected).toContain("a name other than __proto__, constructor, prototype");
  });

  it("lists the paths a condition reads", () => {
    const compiled = compileCondition("user.tier == 'gold' and (cart.total > 10 or user.tier != null) and not flag");
    expect(compiled.ok && conditionPaths(compiled.value)).toEqual(["user.tier", "cart.total", "flag"]);
  });

  it("compiles to plain data that survives JSON", () => {
    const compiled = compileCondition("a.b == 1 and not c");
    if (!compiled.ok) throw new Error("compile");
    const copy = JSON.parse(JSON.stringify(compiled.value));
    expect(evaluateCondition(copy, { a: { b: 1 }, c: false })).toBe(true);
  });

  it("caches compilations and reports errors through checkCondition", () => {
    expect(compileConditionCached("x == 1")).toBe(compileConditionCached("x == 1"));
    expect(checkCondition("x == 1", { x: 1 })).toEqual({ ok: true, value: true });
    expect(checkCondition("x ==", { x: 1 })).toMatchObject({ ok: false, error: { code: "INVALID_CONDITION" } });
  });

  it("keeps the cache bounded, evicting the oldest entry first", () => {
    const first = compileConditionCached("n == 0");
    const recent = () => compileConditionCached("n == 599");
    for (let i = 1; i < 600; i++) compileConditionCached(`n == ${i}`);
    const kept = recent();
    expect(recent()).toBe(kept);
    // The oldest entry was evicted: compiling it again gives a new (equal) result.
    const again = compileConditionCached("n == 0");
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
    expect(checkCondition("n == 0", { n: 0 })).toEqual({ ok: true, value: true });
  });
});

describe("condition errors", () => {
  it.each([
    ["", 0, "an expression", "end of input"],
    ["user.tier ==", 12, "a value, a name, 'not' or '('", "end of input"],
    ["user.tier = 'gold'", 10, "'==' (a single '=' is not an operator)", '"="'],
    ["user.tier === 'gold'", 12, "a value", '"="'],
    ["(a == 1", 7, "')'", "end of input"],
    ["a == 1)", 6, "end of input (unbalanced ')')", "')'"],
    ["a < b < c", 6, "'and', 'or' or ')' (comparisons do not chain)", "'<'"],
    ["a b", 2, "'and', 'or', a comparison or end of input", "'b'"],
    ["'abc", 4, "closing '", "end of input"],
    ["'a\\qb'", 3, "an escape (\\\\ \\' \\\" \\n \\t \\r \\/ \\0 \\uXXXX)", '"q"'],
    ["'\\u12g4'", 3, "4 hex digits after \\u", '"1"'],
    ["a. == 1", 2, "a name after '.'", '" "'],
    ["a == 1.2.3", 8, "an operator after a number", '"."'],
    ["a == 12abc", 7, "an operator after a number", '"a"'],
    ["a == 1e", 7, "digits of an exponent", "end of input"],
    ["a == - b", 7, "a number after '-'", "'b'"],
    ["a # b", 2, "a value, an operator or '('", '"#"'],
    ["true.x", 4, "an operator after 'true'", "'.'"],
    ["and", 0, "a value, a name, 'not' or '('", "'and'"],
  ])("%j fails at %i", (src, position, expected, found) => {
    const details = compileError(src);
    expect(details).toMatchObject({ position, expected, found });
    expect(details.message).toContain(`position ${position}`);
  });

  it(`limits the length to ${MAX_CONDITION_LENGTH} characters`, () => {
    const long = `a == '${"x".repeat(MAX_CONDITION_LENGTH)}'`;
    expect(compileError(long).expected).toBe(`at most ${MAX_CONDITION_LENGTH} characters`);
    const fits = `a == '${"x".repeat(MAX_CONDITION_LENGTH - 7)}'`;
    expect(compileCondition(fits).ok).toBe(true);
  });

  it(`limits nesting to ${MAX_CONDITION_DEPTH} levels`, () => {
    const nested = (n: number) => `${"(".repeat(n)}a${")".repeat(n)}`;
    expect(compileCondition(nested(MAX_CONDITION_DEPTH)).ok).toBe(true);
    expect(compileError(nested(MAX_CONDITION_DEPTH + 1)).expected).toBe(
      `at most ${MAX_CONDITION_DEPTH} levels of nesting`,
    );
    expect(compileCondition(`${"not ".repeat(MAX_CONDITION_DEPTH)}a`).ok).toBe(true);
    expect(compileCondition(`${"! ".repeat(MAX_CONDITION_DEPTH + 1)}a`).ok).toBe(false);
  });

  it("flattens long and/or chains instead of nesting them", () => {
    const short = Array.from({ length: 140 }, (_, i) => `k${i} == ${i}`).join(" or ");
    expect(short.length).toBeLessThanOrEqual(MAX_CONDITION_LENGTH);
    expect(evalOk(short, { k139: 139 })).toBe(true);
  });

  it("never evaluates code", () => {
    expect(compileCondition("globalThis.x = 1").ok).toBe(false);
    expect(compileCondition("a == `x`").ok).toBe(false);
    expect(compileCondition("f()").ok).toBe(false);
    expect(compileCondition("a[0] == 1").ok).toBe(false);
  });
});
