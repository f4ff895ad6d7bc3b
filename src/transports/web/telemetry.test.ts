import { describe, expect, newTenant, type Tenant, test } from "../../../test/fixtures.ts";
import {
  createKey,
  hexId,
  jsonAttributes,
  jsonLog,
  jsonLogs,
  jsonSpan,
  jsonTraces,
  nanosAgo,
  sendJson,
} from "../../../test/lib/telemetry.ts";
import { givePassword, TEST_PASSWORD, type WebClient, webClient } from "../../../test/web.ts";
import type { Deps } from "../../deps.ts";
import { memberships } from "../../platform/db/schema/users.ts";

type AppLike = Parameters<typeof webClient>[0] & Parameters<typeof sendJson>[0];

/** A signed-in browser stand-in of a fresh organisation's owner. */
async function ownerBrowser(app: AppLike, deps: Deps, email: string) {
  const tenant = await newTenant(deps, app as never, email);
  await givePassword(deps, email);
  const browser = webClient(app);
  expect((await browser.signIn(email, TEST_PASSWORD)).status).toBe(303);
  const env = `/orgs/${tenant.organizationId}/environments/${tenant.environmentId}`;
  return { tenant, browser, env };
}

/** A signed-in plain member (role `member`) of `tenant`'s organisation. */
async function memberBrowser(app: AppLike, deps: Deps, tenant: Tenant, email: string): Promise<WebClient> {
  const other = await newTenant(deps, app as never, email);
  await deps.db
    .insert(memberships)
    .values({ organizationId: tenant.organizationId, userId: other.userId, role: "member" });
  await givePassword(deps, email);
  const browser = webClient(app);
  expect((await browser.signIn(email, TEST_PASSWORD)).status).toBe(303);
  return browser;
}

function thrownError(message: string): Error {
  try {
    throw new RangeError(message);
  } catch (error) {
    return error as Error;
  }
}

/**
 * Real OTLP through /v1/traces and /v1/logs: a checkout request whose child span records an
 * exception (whose message carries markup), and logs of it, one at ERROR.
 */
async function sendCheckout(app: AppLike, key: string, service = "checkout") {
  const traceId = hexId(16);
  const rootId = hexId(8);
  const error = thrownError("stock <script>alert(1)</script> for sku 41 is gone");
  const start = BigInt(nanosAgo(30_000));
  const root = jsonSpan({
    traceId,
    spanId: rootId,
    name: "POST /checkout",
    kind: 2,
    startTimeUnixNano: start.toString(),
    endTimeUnixNano: (start + 80_000_000n).toString(),
    attributes: jsonAttributes({ "http.route": "/checkout", "note.html": "<script>alert('attr')</script>" }),
    status: { code: 2 },
  });
  const child = jsonSpan({
    traceId,
    parentSpanId: rootId,
    name: "reserve stock",
    kind: 1,
    startTimeUnixNano: (start + 10_000_000n).toString(),
    endTimeUnixNano: (start + 60_000_000n).toString(),
    status: { code: 2, message: error.message },
    events: [
      {
        name: "exception",
        timeUnixNano: (start + 59_000_000n).toString(),
        attributes: jsonAttributes({
          "exception.type": error.name,
          "exception.message": error.message,
          "exception.stacktrace": error.stack ?? "",
        }),
      },
    ],
  });
  await sendJson(app, "traces", key, jsonTraces([root, child], service));
  await sendJson(
    app,
    "logs",
    key,
    jsonLogs(
      [
        jsonLog({ body: { stringValue: "checkout started" }, traceId, spanId: rootId }),
        jsonLog({
          severityNumber: 13,
          severityText: "WARN",
          body: { stringValue: "body <script>alert('log')</script> here" },
          attributes: jsonAttributes({ "order.id": 42 }),
        }),
      ],
      service,
    ),
  );
  return { traceId, error };
}

const unescaped = /<script>alert/;

