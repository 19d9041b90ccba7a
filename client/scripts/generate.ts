/**
 * Writes Relay's OpenAPI document and the client's types from it: `npm run client:generate`.
 * The document is built in Node from the operation table and zod schemas of src/api/spec, once,
 * and written twice: as `public/openapi.json`, the static asset served at `/openapi.json`
 * (scripts/openapi.ts), and as the client's types. So this needs no running server and no
 * network. `--check` writes nothing and exits 1 when a committed file is not what the document
 * gives (the tests check both the same way: docs/client.md, Regenerating).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import { buildOpenApiDocument, OPENAPI_PATH, openApiJson } from "../../scripts/openapi";
import { GENERATED_PATH, typesOf } from "./openapi-types";

const document = buildOpenApiDocument();
const files: [path: string, text: string][] = [
  [OPENAPI_PATH, openApiJson(document)],
  [GENERATED_PATH, await typesOf(document)],
];

const check = process.argv.includes("--check");
let stale = false;
for (const [path, text] of files) {
  const shown = relative(process.cwd(), path);
  let current = "";
  try {
    current = readFileSync(path, "utf8");
  } catch {
    // not generated yet
  }
  if (current === text) {
    console.log(`${shown} ${check ? "matches the OpenAPI document" : "is up to date"}.`);
  } else if (check) {
    console.error(`${shown} is out of date with the OpenAPI document: run npm run client:generate and commit it.`);
    stale = true;
  } else {
    writeFileSync(path, text);
    console.log(`Wrote ${shown}.`);
  }
}
if (stale) process.exit(1);
