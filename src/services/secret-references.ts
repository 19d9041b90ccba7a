import { RelayError } from "../errors";
import { isWebhookSecret, secretList } from "../lib/standard-webhooks";
import { type NamesSecrets, secretReferences } from "../vault/references";
import { missingSecrets, readSecrets, type VaultEnv } from "../vault/secrets";

/**
 * A definition's secrets checked when it is registered: each name it uses must be a secret of
 * the same tenant's vault (UNKNOWN_SECRET, 400, naming where and how to store it), and a
 * `signing_secret` must hold Standard Webhooks secrets. The answer is the same whatever the
 * name is — a Worker secret's name, another tenant's secret — so it tells nothing of either.
 */
export async function assertSecretsKnown(env: VaultEnv, tenant: string, definition: NamesSecrets): Promise<void> {
  const refs = secretReferences(definition);
  const missing = await missingSecrets(env.DB, tenant, refs);
  const first = missing[0];
  if (first)
    throw new RelayError(
      "UNKNOWN_SECRET",
      `${first.field} names the secret '${first.name}', which is not in this tenant's vault: store it first with PUT /v1/secrets/${first.name}.`,
      { secrets: missing },
    );
  if (definition.signing_secret === undefined) return;
  const read = await readSecrets(
    env,
    tenant,
    [{ field: "signing_secret", name: definition.signing_secret }],
    `'${definition.name}'`,
  );
  if (!read.ok) throw new RelayError(read.code, read.message);
  const secrets = secretList(read.values.get(definition.signing_secret));
  if (secrets.length === 0 || !secrets.every(isWebhookSecret))
    throw new RelayError("VALIDATION_FAILED", "Invalid request body.", {
      issues: [
        {
          path: "signing_secret",
          message: `the secret '${definition.signing_secret}' does not hold Standard Webhooks secrets (whsec_ + base64, comma-separated while rotating)`,
        },
      ],
    });
}
