/**
 * The lexical classifier compiled from agents' example utterances: two views of one vocabulary.
 *
 * 1. A multinomial logistic regression (softmax.ts) over stems, stem bigrams, CJK characters and
 *    character bigrams, and word character 3-grams: which agent the words point to.
 * 2. A TF-IDF nearest-neighbour index over the same terms (no character grams): how close the
 *    input is to something an agent was actually shown, and which examples those are. A query's
 *    unseen terms count in its norm at the highest idf, so text made of new vocabulary is far
 *    from every example — the out-of-scope signal the softmax alone lacks.
 *
 * Everything is typed arrays in CSR form, built in two passes; a route is one feature
 * extraction, a few hundred multiply-adds and a walk over the postings of its rarer terms.
 */
import {
  type AgentExamples,
  type ClassifierImage,
  compileClassifierPart,
  linkClassifierImage,
} from "./classifier-link";
import { type BuiltFeatureTable, FeatureTable, termKeys } from "./feature-table";
import { extractFeatures, surfaceForms, type TextFeatures } from "./features";
import { narrowIndex, TextTable } from "./narrow";
import { PostingWeights } from "./posting-weights";
import { modelFromImage, renumberModel, type SoftmaxOptions } from "./softmax";

/** A query term for explanations: its own weight plus that of its character grams. */
export interface QueryTerm {
  term: string;
  /** Index into the classifier's vocabulary, or −1 for a term no example contains. */
  id: number;
  /** Unit-normalised TF-IDF weight in the query. */
  weight: number;
}

/** An example close to the input. */
export interface Neighbour {
  /** Global example index. */
  example: number;
  similarity: number;
}

/** What the classifier says about one input. */
export interface Classification {
  input: string;
  /** Logits per agent (registry order): the model's, plus COUNT_WEIGHT × the counted model's beside a trained one. */
  logits: number[];
  /** The counted model's logits beside a trained one (else `logits` itself). */
  countLogits: number[];
  /** Softmax probabilities per agent. */
  probs: number[];
  /** Share of the query's TF-IDF mass carried by terms some example contains (0–1). */
  knownMass: number;
  terms: QueryTerm[];
  /** Ids of the character grams and phrase features, and for each the term it belongs to (−1: none; for explanations). */
  gramIds: number[];
  gramOwner: number[];
  featureScale: number;
}

/** A compiled classifier. */
export interface LexicalClassifier {
  readonly agents: readonly string[];
  readonly exampleCount: number;
  /** `features`: the input's, when the caller extracted them already (a router with shards does once). */
  classify(input: string, features?: TextFeatures): Classification;
  /**
   * Agent a's k nearest examples to the classified input, best first, by similarity over the
   * input's informative terms (not function words, and in at most 1/16 of the examples or 64);
   * empty when no example shares such a term.
   */
  nearest(c: Classification, a: number, k?: number): Neighbour[];
  /**
   * Every agent's nearest-example similarity (as `nearest(c, a, 1)`), in one walk over the
   * postings of the input's informative terms; 0 for an agent no such term reaches.
   */
  nearestByAgent(c: Classification): Float64Array;
  /**
   * How much of what the examples say about a keyword points to agent a: of the examples that
   * hold its most specific known term, a's share, with one pseudo-example for a ((own + 1) /
   * (all + 1)); 1 when no example holds any of its terms.
   */
  keywordShare(keyword: string, a: number): number;
  /** Exact TF-IDF cosine between the input's terms and example i. */
  similarity(c: Classification, i: number): number;
  exampleText(i: number): string;
  exampleAgent(i: number): number;
  /**
   * Contribution of each query term (with its grams) to agent a's logit minus agent b's (b −1:
   * a's logit alone); terms are shown as written in the input.
   */
  termContributions(c: Classification, a: number, b: number): { term: string; weight: number }[];
  readonly memoryBytes: number;
  /** What memoryBytes is made of (bench/router-memory.bench.ts prints it). */
  readonly memoryParts: ClassifierMemory;
}

/** A wrapped classifier's bytes by part. */
export interface ClassifierMemory {
  /** The feature table. */
  vocabulary: number;
  /** The model's weights or counts, row starts and agent ids (and the counted model's beside a trained one). */
  model: number;
  /** The neighbour index: posting offsets, examples and weights, informative flags. */
  postings: number;
  /** The examples' texts, for explanations. */
  texts: number;
  /** Per example: its agent, and a search's scratch; per agent: where its examples start. */
  examples: number;
}

