/**
 * Multinomial logistic regression over sparse binary features, trained at compile time.
 *
 * Why a discriminative model: nearest-neighbour similarity is dominated by function words
 * ("can you tell me…") shared across agents; a trained linear model learns which terms tell
 * agents apart ("define", "apr", "travel alert") and reaches ~97% domain accuracy on CLINC150
 * where TF-IDF nearest neighbours stay near 90%.
 *
 * Weights: a registry up to `denseLimit` (feature × agent) weights stores them all, feature f's
 * for agent k at f × agents + k; a larger one only the pairs seen in training (an agent's own
 * vocabulary) in CSR form, which keeps memory proportional to the examples instead of
 * vocabulary × agents. A registry of one agent trains it against a "none of these" class whose
 * logit is fixed at 0 (a softmax over one class learns nothing).
 *
 * Training: AdaGrad SGD with L2 and label smoothing, a fixed-seed shuffle (so compiling is
 * deterministic), each example's features scaled to unit length. Hyper-parameters were chosen on
 * CLINC150 train less its unseen split (`npx tsx bench/tune-classifier.ts`), never on val.
 */
import { seededRandom } from "../../lib/prng";
import { narrowIndex } from "./narrow";
import { PackedCounts } from "./packed-counts";
import { RowStarts } from "./row-starts";

/** Examples as CSR rows of feature ids, one label (agent index) each. */
export interface TrainingSet {
  rowStart: Uint32Array;
  features: Uint32Array;
  labels: Uint32Array;
  featureCount: number;
  agentCount: number;
}

/** Training hyper-parameters (defaults are the fitted ones). */
export interface SoftmaxOptions {
  /** Passes over the examples, at most (see maxVisits). */
  epochs: number;
  learningRate: number;
  /**
   * L2 weight per step for a registry of up to `l2Examples` examples; a larger one gets
   * l2 × l2Examples / examples, so the prior's total pull stays fixed while the evidence grows.
   */
  l2: number;
  l2Examples: number;
  /**
   * Label smoothing: the target puts 1 − smoothing on the example's agent and spreads the rest
   * over the others (not with one agent). It keeps a few examples from driving probabilities to
   * 0 and 1, so margins say more about how sure the model is.
   */
  smoothing: number;
  /** Example visits allowed in total; epochs shrink for larger registries. */
  maxVisits: number;
  /** Above this many (feature × agent) weights the model keeps only seen pairs. */
  denseLimit: number;
  /** Gradient errors below this are not applied. */
  minError: number;
  seed?: number;
}

export const SOFTMAX_DEFAULTS: SoftmaxOptions = {
  epochs: 12,
  learningRate: 0.5,
  l2: 1e-3,
  l2Examples: 1600,
  smoothing: 0.1,
  maxVisits: 80_000,
  denseLimit: 1 << 21,
  minError: 1e-3,
};

/** A trained model. */
export interface SoftmaxModel {
  readonly agentCount: number;
  /** Adds x × w[f, ·] to out for each present feature f (ids < 0 are unknown and skipped). */
  addLogits(ids: ArrayLike<number>, x: number, out: number[]): void;
  /** The weight of feature f for agent a (0 when not stored). */
  weight(f: number, a: number): number;
  readonly memoryBytes: number;
}

/** The (feature, agent) pairs seen in training, in CSR form (the sparse model's support). */
function support(set: TrainingSet): { start: Uint32Array; agent: Uint16Array | Uint32Array } {
  const { featureCount: v, agentCount: a } = set;
  const start = new Uint32Array(v + 1);
  const pairs = new Set<number>();
  const n = set.labels.length;
  for (let d = 0; d < n; d++) {
    const label = set.labels[d] as number;
    for (let j = set.rowStart[d] as number; j < (set.rowStart[d + 1] as number); j++) {
      pairs.add((set.features[j] as number) * a + label);
    }
  }
  const sorted = Float64Array.from(pairs).sort();
  const agent = a <= 0x10000 ? new Uint16Array(sorted.length) : new Uint32Array(sorted.length);
  sorted.forEach((key, i) => {
    const f = Math.floor(key / a);
    agent[i] = key - f * a;
    start[f + 1] = (start[f + 1] as number) + 1;
  });
  for (let f = 0; f < v; f++) start[f + 1] = (start[f + 1] as number) + (start[f] as number);
  return { start, agent };
}

