import { createHash } from "node:crypto";
import { randomToken } from "../../ids.ts";

/** `pcu_` + 192 random bits; only the SHA-256 is stored. */
export function generateUploadToken(): { token: string; hash: string } {
  const token = `pcu_${randomToken(24)}`;
  return { token, hash: hashUploadToken(token) };
}

export const hashUploadToken = (token: string): string => createHash("sha256").update(token).digest("hex");

/** The browser link; the token rides in the query, which the access log never records. */
export const uploadUrl = (baseUrl: string, token: string): string =>
  `${baseUrl}/credential-uploads?token=${encodeURIComponent(token)}`;
