import { app } from "./app";
import type { Env } from "./env";

export { AgentDO } from "../durable-objects/agent/agent";
export { CollaborationDO } from "../durable-objects/collaboration/collaboration";
export { RouterDO } from "../durable-objects/router/router";
export { SessionDO } from "../durable-objects/session/session";

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
