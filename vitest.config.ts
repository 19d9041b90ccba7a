import { globSync, readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import type { Plugin } from "vite";
import { defineConfig } from "vitest/config";

const migrations = await readD1Migrations("./migrations");

// Wrangler's info lines ("Using secrets defined in .dev.vars", once per test file after
// `npm run dev`) are not news in a test run; warnings and errors still print.
process.env.WRANGLER_LOG ??= "warn";

// standardwebhooks (a devDependency, the reference the tests check signatures against) and the
// MCP SDK ship source maps naming sources they do not publish, and Vite warns about them on
// every cold run; loading their files without the map comment keeps a green run quiet.
const standardWebhooksWithoutSourceMap: Plugin = {
  name: "standardwebhooks-without-source-map",
  enforce: "pre",
  async load(id) {
    if (!/\/node_modules\/(standardwebhooks|@modelcontextprotocol\/sdk)\/dist\/.*\.js$/.test(id)) return null;
    return (await readFile(id, "utf8")).replace(/^\/\/# sourceMappingURL=.*$/m, "");
  },
};

/**
 * The test Worker's bindings. Outbound calls to loopback and private addresses are refused
 * (RELAY_ALLOW_LOCAL_ENDPOINTS off, as on a deployed Relay) everywhere but in the
 * `local-endpoints` project below; set here so a developer's .dev.vars cannot switch it on.
 */
const bindings = {
  TEST_MIGRATIONS: migrations,
  // Two tenants so isolation can be tested, and two the quota tests give low limits (delta with
  // two keys: its request limit is per key); never used outside tests.
  RELAY_API_KEYS:
    "alpha:alpha-test-key,beta:beta-test-key,gamma:gamma-test-key,delta:delta-test-key,delta:delta-other-key",
  // An OpenAI-compatible endpoint the tests fake with msw (test/fakes/openai.ts). The
  // local provider stays the default; a tenant (or a request) picks "openai" to use it.
  OPENAI_API_KEY: "sk-test-key",
  OPENAI_BASE_URL: "https://llm.test/v1",
  ROUTING_LLM_PROVIDER: "local",
  // The operator's key for /v1/operator (a test value, never deployed).
  RELAY_OPERATOR_KEY: "operator-test-key-0123456789",
  // The tenant vault's deployment key (a test value, never deployed).
  RELAY_VAULT_KEY: "bavgWhEcdWB2LJzJhu7KSiyvoLpMPwxkf/waXRcXjgc=",
  // Worker secrets named like the ones a tenant could try to reach: no tenant's definition
  // may read them (test/api/tenant-secrets.test.ts checks that none ever leaves Relay).
  AGENT_SECRET_HOOK: "whsec_b3BlcmF0b3Itc2VjcmV0LW5ldmVyLXNlbnQtb3V0",
  TOOL_SECRET_LOOKUP_ORDER: "whsec_dG9vbC1vcGVyYXRvci1zZWNyZXQtbmV2ZXItc2VudA==",
  // Webhook sources of test/api/webhooks.test.ts (test values): `crm` acts for alpha, and
  // `desk` is mid-rotation with two secrets.
  WEBHOOK_SECRET_CRM: "whsec_C2FVsBQIhrscChlQIMV+b5sSYspob7oD",
  WEBHOOK_TENANT_CRM: "alpha",
  WEBHOOK_SECRET_DESK: "whsec_Kp8wqd1MxVOA0F3kJq2XbQz6YH3lQm1S, whsec_bm9zZWNyZXRzaGVyZWJ1dHRoaXNvbmVpc25ldw==",
  WEBHOOK_TENANT_DESK: "alpha",
  // The tests call the Worker at http://relay.test; calls made later (from a session) know it from here.
  RELAY_HOSTS: "relay.test",
  RELAY_ALLOW_LOCAL_ENDPOINTS: "false",
  // Quotas high enough that no test meets one by accident; test/api/quotas.test.ts gives its
  // tenants low overrides.
  QUOTA_REQUESTS_PER_MINUTE: "1000000",
  QUOTA_SESSIONS_PER_DAY: "1000000",
  QUOTA_RUNS_PER_MINUTE: "1000000",
  QUOTA_MODEL_TOKENS_PER_DAY: "1000000000",
  QUOTA_AGENTS: "1000000",
  QUOTA_TOOLS: "1000000",
};

/** Request tiers for tests (beside wrangler.toml's): the default above, and a low one to meet. */
const ratelimits = {
  REQUESTS_PER_MINUTE_1000000: { namespace_id: "9001", simple: { limit: 1_000_000, period: 60 as const } },
  REQUESTS_PER_MINUTE_3: { namespace_id: "9002", simple: { limit: 3, period: 60 as const } },
};

/** wrangler.toml's `[alias]`, which the pool's bundler does not read: the tests run what deploys. */
const alias = {
  "@modelcontextprotocol/server/_shims": new URL("./src/interop/mcp-server-shims.ts", import.meta.url).pathname,
  "eventsource-parser/stream": new URL("./node_modules/eventsource-parser/dist/stream.js", import.meta.url).pathname,
};

/** The production Worker with test subclasses of its Durable Objects (clock, crash points), with `vars` on top. */
const workerd = (vars: Record<string, string> = {}) => [
  standardWebhooksWithoutSourceMap,
  cloudflareTest({
    main: "./test/worker.ts",
    wrangler: { configPath: "./wrangler.toml" },
    remoteBindings: false,
    miniflare: { bindings: { ...bindings, ...vars }, ratelimits },
  }),
];

/**
 * Unit test files: they import nothing but vitest, fast-check, node: modules and the code under
 * test (src/, public/) — no binding, no object, no D1, no test helper that reaches them. They
 * share workerd processes (`isolate: false`) where every other file starts its own, which costs
 * about a second of CPU each (docs/benchmarks.md, The test run).
 */
const UNIT_IMPORT = /^(vitest|fast-check|node:.*|(\.\.\/)+(src|public)\/.*)$/;
const unitFiles = globSync("test/**/*.test.ts").filter((file) => {
  if (/^test\/(browser|cli|client)\//.test(file) || /\.(local|node|interop)\.test\.ts$/.test(file)) return false;
  const imports = [...readFileSync(file, "utf8").matchAll(/(?:from|import)\s*\(?\s*"([^"]+)"/g)].map((m) => m[1]!);
  return imports.every((specifier) => UNIT_IMPORT.test(specifier));
});

const LOCAL = "test/**/*.local.test.ts";
/** Scripts that work on real files (modes, a checkout's .dev.vars) run in Node, where the file system is the machine's. */
const NODE = "test/scripts/**/*.node.test.ts";
/** The interop suite runs in Node against wrangler dev: `npm run test:interop` (vitest.interop.config.ts). */
const INTEROP = "test/**/*.interop.test.ts";

/**
 * A guard against a hang, not a measure of speed: on a loaded two-core machine the longest
 * files (30 KiB adversarial inputs, fifty-session loops) pass 5 s, vitest's default.
 */
const testTimeout = 30_000;

export default defineConfig({
  test: {
    // The JSON report is what .ci/run counts; the default reporter is for people.
    reporters: ["default", "json"],
    outputFile: { json: "./.test-results/vitest.json" },
    projects: [
      {
        plugins: workerd(),
        resolve: { alias },
        test: {
          name: "workers",
          include: ["test/**/*.test.ts"],
          // The browser tests run in Node against wrangler dev: `npm run test:browser` (vitest.browser.config.ts);
          // so do the client's and the CLI's (`npm run test:cli`) and the interop suite (`npm run test:interop`).
          exclude: [
            "test/browser/**",
            "test/client/**",
            "test/cli/**",
            "**/node_modules/**",
            LOCAL,
            INTEROP,
            NODE,
            ...unitFiles,
          ],
          setupFiles: ["./test/setup.ts"],
          testTimeout,
        },
      },
      {
        plugins: workerd(),
        resolve: { alias },
        test: { name: "units", include: unitFiles, setupFiles: ["./test/setup.ts"], testTimeout, isolate: false },
      },
      {
        // A Relay whose operator allows local endpoints (what .dev.vars.example sets for npm run dev).
        plugins: workerd({ RELAY_ALLOW_LOCAL_ENDPOINTS: "true", RELAY_HOSTS: "relay.test,127.0.0.1:8787" }),
        resolve: { alias },
        test: { name: "local-endpoints", include: [LOCAL], setupFiles: ["./test/setup.ts"], testTimeout },
      },
      { test: { name: "node", include: [NODE], environment: "node", testTimeout } },
    ],
  },
});
