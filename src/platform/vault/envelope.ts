import { createCipheriv, createDecipheriv, type KeyObject, randomBytes } from "node:crypto";
import { AppError } from "../../errors.ts";
import { dataKeyAad, isValidBinding, type SecretBinding, secretAad } from "./associated-data.ts";
import type { Keyring } from "./keyring.ts";

export type { SecretBinding } from "./associated-data.ts";

/**
 * One encrypted secret, ready for a database row. Base64 fields; `wrappedKey` and
 * `ciphertext` end with their 16-byte GCM tags.
 */
export type SealedSecret = {
  /** The KEK version that wrapped `wrappedKey`. */
  kekVersion: number;
  /** The per-secret data key under AES-256-GCM with the KEK. */
  wrappedKey: string;
  wrapIv: string;
  iv: string;
  /** The secret under AES-256-GCM with the data key. */
  ciphertext: string;
};

const ALGORITHM = "aes-256-gcm";
const KEY_BYTES = 32;
const IV_BYTES = 12;
const TAG_BYTES = 16;

/** Encrypts a secret under a fresh data key, wrapped by the keyring's active KEK. */
export function sealSecret(args: { keyring: Keyring; plaintext: string; aad: SecretBinding }): SealedSecret {
  if (!isValidBinding(args.aad)) throw new AppError("internal", "secret binding is invalid");
  const dataKey = randomBytes(KEY_BYTES);
  const plaintext = Buffer.from(args.plaintext, "utf8");
  try {
    const iv = randomBytes(IV_BYTES);
    const ciphertext = encrypt(dataKey, iv, plaintext, secretAad(args.aad));
    return { ...wrapDataKey(args.keyring, dataKey, args.aad), iv: b64(iv), ciphertext: b64(ciphertext) };
  } finally {
    dataKey.fill(0);
    plaintext.fill(0);
  }
}

type Opening = { keyring: Keyring; sealed: SealedSecret; aad: SecretBinding };

/** Decrypts a secret. Any failure is the same generic `internal` error, whatever failed. */
export function openSecret(args: Opening): string {
  return opened(args, (plaintext) => plaintext.toString("utf8"));
}

/**
 * Re-wraps the data key under the active KEK, leaving `iv` and `ciphertext` as they are.
 * The secret is authenticated first so a rotation never carries a corrupt row forward.
 * A secret already under the active version comes back unchanged (compare `kekVersion`
 * to skip the write).
 */
export function rewrapSecret(args: Opening): SealedSecret {
  return opened(args, (_plaintext, dataKey) => {
    if (args.sealed.kekVersion === args.keyring.activeVersion) return { ...args.sealed };
    const wrap = wrapDataKey(args.keyring, dataKey, args.aad);
    return { ...wrap, iv: args.sealed.iv, ciphertext: args.sealed.ciphertext };
  });
}

/** `use` of the opened secret and its data key, both wiped afterwards; failures are generic. */
function opened<T>(args: Opening, use: (plaintext: Buffer, dataKey: Buffer) => T): T {
  return generically(() => {
    const parts = decodeSealed(args.sealed);
    const dataKey = unwrapDataKey(args.keyring, parts, args.aad);
    try {
      const plaintext = decrypt(dataKey, parts.iv, parts.ciphertext, secretAad(args.aad));
      try {
        return use(plaintext, dataKey);
      } finally {
        plaintext.fill(0);
      }
    } finally {
      dataKey.fill(0);
    }
  });
}

type DecodedSealed = {
  kekVersion: number;
  wrappedKey: Buffer;
  wrapIv: Buffer;
  iv: Buffer;
  ciphertext: Buffer;
};

function wrapDataKey(keyring: Keyring, dataKey: Buffer, binding: SecretBinding) {
  const kekVersion = keyring.activeVersion;
  const kek = keyring.kek(kekVersion);
  if (!kek) throw new AppError("internal", "vault keyring holds no active key");
  const wrapIv = randomBytes(IV_BYTES);
  const wrappedKey = encrypt(kek, wrapIv, dataKey, dataKeyAad(binding, kekVersion));
  return { kekVersion, wrappedKey: b64(wrappedKey), wrapIv: b64(wrapIv) };
}

function unwrapDataKey(keyring: Keyring, parts: DecodedSealed, binding: SecretBinding): Buffer {
  if (!isValidBinding(binding)) throw new Error("invalid binding");
  const kek = keyring.kek(parts.kekVersion);
  if (!kek) throw new Error("unknown KEK version");
  const dataKey = decrypt(kek, parts.wrapIv, parts.wrappedKey, dataKeyAad(binding, parts.kekVersion));
  if (dataKey.length !== KEY_BYTES) throw new Error("bad data key length");
  return dataKey;
}

/** AES-256-GCM: the ciphertext with its 16-byte tag appended. */
export function encrypt(key: KeyObject | Buffer, iv: Buffer, plaintext: Buffer, aad: Buffer): Buffer {
  const cipher = createCipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(aad);
  return Buffer.concat([cipher.update(plaintext), cipher.final(), cipher.getAuthTag()]);
}

/** The plaintext of `encrypt`'s output; throws unless key, IV, tag and associated data all match. */
export function decrypt(key: KeyObject | Buffer, iv: Buffer, sealed: Buffer, aad: Buffer): Buffer {
  if (iv.length !== IV_BYTES || sealed.length < TAG_BYTES) throw new Error("bad lengths");
  // authTagLength pins the tag at 16 bytes: a truncated tag must not be accepted.
  const decipher = createDecipheriv(ALGORITHM, key, iv, { authTagLength: TAG_BYTES });
  decipher.setAAD(aad);
  decipher.setAuthTag(sealed.subarray(sealed.length - TAG_BYTES));
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - TAG_BYTES)), decipher.final()]);
}

function decodeSealed(sealed: SealedSecret): DecodedSealed {
  if (!Number.isSafeInteger(sealed.kekVersion)) throw new Error("bad KEK version");
  return {
    kekVersion: sealed.kekVersion,
    wrappedKey: fromB64(sealed.wrappedKey),
    wrapIv: fromB64(sealed.wrapIv),
    iv: fromB64(sealed.iv),
    ciphertext: fromB64(sealed.ciphertext),
  };
}

const b64 = (bytes: Buffer): string => bytes.toString("base64");

// Strict: Node's decoder skips stray characters, so an edited field could otherwise decode
// to the same bytes. Only the canonical spelling of some bytes is accepted.
function fromB64(text: string): Buffer {
  if (typeof text !== "string") throw new Error("bad field type");
  const bytes = Buffer.from(text, "base64");
  if (bytes.toString("base64") !== text) throw new Error("non-canonical base64");
  return bytes;
}

// One message for every failure: which part failed (binding, tag, version) is an oracle.
function generically<T>(open: () => T): T {
  try {
    return open();
  } catch {
    throw new AppError("internal", "secret could not be decrypted");
  }
}
