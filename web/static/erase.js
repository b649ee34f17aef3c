// Erasure: "Erase learner…" removes the selected learner and everything
// Mr. Mentor keeps about them; "Erase my account…" removes everything of
// the signed-in facilitator. Both ask for a typed confirmation (the
// learner's name, or the word erase), then show the server's receipt: how
// many records went, and nothing of what they said.

import { timeElement } from './dom.js';
import { plainError } from './errors.js';

// The receipt's tables, in the words of the page, in the order shown.
const RECORDS = [
  ['learners', 'learner', 'learners'],
  ['conversation_turns', 'message', 'messages'],
  ['conversation_updates', 'conversation memory', 'conversation memories'],
  ['conversation_history_archive', 'archived conversation', 'archived conversations'],
  ['learner_memories', 'memory', 'memories'],
  ['memory_history', 'memory change', 'memory changes'],
  ['learner_profiles', 'profile', 'profiles'],
  ['mentor_sessions', 'session', 'sessions'],
  ['session_openings', 'session opening', 'session openings'],
  ['consolidation_runs', 'consolidation run', 'consolidation runs'],
  ['memory_jobs', 'background job', 'background jobs'],
  ['search_vocabulary', 'search word', 'search words'],
  ['erasure_receipts', 'earlier receipt', 'earlier receipts'],
];

const $ = (id) => document.getElementById(id);

function element(tag, props = {}, ...children) {
  const e = Object.assign(document.createElement(tag), props);
  e.append(...children);
  return e;
}

// removedItems lists what a receipt counts, in words: "54 messages".
function removedItems(removed) {
  const known = new Set(RECORDS.map(([table]) => table));
  const rows = [
    ...RECORDS.map(([table, one, many]) => [removed?.[table], one, many]),
    // A table this page does not know yet still shows, under its name.
    ...Object.keys(removed || {}).filter((t) => !known.has(t)).map((t) => [removed[t], t, t]),
  ];
  return rows
    .filter(([n]) => typeof n === 'number' && n > 0)
    .map(([n, one, many]) => element('li', { textContent: `${n} ${n === 1 ? one : many}` }));
}

