import { chmodSync, copyFileSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { devVar, VAULT_KEY_VAR } from "../../scripts/lib/dev-env";
import { prepareDevVars, relayHostsForDev } from "../../scripts/lib/dev-vars";

/**
 * .dev.vars on a real file system (this file runs in Node: vitest.config.ts's `node` project),
 * in a folder laid out as a checkout is: the shipped .dev.vars.example and wrangler.toml.
 */

const repo = join(import.meta.dirname, "..", "..");
let root = "";
const devVars = () => join(root, ".dev.vars");
const modeOf = (file: string) => statSync(file).mode & 0o777;
const isVaultKey = (key: string | undefined) =>
  key !== undefined && /^[A-Za-z0-9+/]{43}=$/.test(key) && atob(key).length === 32;

beforeEach(() => {
  root = mkdtempSync(join(tmpdir(), "relay-dev-vars-"));
  copyFileSync(join(repo, ".dev.vars.example"), join(root, ".dev.vars.example"));
  copyFileSync(join(repo, "wrangler.toml"), join(root, "wrangler.toml"));
  // The example as git checks it out, readable by all: the copy must not inherit that.
  chmodSync(join(root, ".dev.vars.example"), 0o644);
});
afterEach(() => rmSync(root, { recursive: true, force: true }));

describe("a fresh checkout's .dev.vars", () => {
  it("is created readable and writable by its owner only, from the example, with a new vault key", () => {
    const first = prepareDevVars(root);
    expect(first).toMatchObject({ created: true, tightenedFrom: null, vaultKeyAdded: true });
    expect(modeOf(devVars())).toBe(0o600);
    const text = readFileSync(devVars(), "utf8");
    expect(first.text).toBe(text);
    expect(text.startsWith(readFileSync(join(root, ".dev.vars.example"), "utf8"))).toBe(true);
    expect(isVaultKey(devVar(text, VAULT_KEY_VAR))).toBe(true);
  });

  it("keeps its vault key and mode on every later start, and says nothing more", () => {
    const key = devVar(prepareDevVars(root).text, VAULT_KEY_VAR);
    const again = prepareDevVars(root);
    expect(again).toMatchObject({ created: false, tightenedFrom: null, vaultKeyAdded: false });
    expect(devVar(readFileSync(devVars(), "utf8"), VAULT_KEY_VAR)).toBe(key);
    expect(modeOf(devVars())).toBe(0o600);
  });

  it("gets a different vault key in another checkout", () => {
    const other = mkdtempSync(join(tmpdir(), "relay-dev-vars-"));
    try {
      copyFileSync(join(root, ".dev.vars.example"), join(other, ".dev.vars.example"));
      const keys = [prepareDevVars(root), prepareDevVars(other)].map((p) => devVar(p.text, VAULT_KEY_VAR));
      expect(keys[0]).not.toBe(keys[1]);
    } finally {
      rmSync(other, { recursive: true, force: true });
    }
  });
});

describe("an existing .dev.vars", () => {
  const older = 'RELAY_API_KEYS="me:my-own-key-1"\nRELAY_HOSTS="relay.mybox.test"\n';

  it.each([
    [0o644, 0o600],
    [0o640, 0o600],
    [0o604, 0o600],
    [0o666, 0o600],
    [0o755, 0o700],
  ])("open to others (%o) is made owner-only (%o), the owner's bits kept", (mode, now) => {
    writeFileSync(devVars(), `${older}${VAULT_KEY_VAR}="${btoa("k".repeat(32))}"\n`);
    chmodSync(devVars(), mode);
    expect(prepareDevVars(root)).toMatchObject({ created: false, tightenedFrom: mode, vaultKeyAdded: false });
    expect(modeOf(devVars())).toBe(now);
  });

  it.each([0o600, 0o400, 0o700])("already owner-only (%o) is left as it is", (mode) => {
    writeFileSync(devVars(), `${older}${VAULT_KEY_VAR}="${btoa("k".repeat(32))}"\n`);
    chmodSync(devVars(), mode);
    expect(prepareDevVars(root)).toMatchObject({ created: false, tightenedFrom: null, vaultKeyAdded: false });
    expect(modeOf(devVars())).toBe(mode);
  });

  it("without a vault key gets one added, everything else kept as the developer wrote it", () => {
    writeFileSync(devVars(), older, { mode: 0o600 });
    const prepared = prepareDevVars(root);
    expect(prepared).toMatchObject({ created: false, vaultKeyAdded: true });
    const text = readFileSync(devVars(), "utf8");
    expect(text.startsWith(older)).toBe(true);
    expect(isVaultKey(devVar(text, VAULT_KEY_VAR))).toBe(true);
    expect(prepareDevVars(root).vaultKeyAdded).toBe(false);
    expect(readFileSync(devVars(), "utf8")).toBe(text);
  });
});

describe("the RELAY_HOSTS wrangler dev is started with", () => {
  it("names the port it serves on, from the arguments or wrangler.toml, and the hosts .dev.vars lists", () => {
    expect(relayHostsForDev(root, [])).toBe("127.0.0.1:8787");
    expect(relayHostsForDev(root, ["--port", "8797"])).toBe("127.0.0.1:8797");
    // A .dev.vars from before npm run dev derived it still says 127.0.0.1:8787: kept, as listed.
    writeFileSync(devVars(), 'RELAY_HOSTS="127.0.0.1:8787,relay.mybox.test"\n');
    expect(relayHostsForDev(root, ["--port", "8797"])).toBe("127.0.0.1:8797,127.0.0.1:8787,relay.mybox.test");
    expect(relayHostsForDev(root, ["--ip", "127.0.0.1", "--port", "8850", "--var", "RELAY_HOSTS:other.test"])).toBe(
      "127.0.0.1:8850,127.0.0.1:8787,relay.mybox.test,other.test",
    );
  });

  it("follows wrangler.toml's [dev] table when no argument says otherwise", () => {
    writeFileSync(join(root, "wrangler.toml"), 'name = "relay"\n\n[dev]\nip = "localhost"\nport = 9100\n');
    expect(relayHostsForDev(root, [])).toBe("localhost:9100");
    expect(relayHostsForDev(root, ["--ip=0.0.0.0"])).toBe("127.0.0.1:9100");
  });
});
