// The roll form, built from the service's own OpenAPI spec: one form per roll mechanic,
// with the request's fields, limits and descriptions as the spec declares them and the
// seeds' worked examples (the spec's request examples) as starting values. Pure DOM; no
// dependency. A field the API adds shows up here without a change to the page.

import { inline as richText } from "./markdown.js";

// Not the mechanic's own fields: `sealed` too, as the roll panel draws a sealed roll's
// blind itself (its "who sees it" choice), never from a typed value.
const ENVELOPE = new Set(["table", "dice", "session", "seed", "sealed"]);
// A field's label is its title in the spec (the seed's words: "ST (strength)"), else its
// name in words.
export function labelOf(name, raw = {}) {
  return raw.title ?? name.charAt(0).toUpperCase() + name.slice(1).replaceAll("_", " ");
}

function element(tag, attributes = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value !== undefined && value !== null && value !== false) node.setAttribute(name, value === true ? "" : value);
  }
  node.append(...children);
  return node;
}

// A schema with its references followed; a reference's siblings (a field's description
// and default beside a named enumeration's $ref) stay on it.
function deref(spec, schema) {
  let node = schema;
  while (node.$ref || (node.allOf && node.allOf.length === 1)) {
    if (node.$ref) {
      const { $ref, ...siblings } = node;
      node = { ...spec.components.schemas[$ref.split("/").at(-1)], ...siblings };
    } else {
      node = { ...node, ...node.allOf[0], allOf: undefined };
    }
  }
  return node;
}

function refName(schema) {
  return schema.$ref?.split("/").at(-1);
}

// What a property is, for the form: its kind plus the limits that apply to it.
function classify(spec, raw) {
  const schema = deref(spec, raw);
  const limits = { minimum: schema.minimum, maximum: schema.maximum, maxLength: schema.maxLength, pattern: schema.pattern };
  if (schema.oneOf) {
    const options = schema.oneOf;
    const nullable = options.some((o) => o.type === "null");
    const shelf = options.map(refName).find(Boolean);
    if (shelf && options.some((o) => o.type === "string")) return { kind: "item", shelf, nullable };
    const real = options.filter((o) => o.type !== "null");
    if (real.length === 1) {
      const inner = classify(spec, real[0]);
      for (const [key, value] of Object.entries(limits)) if (value !== undefined) inner[key] = value;
      return { ...inner, nullable: nullable || inner.nullable };
    }
    return { kind: "unsupported" };
  }
  const types = Array.isArray(schema.type) ? schema.type : [schema.type];
  const nullable = types.includes("null");
  if (schema.enum) return { kind: "choice", options: schema.enum.filter((v) => v !== null), nullable, ...limits, default: schema.default };
  if (types.includes("integer")) return { kind: "integer", nullable, ...limits, default: schema.default };
  if (types.includes("boolean")) return { kind: "boolean", default: schema.default };
  if (types.includes("string")) return { kind: "text", nullable, ...limits, default: schema.default };
  if (types.includes("array")) return { kind: "list", items: schema.items, minItems: schema.minItems ?? 0, maxItems: schema.maxItems };
  if (types.includes("object") || schema.properties) return { kind: "object", schema };
  return { kind: "unsupported" };
}

