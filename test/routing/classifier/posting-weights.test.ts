import { describe, expect, it } from "vitest";
import { compileClassifierPart, linkClassifierImage } from "../../../src/routing/classifier/classifier-link";
import { PostingWeights } from "../../../src/routing/classifier/posting-weights";

function imageOf(examples: string[][]) {
  return linkClassifierImage(examples.map((e, a) => compileClassifierPart({ agent: `agent-${a}`, examples: e })));
}

/** Every posting's weight read back, and what it holds. */
function readBack(image: ReturnType<typeof imageOf>, postW = image.postW) {
  const n = image.texts.length;
  const idfOf = (t: number) => Math.fround(Math.log((n + 1) / (image.offset[t + 1]! - image.offset[t]! + 1)) + 1);
  const weights = PostingWeights.of(postW, image.offset, image.postDoc, n, idfOf);
  const read: number[] = [];
  for (let t = 0; t + 1 < image.offset.length; t++)
    for (let p = image.offset[t]!; p < image.offset[t + 1]!; p++)
      read.push(weights.weight(p, image.postDoc[p]!, idfOf(t)));
  return { read, bytes: weights.byteLength };
}

describe("postingWeights", () => {
  const repeated = [
    ["refund refund my order", "where is my refund", "charged twice twice twice for one order"],
    ["the app crashes", "app error on the settings page", "reset my password please"],
    ["book a flight to paris", "flight flight status", "我要退款 我要退款"],
  ];

  it("gives back every stored weight bit for bit from norms and counts, in fewer bytes", () => {
    const image = imageOf(repeated);
    const { read, bytes } = readBack(image);
    expect(read).toEqual(Array.from(image.postW));
    // An example's norm (8 bytes) and 2 bits a posting (no count past 3), where the weights were 4 bytes a posting.
    expect(bytes).toBe(8 * image.texts.length + Math.ceil(image.postW.length / 4));
    expect(bytes).toBeLessThan(image.postW.byteLength);
  });

  it("keeps no counts when every term occurs once in its example", () => {
    const image = imageOf([
      ["refund my order", "where is it"],
      ["the app crashes", "reset my password"],
    ]);
    const { read, bytes } = readBack(image);
    expect(read).toEqual(Array.from(image.postW));
    expect(bytes).toBe(8 * image.texts.length);
  });

  it("keeps the weights themselves when counts and norms would not give them back", () => {
    const image = imageOf(repeated);
    // One weight a float32 step off what its example's norm gives: nothing derived may replace it.
    const postW = Float32Array.from(image.postW);
    const bits = new Uint32Array(postW.buffer);
    bits[5] = bits[5]! + 1;
    const { read, bytes } = readBack(image, postW);
    expect(read).toEqual(Array.from(postW));
    expect(bytes).toBe(postW.byteLength);
  });
});
