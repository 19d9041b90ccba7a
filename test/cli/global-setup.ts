import { wranglerDevSuite } from "../wrangler-dev-suite";

/** The client and CLI tests' server (test/wrangler-dev-suite.ts); 8855–8859 are their other servers'. */
export const { setup, teardown } = wranglerDevSuite({
  name: "cli",
  ports: [8850, 8854],
  portVariable: "RELAY_CLI_PORT",
});
