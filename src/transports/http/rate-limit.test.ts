import { describe, expect, newTenant, type Tenant, test } from "../../../test/fixtures.ts";
import { client, problem } from "../../../test/http.ts";
import { MCP_URL } from "../../../test/lib/mcp-client.ts";
import { createApp } from "../../app.ts";
import { ConfigError, loadConfig } from "../../config.ts";
import type { Deps } from "../../deps.ts";
import { withServices } from "../../services.ts";

type Traffic = Deps["config"]["traffic"];
type App = ReturnType<typeof createApp>;

/** The file's app rebuilt with other limits (its own, empty quotas). */
async function withLimits(deps: Deps, traffic: Partial<Traffic>, run: (app: App) => Promise<void>) {
  // Its own telemetry runtime too: closing it leaves the file's shared one running.
  const own = withServices({
    ...deps,
    config: { ...deps.config, traffic: { ...deps.config.traffic, ...traffic } },
  });
  try {
    await run(createApp(own));
  } finally {
    await own.telemetry.close();
  }
}

/** A second key of the tenant's organisation, as a client of `app`. */
async function secondKey(app: App, tenant: Tenant) {
  const res = await client(app, tenant.apiKey).post("/api-keys", {
    name: "second",
    permissions: ["environments:read"],
  });
  expect(res.status).toBe(201);
  return client(app, ((await res.json()) as { secret: string }).secret);
}

const statuses = (responses: Response[]) => responses.map((r) => r.status).sort();
const count = (responses: Response[], status: number) => responses.filter((r) => r.status === status).length;

