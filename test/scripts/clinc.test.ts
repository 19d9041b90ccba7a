import { describe, expect, it } from "vitest";
import { ClincDataError, type ClincRow, clincDir, clincFromFiles } from "../../bench/lib/clinc";

const domains = { banking: ["balance", "transfer"], travel: ["book_flight"] };
const workspace = {
  train: [
    { text: "what is my balance", intent: "balance", domain: "banking" },
    { text: "book me a flight", intent: "book_flight", domain: "travel" },
    { text: "how tall is everest", intent: "oos", domain: "oos" },
  ],
  val: [
    { text: "send money to mum", intent: "transfer", domain: "banking" },
    { text: "what is love", intent: "oos", domain: "oos" },
  ],
};
// The same rows in the published layout (github.com/clinc/oos-eval data/data_full.json).
const dataFull = {
  train: [
    ["what is my balance", "balance"],
    ["book me a flight", "book_flight"],
  ],
  val: [["send money to mum", "transfer"]],
  test: [["pay my bill", "balance"]],
  oos_train: [["how tall is everest", "oos"]],
  oos_val: [["what is love", "oos"]],
  oos_test: [],
};

const folder = (files: Record<string, unknown>) => (name: string) =>
  name in files ? (typeof files[name] === "string" ? (files[name] as string) : JSON.stringify(files[name])) : undefined;

function refusal(fn: () => unknown): ClincDataError {
  try {
    fn();
  } catch (error) {
    if (error instanceof ClincDataError) return error;
    throw error;
  }
  throw new Error("expected a ClincDataError");
}

describe("the CLINC150 loader", () => {
  it("reads the workspace layout: train_val.json and domains.json", () => {
    const data = clincFromFiles("/d", folder({ "train_val.json": workspace, "domains.json": domains }));
    expect(data).toEqual({ ...workspace, domains });
  });

  it("converts the original data_full.json in memory to the same rows: domains from domains.json, oos rows last", () => {
    const data = clincFromFiles("/d", folder({ "data_full.json": dataFull, "domains.json": domains }));
    expect(data).toEqual({ ...workspace, domains });
    expect(data.train.every((r: ClincRow) => r.text !== "pay my bill")).toBe(true);
  });

  it("says where it looked, the variable to point elsewhere, the accepted formats and where to get the data when it is missing", () => {
    const message = refusal(() => clincFromFiles("/nowhere/clinc150", folder({}))).message;
    expect(message).toContain("/nowhere/clinc150");
    expect(message).toContain("missing: domains.json, and train_val.json or data_full.json");
    expect(message).toContain("CLINC150_DIR=");
    expect(message).toContain("../shared/datasets/clinc150");
    expect(message).toContain("https://github.com/clinc/oos-eval");
    expect(message).toContain("data_full.json");
    expect(message).toContain("CC BY 3.0");
    expect(message).toContain("Larson et al. 2019");
    expect(message).not.toMatch(/\n\s+at /);
  });

  it("names only what is missing", () => {
    const noDomains = refusal(() => clincFromFiles("/d", folder({ "train_val.json": workspace }))).message;
    expect(noDomains).toContain("missing: domains.json)");
    const noRows = refusal(() => clincFromFiles("/d", folder({ "domains.json": domains }))).message;
    expect(noRows).toContain("missing: train_val.json or data_full.json)");
  });

  it("refuses files it cannot read as CLINC150, naming the file and what it expected", () => {
    expect(
      refusal(() => clincFromFiles("/d", folder({ "train_val.json": "{not json", "domains.json": domains }))).message,
    ).toMatch(/\/d\/train_val\.json is not CLINC150 data .*not JSON/);
    expect(
      refusal(() => clincFromFiles("/d", folder({ "train_val.json": { train: [] }, "domains.json": domains }))).message,
    ).toContain("expected { train, val }");
    expect(
      refusal(() => clincFromFiles("/d", folder({ "train_val.json": workspace, "domains.json": ["banking"] }))).message,
    ).toContain("/d/domains.json");
    expect(
      refusal(() =>
        clincFromFiles("/d", folder({ "data_full.json": { ...dataFull, oos_val: "x" }, "domains.json": domains })),
      ).message,
    ).toContain('expected "oos_val" to be an array of [text, intent] pairs');
    const unknownIntent = { ...dataFull, val: [["fly me", "teleport"]] };
    expect(
      refusal(() => clincFromFiles("/d", folder({ "data_full.json": unknownIntent, "domains.json": domains }))).message,
    ).toContain('intent "teleport" is in no domain of domains.json');
  });

  it("looks in CLINC150_DIR when set, else beside the repository", () => {
    expect(clincDir({ CLINC150_DIR: "/data/oos-eval/data" })).toBe("/data/oos-eval/data");
    expect(clincDir({})).toMatch(/\/shared\/datasets\/clinc150$/);
  });
});
