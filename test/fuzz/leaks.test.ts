import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { MARKER, markedValue, signingValue, Watch, workerSecrets } from "./leaks";

/** The API fuzz suite's leak check (./leaks.ts): what it finds, and what it lets pass. */

const none = new Headers();

describe("the fuzz suite's leak check", () => {
  it("watches every Worker secret the test env has, each key of a list on its own", () => {
    const keys = env.RELAY_API_KEYS!.split(",").map((pair) => pair.split(":")[1]);
    expect(workerSecrets()).toEqual(
      expect.arrayContaining([
        ...keys,
        env.RELAY_VAULT_KEY,
        env.AGENT_SECRET_HOOK,
        env.TOOL_SECRET_LOOKUP_ORDER,
        // A webhook source mid-rotation: two secrets in one setting.
        ...(env as unknown as Record<string, string>).WEBHOOK_SECRET_DESK!.split(",").map((s) => s.trim()),
      ]),
    );
    expect(workerSecrets()).not.toContain("alpha");
  });

  it("finds a watched value in a body, as JSON escapes it, percent-encoded, and in a header", () => {
    const watch = new Watch();
    const secret = signingValue();
    const quoted = 'x"y\\z-1234567890';
    watch.add(secret);
    watch.add(quoted);
    expect(watch.find(`{"message":"bad ${secret}"}`, none, "")).toContain(secret);
    expect(watch.find(JSON.stringify({ message: quoted }), none, "")).not.toBeNull();
    expect(watch.find(`see /x?k=${encodeURIComponent(secret)}`, none, "")).not.toBeNull();
    expect(watch.find("{}", new Headers({ "X-Debug": secret }), "")).not.toBeNull();
    expect(watch.find(`{"message":"${secret.slice(0, -1)}"}`, none, "")).toBeNull();
  });

  it("finds the marker of any stored value, even a piece of one", () => {
    const watch = new Watch();
    expect(watch.find(`{"message":"${markedValue("x").slice(0, 24)}…"}`, none, "")).toContain(MARKER);
  });

  it("lets an answer quote a value a case stored when its own request carried it, but not a PUT's own value", () => {
    const watch = new Watch();
    const value = "ab12cd34ef56gh78";
    watch.addSent(value);
    watch.addSent("x");
    const answer = `{"message":"No agent named '${value}'"}`;
    expect(watch.find(answer, none, `http://relay.test/v1/agents/${value}`)).toBeNull();
    expect(watch.find(answer, none, "http://relay.test/v1/agents/other")).not.toBeNull();
    expect(watch.find(`{"name":"${value}"}`, none, "", value)).not.toBeNull();
    expect(watch.find('{"name":"x"}', none, "")).toBeNull();
  });
});