/** A model as plain data (what a stored router keeps): dense weights, or CSR over the support. */
export interface ModelImage {
  agentCount: number;
  w: Float32Array;
  /** Null when dense (feature f's weight for agent k at f × agentCount + k). */
  start: Uint32Array | null;
  agent: Uint16Array | Uint32Array | null;
}

/** Trains the model (see {@link trainSoftmaxImage}). */
export function trainSoftmax(set: TrainingSet, options: Partial<SoftmaxOptions> = {}): SoftmaxModel {
  return modelFromImage(trainSoftmaxImage(set, options));
}

/**
 * Trains the model; cost ≈ epochs × Σ(features per example × agents per feature), and after
 * the first epochs only agents the example does not already rule out are updated.
 */
export function trainSoftmaxImage(set: TrainingSet, options: Partial<SoftmaxOptions> = {}): ModelImage {
  const o = { ...SOFTMAX_DEFAULTS, ...options };
  const { agentCount: a, featureCount: v, rowStart, features, labels } = set;
  const n = labels.length;
  // Dense: feature f's weight for agent k is at f × a + k. Sparse: CSR over seen pairs.
  const dense = v * a <= o.denseLimit;
  const { start, agent } = dense ? { start: null, agent: null } : support(set);
  const size = dense ? v * a : (agent as Uint16Array | Uint32Array).length;
  // Train in doubles (no float32 conversions in the hot loop), keep floats.
  const wt = new Float64Array(size);
  const g2 = new Float64Array(size);
  const z = new Float64Array(a);
  const active = new Uint32Array(a);
  const order = new Uint32Array(n);
  for (let i = 0; i < n; i++) order[i] = i;
  const random = seededRandom(o.seed ?? 0x5eed).next;
  const epochs = n === 0 ? 0 : Math.max(1, Math.min(o.epochs, Math.floor(o.maxVisits / n)));
  const l2 = n > o.l2Examples ? (o.l2 * o.l2Examples) / n : o.l2;
  // With one agent there is nothing to spread the smoothed mass over ("none" is not trained).
  const smoothing = a > 1 ? o.smoothing : 0;
  const onLabel = 1 - smoothing;
  const offLabel = a > 1 ? smoothing / (a - 1) : 0;
  const step = (p: number, err: number, x: number) => {
    const grad = err * x + l2 * (wt[p] as number);
    const acc = (g2[p] as number) + grad * grad;
    g2[p] = acc;
    wt[p] = (wt[p] as number) - (o.learningRate * grad) / Math.sqrt(acc + 1e-8);
  };
  for (let e = 0; e < epochs; e++) {
    for (let i = n - 1; i > 0; i--) {
      const j = Math.floor(random() * (i + 1));
      const t = order[i] as number;
      order[i] = order[j] as number;
      order[j] = t;
    }
    for (let r = 0; r < n; r++) {
      const d = order[r] as number;
      const s = rowStart[d] as number;
      const end = rowStart[d + 1] as number;
      if (end === s) continue;
      const x = 1 / Math.sqrt(end - s);
      z.fill(0);
      for (let j = s; j < end; j++) {
        const f = features[j] as number;
        if (start === null) {
          const base = f * a;
          for (let k = 0; k < a; k++) z[k] = (z[k] as number) + (wt[base + k] as number) * x;
        } else {
          for (let p = start[f] as number; p < (start[f + 1] as number); p++) {
            const k = (agent as Uint16Array)[p] as number;
            z[k] = (z[k] as number) + (wt[p] as number) * x;
          }
        }
      }
      // With one agent, a "none of these" class (logit fixed at 0, never a label) gives the
      // softmax something to tell the agent from; with several, the agents do.
      let max = a === 1 ? 0 : -Infinity;
      for (let k = 0; k < a; k++) if ((z[k] as number) > max) max = z[k] as number;
      let sum = a === 1 ? Math.exp(-max) : 0;
      for (let k = 0; k < a; k++) {
        const ez = Math.exp((z[k] as number) - max);
        z[k] = ez;
        sum += ez;
      }
      const label = labels[d] as number;
      // Agents the example already rules out contribute nothing worth a step (lazy L2 too):
      // after the first epochs this skips most updates.
      let nActive = 0;
      for (let k = 0; k < a; k++) {
        const err = (z[k] as number) / sum - (k === label ? onLabel : offLabel);
        z[k] = err;
        if (err >= o.minError || err <= -o.minError) active[nActive++] = k;
      }
      if (nActive === 0) continue;
      for (let j = s; j < end; j++) {
        const f = features[j] as number;
        if (start === null) {
          const base = f * a;
          for (let i = 0; i < nActive; i++) {
            const k = active[i] as number;
            step(base + k, z[k] as number, x);
          }
        } else {
          for (let p = start[f] as number; p < (start[f + 1] as number); p++) {
            const err = z[(agent as Uint16Array)[p] as number] as number;
            if (err >= o.minError || err <= -o.minError) step(p, err, x);
          }
        }
      }
    }
  }
  return { agentCount: a, w: Float32Array.from(wt), start, agent };
}

