import { createCipheriv, createDecipheriv, randomBytes } from "node:crypto";
import { derivedKey } from "../vault/derived-key.ts";
import type { Keyring } from "../vault/keyring.ts";
import type { PaymentKey } from "./payment-lock.ts";

/**
 * Paid answers are kept for replays, and some carry what is shown only once (an onboarding
 * session token, a publishable key). They are stored sealed: AES-256-GCM under a key derived
 * from the KEK, bound to the payment's lock key so a body cannot be moved to another row.
 */
const PREFIX = "sealed:";

export function sealReplayBody(keyring: Keyring, key: PaymentKey, body: string): string {
  const version = keyring.activeVersion;
  const dataKey = derivedKey(keyring, "x402/replay", version);
  if (!dataKey) throw new Error("the active KEK is missing from the keyring");
  const iv = randomBytes(12);
  const cipher = createCipheriv("aes-256-gcm", dataKey, iv);
  cipher.setAAD(aad(key, version));
  const sealed = Buffer.concat([cipher.update(body, "utf8"), cipher.final(), cipher.getAuthTag()]);
  return `${PREFIX}${version}:${iv.toString("base64url")}:${sealed.toString("base64url")}`;
}

/** The stored body in clear. Rows written before sealing existed are returned as they are. */
export function openReplayBody(keyring: Keyring, key: PaymentKey, stored: string): string {
  if (!stored.startsWith(PREFIX)) return stored;
  const [versionText = "", ivText = "", sealedText = ""] = stored.slice(PREFIX.length).split(":");
  const version = Number(versionText);
  const dataKey = derivedKey(keyring, "x402/replay", version);
  if (!dataKey) throw new Error(`the keyring no longer holds KEK v${version} for a stored x402 answer`);
  const sealed = Buffer.from(sealedText, "base64url");
  const decipher = createDecipheriv("aes-256-gcm", dataKey, Buffer.from(ivText, "base64url"));
  decipher.setAAD(aad(key, version));
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]).toString(
    "utf8",
  );
}

const aad = (key: PaymentKey, version: number) =>
  Buffer.from(
    JSON.stringify(["patchbay/x402/replay", version, key.network, key.asset, key.payer, key.nonce]),
  );