// One field of the form: { node, read() } where read() gives the JSON value or undefined.
function field(context, name, raw, value, { path, required, description }) {
  const kind = classify(context.spec, raw);
  const id = `f-${path.join("-")}`;
  const label = labelOf(name, raw);
  const hint = description ?? deref(context.spec, raw).description;
  const hintId = hint ? `${id}-hint` : undefined;
  const wrap = (control, { inline = false } = {}) => {
    const optional = !required && kind.default === undefined && kind.kind !== "boolean";
    const labelNode = element("label", { for: id }, label, optional ? element("span", { class: "optional" }, " (optional)") : "");
    const row = element("div", { class: inline ? "field inline" : "field" });
    if (inline) row.append(control, " ", labelNode);
    else row.append(labelNode, control);
    if (hint) row.append(element("small", { id: hintId }, ...richText(hint)));
    return row;
  };
  const start = value !== undefined ? value : kind.default;

  switch (kind.kind) {
    case "integer": {
      const input = element("input", {
        id, name: path.join("."), type: "number", inputmode: "numeric", step: "1",
        min: kind.minimum, max: kind.maximum, required: required && !kind.nullable, "aria-describedby": hintId,
      });
      if (start !== undefined && start !== null) input.value = String(start);
      return { node: wrap(input), read: () => (input.value === "" ? undefined : Number(input.value)) };
    }
    case "text":
    case "item": {
      const input = element("input", {
        id, name: path.join("."), type: "text", maxlength: kind.maxLength, required: required && !kind.nullable,
        autocomplete: "off", "aria-describedby": hintId,
      });
      if (kind.pattern && validPattern(kind.pattern)) input.setAttribute("pattern", kind.pattern.replace(/^\^|\$$/g, ""));
      if (kind.kind === "item") input.setAttribute("list", `shelf-${kind.shelf}`);
      if (typeof start === "string") input.value = start;
      return { node: wrap(input), read: () => (input.value.trim() === "" ? undefined : input.value.trim()) };
    }
    case "choice": {
      const select = element("select", { id, name: path.join("."), required: required && !kind.nullable, "aria-describedby": hintId });
      if (!required || kind.nullable) select.append(element("option", { value: "" }, "—"));
      for (const option of kind.options) select.append(element("option", { value: String(option) }, String(option).replaceAll("_", " ")));
      if (start !== undefined && start !== null) select.value = String(start);
      const numeric = kind.options.every((o) => typeof o === "number");
      return {
        node: wrap(select),
        read: () => (select.value === "" ? undefined : numeric ? Number(select.value) : select.value),
      };
    }
    case "boolean": {
      const input = element("input", { id, name: path.join("."), type: "checkbox", "aria-describedby": hintId });
      input.checked = Boolean(start);
      return { node: wrap(input, { inline: true }), read: () => input.checked };
    }
    case "object":
      return objectField(context, label, kind.schema, value, { path, required, hint });
    case "list":
      return listField(context, label, kind, value, { path, required, hint });
    default:
      return null;  // not shown: the API takes it, the page leaves it at its default
  }
}

function validPattern(pattern) {
  try {
    new RegExp(pattern, "v");  // how browsers compile the pattern attribute
    return true;
  } catch {
    return false;
  }
}

function objectField(context, label, schema, value, { path, required, hint }) {
  const legend = element("legend", {}, label);
  const box = element("fieldset", { class: "object" }, legend);
  if (hint) box.append(element("small", {}, ...richText(hint)));
  const inner = objectFields(context, schema, value ?? {}, path);
  box.append(...inner.nodes);
  if (required) return { node: box, read: inner.read };
  // An optional group without a value of its own: a switch includes it or leaves it out.
  const id = `f-${path.join("-")}-on`;
  const toggle = element("input", { id, type: "checkbox" });
  toggle.checked = value !== undefined && value !== null;
  const sync = () => {
    for (const control of box.querySelectorAll("input, select, button")) {
      if (control !== toggle) control.disabled = !toggle.checked;
    }
  };
  toggle.addEventListener("change", sync);
  legend.replaceChildren(toggle, " ", element("label", { for: id }, `${label} (optional)`));
  queueMicrotask(sync);
  return { node: box, read: () => (toggle.checked ? inner.read() : undefined) };
}

function objectFields(context, schema, value, path, skip = new Set()) {
  const required = new Set(schema.required ?? []);
  const fields = [];
  for (const [name, raw] of Object.entries(schema.properties ?? {})) {
    if (skip.has(name)) continue;
    const made = field(context, name, raw, value[name], { path: [...path, name], required: required.has(name) });
    if (made) fields.push([name, made]);
  }
  return {
    nodes: fields.map(([, made]) => made.node),
    read() {
      const body = {};
      for (const [name, made] of fields) {
        const got = made.read();
        if (got !== undefined) body[name] = got;
      }
      return body;
    },
  };
}

