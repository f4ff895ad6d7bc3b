import { describe, expect, test } from "vitest";
import { binding, expectGenericFailure, openFailure, secret } from "../../../test/lib/vault.ts";
import { openSecret, rewrapSecret, type SealedSecret, type SecretBinding, sealSecret } from "./envelope.ts";
import { generateKek, parseKeyring } from "./keyring.ts";

const keyring = parseKeyring(generateKek(1));
const fields = ["wrappedKey", "wrapIv", "iv", "ciphertext"] as const;

describe("sealSecret / openSecret", () => {
  test.each([
    ["an API key", secret],
    ["an empty string", ""],
    ["non-ASCII text", "pässwörd — 秘密 🔑"],
    ["a large value", "x".repeat(100_000)],
  ])("round-trips %s", (_name, plaintext) => {
    const sealed = sealSecret({ keyring, plaintext, aad: binding });
    expect(openSecret({ keyring, sealed, aad: { ...binding } })).toBe(plaintext);
  });

  test("the sealed object is plain base64 data of the expected sizes", () => {
    const sealed = sealSecret({ keyring, plaintext: secret, aad: binding });
    expect(Object.keys(sealed).sort()).toEqual(["ciphertext", "iv", "kekVersion", "wrapIv", "wrappedKey"]);
    expect(JSON.parse(JSON.stringify(sealed))).toEqual(sealed);
    expect(sealed.kekVersion).toBe(1);
    const size = (s: string) => Buffer.from(s, "base64").length;
    expect(size(sealed.iv)).toBe(12);
    expect(size(sealed.wrapIv)).toBe(12);
    expect(size(sealed.wrappedKey)).toBe(32 + 16);
    expect(size(sealed.ciphertext)).toBe(Buffer.byteLength(secret) + 16);
  });

  test("the sealed object contains no plaintext, raw or base64-decoded", () => {
    const sealed = sealSecret({ keyring, plaintext: secret, aad: binding });
    const needles = [secret, secret.slice(8, 24), Buffer.from(secret).toString("base64").slice(4, 20)];
    const haystacks = [
      JSON.stringify(sealed),
      ...fields.map((f) => sealed[f]),
      ...fields.map((f) => Buffer.from(sealed[f], "base64").toString("latin1")),
      ...fields.map((f) => Buffer.from(sealed[f], "base64").toString("utf8")),
    ];
    for (const hay of haystacks) for (const needle of needles) expect(hay).not.toContain(needle);
    for (const f of fields) {
      expect(Buffer.from(sealed[f], "base64").includes(Buffer.from(secret.slice(8, 24)))).toBe(false);
    }
  });

  test("every seal uses a fresh data key and fresh IVs", () => {
    const a = sealSecret({ keyring, plaintext: secret, aad: binding });
    const b = sealSecret({ keyring, plaintext: secret, aad: binding });
    for (const f of fields) expect(a[f]).not.toBe(b[f]);
  });

  test("an invalid binding is refused at seal time", () => {
    const bad: SecretBinding[] = [
      { ...binding, organizationId: "" },
      { ...binding, connectionId: "con_\uD800" },
      { ...binding, credentialVersion: 1.5 },
      { ...binding, credentialVersion: -1 },
    ];
    for (const aad of bad) {
      expect(() => sealSecret({ keyring, plaintext: secret, aad })).toThrow(
        expect.objectContaining({ code: "internal", message: "secret binding is invalid" }),
      );
    }
  });
});

describe("binding", () => {
  const sealed = sealSecret({ keyring, plaintext: secret, aad: binding });

  test.each<[string, Partial<SecretBinding>]>([
    ["another organization", { organizationId: "org_2" }],
    ["another environment", { environmentId: "env_2" }],
    ["another connection", { connectionId: "con_2" }],
    ["another credential version", { credentialVersion: 2 }],
    ["an empty id", { connectionId: "" }],
  ])("a secret copied onto %s does not open", (_name, change) => {
    expectGenericFailure(openFailure({ keyring, sealed, aad: { ...binding, ...change } }));
    expect(() => rewrapSecret({ keyring, sealed, aad: { ...binding, ...change } })).toThrow(
      "secret could not be decrypted",
    );
  });

  test("fields are length-prefixed: shifting characters between ids does not collide", () => {
    const a: SecretBinding = {
      organizationId: "org_ab",
      environmentId: "c",
      connectionId: "d",
      credentialVersion: 1,
    };
    const b: SecretBinding = {
      organizationId: "org_a",
      environmentId: "bc",
      connectionId: "d",
      credentialVersion: 1,
    };
    const c: SecretBinding = {
      organizationId: "org_a",
      environmentId: "b",
      connectionId: "cd",
      credentialVersion: 1,
    };
    const d: SecretBinding = {
      organizationId: "org_ab",
      environmentId: "c",
      connectionId: "",
      credentialVersion: 11,
    };
    const sealedA = sealSecret({ keyring, plaintext: secret, aad: a });
    for (const other of [b, c, d])
      expectGenericFailure(openFailure({ keyring, sealed: sealedA, aad: other }));
  });
});

