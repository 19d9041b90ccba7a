/**
 * Writes the client's types from Relay's OpenAPI document: `npm run client:generate`.
 * The document is built in Node from the same operation table and zod schemas the Worker
 * serves at `/openapi.json` (src/api/spec), so this needs no running server and no network.
 * `--check` writes nothing and exits 1 when the committed file is not what the document gives
 * (the test suite checks the same: docs/client.md, Regenerating).
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join, relative } from "node:path";
import openapiTS, { astToString, COMMENT_HEADER } from "openapi-typescript";
import { buildOpenApiDocument } from "../../src/api/spec/document";

/** The generated file, beside the client's sources. */
export const GENERATED_PATH = join(import.meta.dirname, "..", "src", "generated", "openapi.ts");

const HEADER = `${COMMENT_HEADER.trimEnd()}\n// Regenerate with \`npm run client:generate\` after changing src/api/spec or a schema it names.\n\n`;

/** The generated module's text for the document the Worker serves now. */
export async function generatedTypes(): Promise<string> {
  // biome-ignore lint/suspicious/noExplicitAny: the document is plain JSON; openapi-typescript types it as OpenAPI3.
  const ast = await openapiTS(buildOpenApiDocument() as any, {
    silent: true,
    alphabetize: false,
    defaultNonNullable: false,
  });
  return HEADER + astToString(ast);
}

if (process.argv[1] && import.meta.filename === process.argv[1]) {
  const text = await generatedTypes();
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
}
