import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import puppeteer, { type Browser, type HTTPResponse, type Page } from "puppeteer-core";
import { inject } from "vitest";

/**
 * The browser side of the browser tests: Debian's Chromium (never a downloaded one),
 * a page that records what a user would not want to see (console errors, failed
 * requests), and screenshots for review.
 */

export const SCREENSHOTS = join(import.meta.dirname, "..", "..", ".test-results", "screenshots");

/** `CHROMIUM_PATH`, else the first of Debian's names on the PATH. */
export function chromiumPath(): string | undefined {
  if (process.env.CHROMIUM_PATH) return process.env.CHROMIUM_PATH;
  for (const name of ["chromium", "chromium-browser", "google-chrome"]) {
    try {
      const found = execFileSync("sh", ["-c", `command -v ${name}`], { encoding: "utf8" }).trim();
      if (found && existsSync(found)) return found;
    } catch {
      // not this one
    }
  }
  return undefined;
}

export async function launch(): Promise<Browser> {
  const executablePath = chromiumPath();
  if (!executablePath) throw new Error("No Chromium found: `apt-get install -y chromium`, or set CHROMIUM_PATH.");
  mkdirSync(SCREENSHOTS, { recursive: true });
  return puppeteer.launch({
    executablePath,
    headless: true,
    // --no-sandbox: CI containers run as root, where Chromium's sandbox cannot start.
    args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage", "--no-first-run"],
  });
}

export interface Watched {
  page: Page;
  /** Console errors, uncaught exceptions, failed requests and error responses the test did not expect. */
  problems: string[];
  /** Responses with these path prefixes and statuses are expected (a wrong key's 401). */
  expect(status: number, path: string): void;
}

export async function watchedPage(browser: Browser, width = 1280, height = 900): Promise<Watched> {
  const page = await browser.newPage();
  await page.setViewport({ width, height });
  const problems: string[] = [];
  const expected: { status: number; path: string }[] = [];
  page.on("console", (message) => {
    // Chrome logs every 4xx/5xx response as an error; those are judged by status below.
    if (message.type() === "error" && !message.text().startsWith("Failed to load resource: the server responded"))
      problems.push(`console error: ${message.text()}`);
  });
  page.on("pageerror", (error) => problems.push(`uncaught: ${(error as Error).message}`));
  page.on("requestfailed", (request) => {
    // A WebSocket closed by navigating away, or a fetch aborted by the page itself, is not a failure.
    const reason = request.failure()?.errorText ?? "";
    if (reason === "net::ERR_ABORTED") return;
    problems.push(`request failed: ${request.method()} ${request.url()} ${reason}`);
  });
  page.on("response", (response: HTTPResponse) => {
    if (response.status() < 400) return;
    const path = new URL(response.url()).pathname;
    const i = expected.findIndex((e) => e.status === response.status() && path.startsWith(e.path));
    if (i >= 0) expected.splice(i, 1);
    else problems.push(`HTTP ${response.status()}: ${response.request().method()} ${path}`);
  });
  return { page, problems, expect: (status, path) => expected.push({ status, path }) };
}

export async function screenshot(page: Page, name: string, fullPage = true): Promise<void> {
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage });
}

/** The text of the first element matching the test id, once it has some. */
export async function textOf(page: Page, testId: string, timeout = 15_000): Promise<string> {
  const handle = await page.waitForSelector(`[data-testid="${testId}"]`, { timeout });
  return (await handle!.evaluate((el) => el.textContent ?? "")).trim();
}

export const byTestId = (id: string) => `[data-testid="${id}"]`;

/** Opens the dashboard at `url` and signs in with `key`, as a person would: the sessions list shows. */
export async function signIn(page: Page, url: string, key: string): Promise<void> {
  await page.goto(`${url}/`, { waitUntil: "networkidle0" });
  await page.type(byTestId("api-key"), key);
  await page.keyboard.press("Enter");
  await page.waitForSelector(byTestId("sessions-table"));
}

/** Calls the suite's Relay as its tenant: the status and the parsed body (null when not JSON). */
export async function relayCall(
  method: string,
  path: string,
  body?: unknown,
  type = "application/json",
): Promise<{ status: number; body: any }> {
  const response = await fetch(`${inject("relayUrl")}${path}`, {
    method,
    headers: { Authorization: `Bearer ${inject("relayKey")}`, ...(body === undefined ? {} : { "Content-Type": type }) },
    body: body === undefined ? undefined : typeof body === "string" ? body : JSON.stringify(body),
  });
  return { status: response.status, body: await response.json().catch(() => null) };
}

/** {@link relayCall}, the body of a 2xx answer; any other is a thrown error naming the call (a test's set-up failed). */
export async function api(method: string, path: string, body?: unknown, type?: string): Promise<any> {
  const answer = await relayCall(method, path, body, type);
  if (answer.status >= 400) throw new Error(`${method} ${path} → ${answer.status} ${JSON.stringify(answer.body)}`);
  return answer.body;
}
