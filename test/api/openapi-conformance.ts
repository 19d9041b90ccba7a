import { Validator } from "@cfworker/json-schema";
import { buildOpenApiDocument } from "../../src/api/spec/document";

/**
 * Every response the API tests receive through `call()` is checked against the OpenAPI
 * document: its route and status must be documented, and its JSON body must fit the
 * schema documented for that status (error codes included). The document cannot drift
 * from the app without a test failing here.
 */

type Json = Record<string, any>;

const document = buildOpenApiDocument() as Json;

interface Route {
  method: string;
  template: string;
  pattern: RegExp;
  responses: Json;
}

const routes: Route[] = Object.entries(document.paths as Json).flatMap(([template, item]) =>
  Object.entries(item as Json).map(([method, operation]) => ({
    method: method.toUpperCase(),
    template,
    // A literal segment beats a parameter: /v1/route/stats is not /v1/route/{…}.
    pattern: new RegExp(`^${template.replace(/\{[^}]+\}/g, "[^/]+")}$`),
    responses: (operation as Json).responses,
  })),
);

const validators = new Map<string, Validator>();

function validatorFor(key: string, schema: Json): Validator {
  let validator = validators.get(key);
  if (!validator) {
    // The document's components ride along so `#/components/schemas/…` resolves.
    validator = new Validator({ ...schema, components: document.components }, "2020-12", false);
    validators.set(key, validator);
  }
  return validator;
}

/** The documented operation for a request, preferring templates with fewer parameters. */
export function documentedRoute(method: string, path: string): Route | undefined {
  const matches = routes.filter((route) => route.method === method && route.pattern.test(path));
  return matches.sort((a, b) => paramCount(a.template) - paramCount(b.template))[0];
}

const paramCount = (template: string) => (template.match(/\{/g) ?? []).length;

/** Throws when the response is not what the document promises. */
export function checkResponse(
  method: string,
  url: string,
  status: number,
  contentType: string | null,
  body: unknown,
): void {
  const path = new URL(url).pathname.replace(/(.)\/$/, "$1");
  const route = documentedRoute(method, path);
  if (!route) {
    // The only answer for a route the document does not list is the app's not-found.
    if (status === 404 && (body as Json)?.error?.code === "NOT_FOUND") return;
    throw new Error(`OpenAPI drift: ${method} ${path} answered ${status} but is not in the document`);
  }
  const answer = route.responses[String(status)];
  if (!answer) {
    throw new Error(
      `OpenAPI drift: ${method} ${route.template} answered ${status}, which it does not document (${JSON.stringify(body).slice(0, 300)})`,
    );
  }
  if (!contentType?.startsWith("application/json")) return;
  const schema = answer.content?.["application/json"]?.schema;
  if (!schema)
    throw new Error(
      `OpenAPI drift: ${method} ${route.template} ${status} answered JSON where the document has no body`,
    );
  const result = validatorFor(`${method} ${route.template} ${status}`, schema).validate(body);
  if (!result.valid) {
    const errors = result.errors
      .filter((e) => e.keyword !== "properties" && e.keyword !== "$ref" && e.keyword !== "allOf")
      .slice(0, 5);
    throw new Error(
      `OpenAPI drift: ${method} ${route.template} ${status} does not fit its schema:\n` +
        errors.map((e) => `  ${e.instanceLocation}: ${e.error}`).join("\n") +
        `\n  body: ${JSON.stringify(body).slice(0, 400)}`,
    );
  }
}

/**
 * Documented routes the platform answers from `public/` before the Worker runs (wrangler.toml,
 * `[assets]`); in the test pool, which calls the Worker directly, they are asked of `env.ASSETS`.
 */
export const STATIC_ROUTES: readonly string[] = ["GET /openapi.json"];

export { document as openApiDocument };