/**
 * Beside a trained model, the logits are its own plus this share of the counted model's: naive
 * Bayes generalises from few examples in a way the discriminative model does not, and the sum
 * was more accurate at 10 examples per intent than either. Of 0.25, 0.5 and 1, 0.5 routed CLINC150
 * val best at 10 examples per intent beside the demo agents (forced accuracy 90.1%, 90.4%,
 * 89.9%; `npm run bench:routing`); the unseen split was not used.
 */
export const COUNT_WEIGHT = 0.5;

/** Compiles examples into a classifier. Agents without examples get no probability mass. */
export function compileClassifier(
  sets: readonly AgentExamples[],
  options: Partial<SoftmaxOptions> = {},
): LexicalClassifier {
  return classifierFromImage(linkClassifierImage(sets.map(compileClassifierPart), options));
}

/**
 * Terms and grams in one table of numeric keys, which numbers them anew (terms first): the
 * image's strings and gram table are not kept. Built apart, so that the closures of the
 * classifier do not keep its scratch alive.
 */
function featureTableOf(image: ClassifierImage): BuiltFeatureTable {
  const gramKeys = new Float64Array(image.terms.length);
  const { keys: gramSlots, values: gramValues } = image.grams;
  for (let i = 0; i < gramSlots.length; i++) if (gramSlots[i] !== -1) gramKeys[gramValues[i]!] = gramSlots[i]!;
  return FeatureTable.build(image.terms, (id) => gramKeys[id]!);
}

/**
 * The per-feature arrays of an image in the feature table's numbering (`order[id]`: the image's
 * id). Postings and the informative flags are the terms' only: an integer-keyed feature is in no
 * posting list (classifier-link.ts gives it none), and the terms come first.
 */
function renumbered(image: ClassifierImage, order: Uint32Array, termCount: number) {
  const offset = new Uint32Array(termCount + 1);
  for (let t = 0; t < termCount; t++) {
    const old = order[t]!;
    offset[t + 1] = offset[t]! + image.offset[old + 1]! - image.offset[old]!;
  }
  const postDoc = new Uint32Array(offset[termCount]!);
  const postW = new Float32Array(postDoc.length);
  // A bit a term: whether the neighbour search uses it.
  const informative = new Uint8Array((termCount + 7) >>> 3);
  for (let t = 0; t < termCount; t++) {
    const old = order[t]!;
    postDoc.set(image.postDoc.subarray(image.offset[old]!, image.offset[old + 1]!), offset[t]!);
    postW.set(image.postW.subarray(image.offset[old]!, image.offset[old + 1]!), offset[t]!);
    if (image.informative[old] !== 0) informative[t >>> 3]! |= 1 << (t & 7);
  }
  return { offset, postDoc, postW, informative };
}

/**
 * The classifier over its image: its feature table, narrowed index arrays, the texts as one
 * table and per-route scratch are all it builds (the image's own strings are not kept).
 * `liveTexts`: read the texts from the image's array when asked instead (a sliced image whose
 * texts are filled in after it is wrapped, cold-route.ts).
 */
