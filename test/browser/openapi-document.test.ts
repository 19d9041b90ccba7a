import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, inject, it } from "vitest";
import { API_SECURITY_HEADERS } from "../../src/api/security-headers";

/**
 * The document `wrangler dev` serves at /openapi.json (the static file public/openapi.json),
 * checked by an OpenAPI 3.1 validator nobody on the team wrote (the official JSON Schema of
 * the specification, through ajv, which needs Node: it compiles schemas to code, which workerd
 * does not allow), with the headers public/_headers gives it.
 */
const url = inject("relayUrl");

describe("GET /openapi.json as an outside tool reads it", () => {
  it("is a valid OpenAPI 3.1 document", async () => {
    const response = await fetch(`${url}/openapi.json`);
    expect(response.status).toBe(200);
    const document = await response.json();
    const validator = new Validator();
    const result = await validator.validate(document);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe("3.1");
  });

  it("has the headers of the Worker's own answers, not the pages' policy", async () => {
    const response = await fetch(`${url}/openapi.json`);
    await response.body?.cancel();
    expect(response.headers.get("Content-Type")).toBe("application/json; charset=utf-8");
    expect(response.headers.get("Cache-Control")).toBe("public, max-age=300");
    for (const [name, value] of Object.entries(API_SECURITY_HEADERS))
      expect(response.headers.get(name), name).toBe(value);
  });
});
