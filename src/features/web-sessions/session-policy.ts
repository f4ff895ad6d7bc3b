/**
 * Session lifetimes. The UI manages credentials and who may use them, so sessions are short:
 * two idle hours end one, and none lives past twelve hours from sign-in, however active.
 */
export const SESSION_IDLE_MS = 2 * 60 * 60 * 1000;
export const SESSION_ABSOLUTE_MS = 12 * 60 * 60 * 1000;

/** `last_seen_at` is written at most this often: a write per page view buys nothing. */
export const SESSION_TOUCH_MS = 60 * 1000;

/**
 * Sign-in limits (throttle.ts), after OWASP's authentication cheat sheet: the tight limit is on
 * an (email, client address) pair, so a stranger's wrong guesses slow down only the stranger and
 * the owner can still sign in from their own address. Each is counted before the password check,
 * so concurrency cannot get more guesses through.
 *
 * A pair gets 5 attempts with no wait (room for typos); after that each attempt must wait
 * 30 s, 1, 2, 4, 8 min, then 15 min, doubling from the last one let through. That is about 10
 * guesses in the first quarter hour and 4 an hour after, per pair. A pair is forgotten an hour
 * after its last attempt, longer than the longest wait, so waiting out the delay never resets it.
 */
export const SIGN_IN_PAIR_FREE_ATTEMPTS = 5;
export const SIGN_IN_PAIR_FIRST_DELAY_MS = 30 * 1000;
export const SIGN_IN_PAIR_MAX_DELAY_MS = 15 * 60 * 1000;
export const SIGN_IN_PAIR_MEMORY_MS = 60 * 60 * 1000;

/**
 * The per-email ceiling and per-address limit, per fixed 15-minute window. The email ceiling stops
 * a guesser spread over many addresses: one address gets about 10 guesses at an email per window,
 * so 100 takes at least ten addresses working together; reaching it refuses everyone, the owner
 * included, until the window ends (the price of still stopping a distributed attack). The address
 * limit stops one client trying many emails: 50 wrong passwords in 15 minutes is far beyond any
 * office behind one NAT.
 */
export const SIGN_IN_WINDOW_MS = 15 * 60 * 1000;
export const SIGN_IN_MAX_ATTEMPTS_PER_EMAIL = 100;
export const SIGN_IN_MAX_ATTEMPTS_PER_ADDRESS = 50;
