/**
 * Linking a classifier (lexical-classifier.ts): each agent's examples become a part (their
 * features extracted, what a registry change recompiles), and the parts of a registry are
 * linked into one image — the vocabulary, idf, the neighbour index's postings, and the model,
 * trained jointly up to TRAINED_AGENTS_MAX agents and counted beyond.
 */
import { extractFeatures, FEATURES_VERSION } from "./features";
import { IntTable, type IntTableImage } from "./int-table";
import { countModelImage, type ModelImage, type SoftmaxOptions, trainSoftmaxImage } from "./softmax";
import { isFunctionTerm } from "./stop-words";

/** The examples of one agent, in registry order. */
export interface AgentExamples {
  agent: string;
  examples: readonly string[];
}

/** Terms in more than this share of examples (and more than 64) are skipped when looking for neighbours. */
const COMMON_TERM_SHARE = 1 / 16;

/**
 * Above this many agents the link counts its model (softmax.ts, `countModelImage`) instead of
 * training it: joint training costs grow with agents × examples, and a registry this large
 * changes often.
 */
export const TRAINED_AGENTS_MAX = 256;

/** One agent's examples with their features extracted: the part a registry change recompiles. */
export interface ClassifierPart {
  agent: string;
  texts: string[];
  /** Per text: its terms with counts, and its integer-keyed features (character grams, then phrase features). */
  rows: { terms: [string, number][]; grams: number[] }[];
  /**
   * The FEATURES_VERSION the rows were extracted with; a part kept from an older version
   * (none: version 1) is extracted again when linked, so a stored part never mixes features.
   */
  features?: number;
}

function partRows(texts: readonly string[]): ClassifierPart["rows"] {
  return texts.map((text) => {
    const { terms, grams, phrase } = extractFeatures(text);
    return { terms: terms.map((t): [string, number] => [t.term, t.count]), grams: [...grams, ...phrase] };
  });
}

/** Extracts the features of one agent's examples. */
export function compileClassifierPart(set: AgentExamples): ClassifierPart {
  return { agent: set.agent, texts: [...set.examples], rows: partRows(set.examples), features: FEATURES_VERSION };
}

/** The part with rows of the current features (itself when they are). */
function currentPart(part: ClassifierPart): ClassifierPart {
  return part.features === FEATURES_VERSION
    ? part
    : { ...part, rows: partRows(part.texts), features: FEATURES_VERSION };
}

/** A linked classifier as plain data (what a stored router keeps). */
export interface ClassifierImage {
  agents: string[];
  /** Term → id, as the terms in id order. */
  terms: string[];
  /** The character-gram table (int-table.ts) as its arrays. */
  grams: IntTableImage;
  model: ModelImage;
  trained: boolean;
  /**
   * Beside a trained model, the counted one over the same examples (softmax.ts,
   * `countModelImage`): a second opinion whose agreement the confidence weighs. Absent in
   * images linked before it existed, and when the model itself is counted.
   */
  counted?: ModelImage | null;
  idf: Float32Array;
  unseenIdf: number;
  informative: Uint8Array;
  offset: Uint32Array;
  postDoc: Uint32Array;
  postW: Float32Array;
  exampleAgent: Uint32Array;
  agentStart: Uint32Array;
  texts: string[];
}

