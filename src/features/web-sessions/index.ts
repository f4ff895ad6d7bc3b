// The public entry of features/web-sessions: all that other business areas may use of it (the
// features-meet-at-their-entry rule of .dependency-cruiser.cjs). Transports import its files directly.
export { assertPasswordAcceptable, hashPassword, verifyPassword } from "./password.ts";
export type { WebUser } from "./resolve-web-session.ts";
export { normalizeEmail } from "./sign-in.ts";
export type { StartedWebSession } from "./start-web-session.ts";
export { startWebSession } from "./start-web-session.ts";
export { claimSignInAttempt, releaseSignInAttempt } from "./throttle.ts";
export { resolveWebActor } from "./web-actor.ts";
