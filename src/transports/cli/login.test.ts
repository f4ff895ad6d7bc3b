// `patchbay login` as a new user would run it: a real `patchbay serve` (child process, fresh
// embedded database, its first-run owner), the CLI as a child process with its own HOME, and the
// device approved in a real headless Chromium signed in as that owner. Then the CLI works off the
// stored login: whoami, environment mcp, a transparent refresh, logout.
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { launchChromium } from "../../../test/lib/chromium.ts";
import { type SpawnedServer, spawnServer } from "../../../test/lib/spawn-server.ts";
import type { ProfileFile } from "./profiles.ts";

const bin = fileURLToPath(new URL("../../../bin/patchbay.js", import.meta.url));
const dir = mkdtempSync(join(tmpdir(), "patchbay-cli-login-"));
const home = join(dir, "home");
const profilesFile = join(home, ".config", "patchbay", "profiles.json");

let server: SpawnedServer;
let browser: Browser;
let owner = { email: "", password: "" };
let environmentId = "";

type Run = { code: number | null; stdout: string; stderr: string };

function start(args: string[]): { child: ChildProcess; done: Promise<Run>; stderr: () => string } {
  const child = spawn(process.execPath, [bin, ...args], {
    env: { PATH: process.env.PATH, HOME: home, XDG_CONFIG_HOME: join(home, ".config") },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    stdout += chunk.toString("utf8");
  });
  child.stderr?.on("data", (chunk: Buffer) => {
    stderr += chunk.toString("utf8");
  });
  const done = new Promise<Run>((resolve, reject) => {
    child.on("error", reject);
    child.on("close", (code) => resolve({ code, stdout, stderr }));
  });
  return { child, done, stderr: () => stderr };
}

const cli = (args: string[]) => start(args).done;

