// What a parent reads when something fails: plain words and a way to try
// again. The server's log keeps the details for whoever runs it; the page
// never shows internal messages, variable names or commands.

// plainError says why a request failed, as a sentence. A refusal of what
// was asked (4xx) keeps the server's own words, written for the person
// asking ("Learner name too long (at most 100 characters)"); anything else
// is said plainly.
export function plainError(err) {
  const status = err && typeof err.status === 'number' ? err.status : -1;
  if (status === 0) return 'Mr. Mentor could not be reached. Check your internet connection.';
  if (status === 429) return 'That was a lot at once. Wait a moment.';
  if (status === 503) return 'Mr. Mentor is busy for a moment.';
  if (status >= 500 || status < 0 || !err.message) return 'Something went wrong on Mr. Mentor’s side.';
  return /[.!?…]$/.test(err.message) ? err.message : `${err.message}.`;
}

// failure shows "<what failed>: <why>. " and a Try again button in a status
// line; retry runs when it is pressed.
export function failure(status, what, err, retry) {
  status.replaceChildren(`${what}: ${plainError(err)} `);
  if (retry) {
    const again = document.createElement('button');
    again.type = 'button';
    again.className = 'quiet retry';
    again.textContent = 'Try again';
    again.addEventListener('click', () => {
      status.replaceChildren();
      retry();
    });
    status.append(again);
  }
}
