/**
 * Function words, for the nearest-example similarity only (the classifier keeps every term and
 * learns their weight). In a small registry idf cannot tell "what is the" from content words,
 * and an out-of-scope question would look close to any example sharing its grammar.
 */
import { stem } from "./features";

const ENGLISH = `a about above after again all am an and any are as at be because been before being below
between both but by can could did do does doing down during each for from further had has have having he
her here hers him his how i if in into is it its just me more most my myself no nor not now of off on once
only or other our ours out over own same she should so some such than that the their them then there these
they this those through to too under until up very was we were what when where which while who whom why
will with would you your yours please tell know want need like get let im whats dont id ive youre us`;

const CJK = "的了是我你他她它们吗呢吧啊在和与就都也还这那个一有要想请能会可以么什怎";

const STOP = new Set<string>([...ENGLISH.split(/\s+/).map(stem), ...Array.from(CJK)]);

/** Whether a term (stem, stem bigram, CJK character or character bigram) is made of function words only. */
export function isFunctionTerm(term: string): boolean {
  if (STOP.has(term)) return true;
  const space = term.indexOf(" ");
  if (space > 0) return STOP.has(term.slice(0, space)) && STOP.has(term.slice(space + 1));
  const chars = Array.from(term);
  return chars.length === 2 && STOP.has(chars[0] as string) && STOP.has(chars[1] as string);
}
