import { execFile } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { seedConnection } from "../../../test/lib/vault-connections.ts";
import { loadConfig } from "../../config.ts";
import { vaultSecrets } from "../../platform/db/schema/secrets.ts";
import {
  type CredentialScope,
  readCredential,
  storeCredential,
} from "../../platform/vault/credential-store.ts";
import { addKekVersion, type Keyring, parseKeyring } from "../../platform/vault/keyring.ts";
import { loadKeyring } from "../../platform/vault/load-keyring.ts";
import { openMigratedDatabase } from "../../startup.ts";

const run = promisify(execFile);
const bin = new URL("../../../bin/patchbay.js", import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), "patchbay-rotate-"));
const kekFile = join(dataDir, "kek");
const env = { NODE_ENV: "development", PATCHBAY_DATA_DIR: dataDir, LOG_LEVEL: "silent" };
const secret = "sk_live_ROTATION_SENTINEL_0123456789";
let scope: CredentialScope;

afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function patchbay(args: string[], extra: Record<string, string> = {}) {
  const { DATABASE_URL: _db, PATCHBAY_KEK: _kek, ...inherited } = process.env;
  return run(process.execPath, [bin, "admin", "rotate-kek", ...args], {
    env: { ...inherited, ...env, ...extra },
  });
}

/** Opens the data dir in this process for `fn`, then releases it: PGlite allows one process at a time. */
async function withDatabase<T>(
  fn: (db: Awaited<ReturnType<typeof openMigratedDatabase>>["db"]) => Promise<T>,
) {
  const database = await openMigratedDatabase(loadConfig(env));
  try {
    return await fn(database.db);
  } finally {
    await database.close();
  }
}

const readWith = (keyring: Keyring) => withDatabase((db) => readCredential(db, keyring, scope));
const fileKeyring = () => readFileSync(kekFile, "utf8").trim();
const kekVersions = () =>
  withDatabase(async (db) => (await db.select().from(vaultSecrets)).map((r) => r.kekVersion));

/** Every key of a keyring string, so output can be checked for leaked material. */
const keysOf = (raw: string) => raw.split(",").map((entry) => entry.split(":")[1] ?? "");

beforeAll(async () => {
  const { keyring } = loadKeyring(loadConfig(env)); // the development file, v1
  await withDatabase(async (db) => {
    scope = await seedConnection(db);
    await storeCredential(db, keyring, { ...scope, credentialVersion: 1, plaintext: secret });
  });
});

describe("patchbay admin rotate-kek", () => {
  test("with the development file: adds a version atomically, re-wraps, and leaks no key", async () => {
    const before = fileKeyring();
    const { stdout, stderr } = await patchbay(["--json"]);
    expect(JSON.parse(stdout)).toEqual({
      activeVersion: 2,
      rewrapped: 1,
      alreadyCurrent: 0,
      webhookSecrets: { rewrapped: 0, alreadyCurrent: 0 },
    });

    const after = fileKeyring();
    expect(after.endsWith(`,${before}`)).toBe(true);
    expect(parseKeyring(after).versions).toEqual([2, 1]);
    expect(statSync(kekFile).mode & 0o777).toBe(0o600);
    expect(readdirSync(dataDir).filter((f) => f.endsWith(".tmp"))).toEqual([]);
    for (const key of keysOf(after)) expect(`${stdout}${stderr}`).not.toContain(key);

    const text = await patchbay([]);
    expect(text.stdout).toMatch(
      /^Added KEK v3 to .*kek\. Re-wrapped 1 credential\(s\) under KEK v3; 0 already current\./,
    );
    for (const key of keysOf(fileKeyring())) expect(`${text.stdout}${text.stderr}`).not.toContain(key);

    const newest = fileKeyring().split(",")[0] ?? "";
    expect(await kekVersions()).toEqual([3]);
    expect(await readWith(parseKeyring(newest))).toBe(secret);
  }, 120_000);

  test("with PATCHBAY_KEK: re-wraps under its highest version and leaves the file alone", async () => {
    const file = fileKeyring();
    const kek = addKekVersion(file);
    const { stdout } = await patchbay(["--json"], { PATCHBAY_KEK: kek });
    expect(JSON.parse(stdout)).toEqual({
      activeVersion: 4,
      rewrapped: 1,
      alreadyCurrent: 0,
      webhookSecrets: { rewrapped: 0, alreadyCurrent: 0 },
    });
    expect(fileKeyring()).toBe(file);
    for (const key of keysOf(kek)) expect(stdout).not.toContain(key);
    expect(await readWith(parseKeyring(kek.split(",")[0] ?? ""))).toBe(secret);
  }, 120_000);

  test("--print-new-keyring prints the keyring plus a new version and changes nothing", async () => {
    const file = fileKeyring();
    const fromFile = (await patchbay(["--print-new-keyring"])).stdout.trim();
    const printed = parseKeyring(fromFile);
    expect(printed.activeVersion).toBe(4);
    expect(printed.versions).toEqual([4, 3, 2, 1]);
    expect(fromFile.endsWith(`,${file}`)).toBe(true);
    expect(fileKeyring()).toBe(file);

    const kek = addKekVersion(file);
    const json = JSON.parse(
      (await patchbay(["--print-new-keyring", "--json"], { PATCHBAY_KEK: kek })).stdout,
    ) as {
      activeVersion: number;
      keyring: string;
    };
    expect(json.activeVersion).toBe(5);
    expect(parseKeyring(json.keyring).versions).toEqual([5, 4, 3, 2, 1]);
    expect(json.keyring.endsWith(`,${kek}`)).toBe(true);
    expect(fileKeyring()).toBe(file);
    expect(await kekVersions()).toEqual([4]);
  }, 120_000);
});
