// The facilitator's controls over what Mr. Mentor learns, above the list of
// memories: whether he is learning about the learner right now
// (GET /api/learners/{id}/learning), the "Don't learn" switch
// (PUT /api/learners/{id}/settings), and forgetting a whole category
// (DELETE /api/memories?learner_id=&type=), confirmed in place first.
// Also each memory's sources (GET /api/memories/{id}/sources), drawn by
// sourcesPanel. Everything is drawn with text nodes.

import { element, placeholder, timeElement } from './dom.js';
import { failure, plainError } from './errors.js';

// createControl builds the controls into box; afterForget is called with
// how many memories a category's forgetting removed.
export function createControl(api, nameOf, types, box, afterForget) {
  const s = { learnerId: '', request: 0, learning: true };
  const status = element('p', 'learning-now');
  status.id = 'learning-now';
  status.setAttribute('role', 'status');
  status.setAttribute('aria-live', 'polite');
  const toggleLabel = element('label', 'dont-learn');
  const toggle = element('input');
  toggle.type = 'checkbox';
  toggle.id = 'dont-learn';
  const toggleText = element('span');
  toggleLabel.append(toggle, toggleText);
  const category = element('select');
  category.id = 'forget-category';
  category.setAttribute('aria-label', 'Category to forget');
  for (const { type, label } of [{ type: '', label: 'Everything' }, ...types]) {
    const option = element('option', '', label);
    option.value = type;
    category.append(option);
  }
  const forgetButton = element('button', 'quiet danger', 'Forget this category…');
  forgetButton.type = 'button';
  forgetButton.id = 'forget-category-button';
  const confirmBox = element('div', 'forget-confirm');
  confirmBox.hidden = true;
  const confirmText = element('p');
  const confirmButton = element('button', 'danger', 'Yes, forget them');
  confirmButton.type = 'button';
  confirmButton.id = 'forget-category-confirm';
  const cancelButton = element('button', 'quiet', 'Cancel');
  cancelButton.type = 'button';
  confirmBox.append(confirmText, confirmButton, cancelButton);
  const forgetRow = element('div', 'forget-row');
  forgetRow.append(category, forgetButton);
  box.append(status, toggleLabel, forgetRow, confirmBox);

  function categoryLabel() {
    return category.options[category.selectedIndex].textContent;
  }

  function scope() {
    return s.learnerId ? (nameOf(s.learnerId) || 'this learner') : 'the general conversation';
  }

  // learningText says what the learner's background work is doing.
  function learningText(now) {
    if (!now.learning) return 'Learning is off: Mr. Mentor learns nothing new from these conversations.';
    const parts = [];
    const { extracting: e, consolidating: c } = now;
    if (e.running || e.queued) parts.push(`learning from ${e.running + e.queued} exchange${e.running + e.queued === 1 ? '' : 's'}`);
    if (c.running) parts.push('tidying what he knows');
    else if (c.queued) parts.push('about to tidy what he knows');
    return parts.length ? `Learning now: ${parts.join(', ')}.` : 'Not learning anything right now.';
  }

  async function refresh() {
    const learnerId = s.learnerId;
    const n = ++s.request;
    box.hidden = !learnerId;
    if (!learnerId) return;
    try {
      const [now, settings] = await Promise.all([
        api.get(`/api/learners/${learnerId}/learning`),
        api.get(`/api/learners/${learnerId}/settings`),
      ]);
      if (n !== s.request) return;
      status.textContent = learningText(now);
      status.classList.toggle('active', Boolean(now.active));
      toggle.checked = !settings.settings.learning;
      toggleText.textContent = settings.settings.account_learning
        ? `Don't learn about ${scope()}`
        : `Don't learn about ${scope()} (learning is off for your whole account)`;
    } catch (err) {
      if (n !== s.request || err.status === 401) return;
      failure(status, 'Could not tell whether Mr. Mentor is learning', err, refresh);
    }
  }

  function show(learnerId) {
    s.learnerId = learnerId;
    confirmBox.hidden = true;
    status.textContent = '';
    refresh();
  }

  async function setLearning() {
    toggle.disabled = true;
    try {
      await api.put(`/api/learners/${s.learnerId}/settings`, { learning: !toggle.checked });
      await refresh();
    } catch (err) {
      toggle.checked = !toggle.checked;
      if (err.status !== 401) status.textContent = `Could not change it: ${plainError(err)} Try again.`;
    } finally {
      toggle.disabled = false;
    }
  }

  function askForget() {
    confirmText.textContent = `Forget ${categoryLabel() === 'Everything' ? 'everything' : `every “${categoryLabel()}” memory`} Mr. Mentor knows about ${scope()}? Their text is erased from their history too.`;
    confirmBox.hidden = false;
    cancelButton.focus();
  }

  async function forget() {
    confirmButton.disabled = true;
    const query = new URLSearchParams({ learner_id: s.learnerId || 'null' });
    if (category.value) query.set('type', category.value);
    try {
      const data = await api.del(`/api/memories?${query}`);
      confirmBox.hidden = true;
      afterForget(data.removed);
      forgetButton.focus();
    } catch (err) {
      if (err.status !== 401) confirmText.textContent = `Could not forget them: ${plainError(err)} Nothing was forgotten; try again.`;
    } finally {
      confirmButton.disabled = false;
    }
  }

  toggle.addEventListener('change', setLearning);
  forgetButton.addEventListener('click', askForget);
  confirmButton.addEventListener('click', forget);
  cancelButton.addEventListener('click', () => {
    confirmBox.hidden = true;
    forgetButton.focus();
  });
  box.hidden = true;
  return { show, refresh, reset: () => show('') };
}

// sourcesPanel draws a memory's sources as loaded ({state, data, error}),
// or a hidden box when they are not open.
export function sourcesPanel(id, sources) {
  const box = element('div', 'sources');
  box.id = `sources-${id}`;
  if (!sources) {
    box.hidden = true;
    return box;
  }
  if (sources.state === 'error') {
    box.append(element('p', 'error', sources.error));
    return box;
  }
  if (!sources.data) {
    box.append(placeholder('Loading where it was learnt…'));
    return box;
  }
  const { turns, note } = sources.data;
  if (!turns.length) {
    box.append(placeholder(note || 'No conversation turn is recorded for it.'));
    return box;
  }
  const list = element('ul', 'sources-list');
  for (const t of turns) {
    const li = element('li');
    const when = element('p', 'source-when');
    when.append(t.role === 'user' ? 'You, ' : 'Mr. Mentor, ', timeElement(t.created_at),
      t.archived ? ' · archived' : ' · this conversation');
    li.append(when, element('p', 'source-text', t.content));
    list.append(li);
  }
  box.append(list);
  return box;
}
