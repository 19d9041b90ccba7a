import { describe, expect, it } from "vitest";
import { PEER_QUERY_MARGIN_S, peerQueryTimeoutS } from "../../src/collaboration/peer-query";

describe("the deadline of an agent's question to another agent", () => {
  it("is the asked agent's turn deadline plus the margin", () => {
    expect(peerQueryTimeoutS({ kind: "llm", timeout_s: 20 })).toBe(20 + PEER_QUERY_MARGIN_S);
    expect(peerQueryTimeoutS({ kind: "webhook", timeout_s: 2.5 })).toBe(8);
  });

  it("falls back to 30 s for a webhook and 60 s for a model agent", () => {
    expect(peerQueryTimeoutS({ kind: "webhook" })).toBe(35);
    expect(peerQueryTimeoutS({ kind: "llm" })).toBe(65);
  });
});
