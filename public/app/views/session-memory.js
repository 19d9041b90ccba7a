import { api } from "../api.js";
import { field, h, table, when } from "../h.js";

/**
 * A session's memory of facts (docs/memory.md, Facts), the panel of the session page: the
 * facts every agent of the session gets in its prompt, each with who wrote it and when; edit
 * a value in place, delete a fact, add one. A person's writes go through the API as the
 * agents' go through their tools, within the same bounds (50 facts, 8,000 characters).
 */

/** MemoryKey's rule (src/schemas/memory.ts), for the browser to say before the API does. */
const KEY_PATTERN = "[A-Za-z0-9][A-Za-z0-9_.\\-]{0,63}";

/**
 * The panel: `show(memory)` draws a `GET /v1/sessions/:id/memory` answer (the session page
 * reads it with everything else); a change the panel makes reads the memory again at once.
 * While a value is being edited, a refresh leaves the list alone so the edit is not lost.
 */
export function memoryPanel(sessionPath, app) {
  const section = h("section", { class: "card", "data-testid": "memory-panel", "aria-labelledby": "memory-title" });
  const summary = h("p", { class: "muted", "data-testid": "memory-summary" });
  const body = h("tbody");
  const list = table("memory-table", ["Key", "Value", "Written by", "Updated", "Actions"], []);
  list.querySelector("tbody").replaceWith(body);
  const key = h("input", {
    name: "key",
    required: true,
    maxlength: 64,
    pattern: KEY_PATTERN,
    autocomplete: "off",
    autocapitalize: "off",
    spellcheck: "false",
    "aria-describedby": "memory-key-rule",
    "data-testid": "memory-key",
  });
  const value = h("input", { name: "value", required: true, maxlength: 500, "data-testid": "memory-value" });
  const add = h("button", { type: "submit", "data-testid": "memory-add" }, "Remember");
  /** Keys shown now, so the button can say when adding replaces a fact. */
  const known = new Set();
  let editing = null;
  let shown = "";

  const setButton = () => {
    add.textContent = known.has(key.value.trim()) ? "Replace" : "Remember";
  };
  key.addEventListener("input", setButton);

  const reread = async () => show(await api("GET", sessionPath("/memory")), true);

  const write = async (factKey, factValue) => {
    await api("PUT", sessionPath(`/memory/${encodeURIComponent(factKey)}`), { value: factValue });
    app.say(`Fact '${factKey}' remembered.`);
  };

  const submit = async (event) => {
    event.preventDefault();
    add.disabled = true;
    try {
      await write(key.value.trim(), value.value);
      key.value = "";
      value.value = "";
      await reread();
      setButton();
      key.focus();
    } catch (e) {
      app.fail(e);
    } finally {
      add.disabled = false;
    }
  };

  const remove = async (fact, button) => {
    if (!confirm(`Forget '${fact.key}'? No agent of this session will see it any more.`)) return;
    button.disabled = true;
    try {
      await api("DELETE", sessionPath(`/memory/${encodeURIComponent(fact.key)}`));
      app.say(`Fact '${fact.key}' forgotten.`);
      await reread();
    } catch (e) {
      button.disabled = false;
      app.fail(e);
    }
  };

  /** The row's value cell becomes a field with Save and Cancel; the list waits until it is done. */
  const edit = (fact, cell, actions) => {
    editing = fact.key;
    const input = h("input", {
      value: fact.value,
      required: true,
      maxlength: 500,
      "aria-label": `New value of ${fact.key}`,
      "data-testid": "memory-edit-value",
    });
    const done = async () => {
      editing = null;
      await reread();
    };
    const save = async (event) => {
      event.preventDefault();
      try {
        await write(fact.key, input.value);
        await done();
      } catch (e) {
        app.fail(e);
        input.focus();
      }
    };
    cell.replaceChildren(
      h(
        "form",
        { class: "inline-edit", onsubmit: save },
        input,
        h("button", { type: "submit", "data-testid": "memory-save" }, "Save"),
        h("button", { type: "button", class: "quiet", onclick: done }, "Cancel"),
      ),
    );
    actions.replaceChildren();
    input.focus();
  };

  const row = (fact) => {
    const valueCell = h("td", { class: "memory-value", "data-testid": "memory-fact-value" }, fact.value);
    const actions = h("td", { class: "row-actions" });
    actions.append(
      h(
        "button",
        {
          type: "button",
          class: "quiet",
          "aria-label": `Edit ${fact.key}`,
          "data-testid": "memory-edit",
          onclick: () => edit(fact, valueCell, actions),
        },
        "Edit",
      ),
      h(
        "button",
        {
          type: "button",
          class: "danger",
          "aria-label": `Delete ${fact.key}`,
          "data-testid": "memory-delete",
          onclick: (event) => remove(fact, event.currentTarget),
        },
        "Delete",
      ),
    );
    return h(
      "tr",
      { "data-testid": "memory-fact", "data-key": fact.key },
      h("td", {}, h("code", {}, fact.key)),
      valueCell,
      h("td", {}, fact.agent ?? h("span", { class: "muted" }, "a person")),
      h("td", {}, when(fact.updated_at)),
      actions,
    );
  };

  /** Draws the memory; unchanged memory, or one under an edit, is left as it is (`force`: after the panel's own change). */
  function show(memory, force = false) {
    const signature = JSON.stringify(memory);
    if (editing !== null || (!force && signature === shown)) return;
    shown = signature;
    known.clear();
    for (const fact of memory.facts) known.add(fact.key);
    summary.textContent = `Facts every agent of this session gets in its prompt: ${memory.facts.length} of ${memory.limits.facts}, ${memory.chars} of ${memory.limits.total_chars} characters.`;
    body.replaceChildren(
      ...(memory.facts.length
        ? memory.facts.map(row)
        : [h("tr", {}, h("td", { colspan: 5, class: "muted" }, "No facts yet."))]),
    );
    setButton();
  }

  section.append(
    h("h2", { id: "memory-title" }, "Memory"),
    summary,
    list,
    h(
      "form",
      { class: "filters", "data-testid": "memory-form", onsubmit: submit },
      field("Key", key),
      field("Value", value),
      add,
    ),
    h(
      "p",
      { class: "muted", id: "memory-key-rule" },
      "A key is letters, digits, '_', '.' or '-' (at most 64), starting with a letter or digit; adding a key the memory holds replaces its value.",
    ),
  );
  return { element: section, show };
}
