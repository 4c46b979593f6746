/**
 * The signed-in session: the bearer token and when it expires, kept in localStorage so a
 * reload keeps you signed in; listeners hear every change (sign in, sign out, expiry).
 */

export interface Session {
  token: string;
  /** Epoch ms. */
  expiresAt: number;
}

const KEY = 'sliceportal.session';
type Listener = () => void;
const listeners = new Set<Listener>();
let cached: Session | null | undefined;

function read(): Session | null {
  try {
    const raw = window.localStorage.getItem(KEY);
    if (!raw) return null;
    const value = JSON.parse(raw) as Partial<Session>;
    if (typeof value.token !== 'string' || typeof value.expiresAt !== 'number') return null;
    return { token: value.token, expiresAt: value.expiresAt };
  } catch {
    return null;
  }
}

function emit(): void {
  for (const listener of listeners) listener();
}

export const tokenStore = {
  get(): Session | null {
    if (cached === undefined) cached = read();
    if (cached && cached.expiresAt <= Date.now()) return null;
    return cached;
  },
  set(token: string, expiresInS: number): void {
    cached = { token, expiresAt: Date.now() + expiresInS * 1000 };
    try {
      window.localStorage.setItem(KEY, JSON.stringify(cached));
    } catch {
      // Private mode without storage: the session lasts as long as the tab.
    }
    emit();
  },
  clear(): void {
    cached = null;
    try {
      window.localStorage.removeItem(KEY);
    } catch {
      // nothing stored
    }
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
