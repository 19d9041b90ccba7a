/** Random trigger patterns with a string each one matches, for the prefilter's soundness tests. */
import type { prng } from "./reference-matcher";

type Rand = ReturnType<typeof prng>;
const WORDS = ["refund", "order", "stake", "kilo", "ab", "x", "ticket", "sks", "return"];

function randomCase(rand: Rand, text: string): string {
  return [...text]
    .map((c) => {
      const r = rand.next();
      if (c === "s" && r < 0.1) return "ſ";
      if (c === "k" && r < 0.1) return "\u212A";
      return r < 0.4 ? c.toUpperCase() : c;
    })
    .join("");
}

/** A random pattern of literals, classes, groups, alternations and quantifiers, with one string it matches. */
export function randomPattern(rand: Rand, depth = 0): { source: string; sample: string } {
  const parts: { source: string; sample: string }[] = [];
  const count = 1 + rand.int(4);
  for (let i = 0; i < count; i++) {
    const kind = rand.int(depth < 2 ? 8 : 5);
    let part: { source: string; sample: string };
    if (kind <= 1) {
      const word = rand.pick(WORDS);
      const quantifier = rand.pick(["", "", "?", "+", "*", "{0}", "{2}", "{0,2}"]);
      const repeat = {
        "": 1,
        "?": rand.int(2),
        "+": 1 + rand.int(2),
        "*": rand.int(3),
        "{0}": 0,
        "{2}": 2,
        "{0,2}": rand.int(3),
      }[quantifier]!;
      const last = word.slice(-1);
      part = { source: word + quantifier, sample: randomCase(rand, word.slice(0, -1) + last.repeat(repeat)) };
    } else if (kind === 2) {
      part = rand.pick([
        { source: "\\d", sample: String(rand.int(10)) },
        { source: "\\s", sample: rand.pick([" ", "\n", "\u00a0"]) },
        { source: "[a-c]", sample: rand.pick(["a", "B", "c"]) },
        { source: ".", sample: rand.pick(["?", "é", "q"]) },
        { source: "\\.", sample: "." },
        { source: "-", sample: "-" },
      ]);
    } else if (kind === 3) {
      part = { source: "\\b", sample: "" };
    } else if (kind === 4) {
      part = { source: "#", sample: "#" };
    } else {
      const branches = Array.from({ length: 1 + rand.int(3) }, () => randomPattern(rand, depth + 1));
      const chosen = rand.pick(branches);
      const quantifier = rand.pick(["", "", "?", "+", "{2}", "{1,3}", "{0,2}", "*"]);
      const repeat =
        quantifier === "{2}" ? 2 : quantifier === "?" || quantifier === "*" || quantifier === "{0,2}" ? rand.int(2) : 1;
      const open = rand.pick(["(?:", "(", `(?<g${rand.int(1e6)}>`]);
      part = {
        source: `${open}${branches.map((b) => b.source).join("|")})${quantifier}`,
        sample: chosen.sample.repeat(repeat),
      };
    }
    parts.push(part);
  }
  return { source: parts.map((p) => p.source).join(""), sample: parts.map((p) => p.sample).join("") };
}