describe("tampering", () => {
  const sealed = sealSecret({ keyring, plaintext: secret, aad: binding });

  const flipBit = (text: string, byte: number): string => {
    const bytes = Buffer.from(text, "base64");
    const at = (byte + bytes.length) % bytes.length;
    bytes.writeUInt8((bytes.readUInt8(at) ^ 0x01) & 0xff, at);
    return bytes.toString("base64");
  };

  const tampered: Array<[string, SealedSecret]> = [];
  for (const f of fields) {
    tampered.push([`${f}: first byte flipped`, { ...sealed, [f]: flipBit(sealed[f], 0) }]);
    tampered.push([`${f}: last byte flipped`, { ...sealed, [f]: flipBit(sealed[f], -1) }]);
    tampered.push([`${f}: truncated by one byte`, { ...sealed, [f]: b64Slice(sealed[f], 0, -1) }]);
    tampered.push([`${f}: extended by one byte`, { ...sealed, [f]: b64Concat(sealed[f], Buffer.of(0)) }]);
    tampered.push([`${f}: emptied`, { ...sealed, [f]: "" }]);
    tampered.push([`${f}: whitespace added`, { ...sealed, [f]: `${sealed[f]} ` }]);
    tampered.push([`${f}: base64url spelling`, { ...sealed, [f]: toB64Url(sealed[f]) }]);
  }
  tampered.push(["ciphertext: tag stripped", { ...sealed, ciphertext: b64Slice(sealed.ciphertext, 0, -16) }]);
  tampered.push(["wrappedKey: tag stripped", { ...sealed, wrappedKey: b64Slice(sealed.wrappedKey, 0, -16) }]);
  tampered.push(["kekVersion changed", { ...sealed, kekVersion: 2 }]);
  tampered.push(["kekVersion fractional", { ...sealed, kekVersion: 1.5 }]);
  tampered.push(["kekVersion a string", { ...sealed, kekVersion: "1" as unknown as number }]);
  tampered.push(["field missing", { ...sealed, iv: undefined as unknown as string }]);
  tampered.push(["ivs swapped", { ...sealed, iv: sealed.wrapIv, wrapIv: sealed.iv }]);

  test.each(tampered)("%s → generic failure", (_name, bad) => {
    expectGenericFailure(openFailure({ keyring, sealed: bad, aad: binding }));
    expect(() => rewrapSecret({ keyring, sealed: bad, aad: binding })).toThrow(
      "secret could not be decrypted",
    );
  });

  test("parts cannot be swapped between two secrets of the same binding", () => {
    const other = sealSecret({ keyring, plaintext: "another secret", aad: binding });
    const mixes: SealedSecret[] = [
      { ...sealed, ciphertext: other.ciphertext },
      { ...sealed, iv: other.iv, ciphertext: other.ciphertext },
      { ...sealed, wrappedKey: other.wrappedKey },
      { ...sealed, wrappedKey: other.wrappedKey, wrapIv: other.wrapIv },
    ];
    for (const mix of mixes) expectGenericFailure(openFailure({ keyring, sealed: mix, aad: binding }));
  });

  test("the untouched original still opens", () => {
    expect(openSecret({ keyring, sealed, aad: binding })).toBe(secret);
  });
});

function b64Slice(text: string, start: number, end: number): string {
  return Buffer.from(text, "base64").subarray(start, end).toString("base64");
}

function b64Concat(text: string, extra: Buffer): string {
  return Buffer.concat([Buffer.from(text, "base64"), extra]).toString("base64");
}

function toB64Url(text: string): string {
  const url = Buffer.from(text, "base64").toString("base64url");
  // Guarantee the spelling differs even when the bytes happen to avoid +, / and padding.
  return url === text ? `${url}=` : url;
}