describe("telemetry key pages", () => {
  test("an owner creates a key (shown once, with the OTLP settings), it ingests, and revokes it after confirming", async ({
    app,
    deps,
  }) => {
    const { browser, env } = await ownerBrowser(app, deps, "tk1@example.com");
    const keys = `${env}/telemetry-keys`;
    const empty = await browser.page(keys);
    expect(empty).toContain("No telemetry keys in this environment yet.");
    expect(empty).toContain("OTEL_EXPORTER_OTLP_ENDPOINT=http://127.0.0.1:8787");
    expect(empty).toContain('OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer pk_…"');

    const blank = await browser.post(keys, { name: "  " });
    expect(blank.status).toBe(400);
    expect(await blank.text()).toMatch(/id="f-name-error">/);

    const created = await browser.post(keys, { name: "web frontend" });
    expect(created.status).toBe(201);
    expect(created.headers.get("cache-control")).toBe("no-store");
    const page = await created.text();
    const key = /<code class="secret" id="new-key">(pk_[A-Za-z0-9]+)<\/code>/.exec(page)?.[1] ?? "";
    expect(key).toMatch(/^pk_/);
    expect(page).toContain(`OTEL_EXPORTER_OTLP_HEADERS="authorization=Bearer ${key}"`);

    await sendCheckout(app, key);
    const listed = await browser.page(keys);
    expect(listed).not.toContain(key);
    expect(listed).toContain(`${key.slice(0, 11)}…`);
    expect(listed).toContain("tk1@example.com");
    expect(listed).not.toMatch(/<td><span class="muted">never<\/span><\/td>/);

    const keyId = /telemetry-keys\/(pbk_[0-9a-z]+)\/revoke"/.exec(listed)?.[1] ?? "";
    const confirm = await browser.page(`${keys}/${keyId}/revoke`);
    expect(confirm).toContain("Revoke web frontend?");
    const revoked = await browser.post(`${keys}/${keyId}/revoke`);
    expect(revoked.status).toBe(303);
    expect(revoked.headers.get("location")).toBe(`${keys}?done=revoked`);
    const after = await browser.page(`${keys}?done=revoked`);
    expect(after).toContain("The key was revoked.");
    expect(after).toContain("Revoked");
    await expect(sendCheckout(app, key)).rejects.toThrow(/401/);
  });

  test("a member sees the keys but no create or revoke, and the verbs refuse a hand-crafted form", async ({
    app,
    deps,
  }) => {
    const { tenant, env } = await ownerBrowser(app, deps, "tk2@example.com");
    const { id } = await createKey(tenant, "backend");
    const member = await memberBrowser(app, deps, tenant, "tk2-member@example.com");
    const keys = `${env}/telemetry-keys`;
    const page = await member.page(keys);
    expect(page).toContain("backend");
    expect(page).not.toContain("Create a key");
    expect(page).not.toContain("/revoke");
    expect(page).toContain("Only an owner or administrator can create and revoke telemetry keys.");
    expect((await member.post(keys, { name: "sneaky" })).status).toBe(403);
    expect((await member.get(`${keys}/${id}/revoke`)).status).toBe(403);
    expect((await member.post(`${keys}/${id}/revoke`)).status).toBe(403);
    expect(await member.page(keys)).not.toContain("sneaky");
  });

  test("the active-key limit is shown on the form", async ({ app, deps }) => {
    const { tenant, browser, env } = await ownerBrowser(app, deps, "tk3@example.com");
    for (let i = 0; i < 20; i++) await createKey(tenant, `key ${i}`);
    await browser.page(`${env}/telemetry-keys`);
    const refused = await browser.post(`${env}/telemetry-keys`, { name: "one more" });
    expect(refused.status).toBe(409);
    const page = await refused.text();
    expect(page).toContain("An environment holds at most 20 active publishable keys; revoke one first.");
    expect(page).toContain('value="one more"');
  });
});

