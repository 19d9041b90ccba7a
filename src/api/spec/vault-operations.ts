import { Page } from "../../schemas/api";
import { SecretName, SecretPut, SecretView } from "../../schemas/vault";
import { SecretListQuery } from "../secrets";
import type { Operation } from "./operation";

/** The tenant vault's routes (docs/security.md, The tenant vault): values go in, never out. */
export function vaultOperations(body: Operation["errors"], list: Operation["errors"]): Operation[] {
  const params = { name: SecretName };
  return [
    {
      method: "put",
      path: "/v1/secrets/{name}",
      tag: "secrets",
      summary: "Store a secret (its value is never shown again)",
      description:
        "Sealed at rest (AES-256-GCM, bound to the tenant and the name). A second PUT replaces the value: agents and tools that name it use the new one within 10 s. The answer, like every answer of the API, holds no value.",
      params,
      body: SecretPut,
      answers: {
        200: { description: "Replaced.", schema: SecretView },
        201: { description: "Stored.", schema: SecretView },
      },
      errors: [...body, "VAULT_FULL", "VAULT_UNAVAILABLE"],
    },
    {
      method: "get",
      path: "/v1/secrets",
      tag: "secrets",
      summary: "List the vault's secrets in name order: names, times and who uses each",
      query: SecretListQuery,
      answers: { 200: { description: "A page of secrets, without values.", schema: Page(SecretView) } },
      errors: list,
    },
    {
      method: "get",
      path: "/v1/secrets/{name}",
      tag: "secrets",
      summary: "One secret's name, times and users (never its value)",
      params,
      answers: { 200: { description: "The secret, without its value.", schema: SecretView } },
      errors: ["VALIDATION_FAILED", "SECRET_NOT_FOUND"],
    },
    {
      method: "delete",
      path: "/v1/secrets/{name}",
      tag: "secrets",
      summary: "Delete a secret no agent or tool names",
      params,
      answers: { 204: { description: "Done; no body." } },
      errors: ["VALIDATION_FAILED", "SECRET_NOT_FOUND", "SECRET_IN_USE"],
    },
  ];
}
