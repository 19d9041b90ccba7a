import { describe, expect, it } from "vitest";
import { REDACTED, secretRedactor } from "../../src/outbound/redact";

/** What a remote echoes of the values Relay sent it is replaced before anyone sees it. */

describe("secretRedactor", () => {
  const redact = secretRedactor(["Bearer ghp_abcdefgh12345", 'quote"and\\slash-value']);

  it("replaces a value as sent, its long parts alone, and its JSON-escaped form", () => {
    expect(redact("got Authorization: Bearer ghp_abcdefgh12345, refused")).toBe(
      `got Authorization: ${REDACTED}, refused`,
    );
    expect(redact('{"token":"ghp_abcdefgh12345"}')).toBe(`{"token":"${REDACTED}"}`);
    expect(redact(JSON.stringify({ echoed: 'quote"and\\slash-value' }))).toBe(`{"echoed":"${REDACTED}"}`);
    expect(redact("twice: ghp_abcdefgh12345 ghp_abcdefgh12345")).toBe(`twice: ${REDACTED} ${REDACTED}`);
  });

  it("leaves text without them, and short parts of a value (`Bearer`), as they are", () => {
    expect(redact("Bearer tokens are refused")).toBe("Bearer tokens are refused");
    expect(secretRedactor([])("anything")).toBe("anything");
  });
});
