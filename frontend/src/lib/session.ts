/**
 * The browser session, as far as the page can know it. The API keeps the access token in an
 * HttpOnly cookie that no script reads (the login sets it, `POST /api/v1/logout` clears it);
 * beside it, a readable cookie holds the CSRF token that the API client sends back in
 * `X-CSRF-Token` on every change. Both cookies live exactly as long, so the CSRF cookie is the
 * page's sign that a session exists, which `GET /users/me` confirms (a 401 ends it). Nothing is
 * kept in localStorage. Listeners hear every change (sign in, sign out, expiry).
 */

export const CSRF_COOKIE = 'sliceportal_csrf';
export const CSRF_HEADER = 'X-CSRF-Token';

/** The CSRF token the API set with the session, or null without a session. */
export function csrfToken(): string | null {
  for (const pair of document.cookie.split(';')) {
    const at = pair.indexOf('=');
    if (at > 0 && pair.slice(0, at).trim() === CSRF_COOKIE) return decodeURIComponent(pair.slice(at + 1).trim());
  }
  return null;
}

type Listener = () => void;
const listeners = new Set<Listener>();
let signedIn: boolean | undefined;

function emit(): void {
  for (const listener of listeners) listener();
}

export const sessionStore = {
  /** Whether the page is signed in. */
  get(): boolean {
    if (signedIn === undefined) signedIn = csrfToken() !== null;
    return signedIn;
  },
  /** The login set the session cookies. */
  start(): void {
    signedIn = true;
    emit();
  },
  /** The session ended (signed out, expired, refused): the page forgets its CSRF token too, so a
   * reload does not take the session for alive. */
  end(): void {
    signedIn = false;
    document.cookie = `${CSRF_COOKIE}=; Max-Age=0; Path=/; SameSite=Strict`;
    emit();
  },
  subscribe(listener: Listener): () => void {
    listeners.add(listener);
    return () => listeners.delete(listener);
  },
};

/** Why the user was sent to the sign-in page, shown there once. */
export type SignOutReason = 'expired' | 'signed-out';
let reason: SignOutReason | null = null;

export function setSignOutReason(value: SignOutReason | null): void {
  reason = value;
}

export function takeSignOutReason(): SignOutReason | null {
  const value = reason;
  reason = null;
  return value;
}
