import type { ErrorCode } from "../../errors/codes";
import { HistoryCleared, ReplayReport, ReplayRequest, RoutedInputPage } from "../../schemas/replay";
import { RouteHistoryQuery } from "../route-history";
import type { Operation } from "./operation";

/**
 * Replays of a draft team and the routing history they read (docs/routing.md, Replay). `body`
 * and `list` are the table's codes of a bad body and of a bad list query.
 */
export function replayOperations(body: readonly ErrorCode[], list: readonly ErrorCode[]): Operation[] {
  return [
    {
      method: "post",
      path: "/v1/route/replay",
      tag: "routing",
      summary: "What a draft team would move: recorded or uploaded inputs through both routers",
      description:
        "Changes nothing: no registry write, no audit record, no history row. The draft (agents to add or replace, as definitions or Markdown agent files; agents to remove; a routing config patch) is checked as the registry write checks it. The LLM tier is called only with `llm.max_calls`; otherwise what the rules are unsure of is reported as going to `@llm`.",
      body: ReplayRequest,
      answers: {
        200: { description: "The moves, fallback changes, confidence shifts and scores.", schema: ReplayReport },
      },
      errors: [
        ...body,
        "INVALID_CONFIG",
        "INVALID_PATTERN",
        "INVALID_EXPRESSION",
        "INVALID_AGENT_FILE",
        "PATTERN_BUDGET_EXCEEDED",
        "AGENT_NOT_FOUND",
      ],
    },
    {
      method: "get",
      path: "/v1/route/history",
      tag: "routing",
      summary: "The recorded inputs and their decisions, newest first",
      description:
        "The routing history replays read: each routed session's input (its first 2 KiB), the agent, method, confidence and time. `kind=low_confidence` keeps the decisions whose confidence is below the tenant's threshold now (`threshold` beside the items); `kind=fallback` those the fallback gave to its default agent.",
      query: RouteHistoryQuery,
      answers: { 200: { description: "A page of recorded inputs.", schema: RoutedInputPage } },
      errors: [...list],
    },
    {
      method: "delete",
      path: "/v1/route/history",
      tag: "routing",
      summary: "Forget the tenant's recorded routing inputs",
      description:
        "Audited (`route.history_cleared`) before the rows go; with the audit trail unavailable nothing is cleared.",
      answers: { 200: { description: "How many recorded inputs went.", schema: HistoryCleared } },
      errors: [],
    },
  ];
}
