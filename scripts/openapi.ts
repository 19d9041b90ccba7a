/**
 * The OpenAPI document's file: `public/openapi.json`, a static asset the platform serves at
 * /openapi.json before the Worker runs, with the headers `public/_headers` gives it
 * (docs/api.md). Nothing in it depends on a request, so it is built here, from the operation
 * table and zod schemas of src/api/spec, rather than by the Worker. `npm run client:generate`
 * (client/scripts/generate.ts) writes it together with the client's types, from one build of
 * the document; test/api/openapi.test.ts fails while the committed file is not what the spec
 * modules give.
 */
import { join } from "node:path";

export { buildOpenApiDocument, openApiJson } from "../src/api/spec/document";

/** Where the document is written, in the assets directory (wrangler.toml, `[assets]`). */
export const OPENAPI_PATH = join(import.meta.dirname, "..", "public", "openapi.json");
