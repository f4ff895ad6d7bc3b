import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, test } from "vitest";

const run = promisify(execFile);
const bin = new URL("../../../bin/patchbay.js", import.meta.url).pathname;
const dataDir = mkdtempSync(join(tmpdir(), "patchbay-cli-"));
afterAll(() => rmSync(dataDir, { recursive: true, force: true }));

function patchbay(args: string[], env: Record<string, string> = {}) {
  const { DATABASE_URL: _omit, ...inherited } = process.env;
  return run(process.execPath, [bin, ...args], {
    env: { ...inherited, NODE_ENV: "development", PATCHBAY_DATA_DIR: dataDir, LOG_LEVEL: "silent", ...env },
  });
}

describe("patchbay CLI", () => {
  test("admin bootstrap --json prints exactly the four fields, a new organisation each call", async () => {
    const first = JSON.parse((await patchbay(["admin", "bootstrap", "--json"])).stdout) as Record<
      string,
      string
    >;
    expect(Object.keys(first)).toEqual(["organizationId", "environmentId", "userId", "apiKey"]);
    expect(first.organizationId).toMatch(/^org_/);
    expect(first.environmentId).toMatch(/^[0-9a-f-]{36}$/);
    expect(first.apiKey).toMatch(/^sk_/);
    const second = JSON.parse(
      (await patchbay(["admin", "bootstrap", "--json", "--org-name", "Acme", "--email", "Ops@Acme.test"]))
        .stdout,
    ) as Record<string, string>;
    expect(second.organizationId).not.toBe(first.organizationId);
    expect(second.apiKey).not.toBe(first.apiKey);
  }, 60_000);

  test("admin set-password reads the password from stdin; refuses a short one and an unknown email", async () => {
    await patchbay(["admin", "bootstrap", "--json", "--email", "web@acme.test"]);
    const withStdin = (args: string[], input: string) =>
      new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
        const { DATABASE_URL: _omit, ...inherited } = process.env;
        const child = execFile(
          process.execPath,
          [bin, ...args],
          { env: { ...inherited, NODE_ENV: "development", PATCHBAY_DATA_DIR: dataDir, LOG_LEVEL: "silent" } },
          (error, stdout, stderr) => resolve({ code: error ? (error.code as number) : 0, stdout, stderr }),
        );
        child.stdin?.end(input);
      });
    const ok = await withStdin(
      ["admin", "set-password", "--email", "Web@Acme.test"],
      "a long enough passphrase\n",
    );
    expect(ok.code).toBe(0);
    expect(ok.stdout).toMatch(
      /^Password set for web@acme\.test \(usr_[0-9a-z]+\); 0 open session\(s\) ended\.$/m,
    );
    const short = await withStdin(["admin", "set-password", "--email", "web@acme.test"], "short\n");
    expect(short.code).toBe(2);
    expect(short.stderr).toContain("at least 12 characters");
    const unknown = await withStdin(
      ["admin", "set-password", "--email", "nobody@acme.test"],
      "a long enough passphrase",
    );
    expect(unknown.code).toBe(4);
  }, 60_000);

  test("invalid configuration exits 78 with one message naming the variable", async () => {
    const failure = await patchbay(["serve"], { PORT: "not-a-port" }).catch((e: unknown) => e);
    expect(failure).toMatchObject({ code: 78 });
    expect((failure as { stderr: string }).stderr).toMatch(/^patchbay: invalid configuration: PORT:/);
    const prod = await patchbay(["serve"], {
      NODE_ENV: "production",
      PATCHBAY_BASE_URL: "https://p.example",
    }).catch((e: unknown) => e);
    expect(prod).toMatchObject({ code: 78 });
    expect((prod as { stderr: string }).stderr).toContain("PATCHBAY_KEK");
  }, 30_000);

  test("--version reports a release after 0.10.2", async () => {
    const { stdout } = await patchbay(["--version"]);
    const [major = 0, minor = 0, patch = 0] = stdout.trim().split(".").map(Number);
    expect(major * 1e6 + minor * 1e3 + patch).toBeGreaterThan(10_002);
  });
});
