import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, afterEach, beforeAll } from "vitest";
import { llmServer } from "./fakes/server";

// Storage is isolated per test file; migrations are idempotent, so every file applies them.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

beforeAll(() => llmServer.listen({ onUnhandledRequest: "error" }));
afterEach(() => llmServer.resetHandlers());
afterAll(() => llmServer.close());