describe("telemetry pages", () => {
  test("services, logs, the trace and the problem show real OTLP data, escaped", async ({ app, deps }) => {
    const { tenant, browser, env } = await ownerBrowser(app, deps, "tp1@example.com");
    const services = await browser.page(`${env}/services`);
    expect(services).toContain("No telemetry in this environment yet.");
    expect(services).toContain(`href="${env}/telemetry-keys"`);

    const { key } = await createKey(tenant);
    const { traceId } = await sendCheckout(app, key);

    const health = await browser.page(`${env}/services?window=15m`);
    expect(health).toContain("checkout");
    expect(health).toContain("1 request<");
    expect(health).toContain("100 %"); // the one request failed
    expect(health).toContain("80 ms"); // p50 of the one entry span
    expect(health).toMatch(/<option value="15m" selected>/);

    const logs = await browser.page(`${env}/logs`);
    expect(logs).toContain("checkout started");
    expect(logs).toContain(`href="${env}/traces/${traceId}"`);
    expect(logs).toContain("body &lt;script&gt;alert(&#39;log&#39;)&lt;/script&gt; here");
    expect(logs).not.toMatch(unescaped);
    const warnOnly = await browser.page(`${env}/logs?severity=warn`);
    expect(warnOnly).not.toContain("checkout started");
    expect(warnOnly).toContain("order.id");
    const byTrace = await browser.page(`${env}/logs?traceId=${traceId.toUpperCase()}`);
    expect(byTrace).toContain("checkout started");
    expect(byTrace).not.toContain("body &lt;script");
    const byText = await browser.page(`${env}/logs?q=STARTED&service=checkout`);
    expect(byText).toContain("checkout started");
    expect(await browser.page(`${env}/logs?service=billing`)).toContain(
      "No log records match these filters.",
    );

    const trace = await browser.page(`${env}/traces/${traceId}`);
    expect(trace).toContain("POST /checkout");
    expect(trace).toMatch(
      /class="span-name d1"><span class="visually-hidden">Level 2: <\/span>reserve stock/,
    );
    expect(trace).toContain("RangeError");
    expect(trace).toContain("stock &lt;script&gt;alert(1)&lt;/script&gt; for sku 41 is gone");
    expect(trace).toContain("&lt;script&gt;alert(&#39;attr&#39;)&lt;/script&gt;");
    expect(trace).toMatch(/<pre>RangeError: stock &lt;script&gt;[^<]*\n\s+at thrownError/);
    expect(trace).toMatch(/<rect class="bar error" x="0.0" y="0" width="1000.0"/);
    expect(trace).not.toMatch(unescaped);
    const traceLogs =
      /href="([^"]+)">Log records of this trace/.exec(trace)?.[1]?.replaceAll("&amp;", "&") ?? "";
    const ofTrace = await browser.page(traceLogs);
    expect(ofTrace).toContain("checkout started");
    expect(ofTrace).not.toContain("body &lt;script");

    const problems = await browser.page(`${env}/problems`);
    const problemId = /problems\/(prb_[0-9a-z]+)"/.exec(problems)?.[1] ?? "";
    expect(problemId).toMatch(/^prb_/);
    expect(problems).toContain("RangeError: stock &lt;script&gt;");
    expect(problems).not.toMatch(unescaped);
    expect(await browser.page(`${env}/problems?status=resolved`)).toContain(
      "No problems match these filters.",
    );

    const problem = await browser.page(`${env}/problems/${problemId}`);
    expect(problem).toContain(`href="${env}/traces/${traceId}"`);
    expect(problem).toContain("Raw stack trace");
    expect(problem).toMatch(/<code>thrownError<\/code>/);
    expect(problem).not.toMatch(unescaped);
    expect(problem).toContain(`action="${env}/problems/${problemId}/remediations"`);
    expect(problem).toMatch(/<button type="submit" name="status" value="resolved"/);
  });

  test("logs page back in time with the verb's cursor, keeping the filters", async ({ app, deps }) => {
    const { tenant, browser, env } = await ownerBrowser(app, deps, "tp4@example.com");
    const { key } = await createKey(tenant);
    const records = Array.from({ length: 55 }, (_, i) =>
      jsonLog({ timeUnixNano: nanosAgo(60_000 - i * 100), body: { stringValue: `line ${i}` } }),
    );
    await sendJson(app, "logs", key, jsonLogs(records, "worker"));
    const first = await browser.page(`${env}/logs?service=worker`);
    expect(first).toContain('<pre class="log-body">line 54</pre>');
    expect(first).toContain('<pre class="log-body">line 5</pre>');
    expect(first).not.toContain('<pre class="log-body">line 4</pre>');
    const older = /href="([^"]+)">Older/.exec(first)?.[1]?.replaceAll("&amp;", "&") ?? "";
    expect(older).toMatch(/service=worker&cursor=/);
    const second = await browser.page(older);
    expect(second).toContain('<pre class="log-body">line 4</pre>');
    expect(second).toContain('<pre class="log-body">line 0</pre>');
    expect(second).not.toContain('<pre class="log-body">line 5</pre>');
    expect(second).not.toContain("Older");
    expect(second).toContain(`href="${env}/logs?service=worker">← First page`);
  });

  test("status changes go through set-problem-status with the page's revision", async ({ app, deps }) => {
    const { tenant, browser, env } = await ownerBrowser(app, deps, "tp2@example.com");
    const { key } = await createKey(tenant);
    await sendCheckout(app, key);
    const list = await browser.page(`${env}/problems`);
    const path = `${env}/problems/${/problems\/(prb_[0-9a-z]+)"/.exec(list)?.[1]}`;
    await browser.page(path);
    const resolved = await browser.post(`${path}/status`, { status: "resolved", revision: "1" });
    expect(resolved.status).toBe(303);
    expect(resolved.headers.get("location")).toBe(`${path}?done=resolved`);
    const page = await browser.page(`${path}?done=resolved`);
    expect(page).toContain("The problem is resolved.");
    expect(page).toContain('class="badge problem-resolved"');
    expect(page).toMatch(/name="status" value="open"[^>]*>Reopen/);

    // A form from before the change: refused, the current state shown.
    const stale = await browser.post(`${path}/status`, { status: "ignored", revision: "1" });
    expect(stale.status).toBe(412);
    expect(await stale.text()).toContain("This problem changed since you loaded this page");
    const regressedByHand = await browser.post(`${path}/status`, { status: "regressed", revision: "2" });
    expect(regressedByHand.status).toBe(400);
    expect(await regressedByHand.text()).toMatch(/status: Choose one of: /);
    const noRevision = await browser.post(`${path}/status`, { status: "open" });
    expect(noRevision.status).toBe(400);
    expect(await noRevision.text()).toContain("The form lost its revision");
  });

  test("every filter is validated with a message, never a 500", async ({ app, deps }) => {
    const { browser, env } = await ownerBrowser(app, deps, "tp3@example.com");
    const cases: [string, RegExp][] = [
      [`${env}/services?window=2h`, /id="f-window-error">Choose one of: 5m, 15m, 1h, 6h, 24h, 7d\.</],
      [`${env}/services?cursor=nonsense`, /cursor is not a cursor this listing issued/],
      [`${env}/logs?severity=loud`, /id="f-severity-error">Choose one of: /],
      [`${env}/logs?traceId=xyz`, /id="f-traceId-error">must be 32 hexadecimal characters/],
      [`${env}/logs?from=yesterday`, /id="f-from-error">/],
      [`${env}/logs?range=1y`, /id="f-range-error">/],
      [
        `${env}/logs?from=2026-11-22T10:00:00Z&to=2026-11-22T09:00:00Z`,
        /id="f-from-error">from must be before to\./,
      ],
      [`${env}/logs?q=${"x".repeat(201)}`, /id="f-q-error">/],
      [`${env}/logs?cursor=eyJ4IjoxfQ`, /cursor is not a cursor this listing issued/],
      [`${env}/problems?status=lost`, /id="f-status-error">Choose one of: /],
      [`${env}/problems?cursor=WyJ4Il0`, /cursor is not a cursor this listing issued/],
    ];
    for (const [path, message] of cases) {
      const res = await browser.get(path);
      const text = await res.text();
      expect(res.status, path).toBe(400);
      expect(text, path).toMatch(message);
      expect(text, path).toContain('role="alert"');
    }
    // The submitted value is shown back, escaped.
    const echoed = await (await browser.get(`${env}/logs?traceId=%3Cscript%3Ealert(1)%3C/script%3E`)).text();
    expect(echoed).toContain('value="&lt;script&gt;alert(1)&lt;/script&gt;"');
    expect(echoed).not.toMatch(unescaped);

    const badTrace = await browser.get(`${env}/traces/not-a-trace`);
    expect(badTrace.status).toBe(400);
    expect(await badTrace.text()).toContain("must be 32 hexadecimal characters");
    expect((await browser.get(`${env}/traces/${hexId(16)}`)).status).toBe(404);
    expect((await browser.get(`${env}/problems/prb_unknown`)).status).toBe(404);
    expect((await browser.get(`${env}/problems/${"x".repeat(65)}`)).status).toBe(400);
  });
});

