/**
 * Pattern admission: a trigger pattern is user input, and the rule tier runs it on every
 * route, so it is admitted only if the tier's own engine (`pattern-verifier.ts`, an NFA with
 * no backtracking) runs it — then a match costs at most (input length × program size) steps,
 * whatever the pattern and the input. It must compile as a JavaScript regex with flags `iu`
 * (its syntax and semantics), and must not use what needs backtracking (backreferences,
 * lookaround) or inline modifiers, or expand past MAX_INSTRUCTIONS. Checked once, at
 * registration and when a registry compiles, never on the routing path.
 */
import { compileVerifier, MAX_INSTRUCTIONS } from "./pattern-verifier";
import { parseRegex, type RegexAst } from "./regex-ast";
import { ClassTable, PredicateTable } from "./verifier-classes";

/** Where an admitted pattern's classes and predicates go: the registry's shared tables. */
export interface PatternTables {
  classes: ClassTable;
  predicates: PredicateTable;
}

export const PATTERN_FLAGS = "iu";

const LINEAR = "Relay matches patterns in linear time, without backtracking";

/** Why a pattern is refused, or null when it is admitted. */
export function checkPattern(source: string): string | null {
  const admitted = admitPattern(source, { classes: new ClassTable(), predicates: new PredicateTable() });
  return admitted.ok ? null : admitted.reason;
}

/** The admitted pattern's program for the matcher (its classes and predicates put in `tables`), or why it is refused. */
export function admitPattern(
  source: string,
  tables: PatternTables,
): { ok: true; program: number[] } | { ok: false; reason: string } {
  try {
    new RegExp(source, PATTERN_FLAGS);
  } catch (error) {
    return { ok: false, reason: `does not compile: ${(error as Error).message}` };
  }
  const ast = parseRegex(source);
  if (ast === null) return { ok: false, reason: "uses syntax the pattern matcher does not support" };
  const construct = unsupportedConstruct(ast);
  if (construct === "modifiers")
    return { ok: false, reason: "uses an inline modifier group ((?i:…)); the flags are always i and u" };
  if (construct !== null) return { ok: false, reason: `uses ${construct}, which needs backtracking; ${LINEAR}` };
  const program = compileVerifier(source, tables);
  if (program === null)
    return { ok: false, reason: `is too large: its repetitions expand past ${MAX_INSTRUCTIONS} instructions` };
  return { ok: true, program };
}

/** The first construct the linear engine cannot run, named for the user, or null. */
function unsupportedConstruct(alts: RegexAst): string | null {
  for (const seq of alts) {
    for (const node of seq) {
      if (node.type === "backref") return "a backreference (\\1, \\k<name>)";
      if (node.type === "lookaround") return "lookaround ((?=…), (?!…), (?<=…), (?<!…))";
      if (node.type === "group") {
        if (node.modifiers !== undefined) return "modifiers";
        const inner = unsupportedConstruct(node.alts);
        if (inner !== null) return inner;
      }
    }
  }
  return null;
}