function listField(context, label, kind, value, { path, required, hint }) {
  const items = deref(context.spec, kind.items);
  const itemKind = classify(context.spec, kind.items);
  const start = Array.isArray(value) ? value : [];
  if (itemKind.kind === "object") return repeatedField(context, label, kind, items, start, { path, hint });
  if (itemKind.kind === "choice" && kind.maxItems && kind.minItems === kind.maxItems && kind.maxItems <= 6) {
    // A fixed number of picks (three bonus attributes): one select each.
    const box = element("fieldset", { class: "picks" }, element("legend", {}, label));
    if (hint) box.append(element("small", {}, ...richText(hint)));
    const selects = [];
    for (let i = 0; i < kind.maxItems; i += 1) {
      const id = `f-${[...path, i].join("-")}`;
      const select = element("select", { id, required: true });
      for (const option of itemKind.options) select.append(element("option", { value: option }, String(option)));
      if (start[i] !== undefined) select.value = start[i];
      selects.push(select);
      box.append(element("label", { for: id, class: "pick" }, `${label} ${i + 1} `, select));
    }
    return { node: box, read: () => selects.map((s) => s.value) };
  }
  // Names or choices, any number: one line, separated by commas.
  const id = `f-${path.join("-")}`;
  const allowed = itemKind.kind === "choice" ? itemKind.options.join(", ") : null;
  const words = hint ?? (allowed ? `Separate with commas; each one of ${allowed}.` : "Separate names with commas.");
  const input = element("input", { id, name: path.join("."), type: "text", autocomplete: "off", "aria-describedby": `${id}-hint` });
  input.value = start.filter((v) => typeof v === "string").join(", ");
  const row = element(
    "div",
    { class: "field" },
    element("label", { for: id }, label, required ? "" : element("span", { class: "optional" }, " (optional)")),
    input,
    element("small", { id: `${id}-hint` }, ...richText(words)),
  );
  return {
    node: row,
    read: () => {
      const names = input.value.split(",").map((v) => v.trim()).filter(Boolean);
      return names.length || required ? names : undefined;
    },
  };
}

function repeatedField(context, label, kind, items, start, { path, hint }) {
  const one = label.replace(/s$/, "").toLowerCase();
  const box = element("fieldset", { class: "repeated" }, element("legend", {}, label));
  if (hint) box.append(element("small", {}, ...richText(hint)));
  const rows = [];
  const add = element("button", { type: "button", class: "add" }, `Add ${one}`);
  const renumber = () => {
    rows.forEach((row, i) => {
      row.legend.textContent = `${label.replace(/s$/, "")} ${i + 1}`;
      row.remove.textContent = `Remove ${one} ${i + 1}`;
      row.remove.disabled = rows.length <= kind.minItems;
    });
    add.disabled = kind.maxItems !== undefined && rows.length >= kind.maxItems;
  };
  const addRow = (value) => {
    const index = context.counter++;  // ids stay unique when rows come and go
    const legend = element("legend");
    const remove = element("button", { type: "button", class: "remove" });
    const inner = objectFields(context, items, value ?? {}, [...path, index]);
    const node = element("fieldset", { class: "object" }, legend, ...inner.nodes, remove);
    const row = { node, legend, remove, read: inner.read };
    remove.addEventListener("click", () => {
      rows.splice(rows.indexOf(row), 1);
      node.remove();
      renumber();
      box.dispatchEvent(new Event("input", { bubbles: true }));
      add.focus();
    });
    rows.push(row);
    box.insertBefore(node, add);
    renumber();
    return row;
  };
  box.append(add);
  for (const value of start) addRow(value);
  while (rows.length < kind.minItems) addRow(rows.length ? rows[0].read() : {});
  add.addEventListener("click", () => {
    const row = addRow(rows.length ? { ...rows.at(-1).read(), name: undefined } : {});
    row.node.querySelector("input, select")?.focus();
    box.dispatchEvent(new Event("input", { bubbles: true }));
  });
  renumber();
  return { node: box, read: () => rows.map((row) => row.read()) };
}

