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
