// Changes Mr. Mentor proposes in the chat wait for the facilitator. The
// model never forgets or rewrites a memory itself: text it reads can carry
// instructions. Each proposal of a reply is shown under it, saying what it
// would change, with Confirm and Cancel; nothing changes until Confirm.
// All text goes in through textContent.

import { timeElement } from './dom.js';
import { plainError } from './errors.js';

const TITLES = {
  forget_memory: 'Forget a memory',
  forget_topic: 'Forget memories about a topic',
  correct_memory: 'Correct a memory',
};

// createActions shows proposals under the replies. onApplied runs after a
// confirmation, so what is shown of the memory can be read again.
export function createActions(api, onApplied) {
  // show lists the reply's pending actions inside the reply's item.
  function show(replyItem, actions) {
    if (!Array.isArray(actions) || actions.length === 0) return;
    const box = document.createElement('div');
    box.className = 'proposals';
    const hint = document.createElement('p');
    hint.className = 'hint';
    hint.textContent = actions.length === 1
      ? 'Mr. Mentor proposes a change to what he remembers. Nothing changes unless you confirm it.'
      : `Mr. Mentor proposes ${actions.length} changes to what he remembers. Nothing changes unless you confirm them.`;
    const list = document.createElement('ul');
    list.className = 'proposal-list';
    list.append(...actions.map(proposal));
    box.append(hint, list);
    replyItem.append(box);
  }

  function proposal(action) {
    const li = document.createElement('li');
    li.className = 'proposal';
    li.dataset.actionId = action.id;
    li.dataset.status = 'pending';
    const title = document.createElement('p');
    title.className = 'proposal-title';
    title.textContent = TITLES[action.kind] || 'Change a memory';
    if (action.topic) title.textContent += `: “${action.topic}”`;
    const changes = document.createElement('ul');
    changes.className = 'proposal-changes';
    for (const change of Array.isArray(action.changes) ? action.changes : []) {
      changes.append(changeItem(change));
    }
    const expiry = document.createElement('p');
    expiry.className = 'hint proposal-expiry';
    expiry.append('Confirm by ', timeElement(action.expires_at), ', or ask again later.');
    const status = document.createElement('p');
    status.className = 'proposal-status';
    status.setAttribute('role', 'status');
    const confirm = button('Confirm', action.kind === 'correct_memory' ? 'primary' : 'danger', 'confirm');
    const cancel = button('Cancel', '', 'cancel');
    const buttons = document.createElement('div');
    buttons.className = 'actions';
    buttons.append(cancel, confirm);
    li.append(title, changes, expiry, buttons, status);
    confirm.addEventListener('click', () => decide(li, action, 'confirm'));
    cancel.addEventListener('click', () => decide(li, action, 'cancel'));
    return li;
  }

  // changeItem says what happens to one memory: it goes, or its text
  // becomes the new one.
  function changeItem(change) {
    const li = document.createElement('li');
    const before = document.createElement('q');
    before.className = 'before';
    before.textContent = change.content_before ?? 'a memory already forgotten';
    if (change.content_after == null) {
      li.append(before);
      return li;
    }
    const after = document.createElement('q');
    after.className = 'after';
    after.textContent = change.content_after;
    li.append(before, ' becomes ', after);
    return li;
  }

  function button(text, kind, verb) {
    const b = document.createElement('button');
    b.type = 'button';
    b.textContent = text;
    b.dataset.verb = verb;
    if (kind) b.className = kind;
    return b;
  }

  async function decide(li, action, verb) {
    const buttons = [...li.querySelectorAll('button[data-verb]')];
    const status = li.querySelector('.proposal-status');
    buttons.forEach((b) => { b.disabled = true; });
    status.textContent = verb === 'confirm' ? 'Applying…' : 'Cancelling…';
    status.classList.remove('error');
    try {
      const data = await api.post(`/api/actions/${encodeURIComponent(action.id)}/${verb}`);
      settle(li, data.action?.status || verb, verb === 'confirm' ? 'Done.' : 'Cancelled: nothing changed.');
      if (verb === 'confirm') onApplied(data.action);
    } catch (err) {
      if (err.status === 401) return; // signed out, with its own message
      if (err.status === 404 || err.status === 409) {
        // Decided already, expired, or changed since: it cannot be asked again.
        settle(li, 'refused', err.message, 'error');
        return;
      }
      status.textContent = `Could not ${verb} it: ${plainError(err)} Try again.`;
      status.classList.add('error');
      buttons.forEach((b) => { b.disabled = false; });
    }
  }

  // settle ends a proposal: its buttons and deadline go, and its status
  // says what became of it.
  function settle(li, state, text, kind = '') {
    li.dataset.status = state;
    li.querySelector('.actions')?.remove();
    li.querySelector('.proposal-expiry')?.remove();
    const status = li.querySelector('.proposal-status');
    status.textContent = text;
    if (kind) status.classList.add(kind);
  }

  return { show };
}
