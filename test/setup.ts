import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { afterAll, afterEach, beforeAll } from "vitest";
import { llmServer } from "./fakes/server";

// Storage is isolated per test file; migrations are idempotent, so every file applies them, to
// the registry and to each shard (wrangler.toml binds two, so the shard path is real).
for (const db of [env.DB, env.AUDIT_DB_0, env.AUDIT_DB_1]) await applyD1Migrations(db!, env.TEST_MIGRATIONS);

beforeAll(() => llmServer.listen({ onUnhandledRequest: "error" }));
afterEach(() => llmServer.resetHandlers());
afterAll(() => llmServer.close());
