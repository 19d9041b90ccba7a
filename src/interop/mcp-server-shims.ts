/**
 * What `@modelcontextprotocol/server/_shims` gives the server package on workerd, with the
 * client package's JSON Schema validator in place of the server's own copy: both packages
 * inline the same validator (the same @cfworker/json-schema 4.1.1 and the same wrapper, byte
 * for byte at 2.4.0), and the Worker bundles both packages. wrangler.toml's `[alias]` points
 * the server at this module (docs/benchmarks.md, Bundle). The package's shim also builds the
 * protocol's schemas as the isolate starts; src/api/mcp-server/server.ts does that instead.
 */
export { CfWorkerJsonSchemaValidator as DefaultJsonSchemaValidator } from "@modelcontextprotocol/client/validators/cf-worker";

function notSupported(): never {
  throw new Error(
    "StdioServerTransport is not supported in this environment. Use StreamableHTTPServerTransport instead.",
  );
}

/** The stdio transport's process, which workerd does not have (as in the package's shim). */
export const process = {
  get stdin(): never {
    return notSupported();
  },
  get stdout(): never {
    return notSupported();
  },
};
