import * as z from "zod";

/**
 * The tenant vault (docs/security.md, The tenant vault): secrets a tenant stores and its
 * definitions name — an MCP server's or http tool's headers, a webhook agent's or tool's
 * signing secret, a remote A2A agent's credentials. A value goes in and never comes out:
 * not to the tenant, not in an error, not in the audit trail.
 */

/**
 * A secret's name, unique within the tenant. Upper-case names are allowed too, so an MCP
 * tool stored when headers named Worker secrets (`MCP_GITHUB_AUTH`) still parses; such a
 * name now means the tenant's vault secret of that name, never the Worker's environment.
 */
export const SecretName = z
  .string()
  .regex(
    /^[A-Za-z][A-Za-z0-9_-]{0,127}$/,
    "must name a secret in this tenant's vault: a letter, then letters, digits, '_' or '-' (at most 128)",
  );
export type SecretName = z.infer<typeof SecretName>;

/** The largest value a secret holds, in UTF-8 bytes: a header value or a few signing secrets. */
export const MAX_SECRET_BYTES = 8 * 1024;
/** The most secrets one tenant's vault holds. */
export const MAX_SECRETS_PER_TENANT = 500;

const utf8Bytes = (text: string) => new TextEncoder().encode(text).length;

/** `PUT /v1/secrets/{name}`: the value, stored encrypted and never shown again. */
export const SecretPut = z.strictObject({
  value: z
    .string()
    .min(1, "must not be empty")
    .refine((value) => utf8Bytes(value) <= MAX_SECRET_BYTES, `must be at most ${MAX_SECRET_BYTES} bytes (UTF-8)`)
    // A header value cannot carry these; a signing secret has none either.
    .refine((value) => !/[\r\n\0]/.test(value), "must not contain CR, LF or NUL"),
});
export type SecretPut = z.infer<typeof SecretPut>;

/** What uses a secret: the tenant's agents and tools whose definitions name it. */
export const SecretUsers = z.object({
  agents: z.array(z.string()),
  tools: z.array(z.string()),
});
export type SecretUsers = z.infer<typeof SecretUsers>;

/** A secret as the API shows it: everything but its value. */
export const SecretView = z.object({
  name: z.string(),
  created_at: z.string(),
  /** When the value was last replaced (a PUT of an existing name); null while it holds its first. */
  rotated_at: z.string().nullable(),
  used_by: SecretUsers,
});
export type SecretView = z.infer<typeof SecretView>;

/**
 * A header Relay sends with a value from the vault: not one Relay, Standard Webhooks or the
 * protocol (MCP, A2A) sets itself.
 */
const HeaderName = z
  .string()
  .regex(/^[A-Za-z0-9-]{1,100}$/, "must be an HTTP header name")
  .refine(
    (name) =>
      !/^(content-type|content-length|accept|host|user-agent|mcp-session-id|mcp-protocol-version|mcp-method|mcp-name|mcp-param-.+|last-event-id|a2a-version|webhook-id|webhook-timestamp|webhook-signature)$/i.test(
        name,
      ),
    "is set by Relay or the protocol",
  );

/** Headers whose values come from the tenant's vault: `{ "Authorization": "github-token" }` sends the secret's value. */
export const SecretHeaders = z
  .record(HeaderName, SecretName)
  .refine((headers) => Object.keys(headers).length <= 20, "at most 20 headers");
export type SecretHeaders = z.infer<typeof SecretHeaders>;
