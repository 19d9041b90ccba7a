import { describe, expect, it } from "vitest";
import { luhnValid, PII_TOKENS, redactPii } from "../../src/handoff/pii";

const { card: CARD, ssn: SSN, email: EMAIL, phone: PHONE } = PII_TOKENS;

describe("Luhn", () => {
  it.each([
    ["4111111111111111", true],
    ["4111111111111112", false],
    ["378282246310005", true],
    ["6011111111111117", true],
    ["0", true],
    ["", false],
  ])("%s → %s", (digits, valid) => {
    expect(luhnValid(digits)).toBe(valid);
  });
});

describe("redact_pii: card numbers", () => {
  it.each([
    ["card 4111111111111111 ok", `card ${CARD} ok`],
    ["card 4111 1111 1111 1111.", `card ${CARD}.`],
    ["card 4111-1111-1111-1111", `card ${CARD}`],
    ["amex 3782 822463 10005", `amex ${CARD}`],
    ["13 digits 4222222222222", `13 digits ${CARD}`],
    ["19 digits 6011111111111111110", `19 digits ${CARD}`],
  ])("masks a Luhn-valid number: %s", (text, expected) => {
    expect(redactPii(text)).toBe(expected);
  });

  it.each([
    "order 4111111111111112 shipped", // fails Luhn
    "order 4111 1111 1111 1112", // fails Luhn, with spaces
    "id 411111111111", // 12 digits: too short
    "id 41111111111111111111", // 20 digits: too long
    "ref 4111--1111--1111--1111", // double separators are not a card layout
  ])("leaves alone: %s", (text) => {
    expect(redactPii(text)).toBe(text);
  });

  it("masks a card followed by a year without swallowing the year", () => {
    expect(redactPii("4111 1111 1111 1111 2027")).toBe(`${CARD} 2027`);
  });
});

describe("redact_pii: SSNs", () => {
  it("masks ddd-dd-dddd", () => {
    expect(redactPii("SSN 123-45-6789, thanks")).toBe(`SSN ${SSN}, thanks`);
    expect(redactPii("078-05-1120")).toBe(SSN);
  });

  it.each([
    "000-12-3456",
    "666-12-3456",
    "900-12-3456",
    "999-12-3456",
    "123-00-4567",
    "123-45-0000",
    "123-45-67890",
    "1234-56-7890",
    "123456789",
  ])("leaves an impossible or differently shaped number alone: %s", (text) => {
    expect(redactPii(text)).toBe(text);
  });
});

describe("redact_pii: e-mail addresses", () => {
  it.each([
    ["mail jane.doe+tag@example.co.uk now", `mail ${EMAIL} now`],
    ["<a_b@sub.example.com>", `<${EMAIL}>`],
    ["Jane.Doe@Example.ORG.", `${EMAIL}.`],
    ["first@a.io, second@b.io", `${EMAIL}, ${EMAIL}`],
    ["john.5551234567@mail.com", EMAIL],
  ])("%s", (text, expected) => {
    expect(redactPii(text)).toBe(expected);
  });

  it.each(["not an email: a@b", "@handle", "user@localhost", "x@y.z"])("leaves alone: %s", (text) => {
    expect(redactPii(text)).toBe(text);
  });
});

describe("redact_pii: phone numbers", () => {
  it.each([
    ["call +1 (555) 123-4567 today", `call ${PHONE} today`],
    ["+44 20 7946 0958", PHONE],
    ["+33 1 23 45 67 89", PHONE],
    ["+4915112345678", PHONE],
    ["+1-555-123-4567.", `${PHONE}.`],
    ["(555) 123-4567", PHONE],
    ["555-123-4567", PHONE],
    ["555.123.4567", PHONE],
    ["555 123 4567", PHONE],
    ["020 7946 0958", PHONE],
    ["01 23 45 67 89", PHONE],
    ["07700 900123", PHONE],
    ["(030) 1234567", PHONE],
  ])("%s", (text, expected) => {
    expect(redactPii(text)).toBe(expected);
  });

  it("stops an international number before a following number that would make it too long", () => {
    expect(redactPii("+44 20 7946 0958 2023")).toBe(`${PHONE} 2023`);
  });

  it.each([
    "in 2024 we sold 1999 units",
    "between 2023-2024",
    "on 2024-01-15 at 10:30",
    "on 15.01.2024",
    "score +5 points, +12 today",
    "call ext 1234",
    "room 101, floor 3",
    "version 1.2.3",
    "price 1,234.56",
    "ip 192.168.1.10",
    "order 5551234567", // bare digit runs are not treated as phones
    "01-12-2024",
  ])("leaves alone: %s", (text) => {
    expect(redactPii(text)).toBe(text);
  });
});

describe("redact_pii: mixed text", () => {
  it("masks every kind in one message and keeps the rest", () => {
    const text =
      "I'm jane@example.com, card 4111 1111 1111 1111, SSN 123-45-6789, phone +1 555 123 4567, order #88231 from 2024.";
    expect(redactPii(text)).toBe(`I'm ${EMAIL}, card ${CARD}, SSN ${SSN}, phone ${PHONE}, order #88231 from 2024.`);
  });

  it("gets through long adversarial input (no catastrophic backtracking) and leaves it alone", () => {
    const inputs = ["1".repeat(32_000), `${"a".repeat(32_000)}@`, "+1 ".repeat(10_000), `${"a.".repeat(16_000)}`];
    for (const text of inputs) expect(redactPii(text) === text, text.slice(0, 8)).toBe(true);
    // Single digits with spaces can form card layouts; whatever is masked, nothing else changes.
    expect(redactPii("0 1 ".repeat(8000)).replaceAll(CARD, "")).toMatch(/^[01 ]*$/);
  });
});
