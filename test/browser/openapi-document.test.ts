import { Validator } from "@seriousme/openapi-schema-validator";
import { describe, expect, inject, it } from "vitest";

/**
 * The document `wrangler dev` serves at /openapi.json, checked by an OpenAPI 3.1 validator
 * nobody on the team wrote (the official JSON Schema of the specification, through ajv,
 * which needs Node: it compiles schemas to code, which workerd does not allow).
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
});
