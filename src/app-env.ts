import type { Env } from "./env";

/** Hono's environment for Relay: bindings plus what middleware puts on the context. */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    tenant: string;
  };
}
