// DOM building without HTML parsing: everything from the API is set as text.

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2).toLowerCase(), value);
    else if (key === "class") el.className = value;
    // Through the CSSOM, not the style attribute: the page's CSP allows no inline style (public/_headers).
    else if (key === "style") el.style.cssText = value;
    else if (key in el && typeof value !== "string") el[key] = value;
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** "3 min ago" or "in 2 h" for times near now, the date and time otherwise; the exact time in the tooltip. */
export function when(iso) {
  if (!iso) return "—";
  const t = Date.parse(iso);
  const seconds = Math.round((Date.now() - t) / 1000);
  const span = Math.abs(seconds);
  const amount =
    span < 60
      ? `${span} s`
      : span < 3600
        ? `${Math.round(span / 60)} min`
        : span < 86_400 * 2
          ? `${Math.round(span / 3600)} h`
          : null;
  const text = amount === null ? new Date(t).toLocaleString() : seconds >= 0 ? `${amount} ago` : `in ${amount}`;
  return h("time", { datetime: iso, title: iso }, text);
}

export function duration(ms) {
  if (ms === null || ms === undefined || Number.isNaN(ms)) return "—";
  return ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`;
}

export const shortId = (id) => (id && id.length > 18 ? `${id.slice(0, 14)}…` : (id ?? "—"));

/** A labelled form field. */
export function field(label, control) {
  return h("label", { class: "field" }, h("span", {}, label), control);
}

/** A table that scrolls sideways on a narrow screen rather than overflowing the page. */
export function table(testId, headings, rows) {
  return h(
    "div",
    { class: "table-wrap" },
    h(
      "table",
      { "data-testid": testId },
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          headings.map((t) => h("th", { scope: "col" }, t)),
        ),
      ),
      h("tbody", {}, rows),
    ),
  );
}

const SVG_NS = "http://www.w3.org/2000/svg";

/** An SVG element, built like h(): attributes as given, everything from the API as text. */
export function svg(tag, attrs = {}, ...children) {
  const el = document.createElementNS(SVG_NS, tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key.startsWith("on")) el.addEventListener(key.slice(2).toLowerCase(), value);
    else el.setAttribute(key, value === true ? "" : String(value));
  }
  for (const child of children.flat(Infinity)) {
    if (child === null || child === undefined || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

/** A steady colour for a name (an agent), as a hue for `hsl()`. */
export function hueOf(name) {
  let hash = 0;
  for (const c of name ?? "") hash = (hash * 31 + c.codePointAt(0)) % 360;
  return hash;
}
