import { defineConfig } from "vitest/config";

/**
 * `npm run test:cli`: the typed client (client/) and the `relay` command in Node against a
 * real `wrangler dev` (test/cli/global-setup.ts), the command run as a child process.
 * Separate from `npm test`, which runs inside workerd.
 */
export default defineConfig({
  test: {
    include: ["test/client/**/*.test.ts", "test/cli/**/*.test.ts"],
    globalSetup: ["./test/cli/global-setup.ts"],
    // One server whose tenant state the files share (routing config, agents, the events URL): one file at a time.
    fileParallelism: false,
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ["default", "json"],
    outputFile: { json: "./.test-results/vitest-cli.json" },
  },
});