// createErasure wires both controls. current() is the selected learner,
// {id, name}, with id '' for the general conversation. afterSaves(fn) runs
// fn once the exchanges still being saved are stored, so none of them
// lands after the erasure. onErased(receipt) runs after an erasure.
export function createErasure(api, current, afterSaves, onErased) {
  const el = {
    learnerButton: $('erase-learner'),
    accountButton: $('erase-account'),
  };
  const s = {
    scope: '', // 'learner' or 'account' while the dialog is open
    learner: null, // the learner the dialog is about
    expected: '', // what must be typed to confirm
    busy: false,
  };

  const title = element('h2', { id: 'erase-title' });
  const desc = element('p', { id: 'erase-desc' });
  const typed = element('input', { id: 'erase-confirm', type: 'text', autocomplete: 'off', spellcheck: false });
  const prompt = element('label', { htmlFor: 'erase-confirm' });
  const error = element('p', { id: 'erase-error', className: 'error', hidden: true });
  error.setAttribute('role', 'alert');
  const cancel = element('button', { id: 'cancel-erase', type: 'button', textContent: 'Cancel' });
  const confirm = element('button', { id: 'confirm-erase', type: 'submit', className: 'danger', disabled: true });
  const ask = element('form', { id: 'erase-form' }, title, desc, prompt, typed, error,
    element('div', { className: 'actions' }, cancel, confirm));
  const receipt = element('section', { id: 'erase-receipt', hidden: true });
  receipt.setAttribute('aria-live', 'polite');
  const dialog = element('dialog', { id: 'erase-dialog' }, ask, receipt);
  dialog.setAttribute('aria-labelledby', 'erase-title');
  dialog.setAttribute('aria-describedby', 'erase-desc');
  document.body.append(dialog);

  function open(scope) {
    const learner = current();
    if (scope === 'learner' && !learner.id) return;
    s.scope = scope;
    s.learner = learner;
    s.expected = scope === 'learner' ? learner.name : 'erase';
    if (scope === 'learner') {
      title.textContent = `Erase ${learner.name}?`;
      desc.textContent = `Mr. Mentor will erase ${learner.name} for good: every conversation about them, archived ones too, `
        + 'their memories and the history of each, their profile, sessions and anything still waiting to be worked out. '
        + 'Only a receipt stays, which says how many records went and nothing of what was said. This cannot be undone.';
      confirm.textContent = `Erase ${learner.name}`;
    } else {
      title.textContent = 'Erase your account?';
      desc.textContent = 'Mr. Mentor will erase everything he keeps of yours, for good: every learner, every conversation, '
        + 'archived ones too, every memory, profile and session, and the receipts of earlier erasures. '
        + 'You stay signed in to an empty account. This cannot be undone.';
      confirm.textContent = 'Erase everything';
    }
    prompt.replaceChildren('Type ', element('strong', { textContent: s.expected }), ' to confirm');
    typed.value = '';
    confirm.disabled = true;
    error.hidden = true;
    ask.hidden = false;
    receipt.hidden = true;
    receipt.replaceChildren();
    dialog.showModal();
    typed.focus();
  }

  function matches() {
    return typed.value.trim() === s.expected;
  }

  async function erase(event) {
    event.preventDefault();
    if (s.busy || !matches()) return;
    const { scope, learner } = s;
    s.busy = true;
    confirm.disabled = true;
    cancel.disabled = true;
    error.hidden = true;
    try {
      const path = scope === 'learner' ? `/api/learners/${encodeURIComponent(learner.id)}` : '/api/account';
      const data = await afterSaves(() => api.del(path));
      if (!dialog.open) return; // signed out meanwhile
      showReceipt(data.erasure, scope === 'learner' ? learner.name : 'Your account');
      onErased(data.erasure);
    } catch (err) {
      if (!dialog.open || err.status === 401) return;
      error.textContent = `Nothing was erased: ${plainError(err)} Try again.`;
      error.hidden = false;
      confirm.disabled = !matches();
    } finally {
      s.busy = false;
      cancel.disabled = false;
    }
  }

  function showReceipt(erasure, what) {
    const heading = element('h2', { id: 'erase-done', textContent: `${what} ${what === 'Your account' ? 'is' : 'was'} erased` });
    const when = element('p', {}, 'Erased ', timeElement(erasure?.erased_at), '. Removed:');
    const list = element('ul', { className: 'erase-removed' }, ...removedItems(erasure?.removed));
    const kept = element('p', { className: 'hint' });
    kept.textContent = erasure?.scope === 'learner'
      ? 'This receipt stays with your account until you erase it; it holds no words of yours.'
      : 'No receipt is kept: nothing of yours is left.';
    const close = element('button', { id: 'close-erase', type: 'button', textContent: 'Close' });
    close.addEventListener('click', () => dialog.close());
    ask.hidden = true;
    receipt.replaceChildren(heading, when, list, kept, element('div', { className: 'actions' }, close));
    receipt.hidden = false;
    dialog.setAttribute('aria-labelledby', 'erase-done');
    close.focus();
  }

  // show follows the selected learner: only a learner can be erased.
  function show(learnerId) {
    el.learnerButton.hidden = !learnerId;
  }

  // reset closes the dialog: the user signed out.
  function reset() {
    if (dialog.open) dialog.close();
  }

  typed.addEventListener('input', () => {
    confirm.disabled = s.busy || !matches();
  });
  ask.addEventListener('submit', erase);
  cancel.addEventListener('click', () => dialog.close());
  dialog.addEventListener('close', () => {
    dialog.setAttribute('aria-labelledby', 'erase-title');
    (s.scope === 'account' ? el.accountButton : el.learnerButton).focus();
  });
  el.learnerButton.addEventListener('click', () => open('learner'));
  el.accountButton.addEventListener('click', () => open('account'));

  return { show, reset };
}
