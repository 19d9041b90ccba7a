import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

const migrations = await readD1Migrations("./migrations");

export default defineConfig({
  plugins: [
    cloudflareTest({
      // The production Worker with test subclasses of its Durable Objects (clock, crash points).
      main: "./test/worker.ts",
      wrangler: { configPath: "./wrangler.toml" },
      remoteBindings: false,
      miniflare: {
        bindings: {
          TEST_MIGRATIONS: migrations,
          // Two tenants so isolation can be tested; never used outside tests.
          RELAY_API_KEYS: "alpha:alpha-test-key,beta:beta-test-key",
        },
      },
    }),
  ],
  test: {
    include: ["test/**/*.test.ts"],
    setupFiles: ["./test/setup.ts"],
    // The JSON report is what .ci/run counts; the default reporter is for people.
    reporters: ["default", "json"],
    outputFile: { json: "./.test-results/vitest.json" },
  },
});