/** Links the agents' parts (registry order): vocabulary, idf, postings, and the model. */
export function linkClassifierImage(
  parts: readonly ClassifierPart[],
  options: Partial<SoftmaxOptions> & { trained?: boolean } = {},
): ClassifierImage {
  const vocab = new Map<string, number>();
  const terms: string[] = [];
  const gramVocab = new IntTable(256);
  const df: number[] = [];
  const idOf = (key: string): number => {
    let id = vocab.get(key);
    if (id === undefined) {
      id = df.length;
      vocab.set(key, id);
      terms.push(key);
      df.push(0);
    }
    return id;
  };
  const gramIdOf = (key: number): number => {
    let id = gramVocab.get(key);
    if (id < 0) {
      id = df.length;
      gramVocab.set(key, id);
      terms.push("");
      df.push(0);
    }
    return id;
  };
  const texts: string[] = [];
  const owner: number[] = [];
  const termStart: number[] = [0];
  const termIds: number[] = [];
  const termTf: number[] = [];
  const rowStart: number[] = [0];
  const rowFeatures: number[] = [];
  parts.map(currentPart).forEach((part, a) => {
    part.rows.forEach((row, i) => {
      for (const [term, count] of row.terms) {
        const id = idOf(term);
        df[id] = (df[id] as number) + 1;
        termIds.push(id);
        termTf.push(count);
        rowFeatures.push(id);
      }
      for (const g of row.grams) rowFeatures.push(gramIdOf(g));
      texts.push(part.texts[i] ?? "");
      owner.push(a);
      termStart.push(termIds.length);
      rowStart.push(rowFeatures.length);
    });
  });
  const n = texts.length;
  const v = df.length;
  const agentCount = parts.length;
  const exampleAgent = Uint32Array.from(owner);
  const trainingSet = {
    rowStart: Uint32Array.from(rowStart),
    features: Uint32Array.from(rowFeatures),
    labels: exampleAgent,
    featureCount: v,
    agentCount,
  };
  const trained = options.trained ?? agentCount <= TRAINED_AGENTS_MAX;
  const model = trained ? trainSoftmaxImage(trainingSet, options) : countModelImage(trainingSet);
  const counted = trained ? countModelImage(trainingSet) : null;

  const idf = new Float32Array(v);
  for (let t = 0; t < v; t++) idf[t] = Math.log((n + 1) / ((df[t] as number) + 1)) + 1;
  const unseenIdf = Math.log(n + 1) + 1;
  const commonDf = Math.max(64, n * COMMON_TERM_SHARE);
  // Terms the neighbour search uses: not too common, not function words.
  const informative = new Uint8Array(v);
  for (const [term, t] of vocab) informative[t] = (df[t] as number) <= commonDf && !isFunctionTerm(term) ? 1 : 0;

  // Postings in CSR: term t's examples are postDoc[offset[t] .. offset[t+1]), in example order.
  const offset = new Uint32Array(v + 1);
  for (let t = 0; t < v; t++) offset[t + 1] = (offset[t] as number) + (df[t] as number);
  const cursor = offset.slice(0, v);
  const postDoc = new Uint32Array(termIds.length);
  const postW = new Float32Array(termIds.length);
  for (let d = 0; d < n; d++) {
    const s = termStart[d] as number;
    const e = termStart[d + 1] as number;
    let norm = 0;
    for (let j = s; j < e; j++) {
      const wt = (1 + Math.log(termTf[j] as number)) * (idf[termIds[j] as number] as number);
      norm += wt * wt;
    }
    norm = Math.sqrt(norm) || 1;
    for (let j = s; j < e; j++) {
      const t = termIds[j] as number;
      const at = cursor[t] as number;
      cursor[t] = at + 1;
      postDoc[at] = d;
      postW[at] = ((1 + Math.log(termTf[j] as number)) * (idf[t] as number)) / norm;
    }
  }
  // Examples are numbered agent by agent, so each posting list is grouped by agent too.
  const agentStart = new Uint32Array(agentCount + 1);
  for (let d = 0; d < n; d++) agentStart[(exampleAgent[d] as number) + 1] = d + 1;
  for (let a = 0; a < agentCount; a++) {
    if ((agentStart[a + 1] as number) < (agentStart[a] as number)) agentStart[a + 1] = agentStart[a] as number;
  }
  return {
    agents: parts.map((p) => p.agent),
    terms,
    grams: gramVocab.image(),
    model,
    trained,
    counted,
    idf,
    unseenIdf,
    informative,
    offset,
    postDoc,
    postW,
    exampleAgent,
    agentStart,
    texts,
  };
}
