import { defineConfig } from "vitest/config";

/**
 * The interop suite (docs/a2a.md, docs/mcp.md): Relay under `wrangler dev` on loopback against
 * the official A2A and MCP SDKs, in Node. `npm run test:interop`; .ci/run counts its report.
 */
export default defineConfig({
  test: {
    name: "interop",
    include: ["test/interop/**/*.interop.test.ts"],
    environment: "node",
    // One wrangler dev and its neighbours on fixed loopback ports (8880–8889): one file at a time.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 180_000,
    reporters: ["default", "json"],
    outputFile: { json: "./.test-results/vitest-interop.json" },
  },
});
