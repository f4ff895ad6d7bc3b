/**
 * Session lifetimes. The UI manages credentials and who may use them, so sessions are short:
 * two idle hours end one, and none lives past twelve hours from sign-in, however active.
 */
export const SESSION_IDLE_MS = 2 * 60 * 60 * 1000;
export const SESSION_ABSOLUTE_MS = 12 * 60 * 60 * 1000;

/** `last_seen_at` is written at most this often: a write per page view buys nothing. */
export const SESSION_TOUCH_MS = 60 * 1000;

/** Failed sign-ins allowed per window, per email (exists or not) and per client address. */
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
export const SIGN_IN_MAX_FAILURES_PER_EMAIL = 5;
export const SIGN_IN_MAX_FAILURES_PER_ADDRESS = 50;
