import { describe, expect, it } from "vitest";
import { keyPaths } from "../../src/schemas/reserved-keys";
import { SessionStatePatch } from "../../src/schemas/session";

/** Reserved keys (`__proto__`, `constructor`, `prototype`) in state patches: refused at their path, never dropped. */

const issues = (body: string) => {
  const parsed = SessionStatePatch.safeParse(JSON.parse(body));
  return parsed.success ? [] : parsed.error.issues.map((i) => i.path.join("."));
};

describe("keyPaths", () => {
  it("finds own reserved keys at any depth, in document order, arrays included", () => {
    const value = JSON.parse('{"a":{"__proto__":{"constructor":1}},"b":[{"x":1},{"prototype":2}],"c":"constructor"}');
    expect(keyPaths(value)).toEqual([
      ["a", "__proto__"],
      ["a", "__proto__", "constructor"],
      ["b", 1, "prototype"],
    ]);
    expect(keyPaths(value, ["__proto__"])).toEqual([["a", "__proto__"]]);
    expect(keyPaths({ prototype: 1, constructor: 2 })).toEqual([["prototype"], ["constructor"]]);
    expect(keyPaths({ toString: 1, hasOwnProperty: 2 })).toEqual([]);
    expect(keyPaths("__proto__")).toEqual([]);
  });

  it("walks a value nested deeper than a recursive walk could", () => {
    let deep: unknown = JSON.parse('{"__proto__":1}');
    for (let i = 0; i < 20_000; i++) deep = [deep];
    expect(keyPaths(deep)).toHaveLength(1);
  });
});

describe("state patch keys", () => {
  it.each([
    ['{"set":{"__proto__":{"a":1},"b":1}}', "set.__proto__"],
    ['{"set":{"constructor":1}}', "set.constructor"],
    ['{"set":{"prototype":null}}', "set.prototype"],
    ['{"set":{"a":{"b":{"__proto__":{"x":1}}}}}', "set.a.b.__proto__"],
    ['{"set":{"a":[1,{"constructor":{}}]}}', "set.a.1.constructor"],
    ['{"unset":["prototype"]}', "unset.0"],
  ])("%s is refused at %s", (body, path) => {
    expect(issues(body)).toContain(path);
  });

  it("keeps ordinary keys and values that merely contain the words", () => {
    expect(issues('{"set":{"proto":1,"constructor_id":2,"note":"constructor"},"unset":["__protox"]}')).toEqual([]);
  });
});
