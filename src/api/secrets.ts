import { Hono } from "hono";
import * as z from "zod";
import type { AppEnv } from "../app-env";
import { isRelayError, RelayError } from "../errors";
import { SecretName, SecretPut, type SecretView } from "../schemas/vault";
import { agentDirectory } from "../services/registry-cache";
import { secretUsers } from "../vault/references";
import { removeSecret, storeSecret } from "../vault/secrets";
import { listSecretMeta, type SecretMeta, secretMeta } from "../vault/vault-store";
import { decodeCursor, listPage, pagingQuery } from "./cursor";
import { SecretPosition } from "./positions";
import { parseJsonText, parseWith, readText } from "./validate";

/**
 * `/v1/secrets`: the tenant's vault (docs/security.md, The tenant vault). A value goes in and
 * never comes out — not in a listing, not in an error; what the API shows is a secret's name,
 * when it was made and replaced, and which agents and tools name it.
 */

export const SecretListQuery = z.strictObject(pagingQuery(200, 50));

/** A secret's value is small; a body larger than this is refused unread. */
const SECRET_BODY_LIMIT = 16 * 1024;

const missing = (name: string) =>
  new RelayError("SECRET_NOT_FOUND", `No secret named '${name}' in this tenant's vault.`, { secret: name });

type Users = ReturnType<typeof secretUsers>;

/** Who names each secret, from the tenant's agents and tools at their current version. */
async function usersOf(db: D1Database, tenant: string): Promise<Users> {
  const directory = await agentDirectory(db, tenant);
  return secretUsers(directory.agents, [...directory.tools.values()]);
}

const view = (meta: SecretMeta, users: Users): SecretView => ({
  ...meta,
  used_by: users.get(meta.name) ?? { agents: [], tools: [] },
});

/**
 * The body, read so that nothing of the value can come back: a body that is not JSON is
 * refused without the parser's message, which quotes the text it choked on.
 */
async function readSecretBody(c: Parameters<typeof readText>[0]): Promise<SecretPut> {
  const text = await readText(c, SECRET_BODY_LIMIT);
  try {
    return parseJsonText(text, SecretPut);
  } catch (error) {
    if (isRelayError(error) && error.code === "INVALID_JSON")
      throw new RelayError("INVALID_JSON", 'Request body is not valid JSON: send { "value": "<the secret>" }.');
    throw error;
  }
}

export const secrets = new Hono<AppEnv>()
  .put("/:name", async (c) => {
    const name = parseWith(SecretName, c.req.param("name"), "secret name");
    const { value } = await readSecretBody(c);
    const { created, meta } = await storeSecret(c.env, c.get("tenant"), name, value);
    return c.json(view(meta, await usersOf(c.env.DB, c.get("tenant"))), created ? 201 : 200);
  })
  .get("/", async (c) => {
    const { limit, cursor } = parseWith(SecretListQuery, c.req.query(), "query");
    const page = await listSecretMeta(c.env.DB, c.get("tenant"), {
      limit,
      after: decodeCursor(cursor, SecretPosition),
    });
    const users = await usersOf(c.env.DB, c.get("tenant"));
    return c.json(
      listPage(
        page.secrets.map((meta) => view(meta, users)),
        page.next,
      ),
    );
  })
  .get("/:name", async (c) => {
    const name = parseWith(SecretName, c.req.param("name"), "secret name");
    const meta = await secretMeta(c.env.DB, c.get("tenant"), name);
    if (!meta) throw missing(name);
    return c.json(view(meta, await usersOf(c.env.DB, c.get("tenant"))));
  })
  // A secret an agent or tool still names stays: its calls would fail. Change them first.
  .delete("/:name", async (c) => {
    const name = parseWith(SecretName, c.req.param("name"), "secret name");
    const users = (await usersOf(c.env.DB, c.get("tenant"))).get(name);
    if (users && (users.agents.length > 0 || users.tools.length > 0))
      throw new RelayError(
        "SECRET_IN_USE",
        `'${name}' is named by ${[...users.agents.map((a) => `agent '${a}'`), ...users.tools.map((t) => `tool '${t}'`)].join(", ")}: change them first.`,
        { secret: name, used_by: users },
      );
    if (!(await removeSecret(c.env.DB, c.get("tenant"), name))) throw missing(name);
    return c.body(null, 204);
  });