/** Smoothing of the count model's complement frequencies. */
const COUNT_ALPHA = 0.5;

/**
 * A model that is counted, not trained, for registries too large to train jointly at every
 * change: complement naive Bayes (Rennie et al., 2003) over the same support. Feature f weighs
 * log(T + α) − log(T − n + α) for an agent whose examples hold it n times (T: in all agents'
 * examples), so it only ever adds evidence for agents that have the feature, and one agent's
 * weights depend on its own counts and the registry's totals only.
 */
export function countModelImage(set: TrainingSet): ModelImage {
  const { agentCount: a, featureCount: v, rowStart, features, labels } = set;
  const { start, agent } = support(set);
  const counts = new Float64Array(agent.length);
  const totals = new Float64Array(v);
  for (let d = 0; d < labels.length; d++) {
    const label = labels[d] as number;
    for (let j = rowStart[d] as number; j < (rowStart[d + 1] as number); j++) {
      const f = features[j] as number;
      totals[f] = (totals[f] as number) + 1;
      for (let p = start[f] as number; p < (start[f + 1] as number); p++) {
        if (agent[p] === label) {
          counts[p] = (counts[p] as number) + 1;
          break;
        }
      }
    }
  }
  const w = new Float32Array(agent.length);
  for (let f = 0; f < v; f++) {
    const t = totals[f] as number;
    for (let p = start[f] as number; p < (start[f + 1] as number); p++)
      w[p] = Math.log(t + COUNT_ALPHA) - Math.log(t - (counts[p] as number) + COUNT_ALPHA);
  }
  return { agentCount: a, w, start, agent };
}

/**
 * A counted model's weights as the counts they were computed from (docs/scaling.md, "Memory"):
 * entry p of feature f weighs log(T + α) − log(T − n + α), n its agent's examples holding f and
 * T the sum of n over f's entries (every example holding f belongs to an entry's agent). The
 * counts are recovered from the weights and kept when every weight they give back is the one
 * stored, bit for bit, and every count fits a byte; else null (the weights stay).
 */
function countsOf(w: Float32Array, start: ArrayLike<number>, features: number): Uint8Array | null {
  const n = new Uint8Array(w.length);
  for (let f = 0; f < features; f++) {
    const from = start[f]!;
    const to = start[f + 1]!;
    // T from the weights: with S = Σ (1 − e^−w), T = α·S / (1 − S).
    let sum = 0;
    for (let p = from; p < to; p++) sum += 1 - Math.exp(-w[p]!);
    const t = Math.round((COUNT_ALPHA * sum) / (1 - sum));
    let total = 0;
    for (let p = from; p < to; p++) {
      const c = Math.round((t + COUNT_ALPHA) * (1 - Math.exp(-w[p]!)));
      if (c < 1 || c > 255) return null;
      n[p] = c;
      total += c;
    }
    if (total !== t) return null;
    for (let p = from; p < to; p++) if (Math.fround(countWeight(t, n[p]!)) !== w[p]) return null;
  }
  return n;
}

/** A counted weight from its counts, as countModelImage computes it. */
function countWeight(t: number, n: number): number {
  return Math.log(t + COUNT_ALPHA) - Math.log(t - n + COUNT_ALPHA);
}

/** The model with its features renumbered: feature f of the result is feature order[f] of `image`. */
export function renumberModel(image: ModelImage, order: Uint32Array): ModelImage {
  const { agentCount: a, w, start, agent } = image;
  if (start === null || agent === null) {
    const out = new Float32Array(w.length);
    for (let f = 0; f < order.length; f++) out.set(w.subarray(order[f]! * a, order[f]! * a + a), f * a);
    return { agentCount: a, w: out, start: null, agent: null };
  }
  const outStart = new Uint32Array(order.length + 1);
  const outAgent = agent instanceof Uint16Array ? new Uint16Array(agent.length) : new Uint32Array(agent.length);
  const outW = new Float32Array(w.length);
  for (let f = 0; f < order.length; f++) {
    const from = start[order[f]!]!;
    const to = start[order[f]! + 1]!;
    outStart[f + 1] = outStart[f]! + to - from;
    outAgent.set(agent.subarray(from, to), outStart[f]!);
    outW.set(w.subarray(from, to), outStart[f]!);
  }
  return { agentCount: a, w: outW, start: outStart, agent: outAgent };
}

