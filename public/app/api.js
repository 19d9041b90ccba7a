// The API client: the key lives in sessionStorage (gone with the tab, never in a URL).

const KEY = "relay.apiKey";

export const apiKey = () => sessionStorage.getItem(KEY);
export const signIn = (key) => sessionStorage.setItem(KEY, key);
export const signOut = () => sessionStorage.removeItem(KEY);

export class ApiError extends Error {
  constructor(status, body) {
    super(body?.error?.message ?? `HTTP ${status}`);
    this.status = status;
    this.code = body?.error?.code ?? "HTTP_ERROR";
    this.details = body?.error?.details;
  }
}

/** Listeners told when the key is refused, so the app can ask for another. */
const unauthorized = new Set();
export const onUnauthorized = (fn) => unauthorized.add(fn);

/** Calls the API with the signed-in key; throws ApiError with the stable code on an error answer. */
export async function api(method, path, body, options) {
  return (await call(method, path, body, options)).body;
}

/**
 * Like {@link api}, with the answer's status beside its body, for routes whose status means something (201 stored, 200 replaced).
 * `type` other than JSON sends `body`, a string, as it is (an agent as a Markdown file).
 */
export async function call(method, path, body, { key = apiKey(), signal, type = "application/json" } = {}) {
  const headers = { Authorization: `Bearer ${key}` };
  if (body !== undefined) headers["Content-Type"] = type;
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : type === "application/json" ? JSON.stringify(body) : body,
    signal,
  });
  const text = await response.text();
  let json = null;
  try {
    json = text ? JSON.parse(text) : null;
  } catch {
    // Not Relay's JSON (a proxy's error page): the status says what happened.
  }
  if (!response.ok) {
    const error = new ApiError(response.status, json);
    if (response.status === 401 && key === apiKey()) for (const fn of unauthorized) fn(error);
    throw error;
  }
  return { status: response.status, body: json };
}

/** A query string from the filled-in fields only. */
export function query(params) {
  const search = new URLSearchParams();
  for (const [name, value] of Object.entries(params))
    if (value !== undefined && value !== null && value !== "") search.set(name, String(value));
  const text = search.toString();
  return text ? `?${text}` : "";
}

/**
 * Every item of a list, page after page (at most `pages` pages; `truncated` says when
 * there was more). `path` may carry its own filters.
 */
export async function allPages(path, { limit = 200, pages = 20, signal } = {}) {
  const items = [];
  let cursor;
  for (let page = 0; page < pages; page++) {
    const joiner = path.includes("?") ? "&" : "?";
    const answer = await api("GET", `${path}${joiner}${query({ limit, cursor }).slice(1)}`, undefined, { signal });
    items.push(...answer.items);
    cursor = answer.next_cursor;
    if (!cursor) return { items, truncated: false };
  }
  return { items, truncated: true };
}

/** `fn` over the items, at most `width` calls at a time, results in the items' order. */
export async function mapLimited(items, width, fn) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      results[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(width, items.length) }, worker));
  return results;
}