describe("per-key and per-organisation rate limits", () => {
  test("answers carry RateLimit-Policy and RateLimit (draft-ietf-httpapi-ratelimit-headers)", async ({
    deps,
    owner,
  }) => {
    await withLimits(deps, { keyRequestsPerMinute: 10, orgRequestsPerMinute: 30 }, async (app) => {
      const api = client(app, owner.apiKey);
      const first = await api.get("/me");
      expect(first.status).toBe(200);
      expect(first.headers.get("ratelimit-policy")).toBe('"key";q=10;w=60, "org";q=30;w=60');
      // One request spent of each; the next unit comes back within one interval (6 s and 2 s).
      expect(first.headers.get("ratelimit")).toBe('"key";r=9;t=6, "org";r=29;t=2');
      // Error answers after authentication carry them too.
      const missing = await api.get(`/environments/${crypto.randomUUID()}`);
      expect(missing.status).toBe(404);
      expect(missing.headers.get("ratelimit")).toBe('"key";r=8;t=6, "org";r=28;t=2');
    });
  });

  test("50 concurrent requests against a limit of 10: exactly 10 pass, the rest are 429 rate_limited", async ({
    deps,
    owner,
  }) => {
    await withLimits(deps, { keyRequestsPerMinute: 10, orgRequestsPerMinute: 1000 }, async (app) => {
      const api = client(app, owner.apiKey);
      const responses = await Promise.all(Array.from({ length: 50 }, () => api.get("/me")));
      expect(statuses(responses)).toEqual([...Array(10).fill(200), ...Array(40).fill(429)]);
      const refused = responses.find((r) => r.status === 429);
      if (!refused) throw new Error("no 429");
      const body = await problem(refused);
      expect(body).toMatchObject({ code: "rate_limited", violatedPolicies: ["key"] });
      const retryAfter = Number(refused.headers.get("retry-after"));
      expect(retryAfter).toBeGreaterThanOrEqual(1);
      expect(retryAfter).toBeLessThanOrEqual(6);
      expect(body.retryAfterSeconds).toBe(retryAfter);
      expect(refused.headers.get("ratelimit-policy")).toBe('"key";q=10;w=60, "org";q=1000;w=60');
      const state = refused.headers.get("ratelimit") ?? "";
      expect(state).toMatch(/^"key";r=0;t=[1-6], "org";r=\d+;t=1$/);
      // Refused requests cost the organisation nothing: 10 spent of its 1000. It earns one back
      // every 60 ms, so a slow run sees a few more, never the 950 charging the 40 would leave.
      const orgRemaining = Number(/"org";r=(\d+)/.exec(state)?.[1]);
      expect(orgRemaining).toBeGreaterThanOrEqual(990);
      expect(orgRemaining).toBeLessThan(1000);
    });
  });

  test("keys are limited apart; the organisation's limit covers all its keys; other organisations are untouched", async ({
    deps,
    owner,
    stranger,
  }) => {
    await withLimits(deps, { keyRequestsPerMinute: 10, orgRequestsPerMinute: 15 }, async (app) => {
      const first = client(app, owner.apiKey);
      const second = await secondKey(app, owner); // its creation spent one of the organisation's 15
      const firstAnswers = await Promise.all(Array.from({ length: 12 }, () => first.get("/me")));
      expect(count(firstAnswers, 200)).toBe(9); // 1 (the creation) + 9 = the key's 10
      // The second key has its own 10, but the organisation has only 5 left of its 15.
      const secondAnswers = await Promise.all(Array.from({ length: 10 }, () => second.get("/me")));
      expect(count(secondAnswers, 200)).toBe(5);
      const refused = secondAnswers.find((r) => r.status === 429);
      if (!refused) throw new Error("no 429");
      expect(await problem(refused)).toMatchObject({ code: "rate_limited", violatedPolicies: ["org"] });

      const other = client(app, stranger.apiKey);
      const strangers = await Promise.all(Array.from({ length: 10 }, () => other.get("/me")));
      expect(count(strangers, 200)).toBe(10);
    });
  });

  test("/mcp spends the same per-key budget, and answers 429 when it is spent", async ({ deps, owner }) => {
    await withLimits(deps, { keyRequestsPerMinute: 3, orgRequestsPerMinute: 0 }, async (app) => {
      const mcp = () =>
        app.request(MCP_URL, {
          method: "POST",
          headers: {
            authorization: `Bearer ${owner.apiKey}`,
            "content-type": "application/json",
            accept: "application/json, text/event-stream",
          },
          body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "tools/list" }),
        });
      const listed = await mcp();
      expect(listed.status).toBe(200);
      expect(listed.headers.get("ratelimit-policy")).toBe('"key";q=3;w=60');
      expect(listed.headers.get("ratelimit")).toBe('"key";r=2;t=20');
      expect((await client(app, owner.apiKey).get("/me")).status).toBe(200);
      expect((await mcp()).status).toBe(200);
      const refused = await mcp();
      expect(refused.status).toBe(429);
      expect(refused.headers.get("retry-after")).not.toBeNull();
      expect(await problem(refused)).toMatchObject({ code: "rate_limited", violatedPolicies: ["key"] });
      expect((await client(app, owner.apiKey).get("/me")).status).toBe(429);
    });
  });

  test("limits of 0 turn rate limiting off: no headers, no refusals", async ({ deps }) => {
    await withLimits(deps, { keyRequestsPerMinute: 0, orgRequestsPerMinute: 0 }, async (app) => {
      const tenant = await newTenant(deps, app);
      const responses = await Promise.all(Array.from({ length: 20 }, () => tenant.api.get("/me")));
      expect(count(responses, 200)).toBe(20);
      expect(responses[0]?.headers.get("ratelimit")).toBeNull();
      expect(responses[0]?.headers.get("ratelimit-policy")).toBeNull();
    });
  });

  test("settings: 3000 per key and 6000 per organisation by default; whole numbers from 0", () => {
    expect(loadConfig({}).traffic).toMatchObject({ keyRequestsPerMinute: 3000, orgRequestsPerMinute: 6000 });
    const set = loadConfig({
      PATCHBAY_RATE_LIMIT_KEY_PER_MINUTE: "0",
      PATCHBAY_RATE_LIMIT_ORG_PER_MINUTE: "90",
    });
    expect(set.traffic).toMatchObject({ keyRequestsPerMinute: 0, orgRequestsPerMinute: 90 });
    for (const variable of ["PATCHBAY_RATE_LIMIT_KEY_PER_MINUTE", "PATCHBAY_RATE_LIMIT_ORG_PER_MINUTE"]) {
      for (const bad of ["-1", "2.5", "lots"]) {
        let thrown: unknown;
        try {
          loadConfig({ [variable]: bad });
        } catch (error) {
          thrown = error;
        }
        expect(thrown, `${variable}=${bad}`).toBeInstanceOf(ConfigError);
        expect((thrown as ConfigError).variable).toBe(variable);
      }
    }
  });
});
