// The memory service's API: JSON in and out, every failure an ApiError that
// carries the server's own message ({"success": false, "error": "…"}).

export class ApiError extends Error {
  constructor(status, message) {
    super(message);
    this.name = 'ApiError';
    // 0 means the request never got an answer (network down, server gone).
    this.status = status;
  }
}

// request sends one call. token, when given, goes as the bearer token.
export async function request(method, path, { body, token, signal } = {}) {
  const headers = { Accept: 'application/json' };
  if (token) headers.Authorization = `Bearer ${token}`;
  const init = { method, headers, signal, credentials: 'same-origin' };
  if (body !== undefined) {
    headers['Content-Type'] = 'application/json';
    init.body = JSON.stringify(body);
  }
  let res;
  try {
    res = await fetch(path, init);
  } catch (err) {
    if (err && err.name === 'AbortError') throw err;
    throw new ApiError(0, 'Mr. Mentor could not be reached. Check your internet connection and try again.');
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    // Not JSON: a proxy's error page, say. The status still tells.
  }
  if (!res.ok || !data || data.success === false) {
    // Not JSON (a proxy's error page): the status says the rest, in
    // errors.js's plain words.
    const message = (data && typeof data.error === 'string' && data.error) || 'That did not work just now.';
    throw new ApiError(res.status, message);
  }
  return data;
}

// createClient binds the API to the signed-in session. getToken may refresh
// the token first, hence async; onUnauthorized runs when the server refuses it.
export function createClient(getToken, onUnauthorized) {
  async function call(method, path, body) {
    const token = await getToken();
    try {
      return await request(method, path, { body, token });
    } catch (err) {
      if (err instanceof ApiError && err.status === 401) onUnauthorized(err.message);
      throw err;
    }
  }
  return {
    get: (path) => call('GET', path),
    post: (path, body) => call('POST', path, body),
    patch: (path, body) => call('PATCH', path, body),
    put: (path, body) => call('PUT', path, body),
    del: (path) => call('DELETE', path),
  };
}
