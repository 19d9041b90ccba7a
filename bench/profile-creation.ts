/**
 * Where a session creation's CPU goes in the whole workerd process, beside the floors it is
 * measured against (bench/lib/baseline-object.ts): Relay's `POST /v1/sessions` and each
 * creation floor, 1,000 creations each at 16 in flight, state in memory, sampled by Linux
 * `perf` with V8's symbol map, so local D1, Miniflare's entry Worker and the runtime show
 * beside the JavaScript (bench/profile-handoffs.ts sees the isolate's JavaScript only).
 * Each sample's stack is charged to the first part, in PARTS' order, any frame of it names.
 * The counts include the flushes to D1 each load left behind.
 *
 *   npx tsx bench/profile-creation.ts   (needs `perf`: apt install linux-perf)
 */

import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { apiClient } from "./lib/api-client";
import { CREATION_FLOORS, floorCall, startBaselineObjects } from "./lib/baseline-object";
import { hasPerf, PERF_V8_FLAGS, perfProfile, printParts, removeSymbolMaps, WORKERD_PARTS } from "./lib/perf-profile";
import { flushesSettled, startWorkerdServer } from "./lib/workerd-server";
import { measureLoad } from "./lib/wrangler-dev";

process.env.MINIFLARE_WORKERD_V8_FLAGS = PERF_V8_FLAGS;

const PORT = Number(process.env.BENCH_PORT ?? 8799);
const KEY = "bench-profile-creation-key";
const CREATIONS = 1000;
const CONCURRENCY = 16;
const HZ = 2000;

if (!hasPerf()) {
  console.error("bench/profile-creation.ts needs Linux perf on the PATH (Debian: apt install linux-perf).");
  process.exit(1);
}

/** µs per creation by part, per load, in the order measured. */
const profiles: [string, Map<string, number>][] = [];
const folder = mkdtempSync(join(tmpdir(), "relay-profile-creation-"));
try {
  const relay = await startWorkerdServer(PORT, KEY);
  try {
    const api = apiClient(relay.url, KEY).call;
    const create = async () => {
      const created = await api("POST", "/v1/sessions", { agent: "triage", metadata: { bench: "profile" } });
      if (created.status !== 201) throw new Error(`create: ${created.status} ${JSON.stringify(created.json)}`);
    };
    profiles.push(["Relay", await profile(join(folder, "relay.data"), create)]);
  } finally {
    await relay.stop();
  }
  const plain = await startBaselineObjects(PORT + 1);
  try {
    for (const { path, short } of CREATION_FLOORS) {
      const call = (i: number) => floorCall(`${plain.url}/${path}/${path}-${i}`, { method: "POST" });
      profiles.push([short, await profile(join(folder, `${path}.data`), call)]);
    }
  } finally {
    await plain.stop();
  }
} finally {
  rmSync(folder, { recursive: true, force: true });
  removeSymbolMaps();
}

console.log(
  `\nworkerd CPU per creation, µs, by part (${CREATIONS} creations, ${CONCURRENCY} in flight, state in memory, perf at ${HZ} Hz)`,
);
printParts(profiles, WORKERD_PARTS);

/** A warm-up, then CREATIONS calls of `call` (each a new object) under perf, the flushes they left included. */
async function profile(file: string, call: (i: number) => Promise<unknown>): Promise<Map<string, number>> {
  await measureLoad(200, CONCURRENCY, (i) => call(CREATIONS + i));
  await flushesSettled();
  return perfProfile(
    file,
    CREATIONS,
    async () => {
      await measureLoad(CREATIONS, CONCURRENCY, call);
      await flushesSettled();
    },
    WORKERD_PARTS,
    HZ,
  );
}
