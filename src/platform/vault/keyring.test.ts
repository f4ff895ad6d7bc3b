import { inspect } from "node:util";
import { describe, expect, test } from "vitest";
import { addKekVersion, generateKek, parseKeyring } from "./keyring.ts";

const keyText = (entry: string): string => entry.slice(entry.indexOf(":") + 1);

describe("parseKeyring", () => {
  test("the highest version is active, whatever the order", () => {
    const raw = [generateKek(1), generateKek(3), generateKek(2)].join(",");
    const keyring = parseKeyring(raw);
    expect(keyring.activeVersion).toBe(3);
    expect(keyring.versions).toEqual([3, 2, 1]);
    expect(keyring.kek(2)?.symmetricKeySize).toBe(32);
    expect(keyring.kek(4)).toBeUndefined();
  });

  test("tolerates whitespace around entries and a trailing newline", () => {
    const keyring = parseKeyring(` ${generateKek(2)} ,\n${generateKek(1)}\n`);
    expect(keyring.versions).toEqual([2, 1]);
  });

  const secretish = "v1:THIS_IS_SECRET_MATERIAL_THIS_IS_SECRET_MA";
  const good = generateKek(1);
  const bad: Array<[string, string, RegExp]> = [
    ["empty", "", /holds no keys/],
    ["only commas", " , ", /entry 1 of 2 is malformed/],
    ["no version", keyText(good), /entry 1 of 1 is malformed/],
    ["version zero", `v0:${keyText(good)}`, /malformed/],
    ["leading zero version", `v01:${keyText(good)}`, /malformed/],
    ["too short", `v1:${keyText(good).slice(0, 42)}`, /malformed/],
    ["too long", `v1:${keyText(good)}AAAA`, /malformed/],
    ["standard base64 alphabet", `v1:${"+".repeat(43)}`, /malformed/],
    ["non-canonical final character", `v1:${"B".repeat(42)}B`, /not a canonical 32-byte key/],
    ["all zero bytes", `v1:${Buffer.alloc(32).toString("base64url")}`, /all zero bytes/],
    ["duplicate version", `${generateKek(1)},${generateKek(1)}`, /entry 2 of 2 \(v1\) repeats a version/],
    ["same key twice", `${good},v2:${keyText(good)}`, /entry 2 of 2 \(v2\) reuses the key/],
    ["trailing comma", `${good},`, /entry 2 of 2 is malformed/],
    ["secret-looking garbage", `${good},${secretish}!`, /entry 2 of 2 is malformed/],
  ];

  test.each(bad)("rejects %s without echoing key material", (_name, raw, message) => {
    let thrown: unknown;
    try {
      parseKeyring(raw);
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(Error);
    const text = `${String(thrown)} ${inspect(thrown)} ${JSON.stringify(thrown)}`;
    expect(text).toMatch(/^ConfigError: PATCHBAY_KEK: /);
    expect(text).toMatch(message);
    for (const entry of raw.split(",")) {
      const material = keyText(entry.trim());
      if (material.length >= 8) expect(text).not.toContain(material.slice(0, 8));
    }
    expect(text).not.toContain("SECRET_MATERIAL");
  });
});

describe("keyring does not leak key bytes", () => {
  const raw = `${generateKek(2)},${generateKek(1)}`;
  const keyring = parseKeyring(raw);
  const materials = raw.split(",").map(keyText);
  const b64Materials = materials.map((m) => Buffer.from(m, "base64url").toString("base64"));
  const hexMaterials = materials.map((m) => Buffer.from(m, "base64url").toString("hex"));

  const renderings: Array<[string, () => string]> = [
    ["JSON.stringify", () => JSON.stringify(keyring)],
    ["JSON.stringify nested", () => JSON.stringify({ config: { keyring } })],
    ["util.inspect", () => inspect(keyring, { showHidden: true, depth: 10 })],
    ["util.inspect nested", () => inspect({ keyring }, { showHidden: true, depth: 10 })],
    ["template string", () => `${keyring}`],
    ["String()", () => String(keyring)],
    // biome-ignore lint/style/useTemplate: `+` is the conversion under test (Symbol.toPrimitive, hint "default")
    ["concatenation", () => "keyring: " + keyring],
    ["KeyObject inspect", () => inspect(keyring.kek(2), { showHidden: true })],
    ["KeyObject JSON", () => JSON.stringify(keyring.kek(2))],
  ];

  test.each(renderings)("%s shows versions only", (_name, render) => {
    const text = render();
    for (const m of [...materials, ...b64Materials, ...hexMaterials]) {
      expect(text).not.toContain(m.slice(0, 12));
    }
  });

  test("JSON and string forms describe the versions", () => {
    expect(JSON.parse(JSON.stringify(keyring))).toEqual({ activeVersion: 2, versions: [2, 1] });
    expect(`${keyring}`).toBe("Keyring(active v2; versions v2,v1)");
    expect(inspect(keyring)).toBe("Keyring(active v2; versions v2,v1)");
    expect(Object.keys(keyring)).toEqual(["activeVersion", "versions"]);
  });

  test("is frozen", () => {
    expect(Object.isFrozen(keyring)).toBe(true);
    expect(Object.isFrozen(keyring.versions)).toBe(true);
  });
});

describe("generateKek and addKekVersion", () => {
  test("generateKek makes a parseable, fresh, 32-byte key", () => {
    const a = generateKek();
    expect(a).toMatch(/^v1:[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(keyText(a), "base64url")).toHaveLength(32);
    expect(generateKek()).not.toBe(a);
    expect(generateKek(7)).toMatch(/^v7:/);
    expect(parseKeyring(generateKek(5)).activeVersion).toBe(5);
  });

  test("generateKek refuses versions the parser would refuse", () => {
    for (const v of [0, -1, 1.5, Number.NaN, 1_000_000_000]) expect(() => generateKek(v)).toThrow(RangeError);
  });

  test("addKekVersion prepends a new highest version and keeps the old ones verbatim", () => {
    const v1 = generateKek(1);
    const v3 = generateKek(3);
    const rotated = addKekVersion(`${v1}, ${v3}\n`);
    const [added, ...rest] = rotated.split(",");
    expect(added).toMatch(/^v4:[A-Za-z0-9_-]{43}$/);
    expect(rest).toEqual([v1, v3]);
    expect(parseKeyring(rotated).activeVersion).toBe(4);
    expect(parseKeyring(rotated).versions).toEqual([4, 3, 1]);
  });

  test("addKekVersion refuses a bad keyring", () => {
    expect(() => addKekVersion("v1:nope")).toThrow(/PATCHBAY_KEK: entry 1 of 1 is malformed/);
  });
});
