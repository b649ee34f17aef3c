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

// supabaseToken calls Supabase Auth's token endpoint with one grant.
async function supabaseToken(config, grantType, body) {
  const url = `${config.supabase_url}/auth/v1/token?grant_type=${encodeURIComponent(grantType)}`;
  let res;
  try {
    res = await fetch(url, {
      method: 'POST',
      headers: { apikey: config.supabase_anon_key, 'Content-Type': 'application/json', Accept: 'application/json' },
      body: JSON.stringify(body),
      credentials: 'omit',
    });
  } catch {
    throw new ApiError(0, 'Supabase could not be reached. Check your connection and try again.');
  }
  let data = null;
  try {
    data = await res.json();
  } catch {
    // handled below
  }
  if (!res.ok || !data || !data.access_token) {
    // Supabase Auth has answered errors as {msg}, {error_description} and
    // {message} over its versions.
    const message = (data && (data.msg || data.error_description || data.message || data.error)) ||
      `Sign-in failed (HTTP ${res.status})`;
    throw new ApiError(res.status, message);
  }
  return {
    access_token: data.access_token,
    refresh_token: data.refresh_token || '',
    expires_at: data.expires_at ?? (data.expires_in ? nowSeconds() + data.expires_in : tokenClaims(data.access_token)?.exp ?? null),
    source: 'supabase',
    email: data.user?.email || tokenClaims(data.access_token)?.email || '',
    user_id: data.user?.id || tokenClaims(data.access_token)?.sub || '',
  };
}

export function supabaseSignIn(config, email, password) {
  return supabaseToken(config, 'password', { email, password });
}

export function supabaseRefresh(config, refreshToken) {
  return supabaseToken(config, 'refresh_token', { refresh_token: refreshToken });
}