describe("telemetry pages: tenancy and roles", () => {
  test("another organisation's member gets 404; another environment's trace and problem are not shown", async ({
    app,
    deps,
  }) => {
    const { tenant, browser, env } = await ownerBrowser(app, deps, "tt1@example.com");
    const { key } = await createKey(tenant);
    const { traceId } = await sendCheckout(app, key);
    const problemId =
      /problems\/(prb_[0-9a-z]+)"/.exec(await browser.page(`${env}/problems`))?.[1] ?? "missing";
    const keyId = /telemetry-keys\/(pbk_[0-9a-z]+)\/revoke"/.exec(
      await browser.page(`${env}/telemetry-keys`),
    )?.[1];

    const stranger = (await ownerBrowser(app, deps, "tt1-stranger@example.com")).browser;
    for (const path of [
      `${env}/services`,
      `${env}/logs`,
      `${env}/traces/${traceId}`,
      `${env}/problems`,
      `${env}/problems/${problemId}`,
      `${env}/telemetry-keys`,
      `${env}/telemetry-keys/${keyId}/revoke`,
    ]) {
      const res = await stranger.get(path);
      expect(res.status, path).toBe(404);
      expect(await res.text(), path).not.toContain("checkout");
    }
    expect((await stranger.post(`${env}/telemetry-keys/${keyId}/revoke`)).status).toBe(404);
    expect(
      (await stranger.post(`${env}/problems/${problemId}/status`, { status: "ignored", revision: "1" }))
        .status,
    ).toBe(404);

    // A second environment of the same organisation sees none of the first one's telemetry.
    const created = await tenant.api.post("/environments", { name: "staging" });
    const staging = ((await created.json()) as { id: string }).id;
    const stagingPath = `/orgs/${tenant.organizationId}/environments/${staging}`;
    expect((await browser.get(`${stagingPath}/traces/${traceId}`)).status).toBe(404);
    expect((await browser.get(`${stagingPath}/problems/${problemId}`)).status).toBe(404);
    expect(await browser.page(`${stagingPath}/logs`)).not.toContain("checkout started");
    expect(await browser.page(`${stagingPath}/services`)).toContain("No telemetry in this environment yet.");
    const nav = await browser.page(`${stagingPath}/logs`);
    expect(nav).toContain(`href="${stagingPath}/problems"`);
    expect(nav).toContain(`href="${env}/logs"`); // the switcher keeps the section
  });

  test("a member reads everything but gets no status or remediation buttons; the verb refuses the form", async ({
    app,
    deps,
  }) => {
    const { tenant, browser, env } = await ownerBrowser(app, deps, "tt2@example.com");
    const { key } = await createKey(tenant);
    const { traceId } = await sendCheckout(app, key);
    const problemId = /problems\/(prb_[0-9a-z]+)"/.exec(await browser.page(`${env}/problems`))?.[1] ?? "";
    const member = await memberBrowser(app, deps, tenant, "tt2-member@example.com");
    expect(await member.page(`${env}/services`)).toContain("checkout");
    expect(await member.page(`${env}/logs`)).toContain("checkout started");
    expect(await member.page(`${env}/traces/${traceId}`)).toContain("reserve stock");
    const problem = await member.page(`${env}/problems/${problemId}`);
    expect(problem).toContain("Only an owner or administrator can change the status.");
    expect(problem).not.toContain('name="status"');
    expect(problem).not.toContain(`/problems/${problemId}/remediations`);
    const refused = await member.post(`${env}/problems/${problemId}/status`, {
      status: "ignored",
      revision: "1",
    });
    expect(refused.status).toBe(403);
    expect(await browser.page(`${env}/problems/${problemId}`)).toContain('class="badge problem-open"');
  });

  test("the navigation reaches the environment pages from organisation pages too", async ({ app, deps }) => {
    const { tenant, browser, env } = await ownerBrowser(app, deps, "tt3@example.com");
    const members = await browser.page(`/orgs/${tenant.organizationId}/members`);
    expect(members).toContain(`href="/orgs/${tenant.organizationId}?to=problems"`);
    const res = await browser.get(`/orgs/${tenant.organizationId}?to=problems`);
    expect(res.headers.get("location")).toBe(`${env}/problems`);
    const unknown = await browser.get(`/orgs/${tenant.organizationId}?to=elsewhere`);
    expect(unknown.headers.get("location")).toBe(`${env}/connections`);
  });
});
