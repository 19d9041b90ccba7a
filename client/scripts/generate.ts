/**
 * Writes the client's types from Relay's OpenAPI document: `npm run client:generate`.
 * The document is built in Node from the same operation table and zod schemas the Worker
 * serves at `/openapi.json` (src/api/spec), so this needs no running server and no network.
 * `--check` writes nothing and exits 1 when the committed file is not what the document gives
 * (the client tests check the served document the same way: docs/client.md, Regenerating).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { relative } from "node:path";
import { buildOpenApiDocument } from "../../src/api/spec/document";
import { GENERATED_PATH, typesOf } from "./openapi-types";

const text = await typesOf(buildOpenApiDocument());
const shown = relative(process.cwd(), GENERATED_PATH);
let current = "";
try {
  current = readFileSync(GENERATED_PATH, "utf8");
} catch {
  // not generated yet
}
if (process.argv.includes("--check")) {
  if (current !== text) {
    console.error(`${shown} is out of date with the OpenAPI document: run npm run client:generate and commit it.`);
    process.exit(1);
  }
  console.log(`${shown} matches the OpenAPI document.`);
} else if (current === text) {
  console.log(`${shown} is up to date.`);
} else {
  writeFileSync(GENERATED_PATH, text);
  console.log(`Wrote ${shown}.`);
}
