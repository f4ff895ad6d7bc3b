// The start-up banner of a real `patchbay serve` (child process, embedded database): the first
// start and a restart on the same data both say where the service answers, and every command is
// printed in a form that runs on this machine.
import { mkdirSync, mkdtempSync, rmSync, symlinkSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, test } from "vitest";
import { spawnServer } from "../../../test/lib/spawn-server.ts";
import { cliCommand } from "./invocation.ts";

const dir = mkdtempSync(join(tmpdir(), "patchbay-banner-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const bin = fileURLToPath(new URL("../../../bin/patchbay.js", import.meta.url));
const repoRoot = fileURLToPath(new URL("../../..", import.meta.url));

async function banner(output: () => string): Promise<string> {
  const deadline = Date.now() + 10_000;
  while (!output().includes("API reference:")) {
    if (Date.now() > deadline) throw new Error(`no banner in:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  return output();
}

describe("the start-up banner", () => {
  test("first start and restart both print the base URL and the web UI link; commands run from the clone", async () => {
    const env = { NODE_ENV: "development", LOG_LEVEL: "silent", PATCHBAY_DATA_DIR: join(dir, "data") };
    const first = await spawnServer({ env });
    const once = await banner(first.output);
    await first.stop();
    expect(once).toContain(`Base URL:        ${first.baseUrl}`);
    expect(once).toContain(`Web UI:          ${first.baseUrl}/login`);
    expect(once).toMatch(/Owner sign-in: {3}\S+@\S+ \/ \S+/);
    // The server runs from the clone's directory: npx finds this copy there.
    expect(once).toMatch(/npx patchbay admin set-password --email \S+@\S+\)/);
    expect(once).toContain(`npx patchbay login --base-url ${first.baseUrl}`);

    const again = await spawnServer({ env });
    const restart = await banner(again.output);
    await again.stop();
    expect(restart).toContain(`Base URL:        ${again.baseUrl}`);
    expect(restart).toContain(`Web UI:          ${again.baseUrl}/login`);
    expect(restart).toContain(`API reference:   ${again.baseUrl}/api/v1/docs`);
    expect(restart).toContain("npx patchbay admin set-password --email <email>");
    expect(restart).not.toContain("Owner API key");
    expect(restart).not.toContain("Owner sign-in");
  }, 120_000);

  test("a command is printed as this machine runs it", () => {
    const elsewhere = join(dir, "elsewhere");
    const pathDir = join(dir, "global-bin");
    mkdirSync(elsewhere, { recursive: true });
    mkdirSync(pathDir, { recursive: true });
    // From the clone's directory: npx runs this copy.
    expect(cliCommand({ argv1: bin, env: { PATH: "" }, cwd: repoRoot })).toBe("npx patchbay");
    // Elsewhere, not installed on PATH: the absolute form (a bare npx would fetch a registry package).
    expect(cliCommand({ argv1: bin, env: { PATH: "" }, cwd: elsewhere })).toBe(`node ${bin}`);
    // Installed globally: `patchbay` on PATH is a link to this very file.
    symlinkSync(bin, join(pathDir, "patchbay"));
    expect(cliCommand({ argv1: join(pathDir, "patchbay"), env: { PATH: pathDir }, cwd: elsewhere })).toBe(
      "patchbay",
    );
  });
});
