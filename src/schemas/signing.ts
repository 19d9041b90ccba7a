import * as z from "zod";

/**
 * The tenant's signing secret (src/registry/signing-secrets.ts): Relay signs deliveries to the
 * tenant's webhook agents and http tools with it (Standard Webhooks), unless a definition
 * names its own `signing_secret` from the tenant's vault or says `signing: none`.
 */
export const SigningSecret = z.object({
  /** `whsec_…`: verify deliveries with it (the standardwebhooks libraries take it as is). */
  secret: z.string(),
  /** The secret a rotation replaced, still signing beside the new one until `expires_at`. */
  previous: z.object({ secret: z.string(), expires_at: z.string() }).nullable(),
  created_at: z.string(),
  rotated_at: z.string().nullable(),
});
export type SigningSecret = z.infer<typeof SigningSecret>;

/** The longest a replaced secret may keep signing after a rotation. */
export const MAX_ROTATION_GRACE_S = 7 * 86_400;

export const SigningSecretRotate = z.strictObject({
  /** How long the replaced secret keeps signing beside the new one (0: it stops now, e.g. after a leak). */
  grace_s: z.number().int().min(0).max(MAX_ROTATION_GRACE_S).default(86_400),
});
export type SigningSecretRotate = z.infer<typeof SigningSecretRotate>;

/** What `GET /v1/config` shows of the deployment: the outbound policy's settings. */
export const ConfigView = z.object({
  outbound: z.object({
    /**
     * RELAY_ALLOW_LOCAL_ENDPOINTS is on: `http:` and loopback are called for this machine, named
     * by a loopback address or `localhost` (local development).
     */
    allow_local_endpoints: z.boolean(),
    /** Relay's own hosts, never called: RELAY_HOSTS and the host this request came in at. */
    relay_hosts: z.array(z.string()),
  }),
});
export type ConfigView = z.infer<typeof ConfigView>;
