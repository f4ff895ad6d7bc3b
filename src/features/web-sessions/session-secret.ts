import { createHash, createHmac, timingSafeEqual } from "node:crypto";
import { randomToken } from "../../ids.ts";

/** The cookie's value: 260 random bits. Only its SHA-256 is stored. */
export function newSessionSecret(): { secret: string; hash: string } {
  const secret = randomToken(32);
  return { secret, hash: hashSessionSecret(secret) };
}

export const hashSessionSecret = (secret: string): string =>
  createHash("sha256").update(secret).digest("hex");

/**
 * The per-session synchronizer token for forms, derived from the session secret: nothing to
 * store, a database read reveals none, and it changes whenever the session does (sign-in
 * rotates it). A cross-site page can neither read the cookie nor this value.
 */
export const csrfTokenFor = (secret: string): string =>
  createHmac("sha256", secret).update("patchbay csrf v1").digest("base64url");

/** Constant-time string comparison (equal lengths are compared in constant time). */
export function sameSecret(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}
