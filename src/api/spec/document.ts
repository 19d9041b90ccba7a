import * as z from "zod";
import { AuditRecord } from "../../audit/record";
import { ERROR_STATUS, type ErrorCode } from "../../errors/codes";
import { AgentDefinition, StoredAgent } from "../../schemas/agent";
import { ErrorResponse } from "../../schemas/api";
import {
  BlockingStatus,
  CapabilityMatch,
  CollabMessage,
  CollabMessageInput,
  Collaboration,
  Fanout,
  FanoutStart,
} from "../../schemas/collaboration";
import { EventSubscription } from "../../schemas/events";
import { Handoff, HandoffIndexRow, HandoffRequest, HistoryItem } from "../../schemas/handoff";
import { InboxIndexRow, InboxItem, InboxResolve } from "../../schemas/inbox";
import {
  ApprovalRequired,
  HandoffStatusChange,
  LiveDelta,
  LiveEvent,
  MessageRetracted,
  RunSummary,
} from "../../schemas/live";
import { MemoryFact, MemoryView } from "../../schemas/memory";
import { RouteDecision, RoutingConfig } from "../../schemas/routing";
import { Run, TraceEvent } from "../../schemas/run";
import { SessionCreate, SessionIndexRow, SessionMessage, SessionView } from "../../schemas/session";
import { StoredTool, ToolDefinition } from "../../schemas/tool";
import { UsageReport } from "../../schemas/usage";
import { SecretView } from "../../schemas/vault";
import { errorsOf, OPERATIONS, type Operation, TAGS } from "./operations";

/**
 * The OpenAPI 3.1 document, built from the operation table with zod's own JSON Schema
 * output (JSON Schema 2020-12, which OpenAPI 3.1 uses as is). Requests are described as
 * clients write them (defaults optional), responses as Relay answers them. Schemas with a
 * name below become components; the rest are inlined where they are used.
 */

type Io = "input" | "output";
type JsonSchema = Record<string, unknown>;

const NAMED: Record<Io, Record<string, z.ZodType>> = {
  output: {
    Agent: StoredAgent,
    Tool: StoredTool,
    Session: SessionView,
    SessionListItem: SessionIndexRow,
    HistoryItem,
    Run,
    TraceEvent,
    Handoff,
    HandoffListItem: HandoffIndexRow,
    InboxItem,
    InboxListItem: InboxIndexRow,
    Collaboration,
    CollabMessage,
    Fanout,
    CapabilityMatch,
    RouteDecision,
    RoutingConfig,
    AuditRecord,
    BlockingStatus,
    EventSubscription,
    Secret: SecretView,
    UsageReport,
    MemoryFact,
    MemoryView,
    LiveEvent,
    LiveDelta,
    RunSummary,
    ApprovalRequired,
    HandoffStatusChange,
    MessageRetracted,
  },
  input: {
    AgentDefinition,
    ToolDefinition,
    SessionCreate,
    SessionMessage,
    HandoffRequest,
    InboxResolve,
    CollabMessageInput,
    FanoutStart,
  },
};

function registryOf(io: Io) {
  const registry = z.registry<{ id: string }>();
  for (const [id, schema] of Object.entries(NAMED[io])) registry.add(schema, { id });
  return registry;
}

class SchemaWriter {
  readonly components: Record<string, JsonSchema> = {};
  private readonly registries = { input: registryOf("input"), output: registryOf("output") };

  /** The schema as JSON Schema; named parts go to components and are referenced. */
  write(schema: z.ZodType, io: Io): JsonSchema {
    const json = z.toJSONSchema(schema, {
      io,
      target: "draft-2020-12",
      metadata: this.registries[io],
      // Transforms (normalising a definition on the way in) have no JSON Schema; the value they give
      // is described by its input.
      unrepresentable: "any",
    }) as JsonSchema;
    const { $schema: _, $defs, ...rest } = json;
    for (const [id, def] of Object.entries(($defs ?? {}) as Record<string, JsonSchema>))
      this.components[id] = relink(def);
    return relink(rest);
  }
}

/** zod points at `#/$defs/<id>`; in the document they are components. */
function relink(schema: JsonSchema): JsonSchema {
  return JSON.parse(JSON.stringify(schema).replaceAll('"#/$defs/', '"#/components/schemas/'));
}

function parameters(operation: Operation, writer: SchemaWriter): JsonSchema[] {
  const out: JsonSchema[] = [];
  for (const [name, schema] of Object.entries(operation.params ?? {})) {
    out.push({
      name,
      in: "path",
      required: true,
      ...(schema.description ? { description: schema.description } : {}),
      schema: writer.write(schema, "input"),
    });
  }
  for (const [name, schema] of Object.entries(operation.query?.shape ?? {})) {
    const required = !(schema as z.ZodType).safeParse(undefined).success;
    out.push({ name, in: "query", required, schema: writer.write(schema as z.ZodType, "input") });
  }
  for (const [name, header] of Object.entries(operation.headers ?? {})) {
    out.push({
      name,
      in: "header",
      required: header.required ?? false,
      description: header.description,
      schema: writer.write(header.schema, "input"),
    });
  }
  return out;
}

/** A quota's refusal says how long to wait (src/api/error-handler.ts); a count limit's does not. */
const RETRY_AFTER = {
  "Retry-After": {
    description:
      "Seconds until the quota's window ends (details.retry_after_s); absent when the limit is a count (agents, tools).",
    schema: { type: "integer", minimum: 1 },
  },
};

