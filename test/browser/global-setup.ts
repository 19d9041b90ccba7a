import { wranglerDevSuite } from "../wrangler-dev-suite";

/**
 * The browser tests' server (test/wrangler-dev-suite.ts). Local endpoints allowed, as
 * .dev.vars.example sets them: the tests stand up webhook agents on this machine. One quota
 * set, so the Usage page has a limit to show (usage.test.ts); the others are off.
 */
export const { setup, teardown } = wranglerDevSuite({
  name: "browser",
  ports: [8795, 8799],
  portVariable: "RELAY_BROWSER_PORT",
  vars: { RELAY_ALLOW_LOCAL_ENDPOINTS: "true", QUOTA_SESSIONS_PER_DAY: "5000" },
});
