import { describe, expect, it } from "vitest";
import { fromBase64 } from "../../src/lib/base64";
import { open, rewrap, type Sealed, seal } from "../../src/vault/envelope";
import { type Keyring, vaultKeyring } from "../../src/vault/keyring";

/**
 * Envelope encryption of a tenant's secret (docs/security.md, The tenant vault): a value opens
 * only as the secret of the tenant and name it was sealed for, under a key the keyring holds;
 * a rotation reseals the data key and leaves the value's ciphertext as it was.
 */

const OLD = "bavgWhEcdWB2LJzJhu7KSiyvoLpMPwxkf/waXRcXjgc=";
const NEW = "SUhHPGdI2R5A8IhDlTvn1ABn8j0a4YhphYyeuunuSZg=";

async function keyring(setting: string): Promise<Keyring> {
  const result = await vaultKeyring(setting);
  if (!result.ok) throw new Error(result.message);
  return result.keyring;
}

describe("the vault keyring", () => {
  it("seals with the first key, opens with any, and knows each key by an id that does not depend on order", async () => {
    const one = await keyring(OLD);
    const both = await keyring(`${NEW}, ${OLD}`);
    expect(both.current.id).not.toBe(one.current.id);
    expect(both.byId.get(one.current.id)).toBeDefined();
    expect((await keyring(`${OLD},${NEW}`)).current.id).toBe(one.current.id);
    expect(one.current.id).toMatch(/^[A-Za-z0-9_-]{12}$/);
  });

  it("is unavailable without a key, and refuses a key that is short or not base64, without quoting it", async () => {
    expect(await vaultKeyring(undefined)).toMatchObject({ ok: false, reason: "not_configured" });
    expect(await vaultKeyring(" , ")).toMatchObject({ ok: false, reason: "not_configured" });
    const short = await vaultKeyring("c2hvcnQ=");
    expect(short).toMatchObject({ ok: false, reason: "invalid_key", message: expect.stringContaining("key 1") });
    const notBase64 = await vaultKeyring(`${OLD},not base64 at all!`);
    expect(notBase64).toMatchObject({ ok: false, reason: "invalid_key", message: expect.stringContaining("key 2") });
    expect(JSON.stringify(notBase64)).not.toContain("not base64 at all");
  });
});

describe("a sealed secret", () => {
  it("holds no trace of the value, and opens to it as the same tenant's secret of the same name", async () => {
    const ring = await keyring(OLD);
    const sealed = await seal(ring, "alpha", "github", "Bearer ghp_value");
    expect(JSON.stringify(sealed)).not.toContain("ghp_value");
    expect(new TextDecoder().decode(fromBase64(sealed.ciphertext)!)).not.toContain("ghp_value");
    expect(sealed.key_id).toBe(ring.current.id);
    expect(await open(ring, "alpha", "github", sealed)).toEqual({ ok: true, value: "Bearer ghp_value" });
    // Sealing twice gives different text (fresh data key and IVs).
    expect((await seal(ring, "alpha", "github", "Bearer ghp_value")).ciphertext).not.toBe(sealed.ciphertext);
  });

  it("copied to another tenant, or renamed, does not open", async () => {
    const ring = await keyring(OLD);
    const sealed = await seal(ring, "alpha", "github", "Bearer ghp_value");
    expect(await open(ring, "beta", "github", sealed)).toEqual({ ok: false, reason: "corrupt" });
    expect(await open(ring, "alpha", "gitlab", sealed)).toEqual({ ok: false, reason: "corrupt" });
  });

  it("altered anywhere, does not open", async () => {
    const ring = await keyring(OLD);
    const sealed = await seal(ring, "alpha", "github", "value");
    const flip = (text: string) => `${text.slice(0, 20)}${text[20] === "A" ? "B" : "A"}${text.slice(21)}`;
    for (const bad of [
      { ...sealed, ciphertext: flip(sealed.ciphertext) },
      { ...sealed, wrapped_key: flip(sealed.wrapped_key) },
      { ...sealed, ciphertext: "" },
      { ...sealed, wrapped_key: "!!" },
    ] satisfies Sealed[])
      expect(await open(ring, "alpha", "github", bad)).toEqual({ ok: false, reason: "corrupt" });
  });

  it("through a rotation: both keys open it meanwhile, the rewrap moves it to the new key, the old key alone then cannot", async () => {
    const old = await keyring(OLD);
    const sealed = await seal(old, "alpha", "github", "value");
    const rotating = await keyring(`${NEW},${OLD}`);
    expect(await open(rotating, "alpha", "github", sealed)).toEqual({ ok: true, value: "value" });
    const moved = await rewrap(rotating, "alpha", "github", sealed);
    if (!moved.ok) throw new Error(moved.reason);
    expect(moved.sealed.key_id).toBe(rotating.current.id);
    expect(moved.sealed.ciphertext).toBe(sealed.ciphertext);
    expect(await open(await keyring(NEW), "alpha", "github", moved.sealed)).toEqual({ ok: true, value: "value" });
    expect(await open(old, "alpha", "github", moved.sealed)).toEqual({ ok: false, reason: "key_missing" });
    expect(await open(await keyring(NEW), "alpha", "github", sealed)).toEqual({ ok: false, reason: "key_missing" });
  });
});
