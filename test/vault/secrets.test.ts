import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { seal } from "../../src/vault/envelope";
import { vaultKeyring } from "../../src/vault/keyring";
import { forgetSecret, readSecrets, rewrapVault, storeSecret } from "../../src/vault/secrets";
import { putSealed } from "../../src/vault/vault-store";

/**
 * The vault's operations against local D1 (docs/security.md, The tenant vault; docs/operations.md,
 * Rotating the vault key): a rotation keeps every secret readable while both keys are set, the
 * rewrap moves each to the new key, a vault without its key refuses to seal, a full one to grow.
 */

const OLD = env.RELAY_VAULT_KEY!;
const NEW = "SUhHPGdI2R5A8IhDlTvn1ABn8j0a4YhphYyeuunuSZg=";
let counter = 0;
const freshTenant = () => `vault-${++counter}`;
const ref = (name: string) => [{ field: "headers.Authorization", name }];

describe("a deployment key rotation", () => {
  it("reads every secret under old and new keys meanwhile; the rewrap moves them; then the new key alone reads them", async () => {
    const tenant = freshTenant();
    await storeSecret(env, tenant, "a", "value-a");
    await storeSecret(env, tenant, "b", "value-b");
    const rotating = { DB: env.DB, RELAY_VAULT_KEY: `${NEW},${OLD}` };
    const fresh = { DB: env.DB, RELAY_VAULT_KEY: NEW };
    const read = async (vault: typeof rotating, name: string) => {
      forgetSecret(tenant, name);
      return readSecrets(vault, tenant, ref(name), "test");
    };
    expect(await read(rotating, "a")).toMatchObject({ ok: true, values: new Map([["a", "value-a"]]) });
    expect(await read(fresh, "a")).toMatchObject({ ok: false, code: "VAULT_UNAVAILABLE" });

    // A secret written during the rotation is sealed under the new key at once.
    await storeSecret(rotating, tenant, "c", "value-c");
    const report = await rewrapVault(rotating, 1);
    expect(report).toEqual({ rewrapped: 1, unreadable: 0, next: { tenant, name: "a" } });
    expect(await rewrapVault(rotating, 500, report.next)).toEqual({ rewrapped: 1, unreadable: 0, next: null });
    expect(await rewrapVault(rotating)).toEqual({ rewrapped: 0, unreadable: 0, next: null });
    const newId = ((await vaultKeyring(NEW)) as { ok: true; keyring: { current: { id: string } } }).keyring.current.id;
    const { results } = await env.DB.prepare("SELECT DISTINCT key_id FROM vault_secrets").all<{ key_id: string }>();
    expect(results.map((r) => r.key_id)).toEqual([newId]);
    for (const name of ["a", "b", "c"])
      expect(await read(fresh, name)).toMatchObject({ ok: true, values: new Map([[name, `value-${name}`]]) });
    expect(await read({ DB: env.DB, RELAY_VAULT_KEY: OLD }, "a")).toMatchObject({
      ok: false,
      code: "VAULT_UNAVAILABLE",
      message: expect.stringContaining("a vault key RELAY_VAULT_KEY no longer holds"),
    });
  });
});

describe("the vault", () => {
  it("without its key refuses to seal and to read, saying why and storing nothing", async () => {
    const tenant = freshTenant();
    const keyless = { DB: env.DB };
    await expect(storeSecret(keyless, tenant, "x", "value")).rejects.toMatchObject({
      code: "VAULT_UNAVAILABLE",
      message: expect.stringContaining("RELAY_VAULT_KEY is not set"),
    });
    expect(await readSecrets(keyless, tenant, ref("x"), "tool 'crm'")).toMatchObject({
      ok: false,
      code: "VAULT_UNAVAILABLE",
    });
    const row = await env.DB.prepare("SELECT 1 FROM vault_secrets WHERE tenant = ?1").bind(tenant).first();
    expect(row).toBeNull();
  });

  it("holds at most its limit of names, decided in the write itself; a new value for a held name still goes in", async () => {
    const tenant = freshTenant();
    const ring = await vaultKeyring(OLD);
    if (!ring.ok) throw new Error(ring.message);
    const put = async (name: string) =>
      putSealed(env.DB, tenant, name, await seal(ring.keyring, tenant, name, "v"), new Date().toISOString(), 2);
    expect(await put("one")).toMatchObject({ created: true });
    expect(await put("two")).toMatchObject({ created: true });
    const all = await Promise.all([put("three"), put("four")]);
    expect(all).toEqual([null, null]);
    expect(await put("one")).toMatchObject({ created: false, meta: { rotated_at: expect.any(String) } });
  });

  it("a D1 failure is DEPENDENCY_UNAVAILABLE, never a throw", async () => {
    const tenant = freshTenant();
    await env.DB.exec("ALTER TABLE vault_secrets RENAME TO vault_secrets_offline");
    try {
      expect(await readSecrets(env, tenant, ref("y"), "tool 'crm'")).toMatchObject({
        ok: false,
        code: "DEPENDENCY_UNAVAILABLE",
      });
    } finally {
      await env.DB.exec("ALTER TABLE vault_secrets_offline RENAME TO vault_secrets");
    }
  });
});
