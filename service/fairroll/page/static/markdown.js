// The Markdown of fairroll's docs and of the spec's help texts, as DOM (never as HTML
// strings): headings, paragraphs, lists, tables, fenced code; inline `code`, **strong**,
// *emphasis* and [links](...). A path to one of the docs the service serves
// (docs/rules/dice.md, ../audit.md) becomes a link to its page here (/docs/rules/dice).
// On a docs page (main#doc with data-source), it reads and renders that Markdown.

const SERVED = /^(?:\.\.\/)*(?:docs\/)?((?:rules\/)?(?:[a-z][a-z0-9-]*))\.md(#[\w-]*)?$/;
const BARE_PATH = /(docs\/(?:rules\/)?[a-z][a-z0-9-]*\.md)/g;

/** Where a link to `href` goes from a docs page (`from`: the folder it is in). */
export function docHref(href, from = "") {
  const served = SERVED.exec(href);
  if (!served) return href;
  let path = served[1];
  if (!href.startsWith("docs/") && !href.startsWith("../") && from && !path.includes("/")) path = `${from}/${path}`;
  return `/docs/${path}${served[2] ?? ""}`;
}

function link(text, href, from) {
  const anchor = document.createElement("a");
  anchor.href = docHref(href, from);
  anchor.append(...inline(text, from));
  return anchor;
}

/** Inline Markdown as DOM nodes. */
export function inline(text, from = "") {
  const nodes = [];
  const pattern = /`([^`]+)`|\*\*(.+?)\*\*|\[([^\]]+)\]\(([^)\s]+)\)|(?<![\w*])\*(?!\s)(.+?)\*(?!\w)/g;
  let at = 0;
  for (const match of text.matchAll(pattern)) {
    if (match.index > at) nodes.push(...bare(text.slice(at, match.index), from));
    const [, code, strong, label, href, em] = match;
    if (code !== undefined) {
      const node = document.createElement("code");
      node.textContent = code;
      nodes.push(SERVED.test(code) ? wrapLink(node, code, from) : node);
    } else if (strong !== undefined) {
      const node = document.createElement("strong");
      node.append(...inline(strong, from));
      nodes.push(node);
    } else if (label !== undefined) {
      nodes.push(link(label, href, from));
    } else {
      const node = document.createElement("em");
      node.append(...inline(em, from));
      nodes.push(node);
    }
    at = match.index + match[0].length;
  }
  if (at < text.length) nodes.push(...bare(text.slice(at), from));
  return nodes;
}

function wrapLink(node, href, from) {
  const anchor = document.createElement("a");
  anchor.href = docHref(href, from);
  anchor.append(node);
  return anchor;
}

// Plain text, with a bare path to a served doc made a link.
function bare(text, from) {
  const nodes = [];
  let at = 0;
  for (const match of text.matchAll(BARE_PATH)) {
    if (match.index > at) nodes.push(document.createTextNode(text.slice(at, match.index)));
    const anchor = document.createElement("a");
    anchor.href = docHref(match[1], from);
    anchor.textContent = match[1];
    nodes.push(anchor);
    at = match.index + match[0].length;
  }
  if (at < text.length) nodes.push(document.createTextNode(text.slice(at)));
  return nodes;
}

function make(tag, children = []) {
  const node = document.createElement(tag);
  node.append(...children);
  return node;
}

function slug(text) {
  return text.toLowerCase().replace(/[`*]/g, "").replace(/[^a-z0-9]+/g, "-").replace(/^-|-$/g, "");
}

/** A whole Markdown document as DOM nodes. */
export function render(markdown, from = "") {
  const lines = markdown.replace(/<!--[\s\S]*?-->/g, "").split("\n");
  const out = [];
  let i = 0;
  const paragraph = [];
  const flush = () => {
    if (paragraph.length) out.push(make("p", inline(paragraph.join(" "), from)));
    paragraph.length = 0;
  };
  while (i < lines.length) {
    const line = lines[i];
    const heading = /^(#{1,4}) (.*)$/.exec(line);
    if (line.startsWith("```")) {
      flush();
      const code = [];
      for (i++; i < lines.length && !lines[i].startsWith("```"); i++) code.push(lines[i]);
      const block = make("code");
      block.textContent = code.join("\n");
      out.push(make("pre", [block]));
      i++;
    } else if (heading) {
      flush();
      const node = make(`h${heading[1].length}`, inline(heading[2], from));
      node.id = slug(heading[2]);
      out.push(node);
      i++;
    } else if (/^\s*\|/.test(line)) {
      flush();
      const rows = [];
      for (; i < lines.length && /^\s*\|/.test(lines[i]); i++) rows.push(lines[i]);
      out.push(table(rows, from));
    } else if (/^\s*(?:[-*]|\d+\.) /.test(line)) {
      flush();
      const ordered = /^\s*\d+\./.test(line);
      const list = make(ordered ? "ol" : "ul");
      for (; i < lines.length && /^\s*(?:[-*]|\d+\.) |^\s{2,}\S/.test(lines[i]); i++) {
        const item = /^\s*(?:[-*]|\d+\.) (.*)$/.exec(lines[i]);
        if (item) list.append(make("li", inline(item[1], from)));
        else list.lastElementChild?.append(" ", ...inline(lines[i].trim(), from));
      }
      out.push(list);
    } else if (/^\s*$/.test(line) || /^\s*</.test(line)) {
      flush();  // a blank line, or raw HTML (an image of the README's): left out
      i++;
    } else {
      paragraph.push(line.trim());
      i++;
    }
  }
  flush();
  return out;
}

function table(rows, from) {
  const cells = (row) => row.trim().replace(/^\||\|$/g, "").split(/(?<!\\)\|/).map((c) => c.trim().replaceAll("\\|", "|"));
  const node = make("table", []);
  node.className = "doc";
  const [head, ...body] = rows.filter((row) => !/^\s*\|[\s:|-]+\|\s*$/.test(row));
  node.append(make("thead", [make("tr", cells(head).map((c) => make("th", inline(c, from))))]));
  node.append(make("tbody", body.map((row) => make("tr", cells(row).map((c) => make("td", inline(c, from)))))));
  const wrap = make("div", [node]);
  wrap.className = "table-wrap";
  return wrap;
}

const doc = globalThis.document?.getElementById("doc");
if (doc?.dataset.source) {
  const source = doc.dataset.source;
  const from = source.startsWith("/docs/rules/") ? "rules" : "";
  const response = await fetch(source);
  if (response.ok) {
    const nodes = render(await response.text(), from);
    doc.replaceChildren(...nodes);
    document.title = `fairroll · ${nodes.find((n) => n.tagName === "H1")?.textContent ?? source}`;
    if (location.hash) document.getElementById(location.hash.slice(1))?.scrollIntoView();
  } else {
    doc.textContent = `This page could not be read (${response.status}).`;
  }
}
