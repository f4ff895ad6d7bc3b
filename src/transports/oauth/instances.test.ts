import { describe, expect, test } from "../../../test/fixtures.ts";
import { approveDevice, pollDevice, startDevice, type Tokens } from "../../../test/lib/oauth.ts";
import { signedInBrowser } from "../../../test/web.ts";
import { createApp } from "../../app.ts";
import { CLI_CLIENT_ID } from "../../features/oauth/cli-client.ts";

describe("several instances on one database", () => {
  test("a device login started on one instance is approved on a second and its token works on a third", async ({
    deps,
    owner,
  }) => {
    // Three apps, three authorization servers, one database and one KEK: state and keys are shared.
    const [a, b, c] = [createApp(deps), createApp(deps), createApp(deps)];
    const started = await startDevice(a, deps, {
      scope: "environments:read mcp_connections:read offline_access",
    });
    const browser = await signedInBrowser(b, deps, owner.userId);
    const done = await approveDevice(deps, browser, started.user_code, {
      organizationId: owner.organizationId,
    });
    expect(done.status).toBe(200);
    const res = await pollDevice(c, deps, started.device_code);
    expect(res.status).toBe(200);
    const tokens = (await res.json()) as Tokens;
    const me = await a.request("/api/v1/me", { headers: { authorization: `Bearer ${tokens.access_token}` } });
    expect(me.status).toBe(200);
    // Refreshed on one, revoked on another: gone everywhere.
    const refreshed = await b.request(`${deps.config.baseUrl}/oauth/token`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({
        grant_type: "refresh_token",
        refresh_token: tokens.refresh_token ?? "",
        client_id: CLI_CLIENT_ID,
      }).toString(),
    });
    const next = (await refreshed.json()) as Tokens;
    await c.request(`${deps.config.baseUrl}/oauth/revoke`, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ token: next.refresh_token ?? "", client_id: CLI_CLIENT_ID }).toString(),
    });
    for (const app of [a, b, c]) {
      const after = await app.request("/api/v1/me", {
        headers: { authorization: `Bearer ${next.access_token}` },
      });
      expect(after.status).toBe(401);
    }
  });
});