// The roll operations of the spec: POST bodies that carry the envelope's `table`.
export function rollOperations(spec) {
  const operations = [];
  for (const [path, methods] of Object.entries(spec.paths)) {
    const post = methods.post;
    const content = post?.requestBody?.content?.["application/json"];
    if (!content) continue;
    const schema = deref(spec, content.schema);
    if (!schema.properties?.table) continue;
    const examples = content.examples ?? {};
    // An operation's first worked example (spec/examples.json's order) is where a GM starts.
    const chosen = Object.values(examples)[0];
    const odds = spec.paths[`${path}/odds`]?.post;
    operations.push({
      id: post.operationId,
      path,
      system: path.split("/")[2],
      summary: post.summary,
      schema,
      example: chosen?.value ?? {},
      exampleName: chosen?.summary,
      odds: odds ? { id: odds.operationId, path: `${path}/odds`, schema: deref(spec, odds.requestBody.content["application/json"].schema) } : null,
    });
  }
  return operations;
}

// The fields of one mechanic's form, started from the seed's example (its supplied dice
// and seed left out: the page rolls fresh dice unless the GM types a seed).
export function mechanicForm(spec, operation, shelves) {
  const context = { spec, counter: 0 };
  const skip = new Set(ENVELOPE);
  for (const [name, needs] of Object.entries(operation.schema.dependentRequired ?? {})) {
    if (needs.some((other) => ENVELOPE.has(other))) skip.add(name);  // only with supplied dice
  }
  const fields = objectFields(context, operation.schema, operation.example, [], skip);
  const lists = Object.entries(shelves).map(([item, names]) => {
    const list = element("datalist", { id: `shelf-${item}` });
    for (const name of names) list.append(element("option", { value: name }));
    return list;
  });
  return { nodes: [...fields.nodes, ...lists], read: fields.read };
}

// The names a field that takes an item or its name suggests: { Weapon: ["Dagger", ...] }.
// An item schema's names come from the catalogue the server publishes for it, found in the
// spec: a GET without parameters whose answer lists items of that schema (as the Fast
// Battle store lists weapons under `weapons`). Each catalogue is fetched once.
export async function loadShelves(spec) {
  const wanted = new Set();
  const visit = (node) => {
    if (!node || typeof node !== "object") return;
    const options = node.oneOf ?? [];
    if (options.some((o) => o.type === "string")) for (const o of options) if (refName(o)) wanted.add(refName(o));
    for (const child of Object.values(node)) visit(child);
  };
  visit(spec.components?.schemas);
  const found = [];
  for (const [path, methods] of Object.entries(spec.paths)) {
    const get = methods.get;
    const schema = get?.responses?.["200"]?.content?.["application/json"]?.schema;
    if (!schema || get.parameters?.length) continue;
    for (const [property, raw] of Object.entries(deref(spec, schema).properties ?? {})) {
      const item = raw.type === "array" ? refName(raw.items ?? {}) : undefined;
      if (item && wanted.has(item)) found.push({ path, property, item });
    }
  }
  const answers = new Map();
  for (const { path } of found) {
    if (!answers.has(path)) answers.set(path, fetch(path).then((r) => (r.ok ? r.json() : {})).catch(() => ({})));
  }
  const shelves = {};
  for (const { path, property, item } of found) {
    const listed = (await answers.get(path))[property] ?? [];
    shelves[item] = [...(shelves[item] ?? []), ...listed.map((entry) => entry.name).filter(Boolean)];
  }
  return shelves;
}

// The odds request for a roll body: the fields the odds operation takes, nothing else.
export function oddsBody(operation, body) {
  const allowed = operation.odds.schema.properties ?? {};
  return Object.fromEntries(Object.entries(body).filter(([name]) => name in allowed));
}

// The form control a problem's `invalid_params` name points at (`fighters[1].st`).
export function controlFor(form, name) {
  const parts = name.replace(/\[(\d+)\]/g, ".$1").split(".");
  const byName = form.querySelector(`[name="${CSS.escape(parts.join("."))}"]`);
  if (byName) return byName;
  // Repeated rows keep their first index in ids; map the nth row to its fieldset.
  const rows = [...form.querySelectorAll("fieldset.repeated")];
  for (const box of rows) {
    const objects = [...box.querySelectorAll(":scope > fieldset.object")];
    const at = parts.findIndex((p) => /^\d+$/.test(p));
    if (at < 0) break;
    const row = objects[Number(parts[at])];
    const leaf = parts.slice(at + 1).join(".");
    const match = row?.querySelector(`[name$=".${CSS.escape(leaf)}"]`);
    if (match) return match;
  }
  return null;
}
