import * as z from "zod";

/**
 * Names that reach an object's prototype machinery instead of its own data. As a key they are
 * refused wherever a caller's key becomes a name Relay reads back (session state, condition
 * paths): `__proto__` assigned as a key re-parents the object (zod's records drop it, and a
 * null-prototype object cannot cross Durable Object RPC), and `constructor`/`prototype` read
 * as paths would be inherited members, not data.
 */
export const RESERVED_KEYS: readonly string[] = ["__proto__", "constructor", "prototype"];

export function isReservedKey(key: string): boolean {
  return RESERVED_KEYS.includes(key);
}

/**
 * The paths (from `value`) of every own key in `names`, at any depth, in document order.
 * Iterative: a value nested as deep as the stack allows is walked without recursion.
 */
export function keyPaths(value: unknown, names: readonly string[] = RESERVED_KEYS): (string | number)[][] {
  // Each node keeps a link to its parent, so a path is built only for a key that is found.
  type Node = { value: unknown; key: string | number | null; parent: Node | null };
  const pathOf = (node: Node): (string | number)[] => {
    const path: (string | number)[] = [];
    for (let at: Node | null = node; at?.key != null; at = at.parent) path.unshift(at.key);
    return path;
  };
  const found: (string | number)[][] = [];
  const stack: Node[] = [{ value, key: null, parent: null }];
  while (stack.length > 0) {
    const node = stack.pop()!;
    if (typeof node.key === "string" && names.includes(node.key)) found.push(pathOf(node));
    if (node.value === null || typeof node.value !== "object") continue;
    const container = node.value as Record<string, unknown>;
    const keys: (string | number)[] = Array.isArray(container) ? container.map((_, i) => i) : Object.keys(container);
    // Pushed in reverse so they are visited in document order.
    for (let i = keys.length - 1; i >= 0; i--) {
      const key = keys[i]!;
      stack.push({ value: container[key], key, parent: node });
    }
  }
  return found;
}

/**
 * `schema`, first refusing any reserved key anywhere in the raw input (zod's records never
 * show `__proto__` to their key schema: it is dropped before). Each one is an issue at its
 * path; the OpenAPI document describes `schema` unchanged.
 */
export function withoutReservedKeys<S extends z.ZodType>(schema: S) {
  return z.preprocess((value, ctx) => {
    for (const path of keyPaths(value))
      ctx.addIssue({
        code: "custom",
        path,
        message: `'${String(path.at(-1))}' is a reserved name (${RESERVED_KEYS.join(", ")}); choose another key`,
      });
    return value;
  }, schema);
}
