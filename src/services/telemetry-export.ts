import type { Env } from "../env";
import { deadline } from "../lib/deadline";
import { readCapped } from "../lib/read-capped";
import { outboundFetch } from "../outbound/fetch";
import { parseRelayHosts } from "../outbound/policy";
import type { TelemetryConfig } from "../schemas/telemetry";
import {
  EXPORT_ANSWER_CAP,
  EXPORT_TIMEOUT_MS,
  type ExportOutcome,
  outcomeOfStatus,
  partialSuccessOf,
} from "../telemetry/export-policy";
import { exportTraceRequest } from "../telemetry/otlp-json";
import type { Span } from "../telemetry/span";
import { secretReferences } from "../vault/references";
import { readSecrets } from "../vault/secrets";
import { outboundPolicy } from "./outbound";

/**
 * Sending a run's spans to a collector (docs/observability.md, Export): one OTLP/HTTP JSON
 * request per destination. The tenant's endpoint goes through the outbound address policy on
 * every send (it was checked when set; an address may have changed since), with its headers'
 * values read from the tenant's vault at that moment; the operator's endpoint
 * (RELAY_OTLP_ENDPOINT) is the deployment's own and may be a local address. Never throws.
 */

/** Where one export goes: the URL, and the headers (vault secret names) for a tenant's endpoint. */
export interface ExportDestination {
  target: "tenant" | "operator";
  endpoint: string;
  headers: Readonly<Record<string, string>>;
}

/** The deployment's endpoint that receives every tenant's spans, when the operator set one. */
export function operatorEndpoint(env: Pick<Env, "RELAY_OTLP_ENDPOINT">): string | null {
  const value = env.RELAY_OTLP_ENDPOINT?.trim();
  return value ? value : null;
}

/** The tenant's destination from its settings. */
export function tenantDestination(config: TelemetryConfig): ExportDestination {
  return { target: "tenant", endpoint: config.endpoint, headers: config.headers };
}

/** Vault problems a later attempt may not meet (the vault's key or D1 back); a missing secret stays missing. */
const TRANSIENT_VAULT = new Set(["VAULT_UNAVAILABLE", "DEPENDENCY_UNAVAILABLE"]);

/** POSTs `spans` (the tenant's, one resource) to `destination`'s `/v1/traces` URL. */
export async function postSpans(
  env: Env,
  tenant: string,
  destination: ExportDestination,
  spans: readonly Span[],
): Promise<ExportOutcome> {
  const headers: Record<string, string> = { "content-type": "application/json" };
  if (destination.target === "tenant") {
    const read = await readSecrets(
      env,
      tenant,
      secretReferences({ name: "telemetry", headers: destination.headers }),
      "telemetry",
    );
    if (!read.ok) return { type: TRANSIENT_VAULT.has(read.code) ? "retryable" : "refused", error: read.message };
    for (const [header, name] of Object.entries(destination.headers)) headers[header] = read.values.get(name)!;
  }
  const policy =
    destination.target === "tenant"
      ? outboundPolicy(env)
      : { allowLocal: true, relayHosts: parseRelayHosts(env.RELAY_HOSTS) };
  const body = JSON.stringify(exportTraceRequest(spans, { tenant }));
  // Cleared once the answer is read: a timer left running keeps the sending object awake.
  const timeout = deadline(EXPORT_TIMEOUT_MS);
  try {
    const result = await outboundFetch(
      destination.endpoint,
      { method: "POST", headers, body, signal: timeout.signal },
      policy,
    );
    if (result.kind === "refused") return { type: "refused", error: result.message };
    if (result.kind === "failed") return { type: "retryable", error: result.message };
    const outcome = outcomeOfStatus(result.response.status);
    if (outcome.type !== "sent") {
      await result.response.body?.cancel();
      return outcome;
    }
    // A 2xx may be a partial success: the ExportTraceServiceResponse names the spans rejected.
    const answer = await readCapped(result.response, EXPORT_ANSWER_CAP, "refuse");
    const rejected = answer.ok ? partialSuccessOf(answer.text, spans.length) : null;
    return rejected ? { type: "sent", rejected } : outcome;
  } finally {
    timeout.clear();
  }
}
