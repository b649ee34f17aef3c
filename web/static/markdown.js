// A small, safe Markdown renderer for Mr. Mentor's replies: paragraphs,
// line breaks, **bold**, *italic*, `code`, bullet and numbered lists (nested
// by indentation), headings, quotes, code blocks, rules and links.
//
// It builds DOM nodes with createElement and text nodes only; no text is
// ever parsed as HTML, so markup in a reply (<img src=x onerror=…>) stays
// visible text. Links open only for http(s) and mailto addresses, with
// rel="noopener noreferrer"; any other address is shown as text.

const SAFE_PROTOCOLS = new Set(['http:', 'https:', 'mailto:']);

// Block patterns, on a line with its indentation removed.
const HEADING = /^(#{1,6})[ \t]+(.*)$/;
const BULLET = /^[-*+][ \t]+(.*)$/;
const NUMBERED = /^(\d{1,9})[.)][ \t]+(.*)$/;
const RULE = /^(?:-[ \t]*){3,}$|^(?:\*[ \t]*){3,}$|^(?:_[ \t]*){3,}$/;
const FENCE = /^(```+|~~~+)/;
const QUOTE = /^>[ \t]?(.*)$/;

// A bare web address in running text; trailing punctuation is the
// sentence's, not the address's.
const BARE_URL = /\bhttps?:\/\/[^\s<>"]+/y;
const URL_TRAILING = '.,;:!?\'")]}';

// Characters a backslash can escape.
const ESCAPABLE = new Set('\\`*_{}[]()#+-.!>~|'.split(''));

// trimEndOf takes the characters in chars off the end of s (a loop: a
// regular expression would backtrack over long runs).
function trimEndOf(s, chars) {
  let end = s.length;
  while (end > 0 && chars.includes(s[end - 1])) end--;
  return s.slice(0, end);
}

// textFactory makes the text nodes: plain ones by default, or (for search
// snippets) ones that keep the search's highlighted matches.
function plainText(doc) {
  return (s) => doc.createTextNode(s);
}

// renderMarkdown returns a DocumentFragment for text. options.text, when
// given, makes each run of text's nodes (see markedText).
export function renderMarkdown(text, { doc = document, text: makeText } = {}) {
  const ctx = { doc, text: makeText || plainText(doc) };
  const fragment = doc.createDocumentFragment();
  const lines = String(text ?? '').replace(/\r\n?/g, '\n').split('\n');
  fragment.append(...blocks(lines, ctx));
  return fragment;
}

// setMarkdown replaces an element's content with the rendered text.
export function setMarkdown(element, text, options = {}) {
  element.replaceChildren(renderMarkdown(text, { doc: element.ownerDocument, ...options }));
  element.classList.add('md');
}

function indentOf(line) {
  const m = /^[ \t]*/.exec(line)[0];
  // A tab counts as four spaces, as Markdown has it.
  return m.replace(/\t/g, '    ').length;
}

function listMarker(trimmed) {
  let m = BULLET.exec(trimmed);
  if (m) return { ordered: false, rest: m[1] };
  m = NUMBERED.exec(trimmed);
  if (m) return { ordered: true, start: Number(m[1]), rest: m[2] };
  return null;
}

// blocks turns lines into block elements.
function blocks(lines, ctx) {
  const out = [];
  let i = 0;
  let paragraph = [];
  const flush = () => {
    if (paragraph.length > 0) {
      out.push(paragraphElement(paragraph, ctx));
      paragraph = [];
    }
  };
  while (i < lines.length) {
    const line = lines[i];
    const trimmed = line.trim();
    if (trimmed === '') {
      flush();
      i++;
      continue;
    }
    const fence = FENCE.exec(trimmed);
    if (fence) {
      flush();
      const close = fence[1];
      const code = [];
      i++;
      while (i < lines.length && !lines[i].trim().startsWith(close)) code.push(lines[i++]);
      i++; // the closing fence, or past the end
      const pre = ctx.doc.createElement('pre');
      const el = ctx.doc.createElement('code');
      el.append(ctx.text(code.join('\n')));
      pre.append(el);
      out.push(pre);
      continue;
    }
    const heading = HEADING.exec(trimmed);
    if (heading) {
      flush();
      // Headings inside a message stay below the page's own.
      const level = Math.min(6, heading[1].length + 3);
      const h = ctx.doc.createElement(`h${level}`);
      h.append(...inline(trimEndOf(heading[2], ' \t#'), ctx));
      out.push(h);
      i++;
      continue;
    }
    if (RULE.test(trimmed)) {
      flush();
      out.push(ctx.doc.createElement('hr'));
      i++;
      continue;
    }
    if (QUOTE.test(trimmed)) {
      flush();
      const quoted = [];
      while (i < lines.length && QUOTE.test(lines[i].trim())) quoted.push(QUOTE.exec(lines[i++].trim())[1]);
      const q = ctx.doc.createElement('blockquote');
      q.append(...blocks(quoted, ctx));
      out.push(q);
      continue;
    }
    if (listMarker(trimmed)) {
      flush();
      const [list, next] = listElement(lines, i, ctx);
      out.push(list);
      i = next;
      continue;
    }
    paragraph.push(trimmed);
    i++;
  }
  flush();
  return out;
}

function paragraphElement(lines, ctx) {
  const p = ctx.doc.createElement('p');
  lines.forEach((line, n) => {
    if (n > 0) p.append(ctx.doc.createElement('br'));
    p.append(...inline(line, ctx));
  });
  return p;
}

// listElement reads a list starting at lines[start]: its items, their
// continuation lines, and lists nested deeper. It returns the list and the
// index of the first line after it.
function listElement(lines, start, ctx) {
  const first = listMarker(lines[start].trim());
  const indent = indentOf(lines[start]);
  const list = ctx.doc.createElement(first.ordered ? 'ol' : 'ul');
  if (first.ordered && first.start !== 1) list.start = first.start;
  let i = start;
  let item = null;
  let itemLines = [];
  const endItem = () => {
    if (item) {
      itemLines.forEach((text, n) => {
        if (n > 0) item.append(ctx.doc.createElement('br'));
        item.append(...inline(text, ctx));
      });
      itemLines = [];
    }
  };
  while (i < lines.length) {
    const line = lines[i];
    const trimmed = line.trim();
    if (trimmed === '') {
      // A blank line ends the list unless the next line carries on with it.
      let n = i + 1;
      while (n < lines.length && lines[n].trim() === '') n++;
      if (n === lines.length) break;
      const next = lines[n];
      const marker = listMarker(next.trim());
      const nextIndent = indentOf(next);
      if ((marker && marker.ordered === first.ordered && nextIndent === indent) || (item && nextIndent > indent)) {
        i++;
        continue;
      }
      break;
    }
    const lineIndent = indentOf(line);
    const marker = listMarker(trimmed);
    if (marker && lineIndent > indent && item) {
      // A deeper list belongs to the current item.
      endItem();
      const [nested, next] = listElement(lines, i, ctx);
      item.append(nested);
      i = next;
      continue;
    }
    if (marker && lineIndent <= indent) {
      if (lineIndent < indent || marker.ordered !== first.ordered) break;
      endItem();
      item = ctx.doc.createElement('li');
      list.append(item);
      itemLines = [marker.rest];
      i++;
      continue;
    }
    // Only an indented line carries on an item's text: a line at the
    // list's own indentation ends it (replies rarely mean the lazy
    // continuation Markdown allows).
    if (lineIndent <= indent || !item || HEADING.test(trimmed) || FENCE.test(trimmed)) break;
    // A continuation of the item's text.
    itemLines.push(trimmed);
    i++;
  }
  endItem();
  return [list, i];
}

// safeHref answers the address when it may be a link, else ''.
function safeHref(raw) {
  const href = raw.trim();
  try {
    const url = new URL(href);
    return SAFE_PROTOCOLS.has(url.protocol) ? url.href : '';
  } catch {
    return '';
  }
}

function link(label, href, ctx) {
  const a = ctx.doc.createElement('a');
  a.href = href;
  a.rel = 'noopener noreferrer';
  a.target = '_blank';
  a.append(...label);
  return a;
}

// inline renders a line's emphasis, code, links and escapes.
function inline(source, ctx) {
  const closers = closerPositions(source);
  const pairs = bracketPairs(source);
  const nodes = [];
  let buffer = '';
  const flushText = () => {
    if (buffer) {
      nodes.push(ctx.text(buffer));
      buffer = '';
    }
  };
  let i = 0;
  while (i < source.length) {
    const c = source[i];
    if (c === '\\' && i + 1 < source.length && ESCAPABLE.has(source[i + 1])) {
      buffer += source[i + 1];
      i += 2;
      continue;
    }
    if (c === '`') {
      const run = /^`+/.exec(source.slice(i))[0];
      const end = source.indexOf(run, i + run.length);
      if (end > i) {
        flushText();
        const code = ctx.doc.createElement('code');
        let content = source.slice(i + run.length, end);
        if (/^ .* $/.test(content)) content = content.slice(1, -1);
        code.append(ctx.text(content));
        nodes.push(code);
        i = end + run.length;
        continue;
      }
      buffer += run;
      i += run.length;
      continue;
    }
    if ((c === '*' || c === '_') && source[i + 1] === c) {
      // The closer must leave something between: past i + 2.
      const end = firstAfter(closers[c + c], i + 2);
      if (end > 0 && opens(source, i, 2, c)) {
        flushText();
        const strong = ctx.doc.createElement('strong');
        strong.append(...inline(source.slice(i + 2, end), ctx));
        nodes.push(strong);
        i = end + 2;
        continue;
      }
    }
    if (c === '*' || c === '_') {
      const end = firstAfter(closers[c], i + 1);
      if (end > 0 && opens(source, i, 1, c)) {
        flushText();
        const em = ctx.doc.createElement('em');
        em.append(...inline(source.slice(i + 1, end), ctx));
        nodes.push(em);
        i = end + 1;
        continue;
      }
    }
    if (c === '[') {
      const parsed = parseLink(source, i, pairs);
      if (parsed) {
        flushText();
        const label = inline(parsed.label, ctx);
        const href = safeHref(parsed.href.replace(/[\uE000\uE001]/g, ''));
        if (href) {
          nodes.push(link(label, href, ctx));
        } else {
          // Not a web or mail address: shown as text, never followed.
          nodes.push(...label, ctx.text(` (${parsed.href})`));
        }
        i = parsed.end;
        continue;
      }
    }
    if (c === '<') {
      const auto = /^<((?:https?:\/\/|mailto:)[^\s<>]+)>/.exec(source.slice(i));
      if (auto && safeHref(auto[1])) {
        flushText();
        nodes.push(link([ctx.text(auto[1])], safeHref(auto[1]), ctx));
        i += auto[0].length;
        continue;
      }
    }
    if ((c === 'h' || c === 'H') && (i === 0 || !/[\w/]/.test(source[i - 1]))) {
      BARE_URL.lastIndex = i;
      const bare = BARE_URL.exec(source);
      if (bare) {
        const address = trimEndOf(bare[0], URL_TRAILING);
        const href = safeHref(address.replace(/[\uE000\uE001]/g, ''));
        if (href) {
          flushText();
          nodes.push(link([ctx.text(address)], href, ctx));
          i += address.length;
          continue;
        }
      }
    }
    buffer += c;
    i++;
  }
  flushText();
  return nodes;
}

// opens tells whether the delimiter at i can open emphasis: followed by a
// non-space, and for _ not inside a word (snake_case stays as written).
function opens(source, i, width, c) {
  const after = source[i + width];
  if (after === undefined || /\s/.test(after)) return false;
  if (c === '_' && i > 0 && /[\p{L}\p{N}]/u.test(source[i - 1])) return false;
  return true;
}

// closerPositions lists, in order, where each emphasis delimiter ('**',
// '__', '*', '_') may close: preceded by a non-space, '_' not followed by
// a letter (snake_case stays as written), a single '*' not part of a '**'.
// Found once per line, so that a line of a thousand unmatched delimiters
// costs a thousand steps, not a million.
function closerPositions(source) {
  const closers = { '**': [], __: [], '*': [], _: [] };
  for (let i = 1; i < source.length; i++) {
    const c = source[i];
    if (c !== '*' && c !== '_') continue;
    if (/\s/.test(source[i - 1])) continue;
    if (source[i + 1] === c) {
      const after = source[i + 2];
      if (!(c === '_' && after !== undefined && /[\p{L}\p{N}]/u.test(after))) closers[c + c].push(i);
    }
    const after = source[i + 1];
    const partOfDouble = after === c || source[i - 1] === c;
    const inWord = c === '_' && after !== undefined && /[\p{L}\p{N}]/u.test(after);
    if (!partOfDouble && !inWord) closers[c].push(i);
  }
  return closers;
}

// firstAfter is the first position in the sorted list greater than from,
// or -1.
function firstAfter(list, from) {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (list[mid] > from) hi = mid;
    else lo = mid + 1;
  }
  return lo < list.length ? list[lo] : -1;
}

// bracketPairs maps each '[' to its matching ']' (escapes skipped), in one
// pass.
function bracketPairs(source) {
  const pairs = new Map();
  const open = [];
  for (let i = 0; i < source.length; i++) {
    if (source[i] === '\\') i++;
    else if (source[i] === '[') open.push(i);
    else if (source[i] === ']' && open.length > 0) pairs.set(open.pop(), i);
  }
  return pairs;
}

// parseLink reads [label](address) or [label](address "title") at i, or
// answers null. The address may hold balanced parentheses.
function parseLink(source, i, pairs) {
  const j = pairs.get(i);
  if (j === undefined || source[j + 1] !== '(') return null;
  let parens = 0;
  let k = j + 2;
  for (; k < source.length && !/\s/.test(source[k]); k++) {
    if (source[k] === '(') parens++;
    if (source[k] === ')' && parens-- === 0) break;
  }
  const href = source.slice(j + 2, k);
  if (source[k] === ')') return { label: source.slice(i + 1, j), href, end: k + 1 };
  const title = /^\s+"[^"]*"\s*\)/.exec(source.slice(k, k + 300));
  if (title) return { label: source.slice(i + 1, j), href, end: k + title[0].length };
  return null;
}

// markedText makes text nodes for a search snippet: its text carries
// \uE000 and \uE001 around the matched words, which become <mark>
// elements. The state runs across calls, as the renderer makes the text in
// reading order, so a match that spans emphasis is marked on both sides.
export function markedText(doc = document) {
  let inMark = false;
  return (s) => {
    const fragment = doc.createDocumentFragment();
    for (const piece of s.split(/([\uE000\uE001])/)) {
      if (piece === '\uE000') { inMark = true; continue; }
      if (piece === '\uE001') { inMark = false; continue; }
      if (piece === '') continue;
      const node = doc.createTextNode(piece);
      if (inMark) {
        const mark = doc.createElement('mark');
        mark.append(node);
        fragment.append(mark);
      } else {
        fragment.append(node);
      }
    }
    return fragment;
  };
}
