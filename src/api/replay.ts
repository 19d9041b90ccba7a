import type { Context } from "hono";
import type { AppEnv } from "../app-env";
import { backgroundOf } from "../auth/middleware";
import type { Env } from "../env";
import { RelayError, unwrap } from "../errors";
import { resolveProvider } from "../providers";
import { parseAgentFile } from "../registry/agent-file";
import { checkAgent, patternBudgetError } from "../registry/check-agent";
import { definitionText, storedDefinition } from "../registry/store";
import type { LlmOutcome } from "../routing/hybrid";
import { routeWithLlm } from "../routing/llm/route-with-llm";
import { applyDraft } from "../routing/replay/draft";
import { buildDraftRouter, type DraftRouter } from "../routing/replay/draft-router";
import { replayReport } from "../routing/replay/report";
import { type ReplaySide, replayInputs } from "../routing/replay/run";
import { agentCharge } from "../routing/rules/compile-rules";
import { routerRpc } from "../rpc/stubs";
import type { AgentDefinition } from "../schemas/agent";
import {
  HistorySelection,
  type LabelledInput,
  REPLAY_DRAFT_AGENTS,
  REPLAY_TIME_BUDGET_MS,
  REPLAY_UPLOAD_BYTES,
  type ReplayDraft,
  type ReplayReport,
  ReplayRequest,
} from "../schemas/replay";
import { MAX_INPUT_BYTES } from "../schemas/routing";
import { agentDirectory, routerAt, tenantHead } from "../services/registry-cache";
import { routingContext } from "../services/routing";
import { meteredProvider } from "../services/usage-meter";
import { readJson } from "./validate";

/**
 * `POST /v1/route/replay` (docs/routing.md, Replay): recorded or uploaded inputs through the
 * tenant's current router and a draft router side by side. Changes nothing: no registry write,
 * no audit record, no history row.
 */

/** A draft of REPLAY_DRAFT_AGENTS agents near their limits, or an upload at its limit, JSON-escaped. */
const REPLAY_BODY_LIMIT = 16 * 1024 * 1024;

export async function replay(c: Context<AppEnv>) {
  const body = checked(await readJson(c, ReplayRequest, REPLAY_BODY_LIMIT));
  const tenant = c.get("tenant");
  const { current, draft, buildMs } = await sides(c, tenant, body.draft);
  const inputs =
    body.inputs ??
    unwrap(await routerRpc(c.env, tenant).routeHistory(body.history ?? HistorySelection.parse({}))).map(
      ({ input }) => ({ input }),
    );
  const started = performance.now();
  const result = await replayInputs({
    inputs,
    current,
    draft,
    ...(body.llm === undefined ? {} : { llm: llmTier(c.env, tenant) }),
    maxLlmCalls: body.llm?.max_calls ?? 0,
    budgetMs: REPLAY_TIME_BUDGET_MS,
  });
  const report: ReplayReport = replayReport(result, {
    source: body.inputs === undefined ? "history" : "inputs",
    registryVersion: current.version,
    inputs: inputs.length,
    timings: { build_ms: buildMs, replay_ms: round(performance.now() - started) },
  });
  return c.json(report);
}

/** The request past its schema: one source of inputs, the upload's caps, the draft's agents as a registry write checks them. */
function checked(body: ReplayRequest): ReplayRequest {
  if (body.history !== undefined && body.inputs !== undefined) {
    throw new RelayError("VALIDATION_FAILED", "Replay either the history or uploaded inputs, not both.", {
      issues: [{ path: "inputs", message: "not with history" }],
    });
  }
  if (body.inputs !== undefined) checkUpload(body.inputs);
  const agents = [...body.draft.agents, ...body.draft.files.map(fileAgent)];
  if (agents.length > REPLAY_DRAFT_AGENTS)
    throw new RelayError(
      "VALIDATION_FAILED",
      `A draft holds at most ${REPLAY_DRAFT_AGENTS} agents and files together.`,
      {
        issues: [{ path: "draft.files", message: `at most ${REPLAY_DRAFT_AGENTS} with draft.agents` }],
      },
    );
  // The registry write's own checks, in its order: patterns and expressions, then the budget (draftRouter).
  for (const agent of agents) checkAgent(agent);
  return { ...body, draft: { ...body.draft, agents, files: [] } };
}

