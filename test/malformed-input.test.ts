import { describe, expect, newTenant, test } from "./fixtures.ts";
import { signedInBrowser, webClient } from "./web.ts";

/**
 * Every documented REST operation, sent malformed input: broken and oversized path parameters,
 * nonsense query values, invalid JSON, JSON of the wrong shape, each body property of the wrong
 * type, NUL characters, the wrong content type. Whatever the input, the answer is a client error
 * (or a success where the input happens to be acceptable, or a documented 503 such as
 * `model_not_configured`) — never a 500 — and every error is problem+json with a stable `code`. The operations come from the OpenAPI document, so a new route is covered the
 * day it is documented.
 */

type Schema = { $ref?: string; properties?: Record<string, Schema>; type?: string | string[] };
type Operation = {
  method: string;
  path: string;
  query: string[];
  bodyProperties: string[] | null;
};

const GARBAGE_PATH = [
  "%00",
  "%ZZ",
  "a".repeat(3_000),
  "..%2F..%2Fme",
  "1e309",
  "null",
  "%F0%9F%98%80",
  "'%20or%201=1--",
];
const GARBAGE_QUERY = ["", "-1", "0", "abc", "9".repeat(40), "%FF", "[]", "2026-13-45T99:99:99Z", "%00"];
const WRONG_VALUES: unknown[] = [
  null,
  123,
  -1.5,
  "x",
  "",
  "nul\u0000byte",
  "back\\u0000slash",
  [],
  {},
  true,
  "a".repeat(200_000),
  { nested: { deep: ["\u0000"] } },
];
const RAW_BODIES = [
  "{",
  "null",
  "[]",
  '"text"',
  "1",
  "{}",
  '{"__proto__":{"polluted":true}}',
  `${"[".repeat(5_000)}${"]".repeat(5_000)}`,
  "\u0000",
];

function operations(doc: {
  paths: Record<
    string,
    Record<string, { parameters?: { in: string; name: string }[]; requestBody?: unknown }>
  >;
  components?: { schemas?: Record<string, Schema> };
}): Operation[] {
  const resolve = (schema: Schema | undefined): Schema | undefined =>
    schema?.$ref ? doc.components?.schemas?.[schema.$ref.replace("#/components/schemas/", "")] : schema;
  const out: Operation[] = [];
  for (const [path, item] of Object.entries(doc.paths)) {
    for (const [method, op] of Object.entries(item)) {
      if (!["get", "post", "put", "patch", "delete"].includes(method)) continue;
      const body = op.requestBody as { content?: Record<string, { schema?: Schema }> } | undefined;
      const schema = resolve(body?.content?.["application/json"]?.schema);
      out.push({
        method: method.toUpperCase(),
        path,
        query: (op.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name),
        bodyProperties: body ? Object.keys(schema?.properties ?? {}) : null,
      });
    }
  }
  return out;
}

describe("malformed input, every documented operation", () => {
  test("never a 500; every error is problem+json with a code", async ({ app, owner }) => {
    const doc = await (await app.request("/api/v1/openapi.json")).json();
    const ops = operations(doc);
    expect(ops.length).toBeGreaterThan(40);

    const failures: string[] = [];
    let sent = 0;
    const send = async (
      op: Operation,
      path: string,
      init: { body?: string; contentType?: string | null },
    ) => {
      sent++;
      const headers: Record<string, string> = { authorization: `Bearer ${owner.apiKey}` };
      if (op.method !== "GET") headers["idempotency-key"] = crypto.randomUUID();
      if (op.method === "PATCH" || op.method === "PUT") headers["if-match"] = '"1"';
      if (init.body !== undefined && init.contentType !== null) {
        headers["content-type"] = init.contentType ?? "application/json";
      }
      const res = await app.request(`/api/v1${path}`, { method: op.method, headers, body: init.body });
      const label = `${op.method} ${path.slice(0, 120)} body=${(init.body ?? "").slice(0, 60)}`;
      if (res.status >= 400) {
        const type = res.headers.get("content-type") ?? "";
        const problem = type.startsWith("application/problem+json")
          ? ((await res.json()) as { code?: unknown })
          : null;
        if (res.status === 500 || problem?.code === "internal") {
          failures.push(`${res.status} ${label}`);
        } else if (typeof problem?.code !== "string" || problem.code === "") {
          failures.push(`${res.status} without problem+json code (${type}): ${label}`);
        }
      } else {
        await res.body?.cancel();
      }
    };
    // Path parameters that exist where they can: the owner's environment, so that validation
    // beyond the environment lookup runs; other ids are well-formed but unknown.
    const fill = (path: string, replace?: { name: string; value: string }) =>
      path.replace(/\{(\w+)\}/g, (_, name: string) =>
        replace?.name === name
          ? replace.value
          : name === "environmentId"
            ? owner.environmentId
            : crypto.randomUUID(),
      );

    for (const op of ops) {
      const jsonBody = op.bodyProperties ? "{}" : undefined;
      for (const name of op.path.match(/\{(\w+)\}/g)?.map((p) => p.slice(1, -1)) ?? []) {
        for (const value of GARBAGE_PATH) await send(op, fill(op.path, { name, value }), { body: jsonBody });
      }
      for (const name of op.query) {
        for (const value of GARBAGE_QUERY) await send(op, `${fill(op.path)}?${name}=${value}`, {});
      }
      if (!op.bodyProperties) continue;
      const path = fill(op.path);
      for (const raw of RAW_BODIES) await send(op, path, { body: raw });
      await send(op, path, { body: '{"a":1}', contentType: "text/plain" });
      await send(op, path, { body: '{"a":1}', contentType: null });
      for (const property of op.bodyProperties) {
        for (const value of WRONG_VALUES)
          await send(op, path, { body: JSON.stringify({ [property]: value }) });
      }
    }
    expect(failures).toEqual([]);
    expect(sent).toBeGreaterThan(1_000);
  });
});

