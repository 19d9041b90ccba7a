import { describe, expect, it } from "vitest";
import { extractFeatures } from "../../src/routing/classifier/features";
import { bucketCount, bucketsOf } from "../../src/routing/feature-buckets";
import { linkShard } from "../../src/routing/router-build";
import {
  decodeShard,
  encodeShard,
  packSections,
  readHead,
  sliceShard,
  unpackSections,
} from "../../src/routing/router-codec";
import { compileAgentPart, linkRouterImage, type RouterImage } from "../../src/routing/router-image";
import { PATTERN_BUDGET } from "../../src/routing/rules";
import { inputs, synthetic, team } from "./router-fixtures";

const big = synthetic(300);
/** The kinds of image a build links: trained (dense, and sparse), counted, and with nothing enabled. */
const images: [string, RouterImage][] = [
  ["a trained shard (dense model)", linkShard(team.map(compileAgentPart), PATTERN_BUDGET, 1)],
  ["a trained shard (sparse model)", linkRouterImage(team.map(compileAgentPart), { denseLimit: 0 })],
  ["a counted shard of a sharded registry", linkShard(big.agents.map(compileAgentPart), PATTERN_BUDGET, 2)],
  ["a shard with no agent enabled", linkShard([compileAgentPart(team[3]!)], PATTERN_BUDGET, 1)],
];

describe("a shard in sections", () => {
  it.each(images)("decodes to the image that was linked: %s", (_, image) => {
    const sections = encodeShard(image);
    expect(decodeShard(sections)).toEqual(image);
    // As an isolate's load receives it: one buffer, its sections views on it.
    expect(decodeShard(unpackSections(structuredClone(packSections(sections))))).toEqual(image);
  });

  it("a short input's features fall in few of a large shard's buckets, and its slice knows those features only", () => {
    const image = images[2]![1];
    const sections = encodeShard(image);
    const head = readHead(sections.head);
    expect(head.buckets).toBe(bucketCount(image.classifier!.idf.length));
    expect(head.buckets).toBeGreaterThanOrEqual(256);
    const features = extractFeatures(`${big.words[0]} ${big.words[1]} zzunknown`);
    const wanted = bucketsOf(features, head.buckets);
    expect(wanted.length).toBeLessThan(head.buckets / 4);
    const slice = sliceShard(head, new Map(wanted.map((b) => [b, sections.buckets[b]!])), features);
    const known = new Set(image.classifier!.terms);
    const sliced = slice.classifier!.terms.filter((t) => t !== "");
    expect(sliced.length).toBeGreaterThan(0);
    for (const term of sliced) {
      expect(known.has(term)).toBe(true);
      expect(features.terms.map((t) => t.term)).toContain(term);
    }
    expect(slice.classifier!.texts.every((t) => t === "")).toBe(true);
  });

  it("a slice from buckets missing (none of the input's features stored) knows no feature", () => {
    const head = readHead(encodeShard(images[2]![1]).head);
    const slice = sliceShard(head, new Map(), extractFeatures(inputs(big.agents, big.words, 6)[5]!));
    expect(slice.classifier!.idf).toHaveLength(0);
  });
});
