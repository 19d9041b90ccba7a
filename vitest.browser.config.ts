import { defineConfig } from "vitest/config";

/**
 * `npm run test:browser`: the dashboard and /docs in a real headless Chromium (Debian's
 * `chromium`, driven by puppeteer-core) against `wrangler dev`, in Node. Separate from
 * `npm test`, which runs inside workerd.
 */
export default defineConfig({
  test: {
    include: ["test/browser/**/*.test.ts"],
    globalSetup: ["./test/browser/global-setup.ts"],
    // One browser, one server, steps that build on each other: in order.
    fileParallelism: false,
    sequence: { concurrent: false },
    testTimeout: 60_000,
    hookTimeout: 120_000,
    reporters: ["default", "json"],
    outputFile: { json: "./.test-results/vitest-browser.json" },
  },
});
