import { api, call, query } from "../api.js";
import { field, h, table, when } from "../h.js";

/**
 * The tenant vault (docs/security.md, The tenant vault): each secret's name, when it was
 * stored and replaced, and which agents and tools name it; a form that stores or replaces a
 * value; delete. A value goes from its password field into the PUT body and the field is
 * cleared at once: it is never in the DOM, a URL, storage or a log, and the API never gives
 * it back.
 */
export async function render(view, _params, app) {
  const name = h("input", {
    name: "name",
    required: true,
    maxlength: 128,
    autocomplete: "off",
    autocapitalize: "off",
    spellcheck: "false",
    "aria-describedby": "secret-name-rule",
    "data-testid": "secret-name",
  });
  // No `name` attribute: a nameless field is never part of a form submission, so not even a
  // submit that escaped the handler below could carry the value into a URL.
  const value = h("input", {
    type: "password",
    autocomplete: "off",
    required: true,
    "aria-describedby": "secret-value-rule",
    "data-testid": "secret-value",
  });
  const submit = h("button", { type: "submit", "data-testid": "secret-store" }, "Store");
  const body = h("tbody");
  const more = h(
    "button",
    { type: "button", class: "quiet", hidden: true, "data-testid": "secrets-more" },
    "Load more",
  );
  const listHeading = h("h2", { tabindex: -1 }, "Stored secrets");
  const inUse = h("div", { class: "card notice", tabindex: -1, hidden: true, "data-testid": "secret-in-use" });
  /** Names listed so far, so the button can say when storing replaces a value. */
  const known = new Set();
  /** The "used by" cell of each listed secret, redrawn when a delete learns it is stale. */
  const usedCells = new Map();
  let cursor = null;

  const setButton = () => {
    submit.textContent = known.has(name.value.trim()) ? "Replace value" : "Store";
  };
  name.addEventListener("input", setButton);

  const store = async (event) => {
    event.preventDefault();
    const secret = name.value.trim();
    hideInUse();
    submit.disabled = true;
    try {
      const put = call("PUT", `/v1/secrets/${encodeURIComponent(secret)}`, { value: value.value });
      // The request holds the value now; the field lets it go whatever the answer.
      value.value = "";
      const answer = await put;
      app.say(`Secret '${secret}' ${answer.status === 201 ? "stored" : "replaced"}.`);
      name.value = "";
      await load(false);
      setButton();
      name.focus();
    } catch (e) {
      app.fail(e);
      value.focus();
    } finally {
      value.value = "";
      submit.disabled = false;
    }
  };

  const replace = (secret) => {
    hideInUse();
    name.value = secret.name;
    value.value = "";
    setButton();
    value.focus();
  };

  const remove = async (secret, button) => {
    if (!confirm(`Delete the secret '${secret.name}'? Its value is gone for good.`)) return;
    hideInUse();
    button.disabled = true;
    try {
      await api("DELETE", `/v1/secrets/${encodeURIComponent(secret.name)}`);
      app.say(`Secret '${secret.name}' deleted.`);
      await load(false);
      listHeading.focus();
    } catch (e) {
      button.disabled = false;
      app.fail(e);
      if (e.code === "SECRET_IN_USE" && e.details?.used_by) showInUse(secret.name, e.details.used_by);
    }
  };

  /** What a 409 said: the definitions that still name the secret, each a way to change it. */
  const showInUse = (secret, usedBy) => {
    usedCells.get(secret)?.replaceChildren(users(usedBy));
    inUse.replaceChildren(
      h("h3", {}, `'${secret}' is in use`),
      h("p", {}, "These definitions name it; change them or delete them first, then delete the secret."),
      users(usedBy),
    );
    inUse.hidden = false;
    inUse.focus();
  };
  const hideInUse = () => {
    inUse.hidden = true;
    inUse.replaceChildren();
  };

  const row = (secret) => {
    const used = h("td", { "data-testid": "secret-used-by" }, users(secret.used_by));
    usedCells.set(secret.name, used);
    return h(
      "tr",
      { "data-testid": "secret-row", "data-name": secret.name },
      h("td", {}, h("code", {}, secret.name)),
      h("td", {}, when(secret.created_at)),
      h("td", { "data-testid": "secret-replaced" }, secret.rotated_at ? when(secret.rotated_at) : "never"),
      used,
      h(
        "td",
        { class: "row-actions" },
        h(
          "button",
          {
            type: "button",
            class: "quiet",
            "aria-label": `Replace the value of ${secret.name}`,
            "data-testid": "secret-replace",
            onclick: () => replace(secret),
          },
          "Replace value",
        ),
        h(
          "button",
          {
            type: "button",
            class: "danger",
            "aria-label": `Delete ${secret.name}`,
            "data-testid": "secret-delete",
            onclick: (event) => remove(secret, event.currentTarget),
          },
          "Delete",
        ),
      ),
    );
  };

  const load = async (append) => {
    try {
      const page = await api("GET", `/v1/secrets${query({ limit: 50, cursor: append ? cursor : undefined })}`);
      if (!append) {
        body.replaceChildren();
        known.clear();
        usedCells.clear();
      }
      for (const secret of page.items) known.add(secret.name);
      body.append(...page.items.map(row));
      if (!append && page.items.length === 0)
        body.append(h("tr", {}, h("td", { colspan: 5, class: "muted" }, "The vault holds no secrets yet.")));
      cursor = page.next_cursor;
      more.hidden = !cursor;
    } catch (e) {
      app.fail(e);
    }
  };
  more.addEventListener("click", () => load(true));

  const form = h(
    "form",
    { class: "card", "data-testid": "secret-form", onsubmit: store },
    h("h2", {}, "Store a secret"),
    h("div", { class: "filters" }, field("Name", name), field("Value", value), submit),
    h(
      "p",
      { class: "muted", id: "secret-name-rule" },
      "A name is a letter, then letters, digits, '_' or '-'. Storing a name the vault holds replaces its value; agents and tools that name it use the new one within 10 s.",
    ),
    h(
      "p",
      { class: "muted", id: "secret-value-rule" },
      "The value is sent once and never shown again, here or by the API: at most 8 KiB, one line.",
    ),
  );
  const list = table("secrets-table", ["Name", "Stored", "Replaced", "Used by", "Actions"], []);
  list.querySelector("tbody").replaceWith(body);
  view.replaceChildren(
    h(
      "div",
      { class: "head" },
      h("h1", {}, "Secrets"),
      h(
        "div",
        { class: "tools" },
        h(
          "button",
          { type: "button", class: "quiet", "data-testid": "secrets-refresh", onclick: () => load(false) },
          "Refresh",
        ),
      ),
    ),
    h(
      "p",
      { class: "muted" },
      "The tenant's vault: agents and tools name these secrets in their headers and signing_secret.",
    ),
    form,
    listHeading,
    inUse,
    list,
    more,
  );
  await load(false);
  // Nothing typed into the value field outlives the view.
  return () => {
    value.value = "";
  };
}

/** Who names a secret: agents link to their page; tools have none in the dashboard. */
function users(usedBy) {
  const items = [
    ...usedBy.agents.map((agent) =>
      h("li", {}, "agent ", h("a", { href: `#/agents/${encodeURIComponent(agent)}` }, agent)),
    ),
    ...usedBy.tools.map((tool) => h("li", {}, "tool ", h("code", {}, tool))),
  ];
  return items.length ? h("ul", { class: "users" }, items) : h("span", { class: "muted" }, "nobody");
}
