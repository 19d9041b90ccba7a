import { TelemetryConfigInput, TelemetryView } from "../../schemas/telemetry";
import type { Operation } from "./operation";

/**
 * The tenant's trace export settings (docs/observability.md, Export). `put` is the codes a PUT
 * may answer with: the table's body errors, the address policy's and the vault's.
 */
export function telemetryOperations(put: Operation["errors"]): Operation[] {
  const view = (description: string) => ({ description, schema: TelemetryView });
  return [
    {
      method: "get",
      path: "/v1/config/telemetry",
      tag: "telemetry",
      summary: "Where the tenant's spans are exported, and what the export did",
      description:
        "`config` null: the tenant exports nothing (an operator's endpoint may still receive its spans). `stats` counts spans its endpoint accepted and spans given up, with the last error.",
      answers: { 200: view("The settings and the counters.") },
      errors: [],
    },
    {
      method: "put",
      path: "/v1/config/telemetry",
      tag: "telemetry",
      summary: "Export the tenant's run spans to an OTLP/HTTP collector",
      description:
        '`endpoint` is the collector\'s traces URL (`…/v1/traces`), checked by the outbound address policy now and on every send. `headers` name vault secrets (`{ "Authorization": "otel-token" }`), read when sending. `sample_ratio` (default 1) is the share of runs sent, decided from the trace id; `capture_content` (default false) adds tool arguments, a failed tool\'s error text and handoff reasons.',
      body: TelemetryConfigInput,
      answers: { 200: view("The settings as stored, and the counters.") },
      errors: put,
    },
    {
      method: "delete",
      path: "/v1/config/telemetry",
      tag: "telemetry",
      summary: "Stop exporting the tenant's spans",
      description: "Exports waiting are dropped when next due. The counters stay.",
      answers: { 200: view("No settings, and the counters.") },
      errors: [],
    },
  ];
}
