// Adding and renaming learners, next to the "Talking about" picker.
//
// Adding a name the facilitator already has (the same letters, whatever
// their case and spaces) asks first, so that a second "Emma" is never made
// by a slip. Rename (PATCH /api/learners/{id}) changes the selected
// learner's name; the server checks it as a new learner's.

import { plainError } from './errors.js';

const $ = (id) => document.getElementById(id);

// sameName compares names as a person reads them.
export function sameName(a, b) {
  const fold = (s) => String(s).trim().replace(/\s+/g, ' ').toLocaleLowerCase();
  return fold(a) === fold(b);
}

// createLearners wires both forms. learners() is the list on screen;
// selected() the selected learner's id ('' for the general conversation);
// onAdded(learner) and onRenamed(learner) run after the server stored it.
export function createLearners({ api, learners, selected, onAdded, onRenamed }) {
  const el = {
    addBox: $('add-learner-box'),
    addForm: $('add-learner'),
    addName: $('add-learner-name'),
    addButton: $('add-learner').querySelector('button[type="submit"]'),
    addError: $('add-learner-error'),
    confirm: $('add-learner-confirm'),
    question: $('add-learner-question'),
    again: $('add-learner-again'),
    cancel: $('add-learner-cancel'),
    renameButton: $('rename-learner'),
    renameForm: $('rename-learner-form'),
    renameLabel: $('rename-learner-label'),
    renameName: $('rename-learner-name'),
    renameSave: $('rename-learner-form').querySelector('button[type="submit"]'),
    renameCancel: $('rename-learner-cancel'),
    renameError: $('rename-learner-error'),
  };
  // The name the question is about, while it is asked.
  let asking = '';

  function showError(node, text) {
    node.textContent = text;
    node.hidden = !text;
  }

  function closeQuestion() {
    asking = '';
    el.confirm.hidden = true;
  }

  function submitAdd(event) {
    event.preventDefault();
    const name = el.addName.value.trim();
    if (!name) return;
    showError(el.addError, '');
    const known = learners().find((l) => sameName(l.name, name));
    if (known && asking !== name) {
      asking = name;
      el.question.textContent = `You already have ${known.name}. Add another learner named ${name}?`;
      el.again.textContent = `Add another ${name}`;
      el.confirm.hidden = false;
      el.cancel.focus();
      return;
    }
    add(name);
  }

  async function add(name) {
    closeQuestion();
    el.addButton.disabled = true;
    try {
      const data = await api.post('/api/learners', { name });
      el.addName.value = '';
      el.addBox.open = false;
      onAdded(data.learner);
    } catch (err) {
      if (err.status !== 401) showError(el.addError, `Could not add ${name}: ${plainError(err)} Try again.`);
    } finally {
      el.addButton.disabled = false;
    }
  }

  // ------------------------------------------------------------- rename

  function currentLearner() {
    return learners().find((l) => l.id === selected()) || null;
  }

  function openRename() {
    const learner = currentLearner();
    if (!learner) return;
    el.renameLabel.textContent = `New name for ${learner.name}`;
    el.renameName.value = learner.name;
    showError(el.renameError, '');
    el.renameForm.hidden = false;
    el.renameButton.setAttribute('aria-expanded', 'true');
    el.renameName.focus();
    el.renameName.select();
  }

  function closeRename({ focus = true } = {}) {
    el.renameForm.hidden = true;
    el.renameButton.setAttribute('aria-expanded', 'false');
    if (focus && !el.renameButton.hidden) el.renameButton.focus();
  }

  async function submitRename(event) {
    event.preventDefault();
    const learner = currentLearner();
    const name = el.renameName.value.trim();
    if (!learner || !name) return;
    if (name === learner.name) {
      closeRename();
      return;
    }
    const other = learners().find((l) => l.id !== learner.id && sameName(l.name, name));
    if (other && el.renameForm.dataset.asked !== name) {
      el.renameForm.dataset.asked = name;
      showError(el.renameError, `You already have a learner named ${other.name}. Save again to use the name anyway.`);
      return;
    }
    delete el.renameForm.dataset.asked;
    el.renameSave.disabled = true;
    showError(el.renameError, '');
    try {
      const data = await api.patch(`/api/learners/${encodeURIComponent(learner.id)}`, { name });
      closeRename();
      onRenamed(data.learner);
    } catch (err) {
      if (err.status !== 401) showError(el.renameError, `Could not rename ${learner.name}: ${plainError(err)} Try again.`);
    } finally {
      el.renameSave.disabled = false;
    }
  }

  // show follows the selected learner: only a learner can be renamed.
  function show(learnerId) {
    el.renameButton.hidden = !learnerId;
    closeRename({ focus: false });
  }

  // reset forgets what was typed: the user signed out.
  function reset() {
    el.addName.value = '';
    el.renameName.value = '';
    showError(el.addError, '');
    closeQuestion();
    show('');
  }

  el.addForm.addEventListener('submit', submitAdd);
  el.addName.addEventListener('input', () => {
    if (asking && !sameName(asking, el.addName.value)) closeQuestion();
  });
  el.again.addEventListener('click', () => add(asking));
  el.cancel.addEventListener('click', () => {
    closeQuestion();
    el.addName.focus();
  });
  el.renameButton.setAttribute('aria-controls', 'rename-learner-form');
  el.renameButton.setAttribute('aria-expanded', 'false');
  el.renameButton.addEventListener('click', () => (el.renameForm.hidden ? openRename() : closeRename()));
  el.renameForm.addEventListener('submit', submitRename);
  el.renameCancel.addEventListener('click', () => closeRename());
  el.renameForm.addEventListener('keydown', (event) => {
    if (event.key === 'Escape') {
      event.preventDefault();
      closeRename();
    }
  });

  return { show, reset };
}
