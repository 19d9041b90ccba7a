/**
 * Pattern costs: what one step of each instruction kind of the pattern matcher costs, on the
 * inputs worst for it, against an ASCII literal's step — the measurements behind the weights
 * of `src/routing/rules/pattern-cost.ts` (docs/scaling.md, "The work budget"). Each kind runs
 * a program made of it that keeps every thread alive and never matches, searched over a long
 * run of one character; the figure is the steady state (a search of 2n code units less one of
 * n, median of 7, CPU time of this process), in ns per instruction and code unit. Kinds that
 * only come with others (branch, jump, assertion) are the rest of their program's step once
 * the kinds measured before are taken out. The unit is the worst literal step measured.
 *
 * Verdict: every kind's measured ratio is within what the source charges for it.
 * Run: npx tsx bench/pattern-costs.bench.ts
 */
import { PREDICATE_TEST_CHARGE, STEP_CHARGE } from "../src/routing/rules/pattern-cost";
import { ClassTable, compileVerifier, PredicateTable, searchFrom } from "../src/routing/rules/pattern-verifier";

const N = 4096;

/** ns per instruction per code unit of `source` searched over `unit` repeated. */
function perStep(source: string, unit: string, n = N): number {
  const classes = new ClassTable();
  const predicates = new PredicateTable();
  const program = compileVerifier(source, { classes, predicates });
  if (program === null) throw new Error(`${source} does not compile`);
  const t = { code: Int32Array.from(program), classes: classes.toArray(), predicates: predicates.toArray() };
  const text = unit.repeat(Math.ceil((2 * n) / unit.length)).slice(0, 2 * n);
  const run = (end: number) => {
    const before = process.cpuUsage();
    if (searchFrom(t, 0, text, 0, end)) throw new Error(`${source} matched ${JSON.stringify(unit)}`);
    const spent = process.cpuUsage(before);
    return (spent.user + spent.system) / 1000;
  };
  for (let i = 0; i < 2; i++) run(2 * n);
  const diffs: number[] = [];
  for (let i = 0; i < 7; i++) {
    const one = run(n);
    diffs.push(run(2 * n) - one);
  }
  diffs.sort((a, b) => a - b);
  return (diffs[3]! * 1e6) / ((program.length / 3) * n);
}

const worst = (source: string, units: string[]) => {
  const figures = units.map((unit) => ({ unit, ns: perStep(source, unit) }));
  return figures.reduce((a, b) => (b.ns > a.ns ? b : a));
};

/** Distinct predicates in turn: `[<class>\u{X}]` with X a different CJK ideograph each time. */
const distinct = (klass: string, count: number) =>
  `${Array.from({ length: count }, (_, i) => `[${klass}\\u{${(0x4e00 + i).toString(16)}}]`).join("")}\\0`;

const ALPHABETS = ["a", "A", "é", "É", "中", "😀", "𝐀", "\u3000"];
const show = (unit: string) => JSON.stringify(unit);

function main(): void {
  console.log(
    `# Pattern costs — ${new Date().toISOString().slice(0, 10)}, ${process.platform}/${process.arch}, Node ${process.version}\n`,
  );
  const literal = worst("a{997}\\0", ["a", "A", "ſ", "é", "😀"]);
  const s = worst("s{997}\\0", ["ſ", "S"]);
  const unit = Math.max(literal.ns, s.ns);
  const rows: { kind: string; program: string; input: string; ns: number; ratio: number; charged: number }[] = [];
  const row = (kind: string, program: string, input: string, ns: number, charged: number) =>
    rows.push({ kind, program, input, ns, ratio: ns / unit, charged });
  row("literal", "a{997}", show(literal.unit), literal.ns, STEP_CHARGE.literal);
  row("literal", "s{997}", show(s.unit), s.ns, STEP_CHARGE.literal);
  const any = worst(".{997}\\0", ALPHABETS);
  row("any", ".{997}", show(any.unit), any.ns, STEP_CHARGE.any);
  for (const source of ["[a-z]{997}\\0", "[^0]{997}\\0", "\\S{997}\\0", "\\s{997}\\0"]) {
    const units = source.startsWith("\\s")
      ? ["\u3000", " ", "\u00a0"]
      : source.startsWith("[a")
        ? ["a", "A"]
        : ALPHABETS;
    const m = worst(source, units);
    row("class", source.slice(0, -2), show(m.unit), m.ns, STEP_CHARGE.class);
  }
  let table = 0;
  for (const source of ["\\p{L}{997}\\0", "é{997}\\0", "[^\\p{N}]{997}\\0"]) {
    const units = source.startsWith("é") ? ["é", "É"] : ["é", "中", "𝐀", "Ω"];
    const m = worst(source, units);
    table = Math.max(table, m.ns);
    row("unicode_class (answered: table read)", source.slice(0, -2), show(m.unit), m.ns, STEP_CHARGE.unicode_class);
  }
  // Each predicate distinct: every step calls each one's regex, and with hundreds of them in
  // turn each regex's code is cold; the most a pattern holds (997) is the worst measured.
  for (const [klass, count, units] of [
    ["\\p{L}", 500, ["é", "中", "𝐀"]],
    ["\\p{Lu}", 500, ["𝐀", "Ω"]],
    ["^\\p{N}", 500, ["中", "𝐀"]],
    ["^\\p{N}", 997, ["中", "𝐀"]],
  ] as const) {
    const source = distinct(klass, count);
    const m = units
      .map((u) => ({ unit: u as string, ns: perStep(source, u, 1024) }))
      .reduce((a, b) => (b.ns > a.ns ? b : a));
    row(
      "unicode_class (each distinct: regex call)",
      `${count} × [${klass}\\u{…}]`,
      show(m.unit),
      m.ns,
      STEP_CHARGE.unicode_class + PREDICATE_TEST_CHARGE,
    );
  }
  const optional = worst("(?:a?){498}\\0", ["a", "A"]);
  const branch = 2 * optional.ns - literal.ns;
  row("branch", "(?:a?){498} less its literals", show(optional.unit), branch, STEP_CHARGE.branch);
  const loop = worst("(?:.*a){249}\\0", ["a", "A"]);
  row(
    "jump",
    "(?:.*a){249} less the rest",
    show(loop.unit),
    4 * loop.ns - branch - any.ns - literal.ns,
    STEP_CHARGE.jump,
  );
  const boundary = worst("(?:\\Ba){498}\\0", ["a", "A"]);
  row(
    "assertion",
    "(?:\\Ba){498} less its literals",
    show(boundary.unit),
    2 * boundary.ns - literal.ns,
    STEP_CHARGE.assertion,
  );

  console.log(`Unit: the worst ASCII literal step measured, ${unit.toFixed(2)} ns per instruction and code unit.\n`);
  console.log("| kind | program | worst input | ns per step and code unit | ÷ unit | charged | within |");
  console.log("| --- | --- | --- | --- | --- | --- | --- |");
  let all = true;
  for (const r of rows) {
    const within = r.ratio <= r.charged;
    all &&= within;
    console.log(
      `| ${r.kind} | \`${r.program}\` | ${r.input} | ${r.ns.toFixed(2)} | ${r.ratio.toFixed(2)} | ${r.charged} | ${within ? "✅" : "❌"} |`,
    );
  }
  console.log(
    `\nVerdict: ${all ? "✅ every kind costs at most what it is charged" : "❌ some kind costs more than it is charged"} (unit ${unit.toFixed(2)} ns).`,
  );
}

main();
