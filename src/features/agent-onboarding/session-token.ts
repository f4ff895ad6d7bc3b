import { createHash } from "node:crypto";
import { randomToken } from "../../ids.ts";

/** `obt_` + 192 random bits, shown once; stored as its SHA-256 (random enough for a plain hash). */
export function generateSessionToken(): { token: string; hash: string } {
  const token = `obt_${randomToken(24)}`;
  return { token, hash: hashSessionToken(token) };
}

export const hashSessionToken = (token: string): string => createHash("sha256").update(token).digest("hex");
