import { type CompareOp, ConditionSyntaxError, type Token, tokenize } from "./condition-lexer";

/**
 * Recursive-descent parser of the condition language:
 *
 *   expr       := or
 *   or         := and (("or" | "||") and)*
 *   and        := unary (("and" | "&&") unary)*
 *   unary      := ("not" | "!") unary | comparison
 *   comparison := operand (("==" | "!=" | "<" | ">" | "<=" | ">=") operand)?
 *   operand    := number | "-" number | string | true | false | null | path | "(" expr ")"
 *
 * Comparisons do not chain (`a < b < c` is an error). The AST is plain data, so a
 * compiled condition can be cached, stored or sent over RPC.
 */

export type Literal = number | string | boolean | null;

export type ConditionNode =
  | { type: "literal"; value: Literal }
  | { type: "path"; path: string[] }
  | { type: "compare"; op: CompareOp; left: ConditionNode; right: ConditionNode }
  | { type: "and"; operands: ConditionNode[] }
  | { type: "or"; operands: ConditionNode[] }
  | { type: "not"; operand: ConditionNode };

export const MAX_CONDITION_LENGTH = 2000;
/** Parentheses and `not`s nested deeper than this are refused (bounds recursion). */
export const MAX_CONDITION_DEPTH = 32;

function describe(token: Token): string {
  return token.kind === "eof" ? "end of input" : `'${token.text}'`;
}

/** Parses a condition's source into its AST. Throws ConditionSyntaxError. */
export function parseCondition(src: string): ConditionNode {
  if (src.length > MAX_CONDITION_LENGTH) {
    throw new ConditionSyntaxError(
      MAX_CONDITION_LENGTH,
      `at most ${MAX_CONDITION_LENGTH} characters`,
      `${src.length} characters`,
    );
  }
  return new Parser(tokenize(src)).parse();
}

class Parser {
  private index = 0;
  private depth = 0;

  constructor(private readonly tokens: Token[]) {}

  parse(): ConditionNode {
    const first = this.peek();
    if (first.kind === "eof") throw new ConditionSyntaxError(first.pos, "an expression", "end of input");
    const node = this.parseOr();
    const rest = this.peek();
    if (rest.kind !== "eof") {
      const expected =
        rest.kind === "rparen" ? "end of input (unbalanced ')')" : "'and', 'or', a comparison or end of input";
      throw new ConditionSyntaxError(rest.pos, expected, describe(rest));
    }
    return node;
  }

  private peek(): Token {
    return this.tokens[this.index]!;
  }

  private next(): Token {
    const token = this.tokens[this.index]!;
    if (token.kind !== "eof") this.index++;
    return token;
  }

  private enter(token: Token): void {
    this.depth++;
    if (this.depth > MAX_CONDITION_DEPTH) {
      throw new ConditionSyntaxError(token.pos, `at most ${MAX_CONDITION_DEPTH} levels of nesting`, "deeper nesting");
    }
  }

  private parseOr(): ConditionNode {
    const operands = [this.parseAnd()];
    while (this.peek().kind === "or") {
      this.next();
      operands.push(this.parseAnd());
    }
    return operands.length === 1 ? operands[0]! : { type: "or", operands };
  }

  private parseAnd(): ConditionNode {
    const operands = [this.parseUnary()];
    while (this.peek().kind === "and") {
      this.next();
      operands.push(this.parseUnary());
    }
    return operands.length === 1 ? operands[0]! : { type: "and", operands };
  }

  private parseUnary(): ConditionNode {
    const token = this.peek();
    if (token.kind !== "not") return this.parseComparison();
    this.next();
    this.enter(token);
    const operand = this.parseUnary();
    this.depth--;
    return { type: "not", operand };
  }

  private parseComparison(): ConditionNode {
    const left = this.parseOperand();
    const token = this.peek();
    if (token.kind !== "cmp") return left;
    this.next();
    const right = this.parseOperand();
    const after = this.peek();
    if (after.kind === "cmp") {
      throw new ConditionSyntaxError(after.pos, "'and', 'or' or ')' (comparisons do not chain)", describe(after));
    }
    return { type: "compare", op: token.value as CompareOp, left, right };
  }

  private parseOperand(): ConditionNode {
    const token = this.next();
    switch (token.kind) {
      case "number":
        return { type: "literal", value: token.value as number };
      case "string":
        return { type: "literal", value: token.value as string };
      case "true":
        return { type: "literal", value: true };
      case "false":
        return { type: "literal", value: false };
      case "null":
        return { type: "literal", value: null };
      case "path":
        return { type: "path", path: token.value as string[] };
      case "minus": {
        const number = this.next();
        if (number.kind !== "number")
          throw new ConditionSyntaxError(number.pos, "a number after '-'", describe(number));
        return { type: "literal", value: -(number.value as number) };
      }
      case "lparen": {
        this.enter(token);
        const inner = this.parseOr();
        const close = this.next();
        if (close.kind !== "rparen") throw new ConditionSyntaxError(close.pos, "')'", describe(close));
        this.depth--;
        return inner;
      }
      default:
        throw new ConditionSyntaxError(token.pos, "a value, a name, 'not' or '('", describe(token));
    }
  }
}
