import { app } from "./app";
import type { Env } from "./env";

export { AgentDO } from "../durable-objects/agent";
export { CollaborationDO } from "../durable-objects/collaboration";
export { SessionDO } from "../durable-objects/session";

export default {
  fetch: app.fetch,
} satisfies ExportedHandler<Env>;
