import { createPrivateKey, createPublicKey, sign, verify } from "node:crypto";
import { describe, expect, test } from "vitest";
import { addKekVersion, generateKek, parseKeyring } from "../../platform/vault/keyring.ts";
import { cookieKeys, signingKeys } from "./signing-keys.ts";

describe("derived OAuth keys", () => {
  test("the same keyring gives the same keys (every instance signs alike), and a rotation adds one", () => {
    const v1 = generateKek(1);
    const [first] = signingKeys(parseKeyring(v1));
    const [again] = signingKeys(parseKeyring(v1));
    expect(first).toEqual(again);
    expect(first).toMatchObject({ kty: "OKP", crv: "Ed25519", kid: "patchbay-v1", alg: "EdDSA" });

    const rotated = parseKeyring(addKekVersion(v1));
    const keys = signingKeys(rotated);
    expect(keys.map((k) => k.kid)).toEqual(["patchbay-v2", "patchbay-v1"]);
    // The old version's key is kept unchanged, so what it signed still verifies.
    expect(keys[1]).toEqual(first);
    expect(keys[0]?.x).not.toBe(first?.x);

    const message = Buffer.from("id token");
    const privateKey = createPrivateKey({ key: keys[0] as never, format: "jwk" });
    const { d: _d, ...publicJwk } = keys[0] ?? {};
    const publicKey = createPublicKey({ key: publicJwk as never, format: "jwk" });
    expect(verify(null, message, publicKey, sign(null, message, privateKey))).toBe(true);

    expect(cookieKeys(rotated)).toHaveLength(2);
    expect(cookieKeys(rotated)[1]).toBe(cookieKeys(parseKeyring(v1))[0]);
  });
});
