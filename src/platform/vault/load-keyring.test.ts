import { mkdtempSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { loadConfig } from "../../config.ts";
import { generateKek } from "./keyring.ts";
import { loadKeyring } from "./load-keyring.ts";

const dir = mkdtempSync(join(tmpdir(), "patchbay-kek-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("loadKeyring", () => {
  test("development without PATCHBAY_KEK generates one KEK into the data dir with mode 0600, once", () => {
    const config = loadConfig({ PATCHBAY_DATA_DIR: dir });
    const first = loadKeyring(config);
    expect(first.generatedAt).toBe(join(dir, "kek"));
    expect(statSync(join(dir, "kek")).mode & 0o777).toBe(0o600);
    const contents = readFileSync(join(dir, "kek"), "utf8");
    const second = loadKeyring(config);
    expect(second.generatedAt).toBeUndefined();
    expect(readFileSync(join(dir, "kek"), "utf8")).toBe(contents);
    expect(second.keyring.activeVersion).toBe(1);
  });

  test("PATCHBAY_KEK wins over the file", () => {
    const kek = generateKek(3);
    const { keyring } = loadKeyring(loadConfig({ PATCHBAY_DATA_DIR: dir, PATCHBAY_KEK: kek }));
    expect(keyring.activeVersion).toBe(3);
  });
});
