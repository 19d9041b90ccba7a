import { describe, expect, it } from "vitest";
import {
  countModelImage,
  modelFromImage,
  type TrainingSet,
  trainSoftmax,
} from "../../../src/routing/classifier/softmax";

/** Three agents; features 0–2 belong to one agent each, feature 3 to agents 0 and 1. */
function set(): TrainingSet {
  const rows = [[0, 3], [0], [1, 3], [1], [2], [2]];
  const rowStart = new Uint32Array(rows.length + 1);
  rows.forEach((r, i) => {
    rowStart[i + 1] = (rowStart[i] as number) + r.length;
  });
  return {
    rowStart,
    features: Uint32Array.from(rows.flat()),
    labels: Uint32Array.from([0, 0, 1, 1, 2, 2]),
    featureCount: 4,
    agentCount: 3,
  };
}

const probabilities = (logits: number[]) => {
  const max = Math.max(...logits);
  const e = logits.map((l) => Math.exp(l - max));
  const sum = e.reduce((s, x) => s + x, 0);
  return e.map((x) => x / sum);
};

const probabilityOf = (model: ReturnType<typeof trainSoftmax>, features: number[], agent: number) => {
  const logits = [0, 0, 0];
  model.addLogits(features, 1, logits);
  return probabilities(logits)[agent] as number;
};

describe("softmax training", () => {
  it("keeps a training example's probability short of 1 with label smoothing", () => {
    const sharp = trainSoftmax(set(), { smoothing: 0, l2: 0, epochs: 200 });
    const smooth = trainSoftmax(set(), { smoothing: 0.2, l2: 0, epochs: 200 });
    expect(probabilityOf(sharp, [0], 0)).toBeGreaterThan(0.95);
    const p = probabilityOf(smooth, [0], 0);
    expect(p).toBeGreaterThan(0.5);
    expect(p).toBeLessThan(probabilityOf(sharp, [0], 0));
    expect(p).toBeLessThan(0.9);
  });

  it("eases L2 once a registry has more than l2Examples examples", () => {
    // With l2Examples at the set's size the full L2 applies; below it, it shrinks by n / l2Examples.
    const full = trainSoftmax(set(), { l2: 0.05, l2Examples: 6, epochs: 50 });
    const eased = trainSoftmax(set(), { l2: 0.05, l2Examples: 1, epochs: 50 });
    expect(Math.abs(eased.weight(0, 0))).toBeGreaterThan(Math.abs(full.weight(0, 0)));
  });
});

describe("counted model (complement naive Bayes)", () => {
  it("adds evidence only for agents whose examples hold the feature, more for those holding it more", () => {
    const model = modelFromImage(countModelImage(set()));
    expect(model.weight(0, 0)).toBeGreaterThan(0);
    expect(model.weight(0, 1)).toBe(0);
    expect(model.weight(0, 2)).toBe(0);
    // Feature 3 is shared by agents 0 and 1: weaker evidence for either than a feature of its own.
    expect(model.weight(3, 0)).toBeGreaterThan(0);
    expect(model.weight(3, 0)).toBeLessThan(model.weight(0, 0));
    expect(model.weight(3, 0)).toBeCloseTo(model.weight(3, 1), 9);
  });
});

describe("a counted model kept as its counts", () => {
  /** Many agents and features, each example holding a few of them: rows of several counts. */
  function larger(): TrainingSet {
    const rows: number[][] = [];
    const labels: number[] = [];
    for (let d = 0; d < 600; d++) {
      labels.push(d % 40);
      rows.push([...new Set([d % 7, 7 + ((d * 13) % 50), 57 + (d % 40), 100 + ((d * d) % 97)])]);
    }
    const rowStart = new Uint32Array(rows.length + 1);
    rows.forEach((r, i) => {
      rowStart[i + 1] = rowStart[i]! + r.length;
    });
    return {
      rowStart,
      features: Uint32Array.from(rows.flat()),
      labels: Uint32Array.from(labels),
      featureCount: 197,
      agentCount: 40,
    };
  }

  it("gives every weight and logit back bit for bit, in fewer bytes", () => {
    const image = countModelImage(larger());
    const asWeights = modelFromImage(image);
    const asCounts = modelFromImage(image, { counted: true });
    for (let f = 0; f < 197; f++)
      for (let k = 0; k < 40; k++) expect(asCounts.weight(f, k)).toBe(asWeights.weight(f, k));
    const a = new Array<number>(40).fill(0);
    const b = new Array<number>(40).fill(0);
    asWeights.addLogits([0, 3, 9, 60, 150, -1], 0.5, a);
    asCounts.addLogits([0, 3, 9, 60, 150, -1], 0.5, b);
    expect(b).toEqual(a);
    expect(asCounts.memoryBytes).toBeLessThan(asWeights.memoryBytes);
  });

  it("keeps the weights of a model that was trained, not counted", () => {
    const image = countModelImage(set());
    const trained = { ...image, w: image.w.map((x) => x + 0.1) };
    const model = modelFromImage(trained, { counted: true });
    // Feature 0's one entry (agent 0's) is the first.
    expect(model.weight(0, 0)).toBe(trained.w[0]!);
    expect(model.memoryBytes).toBeGreaterThanOrEqual(trained.w.byteLength);
  });
});