export function classifierFromImage(image: ClassifierImage, options: { liveTexts?: boolean } = {}): LexicalClassifier {
  const { unseenIdf, agentStart } = image;
  const { table: vocab, order } = featureTableOf(image);
  const terms = renumbered(image, order, vocab.termCount);
  const { informative } = terms;
  // Index arrays as narrow as their values allow; idf is computed from a term's postings (its
  // document frequency), as the link computed it, rather than kept per feature.
  const offset = narrowIndex(terms.offset);
  const postDoc = narrowIndex(terms.postDoc);
  const exampleAgent = narrowIndex(image.exampleAgent);
  // The closures below must not read `image`: that would keep the whole image alive.
  const liveTexts = options.liveTexts === true ? image.texts : null;
  const texts = liveTexts === null ? new TextTable(image.texts) : null;
  const n = image.texts.length;
  const idfOf = (t: number): number =>
    Math.fround(Math.log((n + 1) / ((offset[t + 1] as number) - (offset[t] as number) + 1)) + 1);
  const postW = PostingWeights.of(terms.postW, offset, postDoc, n, idfOf);
  const model = modelFromImage(renumberModel(image.model, order), { counted: !image.trained });
  const counted = image.counted ? modelFromImage(renumberModel(image.counted, order), { counted: true }) : null;
  const agentCount = image.agents.length;
  const acc = new Float64Array(n);
  const stamp = new Uint32Array(n);
  const touched = new Uint32Array(n);
  let epoch = 0;
  /** A new stamp for the examples a search touches (no clearing per search; a wrap clears once). */
  const nextEpoch = () => {
    epoch = (epoch + 1) >>> 0;
    if (epoch === 0) {
      stamp.fill(0);
      epoch = 1;
    }
  };

  const exampleWeight = (i: number, t: number): number => {
    let lo = offset[t] as number;
    let hi = (offset[t + 1] as number) - 1;
    while (lo <= hi) {
      const mid = (lo + hi) >>> 1;
      const d = postDoc[mid] as number;
      if (d === i) return postW.weight(mid, d, idfOf(t));
      if (d < i) lo = mid + 1;
      else hi = mid - 1;
    }
    return 0;
  };

  const classify = (input: string, features?: TextFeatures): Classification => {
    const f = features ?? extractFeatures(input);
    const terms: QueryTerm[] = [];
    let norm = 0;
    let known = 0;
    const keys = termKeys(f.terms);
    for (let i = 0; i < f.terms.length; i++) {
      const { term, count } = f.terms[i]!;
      const id = vocab.term(term, keys[i]);
      const wt = (1 + Math.log(count)) * (id < 0 ? unseenIdf : idfOf(id));
      terms.push({ term, id, weight: wt });
      norm += wt * wt;
      if (id >= 0) known += wt * wt;
    }
    const qn = Math.sqrt(norm) || 1;
    for (const t of terms) t.weight /= qn;

    // Plain arrays, not typed ones: small typed arrays get off-heap backing stores, which
    // made garbage collection a fifth of a route's time.
    const logits = new Array<number>(agentCount).fill(0);
    const nGrams = f.grams.length;
    const featureCount = f.terms.length + nGrams + f.phrase.length;
    const featureScale = featureCount > 0 ? 1 / Math.sqrt(featureCount) : 0;
    const termIdArr = new Array<number>(terms.length);
    for (let i = 0; i < terms.length; i++) termIdArr[i] = (terms[i] as QueryTerm).id;
    // Grams, then phrase features: one table holds both (their keys never clash, see features.ts).
    const gramIds = new Array<number>(nGrams + f.phrase.length);
    const gramOwner = new Array<number>(gramIds.length);
    for (let i = 0; i < nGrams; i++) {
      gramIds[i] = vocab.get(f.grams[i] as number);
      gramOwner[i] = f.gramOwner[i] as number;
    }
    for (let i = 0; i < f.phrase.length; i++) {
      gramIds[nGrams + i] = vocab.get(f.phrase[i] as number);
      gramOwner[nGrams + i] = f.phraseOwner[i] as number;
    }
    model.addLogits(termIdArr, featureScale, logits);
    model.addLogits(gramIds, featureScale, logits);
    let countLogits = logits;
    if (counted !== null) {
      countLogits = new Array<number>(agentCount).fill(0);
      counted.addLogits(termIdArr, featureScale, countLogits);
      counted.addLogits(gramIds, featureScale, countLogits);
      for (let a = 0; a < agentCount; a++)
        logits[a] = (logits[a] as number) + COUNT_WEIGHT * (countLogits[a] as number);
    }
    const probs = new Array<number>(agentCount);
    // A single agent competes with "none of these" at logit 0 (see softmax.ts).
    let max = agentCount === 1 ? 0 : -Infinity;
    for (let a = 0; a < agentCount; a++) if ((logits[a] as number) > max) max = logits[a] as number;
    let sum = agentCount === 1 ? Math.exp(-max) : 0;
    for (let a = 0; a < agentCount; a++) {
      probs[a] = Math.exp((logits[a] as number) - max);
      sum += probs[a] as number;
    }
    for (let a = 0; a < agentCount; a++) probs[a] = (probs[a] as number) / sum;

    return {
      input,
      logits,
      countLogits,
      probs,
      knownMass: norm > 0 ? known / norm : 0,
      terms,
      gramIds,
      gramOwner,
      featureScale,
    };
  };

  const lowerBound = (lo: number, hi: number, doc: number): number => {
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if ((postDoc[mid] as number) < doc) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  };

  /**
   * Each example's similarity to `c` (in `acc`), summed over the informative terms' postings;
   * with `agent`, only that agent's examples (a binary search of each posting list). Returns how
   * many examples it touched, listed first in `touched`.
   */
  const accumulate = (c: Classification, agent?: number): number => {
    nextEpoch();
    let nTouched = 0;
    for (const t of c.terms) {
      if (t.id < 0 || (informative[t.id >>> 3]! & (1 << (t.id & 7))) === 0) continue;
      let from = offset[t.id] as number;
      let end = offset[t.id + 1] as number;
      const idf = idfOf(t.id);
      if (agent !== undefined) {
        end = lowerBound(from, end, agentStart[agent + 1] as number);
        from = lowerBound(from, end, agentStart[agent] as number);
      }
      for (let p = from; p < end; p++) {
        const d = postDoc[p] as number;
        if (stamp[d] !== epoch) {
          stamp[d] = epoch;
          acc[d] = 0;
          touched[nTouched++] = d;
        }
        acc[d] = (acc[d] as number) + t.weight * postW.weight(p, d, idf);
      }
    }
    return nTouched;
  };

  const nearest = (c: Classification, a: number, k = 1): Neighbour[] => {
    const nTouched = accumulate(c, a);
    const best: Neighbour[] = [];
    for (let i = 0; i < nTouched; i++) {
      const d = touched[i] as number;
      const sim = acc[d] as number;
      if (best.length === k && sim <= (best[k - 1] as Neighbour).similarity) continue;
      let j = best.length < k ? best.length : k - 1;
      if (best.length < k) best.push({ example: d, similarity: sim });
      while (j > 0 && (best[j - 1] as Neighbour).similarity < sim) {
        best[j] = best[j - 1] as Neighbour;
        j--;
      }
      best[j] = { example: d, similarity: sim };
    }
    return best;
  };

  const nearestByAgent = (c: Classification): Float64Array => {
    const best = new Float64Array(agentCount);
    const nTouched = accumulate(c);
    for (let i = 0; i < nTouched; i++) {
      const d = touched[i] as number;
      const a = exampleAgent[d] as number;
      if ((acc[d] as number) > (best[a] as number)) best[a] = acc[d] as number;
    }
    return best;
  };

  const keywordShare = (keyword: string, a: number): number => {
    let best = -1;
    for (const { term } of extractFeatures(keyword).terms) {
      const id = vocab.term(term);
      if (id < 0) continue;
      if (
        best < 0 ||
        (offset[id + 1] as number) - (offset[id] as number) < (offset[best + 1] as number) - (offset[best] as number)
      )
        best = id;
    }
    if (best < 0) return 1;
    const lo = offset[best] as number;
    const hi = offset[best + 1] as number;
    const from = lowerBound(lo, hi, agentStart[a] as number);
    const own = lowerBound(from, hi, agentStart[a + 1] as number) - from;
    return (own + 1) / (hi - lo + 1);
  };

  const similarity = (c: Classification, i: number): number => {
    let s = 0;
    for (const t of c.terms) if (t.id >= 0) s += t.weight * exampleWeight(i, t.id);
    return s;
  };

  const termContributions = (c: Classification, a: number, b: number) => {
    const surface = surfaceForms(c.input);
    // A feature's weight in the logits: the model's, plus its share of the counted model's.
    const weight = (f: number, k: number) =>
      model.weight(f, k) + (counted === null ? 0 : COUNT_WEIGHT * counted.weight(f, k));
    const out = c.terms.map((t) => ({
      term: surface.get(t.term) ?? t.term,
      weight: t.id < 0 ? 0 : c.featureScale * (weight(t.id, a) - (b >= 0 ? weight(t.id, b) : 0)),
    }));
    c.gramIds.forEach((g, i) => {
      const slot = out[c.gramOwner[i] ?? 0];
      if (g < 0 || !slot) return;
      slot.weight += c.featureScale * (weight(g, a) - (b >= 0 ? weight(g, b) : 0));
    });
    return out;
  };

  const memoryParts: ClassifierMemory = {
    vocabulary: vocab.byteLength,
    model: model.memoryBytes + (counted?.memoryBytes ?? 0),
    postings: offset.byteLength + postDoc.byteLength + postW.byteLength + informative.byteLength,
    texts: texts?.byteLength ?? 0,
    examples: exampleAgent.byteLength + agentStart.byteLength + acc.byteLength + stamp.byteLength + touched.byteLength,
  };
  const bytes = Object.values(memoryParts).reduce((sum, b) => sum + b, 0);

  return {
    agents: image.agents,
    exampleCount: n,
    classify,
    nearest,
    nearestByAgent,
    keywordShare,
    similarity,
    exampleText: (i) => (texts === null ? (liveTexts?.[i] ?? "") : texts.at(i)),
    exampleAgent: (i) => exampleAgent[i] ?? -1,
    termContributions,
    memoryBytes: bytes,
    memoryParts,
  };
}
