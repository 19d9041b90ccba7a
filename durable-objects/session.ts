import { DurableObject } from "cloudflare:workers";
import type { Env } from "../src/env";

/** One collaboration session: conversation, state, current agent, handoffs, audit outbox. */
export class SessionDO extends DurableObject<Env> {}
