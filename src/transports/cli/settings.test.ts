import { chmodSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, test } from "vitest";
import { DEFAULT_BASE_URL, profilesPath, readProfiles, resolveSettings, writeProfiles } from "./profiles.ts";

const dir = mkdtempSync(join(tmpdir(), "patchbay-settings-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe("profiles and settings", () => {
  const env = { XDG_CONFIG_HOME: join(dir, "config") };
  const path = profilesPath(env);
  const warnings: string[] = [];
  const warn = (line: string) => warnings.push(line);

  test("the file is written 0600 in a 0700 directory and read back", () => {
    writeProfiles(path, { profiles: { default: { baseUrl: "https://p.example", apiKey: "sk_a" } } });
    expect(path).toBe(join(dir, "config", "patchbay", "profiles.json"));
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(dir, "config", "patchbay")).mode & 0o777).toBe(0o700);
    expect(readProfiles(path, warn).profiles.default).toEqual({
      baseUrl: "https://p.example",
      apiKey: "sk_a",
    });
    expect(warnings).toEqual([]);
  });

  test("precedence: flags, then the profile's base URL / PATCHBAY_API_KEY, then the rest", () => {
    expect(resolveSettings({}, env, warn)).toEqual({
      baseUrl: "https://p.example",
      credential: { kind: "api_key", key: "sk_a" },
      profile: "default",
    });
    expect(
      resolveSettings(
        {},
        { ...env, PATCHBAY_BASE_URL: "https://env.example", PATCHBAY_API_KEY: "sk_env" },
        warn,
      ),
    ).toMatchObject({ baseUrl: "https://p.example", credential: { kind: "api_key", key: "sk_env" } });
    expect(
      resolveSettings(
        { baseUrl: "https://flag.example/", apiKey: "sk_flag" },
        { ...env, PATCHBAY_API_KEY: "sk_env" },
        warn,
      ),
    ).toMatchObject({ baseUrl: "https://flag.example", credential: { kind: "api_key", key: "sk_flag" } });
    const bare = { XDG_CONFIG_HOME: join(dir, "empty"), PATCHBAY_API_KEY: "sk_env" };
    expect(resolveSettings({}, bare, warn).baseUrl).toBe(DEFAULT_BASE_URL);
    expect(resolveSettings({}, { ...bare, PATCHBAY_BASE_URL: "https://env.example" }, warn).baseUrl).toBe(
      "https://env.example",
    );
  });

  test("a login is used for its own server only, and a key from the flag or environment wins over it", () => {
    const loginEnv = { XDG_CONFIG_HOME: join(dir, "login") };
    const loginPath = profilesPath(loginEnv);
    const session = {
      issuer: "https://p.example",
      clientId: "patchbay-cli",
      tokenEndpoint: "https://p.example/oauth/token",
      accessToken: "at_1",
      refreshToken: "rt_1",
      expiresAt: Date.now() + 3_600_000,
      scope: "mcp_connections:read",
    };
    writeProfiles(loginPath, { profiles: { default: { baseUrl: "https://p.example", oauth: session } } });
    expect(resolveSettings({}, loginEnv, warn).credential).toEqual({
      kind: "oauth",
      session,
      path: loginPath,
    });
    expect(resolveSettings({}, { ...loginEnv, PATCHBAY_API_KEY: "sk_env" }, warn).credential).toEqual({
      kind: "api_key",
      key: "sk_env",
    });
    expect(resolveSettings({ apiKey: "sk_flag" }, loginEnv, warn).credential).toEqual({
      kind: "api_key",
      key: "sk_flag",
    });
    // Another server never gets the token.
    expect(() => resolveSettings({ baseUrl: "https://other.example" }, loginEnv, warn)).toThrow(
      expect.objectContaining({ code: "no_api_key", exitCode: 3 }),
    );
    // A stored session that is not one (edited by hand) reads as no login.
    writeFileSync(loginPath, JSON.stringify({ profiles: { default: { oauth: { accessToken: 1 } } } }), {
      mode: 0o600,
    });
    expect(readProfiles(loginPath, warn).profiles.default).toEqual({});
  });

  test("missing key → auth error; unknown named profile → usage error; wide file mode → warning", () => {
    expect(() => resolveSettings({}, { XDG_CONFIG_HOME: join(dir, "empty") }, warn)).toThrow(
      expect.objectContaining({ code: "no_api_key", exitCode: 3 }),
    );
    expect(() => resolveSettings({ profile: "staging" }, env, warn)).toThrow(
      expect.objectContaining({ code: "usage", exitCode: 2 }),
    );
    writeFileSync(path, JSON.stringify({ profiles: {} }));
    chmodSync(path, 0o644);
    readProfiles(path, warn);
    expect(warnings.join("\n")).toContain("readable by other users");
  });
});
