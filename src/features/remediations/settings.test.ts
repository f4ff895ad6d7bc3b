import { describe, expect, test } from "vitest";
import { ConfigError } from "../../config-error.ts";
import { readRemediationSettings } from "./settings.ts";

const app = {
  PATCHBAY_GITHUB_APP_ID: "1029384",
  PATCHBAY_GITHUB_APP_PRIVATE_KEY: "-----BEGIN RSA PRIVATE KEY-----\\nMIIE\\n-----END RSA PRIVATE KEY-----",
  PATCHBAY_GITHUB_WEBHOOK_SECRET: "whsec",
  PATCHBAY_GITHUB_APP_SLUG: "patchbay",
  PATCHBAY_GITHUB_CLIENT_ID: "Iv23liPatchbay",
  PATCHBAY_GITHUB_CLIENT_SECRET: "client-secret",
};

describe("GitHub App settings", () => {
  test("the App's OAuth client is read with the App", () => {
    expect(readRemediationSettings(app, "production").github).toMatchObject({
      appId: "1029384",
      clientId: "Iv23liPatchbay",
      clientSecret: "client-secret",
      apiUrl: "https://api.github.com",
    });
    expect(readRemediationSettings({}, "production").github).toBeUndefined();
  });

  // Without the client the install callback could not check who installed the App.
  test.each(["PATCHBAY_GITHUB_CLIENT_ID", "PATCHBAY_GITHUB_CLIENT_SECRET"])(
    "%s is required with PATCHBAY_GITHUB_APP_ID",
    (variable) => {
      const env = { ...app, [variable]: " " };
      expect(() => readRemediationSettings(env, "development")).toThrow(ConfigError);
      expect(() => readRemediationSettings(env, "development")).toThrow(
        `${variable}: is required with PATCHBAY_GITHUB_APP_ID`,
      );
    },
  );
});

describe("fix watch settings", () => {
  test("defaults, and whole milliseconds from the environment", () => {
    expect(readRemediationSettings({}, "production").watch).toEqual({
      graceMs: 3_600_000,
      quietWindowMs: 259_200_000,
    });
    const env = { PATCHBAY_FIX_WATCH_GRACE_MS: "0", PATCHBAY_FIX_WATCH_WINDOW_MS: "86400000" };
    expect(readRemediationSettings(env, "production").watch).toEqual({
      graceMs: 0,
      quietWindowMs: 86_400_000,
    });
  });

  test.each(["-1", "1h", "1.5", "99999999999999"])("%s is refused", (value) => {
    expect(() => readRemediationSettings({ PATCHBAY_FIX_WATCH_WINDOW_MS: value }, "development")).toThrow(
      "PATCHBAY_FIX_WATCH_WINDOW_MS: must be a whole number of milliseconds",
    );
  });
});