/**
 * The web UI's routes for `method`, from the app's own route table: every page is covered the
 * day it is added. The API, OTLP, MCP, x402 and GitHub's callbacks are not pages.
 */
const uiRoutes = (app: { routes: { method: string; path: string }[] }, method: string): string[] => [
  ...new Set(
    app.routes
      .filter((r) => r.method === method && !/^\/(api|x402|v1|mcp|integrations)\b/.test(r.path))
      .map((r) => r.path),
  ),
];

describe("malformed input, every web UI page", () => {
  test("garbage in any path parameter or query of a signed-in page is never a 500", async ({ app, deps }) => {
    const tenant = await newTenant(deps, app);
    const browser = await signedInBrowser(app, deps, tenant.userId);
    const pages = uiRoutes(app, "GET").filter((path) => path.includes("/:"));
    expect(pages.length).toBeGreaterThan(10);
    const valid: Record<string, string> = {
      orgId: tenant.organizationId,
      environmentId: tenant.environmentId,
    };
    const failures: string[] = [];
    for (const page of pages) {
      const names = page.match(/:(\w+)/g)?.map((p) => p.slice(1)) ?? [];
      for (const name of names) {
        for (const value of [...GARBAGE_PATH, crypto.randomUUID()]) {
          const path = page.replace(/:(\w+)(\{[^}]*\})?/g, (_, n: string) =>
            n === name ? value : (valid[n] ?? crypto.randomUUID()),
          );
          for (const query of ["", "?cursor=%00", "?window=x&status=%FF&q=%00&from=soon"]) {
            const res = await browser.get(`${path}${query}`);
            if (res.status >= 500) failures.push(`${res.status} GET ${path.slice(0, 120)}${query}`);
            await res.body?.cancel();
          }
        }
      }
    }
    expect(failures).toEqual([]);
  });
  test("a malformed form body on any page that takes a form is a 400, never a 500", async ({ app, deps }) => {
    const tenant = await newTenant(deps, app);
    const browser = await signedInBrowser(app, deps, tenant.userId);
    const posts = uiRoutes(app, "POST").map((path) =>
      path.replace(/:(\w+)(\{[^}]*\})?/g, () => crypto.randomUUID()),
    );
    expect(posts.length).toBeGreaterThan(10);
    const bodies: [string, string][] = [
      ["multipart/form-data; boundary=zz", "garbage"],
      ["multipart/form-data", "a=b"],
      ["multipart/form-data; boundary=zz", '--zz\r\ncontent-disposition: form-data; name="a"\r\n\r\ncut'],
    ];
    const failures: string[] = [];
    for (const path of posts) {
      for (const [type, body] of bodies) {
        // Signed out (the guards run before sign-in) and signed in, from the page's own origin.
        for (const who of [webClient(app, deps.config.baseUrl), browser]) {
          const res = await who.post(path, {}, { raw: { type, body } });
          if (res.status !== 400) failures.push(`${res.status} POST ${path} (${type})`);
          await res.body?.cancel();
        }
      }
    }
    expect(failures).toEqual([]);
  });
});
