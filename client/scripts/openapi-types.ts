import { join } from "node:path";
import openapiTS, { astToString, COMMENT_HEADER } from "openapi-typescript";

/** The generated file, beside the client's sources. */
export const GENERATED_PATH = join(import.meta.dirname, "..", "src", "generated", "openapi.ts");

const HEADER = `${COMMENT_HEADER.trimEnd()}\n// Regenerate with \`npm run client:generate\` after changing src/api/spec or a schema it names.\n\n`;

/**
 * The generated module's text for an OpenAPI document. Request fields with a default stay
 * optional (`defaultNonNullable: false`): a client may leave them out. Responses list
 * such fields as required, so they are typed as present.
 */
export async function typesOf(document: object): Promise<string> {
  // biome-ignore lint/suspicious/noExplicitAny: the document is plain JSON; openapi-typescript types it as OpenAPI3.
  const ast = await openapiTS(document as any, { silent: true, alphabetize: false, defaultNonNullable: false });
  return HEADER + astToString(ast);
}
