import * as z from "zod";
import { ShardAssignmentView } from "../../audit/shard-assignment";
import { QuotaOverrides, TenantQuotas } from "../../schemas/quotas";
import { TenantsUsage, UsageReport } from "../../schemas/usage";
import { ShardMoveBody, ShardsView } from "../operator-shards";
import { UsageQuery } from "../usage";
import type { Operation } from "./operation";

/**
 * The operator's routes (docs/operations.md, Quotas): behind RELAY_OPERATOR_KEY, never a
 * tenant's key. Their auth errors are the operator key's (no tenant quota applies to them).
 */
export function operatorOperations(): Operation[] {
  const params = { tenant: z.string().describe("A tenant RELAY_API_KEYS lists.") };
  const quotas = {
    description: "The tenant's limits, each with its source, and the overrides stored.",
    schema: TenantQuotas,
  };
  return [
    {
      method: "get",
      path: "/v1/operator/usage",
      tag: "operator",
      auth: "operator",
      summary: "Every tenant's usage over a period, and their quotas now",
      query: UsageQuery,
      answers: { 200: { description: "Each tenant's totals.", schema: TenantsUsage } },
      errors: ["VALIDATION_FAILED"],
    },
    {
      method: "get",
      path: "/v1/operator/tenants/{tenant}/usage",
      tag: "operator",
      auth: "operator",
      summary: "One tenant's usage report (what GET /v1/usage answers the tenant)",
      params,
      query: UsageQuery,
      answers: { 200: { description: "The report.", schema: UsageReport } },
      errors: ["VALIDATION_FAILED", "TENANT_NOT_FOUND"],
    },
    {
      method: "get",
      path: "/v1/operator/tenants/{tenant}/quotas",
      tag: "operator",
      auth: "operator",
      summary: "One tenant's limits: the deployment's defaults under its overrides",
      params,
      answers: { 200: quotas },
      errors: ["TENANT_NOT_FOUND"],
    },
    {
      method: "put",
      path: "/v1/operator/tenants/{tenant}/quotas",
      tag: "operator",
      auth: "operator",
      summary: "Replace one tenant's overrides",
      description:
        "Each limit named replaces the default (null: no limit); one left out keeps it. `requests_per_minute` must be one of the deployment's request tiers. Admissions see it at once; the request limit within 30 s in every isolate.",
      params,
      body: QuotaOverrides,
      answers: { 200: quotas },
      errors: ["INVALID_JSON", "VALIDATION_FAILED", "JSON_TOO_DEEP", "PAYLOAD_TOO_LARGE", "TENANT_NOT_FOUND"],
    },
    {
      method: "delete",
      path: "/v1/operator/tenants/{tenant}/quotas",
      tag: "operator",
      auth: "operator",
      summary: "Clear one tenant's overrides: the defaults apply",
      params,
      answers: { 200: quotas },
      errors: ["TENANT_NOT_FOUND"],
    },
    {
      method: "get",
      path: "/v1/operator/shards",
      tag: "operator",
      auth: "operator",
      summary: "The shards and how many tenants each holds",
      answers: { 200: { description: "One entry per shard bound.", schema: ShardsView } },
      errors: [],
    },
    {
      method: "get",
      path: "/v1/operator/tenants/{tenant}/shard",
      tag: "operator",
      auth: "operator",
      summary: "One tenant's shard, and the move under way if any",
      description: "A tenant with no shard yet is given its home shard, as its first write would.",
      params,
      answers: { 200: { description: "The tenant's shard.", schema: ShardAssignmentView } },
      errors: ["TENANT_NOT_FOUND"],
    },
    {
      method: "put",
      path: "/v1/operator/tenants/{tenant}/shard",
      tag: "operator",
      auth: "operator",
      summary: "Move one tenant to a shard (restartable)",
      description:
        "Starts the move, or takes up the one going there, and does the work that is due: 200 when the tenant is settled on the shard, 202 with `Retry-After` while the move waits for every isolate or has rows left. Call again until 200; the hourly cron also drives moves on. While rows are copied the tenant's audit records wait in their outboxes; nothing is lost or doubled (docs/operations.md, Shards).",
      params,
      body: ShardMoveBody,
      answers: {
        200: { description: "The tenant is on the shard.", schema: ShardAssignmentView },
        202: { description: "The move goes on; ask again after `Retry-After` seconds.", schema: ShardAssignmentView },
      },
      errors: [
        "INVALID_JSON",
        "VALIDATION_FAILED",
        "JSON_TOO_DEEP",
        "PAYLOAD_TOO_LARGE",
        "TENANT_NOT_FOUND",
        "UNKNOWN_SHARD",
        "SHARD_MOVE_IN_PROGRESS",
      ],
    },
  ];
}
