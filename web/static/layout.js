// The page's layout on a phone and on a desktop.
//
// Narrower than 900 px the workspace shows one thing at a time, chosen with
// the tabs at the top (Chat, What he knows, Search): the page itself is the
// only scroll area, the tabs stay at the top and the chat's message box and
// Send stay at the bottom. Wider, the chat and the panels sit side by side,
// the tabs are hidden and the messages scroll in their own box.
//
// Either way a reply is shown from its start: a reply taller than the room
// for it is scrolled to its first line, not its last.

const PHONE = '(max-width: 899px)';
// Room left between a message and the edge of what is visible.
const GAP = 8;

const $ = (id) => document.getElementById(id);

export function createLayout() {
  const el = {
    workspace: $('workspace'),
    tabs: $('views'),
    messages: $('messages'),
    composer: $('chat-form'),
    message: $('message'),
    messageHelp: $('message-help'),
  };
  const tabs = [...el.tabs.querySelectorAll('[role="tab"]')];
  const views = { 'tab-chat': 'chat', 'tab-knows': 'knows', 'tab-search': 'search' };
  const phone = window.matchMedia(PHONE);
  const coarse = window.matchMedia('(pointer: coarse)');
  const listeners = [];

  function isPhone() {
    return phone.matches;
  }

  function view() {
    return el.workspace.dataset.view || 'chat';
  }

  // show switches the phone to a view; on a desktop everything is shown
  // and this only remembers the choice for a narrower window.
  function show(name, { focus = false } = {}) {
    el.workspace.dataset.view = name;
    for (const tab of tabs) {
      const selected = views[tab.id] === name;
      tab.setAttribute('aria-selected', String(selected));
      tab.tabIndex = selected ? 0 : -1;
      if (selected && focus) tab.focus();
    }
    if (name === 'chat' && isPhone()) requestAnimationFrame(() => scrollToEnd());
    for (const fn of listeners) fn(name);
  }

  // The panels are tab panels only while the tabs are shown.
  function applyRoles() {
    for (const tab of tabs) {
      const panel = $(tab.getAttribute('aria-controls'));
      if (isPhone()) {
        panel.setAttribute('role', 'tabpanel');
        panel.dataset.labelledby ??= panel.getAttribute('aria-labelledby') || '';
        panel.setAttribute('aria-labelledby', tab.id);
      } else if (panel.getAttribute('role') === 'tabpanel') {
        panel.removeAttribute('role');
        if (panel.dataset.labelledby) panel.setAttribute('aria-labelledby', panel.dataset.labelledby);
      }
    }
  }

  // "Shift+Enter for a new line" means nothing on a touch screen.
  function applyPointer() {
    el.messageHelp.hidden = coarse.matches;
    if (coarse.matches) el.message.removeAttribute('aria-describedby');
    else el.message.setAttribute('aria-describedby', el.messageHelp.id);
  }

  // visibleBand is the part of the viewport a message may use on a phone:
  // below the tabs, above the composer.
  function visibleBand() {
    const top = el.tabs.getBoundingClientRect().bottom;
    const composer = el.composer.getBoundingClientRect();
    const bottom = composer.height > 0 ? Math.min(window.innerHeight, composer.top) : window.innerHeight;
    return { top: Math.max(0, top), bottom };
  }

  // scrollToEnd brings the newest message into view.
  function scrollToEnd() {
    if (!isPhone()) {
      el.messages.scrollTop = el.messages.scrollHeight;
      return;
    }
    if (view() !== 'chat') return;
    const last = el.messages.lastElementChild;
    if (!last) return;
    const { bottom } = visibleBand();
    const below = last.getBoundingClientRect().bottom - bottom + GAP;
    if (below > 0) window.scrollBy(0, below);
  }

  // reveal shows a new reply: whole when it fits, else from its start. It
  // waits for the frame, so that what the same task still changes (the
  // "thinking" notice above it removed) is laid out first.
  function reveal(item) {
    requestAnimationFrame(() => {
      if (item.isConnected) revealNow(item);
    });
  }

  function revealNow(item) {
    if (!isPhone()) {
      const box = el.messages.getBoundingClientRect();
      const r = item.getBoundingClientRect();
      if (r.height + GAP > box.height) {
        el.messages.scrollTop += r.top - box.top - GAP;
      } else {
        el.messages.scrollTop = el.messages.scrollHeight;
      }
      return;
    }
    if (view() !== 'chat') return;
    const { top, bottom } = visibleBand();
    const r = item.getBoundingClientRect();
    if (r.height + 2 * GAP > bottom - top) {
      window.scrollBy(0, r.top - top - GAP);
    } else if (r.bottom + GAP > bottom) {
      window.scrollBy(0, r.bottom - bottom + GAP);
    }
  }

  function onKey(event) {
    const at = tabs.indexOf(document.activeElement);
    if (at < 0) return;
    let next = -1;
    if (event.key === 'ArrowRight') next = (at + 1) % tabs.length;
    if (event.key === 'ArrowLeft') next = (at - 1 + tabs.length) % tabs.length;
    if (event.key === 'Home') next = 0;
    if (event.key === 'End') next = tabs.length - 1;
    if (next < 0) return;
    event.preventDefault();
    show(views[tabs[next].id], { focus: true });
  }

  el.tabs.addEventListener('click', (event) => {
    const tab = event.target.closest('[role="tab"]');
    if (tab) show(views[tab.id]);
  });
  el.tabs.addEventListener('keydown', onKey);
  phone.addEventListener('change', applyRoles);
  coarse.addEventListener('change', applyPointer);
  applyRoles();
  applyPointer();

  return {
    show,
    view,
    isPhone,
    scrollToEnd,
    reveal,
    // onShow(fn) calls fn(view) after each switch.
    onShow: (fn) => listeners.push(fn),
  };
}
