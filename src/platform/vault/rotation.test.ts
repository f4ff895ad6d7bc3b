import { describe, expect, test } from "vitest";
import { binding, expectGenericFailure, openFailure, secret } from "../../../test/lib/vault.ts";
import { openSecret, rewrapSecret, sealSecret } from "./envelope.ts";
import { addKekVersion, generateKek, type Keyring, parseKeyring } from "./keyring.ts";

const keyring = parseKeyring(generateKek(1));

describe("KEK rotation", () => {
  test("v1 → add v2 → rewrap all → every secret opens, under v2, even after v1 is dropped", () => {
    const rawV1 = generateKek(1);
    const v1 = parseKeyring(rawV1);
    const bindings = [1, 2, 3].map((n) => ({ ...binding, connectionId: `con_${n}`, credentialVersion: n }));
    const rows = bindings.map((aad, n) => ({
      aad,
      plaintext: `secret-${n}`,
      sealed: sealSecret({ keyring: v1, plaintext: `secret-${n}`, aad }),
    }));
    expect(rows.every((r) => r.sealed.kekVersion === 1)).toBe(true);

    const rawV2 = addKekVersion(rawV1);
    const both = parseKeyring(rawV2);
    expect(both.activeVersion).toBe(2);
    // Not yet rewrapped: the old wraps still open through v1.
    for (const r of rows)
      expect(openSecret({ keyring: both, sealed: r.sealed, aad: r.aad })).toBe(r.plaintext);

    const rewrapped = rows.map((r) => ({
      ...r,
      sealed: rewrapSecret({ keyring: both, sealed: r.sealed, aad: r.aad }),
    }));
    for (const [i, r] of rewrapped.entries()) {
      const before = rows[i]?.sealed;
      expect(r.sealed.kekVersion).toBe(2);
      expect(r.sealed.iv).toBe(before?.iv);
      expect(r.sealed.ciphertext).toBe(before?.ciphertext);
      expect(r.sealed.wrappedKey).not.toBe(before?.wrappedKey);
      expect(r.sealed.wrapIv).not.toBe(before?.wrapIv);
      expect(openSecret({ keyring: both, sealed: r.sealed, aad: r.aad })).toBe(r.plaintext);
    }
    // New secrets are wrapped under v2.
    expect(sealSecret({ keyring: both, plaintext: secret, aad: binding }).kekVersion).toBe(2);

    const onlyV2 = parseKeyring(rawV2.split(",")[0] ?? "");
    expect(onlyV2.versions).toEqual([2]);
    for (const r of rewrapped)
      expect(openSecret({ keyring: onlyV2, sealed: r.sealed, aad: r.aad })).toBe(r.plaintext);
    // The un-rewrapped originals are lost once v1 is gone, and fail generically.
    for (const r of rows)
      expectGenericFailure(openFailure({ keyring: onlyV2, sealed: r.sealed, aad: r.aad }));
  });

  test("rewrapping a secret already under the active version returns it unchanged", () => {
    const sealed = sealSecret({ keyring, plaintext: secret, aad: binding });
    const again = rewrapSecret({ keyring, sealed, aad: binding });
    expect(again).toEqual(sealed);
    expect(again).not.toBe(sealed);
  });

  test("a wrap's KEK version is bound in its associated data, not only implied by the key", () => {
    // parseKeyring refuses one key under two versions; a hand-built keyring isolates the AAD.
    const kek = parseKeyring(generateKek(1)).kek(1);
    const sameKeyTwice: Keyring = {
      activeVersion: 2,
      versions: [2, 1],
      kek: (v) => (v <= 2 ? kek : undefined),
    };
    const sealed = sealSecret({ keyring: sameKeyTwice, plaintext: secret, aad: binding });
    expect(openSecret({ keyring: sameKeyTwice, sealed, aad: binding })).toBe(secret);
    const relabelled = { ...sealed, kekVersion: 1 };
    expectGenericFailure(openFailure({ keyring: sameKeyTwice, sealed: relabelled, aad: binding }));
  });

  test("a wrap relabelled with another version the keyring holds fails", () => {
    const raw = addKekVersion(generateKek(1));
    const both = parseKeyring(raw);
    const sealed = sealSecret({ keyring: both, plaintext: secret, aad: binding });
    expectGenericFailure(openFailure({ keyring: both, sealed: { ...sealed, kekVersion: 1 }, aad: binding }));
  });
});

describe("unknown KEK version", () => {
  test("fails with the same error as a wrong binding", () => {
    const sealed = sealSecret({ keyring, plaintext: secret, aad: binding });
    const stranger = parseKeyring(generateKek(1));
    const unknownVersion = openFailure({ keyring, sealed: { ...sealed, kekVersion: 9 }, aad: binding });
    const wrongKey = openFailure({ keyring: stranger, sealed, aad: binding });
    const wrongBinding = openFailure({ keyring, sealed, aad: { ...binding, credentialVersion: 9 } });
    for (const error of [unknownVersion, wrongKey, wrongBinding]) expectGenericFailure(error);
    expect(unknownVersion.message).toBe(wrongBinding.message);
    expect(wrongKey.message).toBe(wrongBinding.message);
  });
});
