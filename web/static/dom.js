// Small DOM builders and formats shared by the chat and the memory panel.
// Text goes in through textContent, so data never becomes markup.

// element is a new tag with its class and text, if given.
export function element(tag, className = '', text = '') {
  const node = document.createElement(tag);
  if (className) node.className = className;
  if (text) node.textContent = text;
  return node;
}

export function badge(text, kind = '') {
  const b = document.createElement('span');
  b.className = `badge ${kind}`.trim();
  b.textContent = text;
  return b;
}

// textList keeps the strings of a list that say something; anything but a
// list is an empty one.
export function textList(items) {
  return Array.isArray(items) ? items.filter((x) => typeof x === 'string' && x.trim()) : [];
}

// placeholder is a muted line standing where content will be, or is not.
export function placeholder(text) {
  const p = document.createElement('p');
  p.className = 'summary empty';
  p.textContent = text;
  return p;
}

// timeElement shows an ISO time in the reader's locale, or a dash when the
// server sent none.
export function timeElement(iso) {
  const t = document.createElement('time');
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return document.createTextNode('—');
  t.dateTime = iso;
  t.textContent = d.toLocaleString([], { dateStyle: 'medium', timeStyle: 'short' });
  return t;
}

// shortDate is a day as people say it ("3 May"), with the year when it is
// not this one; '' for a time the server did not send.
export function shortDate(iso) {
  const d = new Date(iso);
  if (Number.isNaN(d.getTime())) return '';
  const options = { day: 'numeric', month: 'long' };
  if (d.getFullYear() !== new Date().getFullYear()) options.year = 'numeric';
  return d.toLocaleDateString([], options);
}

// percent shows a confidence (0–1) as a whole percentage.
export function percent(fraction) {
  return `${Math.round(fraction * 100)}%`;
}