async function waitFor<T>(what: string, probe: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** Runs `patchbay login`, approves it in Chromium, and returns the finished command. */
async function loginThroughBrowser(page: Page, args: string[] = []): Promise<{ run: Run; code: string }> {
  const login = start(["login", "--base-url", server.baseUrl, ...args]);
  const link = await waitFor(
    "the verification link",
    () => /(http:\/\/127\.0\.0\.1:\d+\/oauth\/device\?user_code=[A-Z-]+)/.exec(login.stderr())?.[1],
  );
  const code = new URL(link).searchParams.get("user_code") ?? "";
  expect(login.stderr()).toContain(`shows the code ${code}`);
  await approveInBrowser(page, link, code);
  return { run: await login.done, code };
}

async function approveInBrowser(page: Page, link: string, code: string): Promise<void> {
  try {
    await approveSteps(page, link, code);
  } catch (error) {
    console.log(
      "URL",
      page.url(),
      (
        await page
          .locator("main")
          .innerHTML()
          .catch(() => "")
      ).slice(0, 3000),
    );
    throw error;
  }
}

async function approveSteps(page: Page, link: string, code: string): Promise<void> {
  await page.goto(link);
  if (new URL(page.url()).pathname === "/login") {
    await page.getByLabel("Email").fill(owner.email);
    await page.getByLabel("Password").fill(owner.password);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.waitForURL((url) => url.pathname === "/oauth/device");
  }
  // The code from the link is filled in; the person presses Continue.
  expect(await page.getByLabel("Code").inputValue()).toBe(code);
  await page.getByRole("button", { name: "Continue" }).click();
  await page.getByRole("heading", { name: "Confirm the device" }).waitFor();
  expect(await page.locator("dl.facts").textContent()).toContain(code);
  await page.getByRole("button", { name: "Continue" }).click();
  await page.getByRole("heading", { name: "Allow access?" }).waitFor();
  expect(await page.locator("main").textContent()).toContain("patchbay CLI");
  await page.getByRole("button", { name: "Allow" }).click();
  await page.getByRole("heading", { name: "Device connected" }).waitFor();
}

const readProfiles = (): ProfileFile => JSON.parse(readFileSync(profilesFile, "utf8")) as ProfileFile;

beforeAll(async () => {
  server = await spawnServer({
    env: { NODE_ENV: "development", LOG_LEVEL: "silent", PATCHBAY_DATA_DIR: join(dir, "data") },
  });
  // The first-run banner: the demo owner's sign-in and environment, printed once.
  const banner = server.output();
  const signIn = /Owner sign-in:\s+(\S+) \/ (\S+)/.exec(banner);
  environmentId = /Environment:\s+([0-9a-f-]{36})/.exec(banner)?.[1] ?? "";
  owner = { email: signIn?.[1] ?? "", password: signIn?.[2] ?? "" };
  expect(owner.password).not.toBe("");
  browser = await launchChromium();
}, 90_000);

afterAll(async () => {
  await browser?.close();
  await server?.stop();
  rmSync(dir, { recursive: true, force: true });
});

describe("patchbay login against a running server", () => {
  test("--version reports a release after 0.10.2", async () => {
    const run = await cli(["--version"]);
    expect(run.code).toBe(0);
    const [major = 0, minor = 0, patch = 0] = run.stdout.trim().split(".").map(Number);
    expect(major * 1e6 + minor * 1e3 + patch).toBeGreaterThan(10 * 1e3 + 2);
  });

  test("device login approved in Chromium, then whoami and environment mcp from the stored login", async () => {
    const page = await browser.newPage();
    const { run } = await loginThroughBrowser(page);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toContain(`Logged in to ${server.baseUrl} as ${owner.email}`);

    // The login is kept 0600, without any API key.
    expect(statSync(profilesFile).mode & 0o777).toBe(0o600);
    const stored = readProfiles().profiles.default;
    expect(stored?.baseUrl).toBe(server.baseUrl);
    expect(stored?.apiKey).toBeUndefined();
    expect(stored?.oauth).toMatchObject({ issuer: server.baseUrl, clientId: "patchbay-cli" });
    expect(stored?.oauth?.refreshToken).toBeTruthy();

    const who = await cli(["whoami"]);
    expect(who.code, who.stderr).toBe(0);
    expect(who.stdout).toMatch(new RegExp(`^User\\s+${owner.email}`, "m"));
    expect(who.stdout).toMatch(/^Role\s+owner$/m);
    expect(who.stdout).toMatch(/^Credential\s+login \(OAuth grant oag_\w+, client patchbay-cli\)$/m);

    const envs = await cli(["environment", "list", "--json"]);
    expect(envs.code, envs.stderr).toBe(0);
    expect(JSON.parse(envs.stdout).items[0].id).toBe(environmentId);

    const created = await cli([
      "environment",
      "mcp",
      "create",
      "--environment",
      environmentId,
      "--alias",
      "runbooks",
      "--endpoint-url",
      "https://mcp.example.com/mcp",
      "--auth",
      "none",
      "--json",
    ]);
    expect(created.code, created.stderr).toBe(0);
    const list = await cli(["environment", "mcp", "list", "--environment", environmentId, "--json"]);
    expect(list.code, list.stderr).toBe(0);
    expect(JSON.parse(list.stdout).items.map((c: { alias: string }) => c.alias)).toEqual(["runbooks"]);

    // One command of every other API group runs off the same plain login (no insufficient_scope).
    for (const args of [
      ["environment", "task", "list", "--environment", environmentId, "--json"],
      ["environment", "repository", "list", "--environment", environmentId, "--json"],
      ["audit", "list", "--action", "mcp_connection.created", "--json"],
    ]) {
      const ran = await cli(args);
      expect(ran.code, `${args.join(" ")}: ${ran.stderr}`).toBe(0);
      expect(JSON.parse(ran.stdout)).toHaveProperty("items");
    }
    const trail = await cli(["audit", "list", "--action", "mcp_connection.created", "--json"]);
    expect(JSON.parse(trail.stdout).items[0]).toMatchObject({
      channel: "cli",
      actor: { type: "oauth_token", email: owner.email },
    });
    await page.close();
  }, 120_000);

  test("an expired access token is refreshed transparently (and the refresh token rotates)", async () => {
    const file = readProfiles();
    const before = file.profiles.default?.oauth;
    if (!before) throw new Error("not logged in");
    writeFileSync(
      profilesFile,
      JSON.stringify({
        profiles: {
          ...file.profiles,
          default: { ...file.profiles.default, oauth: { ...before, expiresAt: Date.now() - 1000 } },
        },
      }),
      { mode: 0o600 },
    );
    const list = await cli(["environment", "mcp", "list", "--environment", environmentId]);
    expect(list.code, list.stderr).toBe(0);
    expect(list.stdout).toContain("runbooks");
    const after = readProfiles().profiles.default?.oauth;
    expect(after?.accessToken).not.toBe(before.accessToken);
    expect(after?.refreshToken).not.toBe(before.refreshToken);
    expect(after?.expiresAt).toBeGreaterThan(Date.now() + 30 * 60 * 1000);
    // The old access token still works until it expires; the old refresh token is spent.
    const old = await fetch(`${server.baseUrl}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: before.refreshToken ?? "",
        client_id: "patchbay-cli",
      }),
    });
    expect(old.status).toBe(400);
  });

  test("a login from before the MCP scopes existed gets insufficient_scope and is told to log in again", async () => {
    // Such a profile: a device login that granted only environments:read.
    const page = await browser.newPage();
    const started = await (
      await fetch(`${server.baseUrl}/oauth/device_authorization`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          client_id: "patchbay-cli",
          scope: "environments:read offline_access",
          resource: `${server.baseUrl}/api/v1`,
        }),
      })
    ).json();
    await approveInBrowser(page, started.verification_uri_complete, started.user_code);
    await page.close();
    const tokens = await (
      await fetch(`${server.baseUrl}/oauth/token`, {
        method: "POST",
        headers: { "content-type": "application/x-www-form-urlencoded" },
        body: new URLSearchParams({
          grant_type: "urn:ietf:params:oauth:grant-type:device_code",
          device_code: started.device_code,
          client_id: "patchbay-cli",
        }),
      })
    ).json();
    const file = readProfiles();
    const current = file.profiles.default?.oauth;
    if (!current) throw new Error("not logged in");
    writeFileSync(
      profilesFile,
      JSON.stringify({
        profiles: {
          ...file.profiles,
          old: {
            baseUrl: server.baseUrl,
            oauth: {
              ...current,
              accessToken: tokens.access_token,
              refreshToken: tokens.refresh_token,
              expiresAt: Date.now() + 3_600_000,
              scope: tokens.scope,
            },
          },
        },
      }),
      { mode: 0o600 },
    );
    const run = await cli(["environment", "mcp", "list", "--environment", environmentId, "--profile", "old"]);
    expect(run.code).toBe(3);
    expect(run.stderr).toContain(
      "error: insufficient_scope: This access token lacks the scope mcp_connections:read",
    );
    expect(run.stderr).toContain("next step: log in again");
  });

  test("logout revokes the login at the server and removes it; the CLI then asks to log in", async () => {
    const before = readProfiles().profiles.default?.oauth;
    const out = await cli(["logout"]);
    expect(out.code, out.stderr).toBe(0);
    expect(out.stdout).toContain("the login is revoked and removed from profile default");
    expect(readProfiles().profiles.default?.oauth).toBeUndefined();
    const me = await fetch(`${server.baseUrl}/api/v1/me`, {
      headers: { authorization: `Bearer ${before?.accessToken}` },
    });
    expect(me.status).toBe(401);
    const who = await cli(["whoami"]);
    expect(who.code).toBe(3);
    expect(who.stderr).toContain("patchbay login");
    const again = await cli(["logout"]);
    expect(again.code).toBe(0);
    expect(again.stdout).toContain("not logged in");
  });
});
