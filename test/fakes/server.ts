import { setupServer } from "msw/node";

/**
 * The one outbound-fetch interceptor for the test run. Tests install the fakes they need
 * (an OpenAI-compatible model, webhook agents) with `llmServer.use(...)`; any request no
 * fake answers fails the test.
 */
export const llmServer = setupServer();