/** A draft's agent file as the registry write reads it, named as the draft names it. */
function fileAgent(file: ReplayDraft["files"][number], index: number): AgentDefinition {
  const definition = parseAgentFile(file.markdown, `${file.name}.md`);
  if (definition.name !== file.name)
    throw new RelayError("VALIDATION_FAILED", `The file names agent '${definition.name}', the draft '${file.name}'.`, {
      issues: [{ path: `draft.files.${index}.name`, message: "must equal the name in the file's front matter" }],
    });
  return definition;
}

/** The current router with the tenant's config, and the draft's router with the draft's config. */
async function sides(c: Context<AppEnv>, tenant: string, draft: ReplayDraft) {
  const background = backgroundOf(c);
  const [current, drafted] = await Promise.all([
    routingContext(c.env, tenant, undefined, background),
    routingContext(c.env, tenant, draft.config, background),
  ]);
  // The router at the registry's head, not one this isolate still holds while it loads that.
  const { head } = await tenantHead(c.env.DB, tenant);
  const registry = await routerAt(c.env, tenant, head, background, true);
  const started = performance.now();
  const built = await draftRouter((await agentDirectory(c.env.DB, tenant)).agents, draft);
  return {
    current: {
      config: current.resolved.config,
      rules: registry.rules,
      agents: registry.agents,
      version: registry.version,
    },
    draft: { config: drafted.resolved.config, rules: built.rules, agents: built.agents },
    buildMs: round(performance.now() - started),
  };
}

/** Each input within a route's limit, and all of them within the upload's. */
function checkUpload(inputs: readonly LabelledInput[]): void {
  const encoder = new TextEncoder();
  let total = 0;
  for (const [i, { input }] of inputs.entries()) {
    const bytes = encoder.encode(input).byteLength;
    if (bytes > MAX_INPUT_BYTES) {
      throw new RelayError("PAYLOAD_TOO_LARGE", `inputs.${i} is ${bytes} bytes; the limit is ${MAX_INPUT_BYTES}.`, {
        limit_bytes: MAX_INPUT_BYTES,
        input_bytes: bytes,
        index: i,
      });
    }
    total += bytes;
  }
  if (total > REPLAY_UPLOAD_BYTES) {
    throw new RelayError("PAYLOAD_TOO_LARGE", `The inputs are ${total} bytes; the limit is ${REPLAY_UPLOAD_BYTES}.`, {
      limit_bytes: REPLAY_UPLOAD_BYTES,
      input_bytes: total,
    });
  }
}

/**
 * The draft's router, refused as the registry write would refuse it: the draft's agents are
 * admitted against the pattern budget in the order given, after every agent it leaves alone.
 */
async function draftRouter(current: Parameters<typeof applyDraft>[0], draft: ReplayDraft): Promise<DraftRouter> {
  const definitions = applyDraft(current, draft);
  const built = await buildDraftRouter(
    definitions.map((d) => ({ name: d.name, text: definitionText(d) })),
    storedDefinition,
  );
  const cost = (name: string) => {
    const part = built.parts.get(name)?.part;
    return part === undefined ? 0 : agentCharge(part);
  };
  let spent = 0;
  for (const { part } of built.parts.values()) spent += agentCharge(part);
  for (const { name } of draft.agents) spent -= cost(name);
  for (const { name } of draft.agents) {
    const part = built.parts.get(name)?.part;
    const refused = part === undefined ? null : patternBudgetError(name, part, spent);
    if (refused) throw refused;
    spent += cost(name);
  }
  return built;
}

/** The LLM tier as routes call it, with a side's own config and agents. */
function llmTier(env: Env, tenant: string) {
  return async ({ config, agents }: ReplaySide, input: string): Promise<LlmOutcome> => {
    const provider = resolveProvider(config.llm.provider, env);
    if (!provider.ok)
      return { ok: false, reason: "provider_unavailable", message: provider.error.message, duration_ms: 0 };
    return routeWithLlm(meteredProvider(env, tenant, provider.value), agents, input, {
      model: config.llm.model,
      timeoutMs: config.llm.timeout_ms,
    });
  };
}

const round = (ms: number) => Math.round(ms * 1000) / 1000;