/** Error answers grouped by status, each listing exactly the codes the route may answer with. */
function errorAnswers(operation: Operation, writer: SchemaWriter): Record<string, JsonSchema> {
  const byStatus = new Map<number, ErrorCode[]>();
  for (const code of errorsOf(operation))
    byStatus.set(ERROR_STATUS[code], [...(byStatus.get(ERROR_STATUS[code]) ?? []), code]);
  const out: Record<string, JsonSchema> = {};
  for (const [status, codes] of [...byStatus].sort(([a], [b]) => a - b)) {
    out[String(status)] = {
      description: `Error: ${codes.map((code) => `\`${code}\``).join(", ")}.`,
      ...(status === 429 ? { headers: RETRY_AFTER } : {}),
      content: { "application/json": { schema: writer.write(ErrorResponse(codes), "output") } },
    };
  }
  return out;
}

/**
 * A Server-Sent Events answer. OpenAPI 3.1 has no schema for a stream's items (3.2's
 * `itemSchema`), so where the frames have one the media type's schema is the JSON of one
 * frame's `data:`, said so in its description: generated clients get the frame type from it.
 */
function streamSchema(description: string, frames: z.ZodType | undefined, writer: SchemaWriter): JsonSchema {
  if (!frames) return { type: "string", description };
  return {
    description: `${description} Server-Sent Events: this schema is the JSON of one frame's \`data:\`, whose \`event:\` is its \`type\` (\`result\` for the answer).`,
    ...writer.write(frames, "output"),
  };
}

function operationObject(operation: Operation, writer: SchemaWriter): JsonSchema {
  const responses: Record<string, JsonSchema> = {};
  for (const [status, answer] of Object.entries(operation.answers)) {
    const content: JsonSchema = {};
    if (answer.schema) content["application/json"] = { schema: writer.write(answer.schema, "output") };
    if (answer.schema && answer.alsoAs) content[answer.alsoAs] = content["application/json"];
    if (answer.stream) content["text/event-stream"] = { schema: streamSchema(answer.stream, answer.frames, writer) };
    responses[status] = { description: answer.description, ...(Object.keys(content).length > 0 ? { content } : {}) };
  }
  Object.assign(responses, errorAnswers(operation, writer));
  const body = operation.body
    ? {
        requestBody: {
          required: !operation.bodyOptional,
          content: {
            "application/json": { schema: writer.write(operation.body, "input") },
            ...(operation.bodyAlsoAs
              ? { [operation.bodyAlsoAs]: { schema: writer.write(operation.body, "input") } }
              : {}),
            ...(operation.bodyMedia
              ? {
                  [operation.bodyMedia]: {
                    schema: {
                      type: "string",
                      description: "The same definition as YAML front matter; the body is the instructions.",
                    },
                  },
                }
              : {}),
          },
        },
      }
    : {};
  const params = parameters(operation, writer);
  return {
    operationId: operationId(operation),
    tags: [operation.tag],
    summary: operation.summary,
    ...(operation.description ? { description: operation.description } : {}),
    ...(operation.auth === false
      ? { security: [] }
      : operation.auth === "operator"
        ? { security: [{ operator: [] }] }
        : {}),
    ...(params.length > 0 ? { parameters: params } : {}),
    ...body,
    responses,
  };
}

/** `put /v1/agents/{name}` → `putAgentsName`: stable, readable ids for generated clients. */
export function operationId({ method, path }: Pick<Operation, "method" | "path">): string {
  const words = path.split(/[/{}_.-]+/).filter((w) => w.length > 0 && w !== "v1");
  return method + words.map((w) => w[0]!.toUpperCase() + w.slice(1)).join("");
}

export function buildOpenApiDocument(): JsonSchema {
  const writer = new SchemaWriter();
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const operation of OPERATIONS) {
    paths[operation.path] ??= {};
    paths[operation.path]![operation.method] = operationObject(operation, writer);
  }
  return {
    openapi: "3.1.0",
    info: {
      title: "Relay",
      version: "0.1.0",
      summary: "An edge control plane for agent handoffs.",
      description:
        "Routes requests to agents, runs their turns, moves sessions between them with their context, and audits every decision. Every `/v1` call needs `Authorization: Bearer <key>`; each key names its tenant.",
    },
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    security: [{ bearer: [] }],
    paths,
    components: {
      securitySchemes: {
        bearer: {
          type: "http",
          scheme: "bearer",
          description: "An API key; it names the tenant everything is scoped to.",
        },
        operator: {
          type: "http",
          scheme: "bearer",
          description:
            "The operator's key (RELAY_OPERATOR_KEY), for /v1/operator only; no tenant key reaches those routes.",
        },
      },
      schemas: Object.fromEntries(Object.entries(writer.components).sort(([a], [b]) => a.localeCompare(b))),
    },
  };
}

/**
 * The document as the file `public/openapi.json` holds it, which the platform serves at
 * /openapi.json (docs/api.md): one line of JSON (411 KB, where indented it would be 1.1 MB and
 * twice the bytes gzipped); a change to the API reads as a diff in the client's generated types.
 * Written by `npm run client:generate`; a test fails when the committed file is not this.
 */
export function openApiJson(document: object = buildOpenApiDocument()): string {
  return `${JSON.stringify(document)}\n`;
}
