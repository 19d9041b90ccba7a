import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { eventLine } from "../../client/src/cli/render.ts";
import { resolveSettings } from "../../client/src/cli/settings.ts";
import type { LiveEvent } from "../../client/src/index.ts";
import { tempDir } from "./run-cli";

/** The pure parts of the command: how events read, and where the URL and key come from. */

const event = (type: string, data: unknown): LiveEvent =>
  ({ id: "evt_1", type, session_id: "ses_1", run_id: "run_1", at: "2026-11-26T10:00:00.000Z", data }) as LiveEvent;

const trace = (event_type: string, details: object, extra: object = {}) => ({
  event_id: "evt_1",
  event_type,
  timestamp: "2026-11-26T10:00:00.000Z",
  session_id: "ses_1",
  agent_name: "billing",
  correlation_id: "run_1",
  details,
  duration_ms: 3,
  error: null,
  ...extra,
});

describe("eventLine", () => {
  it("routing and handoffs as the chat shows them", () => {
    expect(
      eventLine(event("route", trace("route", { routing_method: "rule", routing_confidence: 100 })), "chat"),
    ).toEqual({
      text: "🎯 Routing via rule to billing (100%)",
      style: "cyan",
    });
    const handoff = trace("handoff", {
      from_agent: "billing",
      to_agent: "supervisor",
      handoff_reason: "refund over the limit",
      outcome: "completed",
    });
    expect(eventLine(event("handoff", handoff), "chat")?.text).toBe("↪ billing → supervisor: refund over the limit");
  });

  it("an event type this client does not know is shown by its name, not dropped", () => {
    expect(eventLine(event("message.edited", { delta: "Hel" }), "chat")).toEqual({
      text: "· message.edited",
      style: "dim",
    });
    expect(eventLine(event("collaboration_started", "col_1"), "tail")?.text).toBe("· collaboration_started col_1");
  });

  it("chat leaves out the steps tail shows", () => {
    const started = event("agent_started", trace("agent_start", {}));
    expect(eventLine(started, "chat")).toBeNull();
    expect(eventLine(started, "tail")?.text).toBe("· billing started");
  });
});

describe("resolveSettings", () => {
  const config = (dir: string, file: object) => {
    const path = join(dir, "config.json");
    writeFileSync(path, JSON.stringify(file));
    return path;
  };

  it("--profile, then RELAY_URL and RELAY_API_KEY, then the default profile", () => {
    const dir = tempDir();
    const RELAY_CONFIG = config(dir, {
      default_profile: "local",
      profiles: {
        local: { url: "http://127.0.0.1:8787", api_key: "local-key" },
        prod: { url: "https://relay.example.com", api_key_env: "PROD_KEY" },
      },
    });
    const env = { RELAY_CONFIG, PROD_KEY: "prod-key", RELAY_URL: "http://10.0.0.1:1", RELAY_API_KEY: "env-key" };
    expect(resolveSettings({ flags: { profile: "prod" }, env, cwd: dir })).toMatchObject({
      url: "https://relay.example.com",
      apiKey: "prod-key",
    });
    expect(resolveSettings({ flags: {}, env, cwd: dir })).toMatchObject({
      url: "http://10.0.0.1:1",
      apiKey: "env-key",
    });
    expect(resolveSettings({ flags: {}, env: { RELAY_CONFIG }, cwd: dir })).toMatchObject({
      url: "http://127.0.0.1:8787",
      apiKey: "local-key",
    });
    expect(
      resolveSettings({
        flags: { url: "http://127.0.0.1:9" },
        env: { RELAY_CONFIG, RELAY_PROFILE: "prod", PROD_KEY: "p" },
        cwd: dir,
      }),
    ).toMatchObject({ url: "http://127.0.0.1:9", apiKey: "p" });
  });

  it("with nothing set, a Relay on this machine uses the first key of the nearest .dev.vars", () => {
    const repo = tempDir();
    writeFileSync(join(repo, ".dev.vars"), 'RELAY_API_KEYS="dev:relay-dev-key,acme:acme-dev-key"\n');
    mkdirSync(join(repo, "sub"));
    const env = { RELAY_CONFIG: join(repo, "none.json") };
    expect(resolveSettings({ flags: {}, env, cwd: join(repo, "sub") })).toMatchObject({
      url: "http://127.0.0.1:8787",
      apiKey: "relay-dev-key",
    });
    // Never for a Relay elsewhere.
    expect(() => resolveSettings({ flags: { url: "https://relay.example.com" }, env, cwd: repo })).toThrow(
      /no API key/,
    );
  });
});