/**
 * The model over its image (its index arrays narrowed where their values allow, see narrow.ts).
 * `counted`: the image is a counted model's (countModelImage), whose weights may be kept as
 * their counts, a byte an entry instead of four, giving the same weights.
 */
export function modelFromImage(image: ModelImage, options: { counted?: boolean } = {}): SoftmaxModel {
  const { agentCount: a } = image;
  const start = image.start === null ? null : narrowIndex(image.start);
  const agent = image.agent === null ? null : narrowIndex(image.agent);
  const counts = options.counted === true && start !== null ? countsOf(image.w, start, start.length - 1) : null;
  if (counts !== null && start !== null && agent !== null)
    return countedModel(a, new RowStarts(start), agent, new PackedCounts(counts));
  const { w } = image;
  return {
    agentCount: a,
    addLogits(ids, x, out) {
      for (let i = 0; i < ids.length; i++) {
        const f = ids[i] as number;
        if (f < 0) continue;
        if (start === null) {
          const base = f * a;
          for (let k = 0; k < a; k++) out[k] = (out[k] as number) + (w[base + k] as number) * x;
        } else {
          for (let p = start[f] as number; p < (start[f + 1] as number); p++) {
            const k = (agent as Uint16Array)[p] as number;
            out[k] = (out[k] as number) + (w[p] as number) * x;
          }
        }
      }
    },
    weight(f, k) {
      if (start === null) return w[f * a + k] as number;
      for (let p = start[f] as number; p < (start[f + 1] as number); p++)
        if ((agent as Uint16Array)[p] === k) return w[p] as number;
      return 0;
    },
    memoryBytes: w.byteLength + (start?.byteLength ?? 0) + (agent?.byteLength ?? 0),
  };
}

/** A counted model over its counts: each feature's total is the sum of its row, its weights computed as read. */
function countedModel(
  a: number,
  rows: RowStarts,
  agent: Uint8Array | Uint16Array | Uint32Array,
  counts: PackedCounts,
): SoftmaxModel {
  // The counts' bits read inline (PackedCounts.at): a route reads every entry of its features' rows twice.
  const { data, indexShift, bitShift, mask } = counts;
  const within = (1 << indexShift) - 1;
  const totalOf = (from: number, to: number): number => {
    let t = 0;
    for (let p = from; p < to; p++) t += (data[p >>> indexShift]! >>> ((p & within) << bitShift)) & mask;
    return t;
  };
  // log(k + α) for every total a feature has: a weight is then two reads, a subtraction and the
  // float32 rounding it was stored with — the same value, bit for bit.
  let most = 0;
  for (let f = 0, from = 0; f < rows.rows; f++) {
    const to = from + rows.count(f);
    most = Math.max(most, totalOf(from, to));
    from = to;
  }
  const logs = new Float64Array(most + 1);
  for (let k = 0; k <= most; k++) logs[k] = Math.log(k + COUNT_ALPHA);
  const weightOf = (t: number, n: number): number => Math.fround(logs[t]! - logs[t - n]!);
  return {
    agentCount: a,
    addLogits(ids, x, out) {
      for (let i = 0; i < ids.length; i++) {
        const f = ids[i] as number;
        if (f < 0) continue;
        const from = rows.at(f);
        const to = from + rows.count(f);
        const t = totalOf(from, to);
        for (let p = from; p < to; p++) {
          const k = agent[p]!;
          const n = (data[p >>> indexShift]! >>> ((p & within) << bitShift)) & mask;
          out[k] = (out[k] as number) + weightOf(t, n) * x;
        }
      }
    },
    weight(f, k) {
      const from = rows.at(f);
      const to = from + rows.count(f);
      for (let p = from; p < to; p++) if (agent[p] === k) return weightOf(totalOf(from, to), counts.at(p));
      return 0;
    },
    memoryBytes: counts.byteLength + rows.byteLength + agent.byteLength + logs.byteLength,
  };
}
