// Sign-in: the dev token of a local server, a pasted token, or Supabase
// Auth's password grant. The session lives in sessionStorage, so it ends
// with the tab and is not shared with other tabs or kept on disk.
//
// Supabase is called over its REST API (the same requests supabase-js
// makes) instead of bundling supabase-js: the client has no build step and
// loads nothing from a CDN.

import { ApiError, request } from './api.js';

const STORAGE_KEY = 'mentor.session';
// Refresh a Supabase token this long before it expires.
export const REFRESH_MARGIN_SECONDS = 60;

// A session: { access_token, expires_at (unix seconds or null), source:
// 'dev' | 'token' | 'supabase', email, user_id, refresh_token (Supabase) }.

export function loadSession() {
  try {
    const s = JSON.parse(sessionStorage.getItem(STORAGE_KEY));
    return s && typeof s.access_token === 'string' ? s : null;
  } catch {
    return null;
  }
}

export function saveSession(session) {
  sessionStorage.setItem(STORAGE_KEY, JSON.stringify(session));
}

export function clearSession() {
  sessionStorage.removeItem(STORAGE_KEY);
}

export function nowSeconds() {
  return Math.floor(Date.now() / 1000);
}

// expired tells whether the token is past (or within margin of) its expiry.
export function expired(session, margin = 0) {
  return session.expires_at != null && session.expires_at - margin <= nowSeconds();
}

// tokenClaims reads a JWT's payload for display and expiry only: the
// server verifies the signature, the page never trusts these claims.
export function tokenClaims(token) {
  const parts = token.split('.');
  if (parts.length !== 3) return null;
  try {
    const b64 = parts[1].replace(/-/g, '+').replace(/_/g, '/');
    const padded = b64 + '='.repeat((4 - (b64.length % 4)) % 4);
    const bytes = Uint8Array.from(atob(padded), (c) => c.charCodeAt(0));
    const claims = JSON.parse(new TextDecoder().decode(bytes));
    return claims && typeof claims === 'object' ? claims : null;
  } catch {
    return null;
  }
}

// devSignIn asks a dev-mode server for a demo facilitator token.
export async function devSignIn() {
  const data = await request('POST', '/api/dev/token');
  return {
    access_token: data.token,
    expires_at: data.expires_at ?? tokenClaims(data.token)?.exp ?? null,
    source: 'dev',
    email: data.email || '',
    user_id: data.user_id,
  };
}

// pastedSession checks that the text looks like a live JWT; whether it is
// valid only the server can say, at the first call.
export function pastedSession(text) {
  const token = text.trim().replace(/^Bearer\s+/i, '');
  const claims = tokenClaims(token);
  if (!claims) throw new Error('That is not an access token (expected three dot-separated parts, like eyJ….eyJ….…).');
  const session = {
    access_token: token,
    expires_at: typeof claims.exp === 'number' ? claims.exp : null,
    source: 'token',
    email: typeof claims.email === 'string' ? claims.email : '',
    user_id: typeof claims.sub === 'string' ? claims.sub : '',
  };
  if (expired(session)) throw new Error('That token has expired: mint a new one.');
  return session;
}

// supabaseAuth sends one request to Supabase Auth and answers its JSON
// (null when there is none). A refusal throws an ApiError with Auth's own
// message, which is written for the person signing in.
async function supabaseAuth(config, method, path, { body, token } = {}) {
  const headers = { apikey: config.supabase_anon_key, Accept: 'application/json' };
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (token) headers.Authorization = `Bearer ${token}`;
  let res;
  try {
    res = await fetch(`${config.supabase_url}/auth/v1${path}`, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body), credentials: 'omit',
    });
  } catch {
    throw new ApiError(0, 'The sign-in service could not be reached. Check your internet connection and try again.');
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    // handled below
  }
  if (!res.ok) {
    // Supabase Auth has answered errors as {msg}, {error_description} and
    // {message} over its versions.
    const message = (data && (data.msg || data.error_description || data.message || data.error)) ||
      (res.status >= 500 ? 'The sign-in service is not answering. Try again in a moment.' : 'That did not work. Try again.');
    throw new ApiError(res.status, message);
  }
  return data;
}

// sessionFrom reads the session of a Supabase token answer (or of the
// parameters of a link back from a Supabase email).
function sessionFrom(data) {
  const expiresIn = Number(data.expires_in) || 0;
  const expiresAt = Number(data.expires_at) || 0;
  return {
    access_token: data.access_token,
    refresh_token: data.refresh_token || '',
    expires_at: expiresAt || (expiresIn ? nowSeconds() + expiresIn : tokenClaims(data.access_token)?.exp ?? null),
    source: 'supabase',
    email: data.user?.email || tokenClaims(data.access_token)?.email || '',
    user_id: data.user?.id || tokenClaims(data.access_token)?.sub || '',
  };
}

// supabaseToken calls Supabase Auth's token endpoint with one grant.
async function supabaseToken(config, grantType, body) {
  const data = await supabaseAuth(config, 'POST', `/token?grant_type=${encodeURIComponent(grantType)}`, { body });
  if (!data || !data.access_token) throw new ApiError(502, 'Sign-in failed. Try again.');
  return sessionFrom(data);
}

export function supabaseSignIn(config, email, password) {
  return supabaseToken(config, 'password', { email, password });
}

export function supabaseRefresh(config, refreshToken) {
  return supabaseToken(config, 'refresh_token', { refresh_token: refreshToken });
}

// backHere is where Supabase's emails link back to: this page. A project
// that does not allow it sends its Site URL instead.
function backHere() {
  return `${window.location.origin}${window.location.pathname}`;
}

// supabaseRecover asks Supabase to email a link to choose a new password.
// It answers the same whether or not the address has an account.
export async function supabaseRecover(config, email) {
  await supabaseAuth(config, 'POST', `/recover?redirect_to=${encodeURIComponent(backHere())}`, { body: { email } });
}

// supabaseSignUp creates an account. It answers a session when the project
// needs no confirmation of the address, else null: a link was emailed.
export async function supabaseSignUp(config, email, password) {
  const data = await supabaseAuth(config, 'POST', `/signup?redirect_to=${encodeURIComponent(backHere())}`,
    { body: { email, password } });
  return data && data.access_token ? sessionFrom(data) : null;
}

// supabaseSetPassword gives the signed-in user a new password.
export async function supabaseSetPassword(config, session, password) {
  await supabaseAuth(config, 'PUT', '/user', { body: { password }, token: session.access_token });
}

// redirectResult reads the fragment a link from a Supabase email brings
// back: {session, type} ('recovery', 'signup', …), {error}, or null when
// the address carries neither.
export function redirectResult(hash) {
  const params = new URLSearchParams(String(hash || '').replace(/^#/, ''));
  if (params.get('error') || params.get('error_description')) {
    return { error: params.get('error_description') || params.get('error') };
  }
  const token = params.get('access_token');
  if (!token || !tokenClaims(token)) return null;
  return {
    type: params.get('type') || '',
    session: sessionFrom({
      access_token: token,
      refresh_token: params.get('refresh_token'),
      expires_in: params.get('expires_in'),
      expires_at: params.get('expires_at'),
    }),
  };
}
