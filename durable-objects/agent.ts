import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env";

/** One agent: status, load and capacity leases. */
export class AgentDO extends DurableObject<Env> {}
