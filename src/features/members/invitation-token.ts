import { createHash } from "node:crypto";
import { randomToken } from "../../ids.ts";

/** An invitation link works for seven days, once. */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** `pbi_` + 200 random bits; only the SHA-256 is stored. */
export function newInvitationToken(): { token: string; hash: string } {
  const token = `pbi_${randomToken(25)}`;
  return { token, hash: hashInvitationToken(token) };
}

export const hashInvitationToken = (token: string): string =>
  createHash("sha256").update(token).digest("hex");
