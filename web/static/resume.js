// Where the facilitator left off: the learner they were talking about,
// kept in localStorage per facilitator, so that a reload or a phone
// restoring the tab comes back to that learner's conversation rather than
// the general one, and the next message is filed where it belongs.

const PREFIX = 'mentor.learner';

// savedLearner is the learner the facilitator last talked about, if they
// still have it among learners; '' (the general conversation) otherwise.
export function savedLearner(userId, learners) {
  let id = '';
  try {
    id = localStorage.getItem(`${PREFIX}.${userId}`) || '';
  } catch {
    return '';
  }
  return learners.some((l) => l.id === id) ? id : '';
}

export function saveLearner(userId, learnerId) {
  try {
    if (learnerId) localStorage.setItem(`${PREFIX}.${userId}`, learnerId);
    else localStorage.removeItem(`${PREFIX}.${userId}`);
  } catch {
    // Storage off: the choice lasts as long as the page.
  }
}
