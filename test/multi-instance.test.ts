import { randomBytes, randomUUID } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import postgres from "postgres";
import { afterAll, beforeAll, describe, expect, test } from "vitest";
import { generateKek } from "../src/platform/vault/keyring.ts";
import { testPgUrl } from "./database.ts";
import { runPatchbay, type ServerEnv, type SpawnedServer, spawnServer } from "./lib/spawn-server.ts";

/**
 * Two real `patchbay serve` processes on one PostgreSQL database: start-up races, optimistic
 * concurrency and idempotency across instances, and the SIGTERM drain. Needs a real server
 * (`PATCHBAY_TEST_PG`); PGlite is single-process by design, so there is nothing to test there.
 */
const title = testPgUrl
  ? "two instances on one PostgreSQL"
  : "two instances on one PostgreSQL (skipped: needs PATCHBAY_TEST_PG, e.g. npm run test:pg)";

type Tenant = { organizationId: string; environmentId: string; userId: string; apiKey: string };
type EnvironmentBody = { id: string; name: string; revision: number };

describe.skipIf(!testPgUrl)(title, () => {
  const dbName = `patchbay_test_${randomBytes(6).toString("hex")}`;
  const kek = generateKek();
  const tempDirs: string[] = [];
  let admin: postgres.Sql | undefined;
  let sql: postgres.Sql;
  let servers: SpawnedServer[] = [];
  let env: (dataDir: string) => ServerEnv;
  let organizationsAfterStart = -1;
  let tenant: Tenant;

  beforeAll(async () => {
    if (!testPgUrl) return;
    admin = postgres(testPgUrl, { max: 1, onnotice: () => {} });
    await admin.unsafe(`create database ${dbName}`);
    const url = new URL(testPgUrl);
    url.pathname = `/${dbName}`;
    const databaseUrl = url.toString();
    sql = postgres(databaseUrl, { max: 2, onnotice: () => {} });
    env = (dataDir) => ({
      DATABASE_URL: databaseUrl,
      NODE_ENV: "development",
      LOG_LEVEL: "warn",
      PATCHBAY_DATA_DIR: dataDir,
      PATCHBAY_KEK: kek,
    });
    const dataDir = async () => {
      const dir = await mkdtemp(join(tmpdir(), "patchbay-mi-"));
      tempDirs.push(dir);
      return dir;
    };

    // Both at once on an empty database: both race migrations and the first-run demo tenant.
    const dirs = await Promise.all([dataDir(), dataDir()]);
    const started = await Promise.allSettled(dirs.map((dir) => spawnServer({ env: env(dir) })));
    servers = started.flatMap((s) => (s.status === "fulfilled" ? [s.value] : []));
    const failed = started.find((s) => s.status === "rejected");
    if (failed) throw failed.reason;

    const [row] = await sql<{ n: number }[]>`select count(*)::int as n from organizations`;
    organizationsAfterStart = row?.n ?? -1;
    tenant = JSON.parse(await runPatchbay(["admin", "bootstrap", "--json"], env(await dataDir()))) as Tenant;
  });

  afterAll(async () => {
    await Promise.all(servers.map((s) => s.stop()));
    await sql?.end({ timeout: 5 });
    if (admin) {
      await admin.unsafe(`drop database if exists ${dbName} with (force)`);
      await admin.end({ timeout: 5 });
    }
    await Promise.all(tempDirs.map((dir) => rm(dir, { recursive: true, force: true })));
  });

  /** Both instances' output, for failure messages (errors are logged even at LOG_LEVEL=warn). */
  const serverLogs = () => servers.map((s) => `--- ${s.baseUrl} ---\n${s.output()}`).join("\n");

  /** One request, sent to `servers[i % 2]` so consecutive requests alternate between instances. */
  const send = (i: number, method: string, path: string, headers: Record<string, string>, body?: unknown) => {
    const server = servers[i % servers.length];
    if (!server) throw new Error("no server running");
    return fetch(`${server.baseUrl}/api/v1${path}`, {
      method,
      headers: {
        authorization: `Bearer ${tenant.apiKey}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
        ...headers,
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  };

  test("a. two instances starting at once migrate once and create exactly one demo organisation", () => {
    expect(servers).toHaveLength(2);
    expect(organizationsAfterStart).toBe(1);
    // The first-run banner (and the demo key in it) is printed by exactly one of them.
    const banners = servers.filter((s) => s.output().includes("a demo organisation was created"));
    expect(banners).toHaveLength(1);
    expect(tenant.apiKey).toMatch(/^sk_/);
  });

  test("a2. the banner's one-time owner password signs in on either instance; the session works on both", async () => {
    const banner = servers.map((s) => s.output()).find((o) => o.includes("Owner sign-in:")) ?? "";
    const [, email = "", password = ""] = /Owner sign-in:\s+(\S+) \/ (\S+)/.exec(banner) ?? [];
    expect(email).toBe("owner@example.com");
    const [a, b] = servers;
    if (!a || !b) throw new Error("two servers expected");
    const form = await fetch(`${a.baseUrl}/login`);
    const preSession = /patchbay_csrf=([^;]+)/.exec(form.headers.get("set-cookie") ?? "")?.[1] ?? "";
    const token = /name="_csrf" value="([^"]+)"/.exec(await form.text())?.[1] ?? "";
    const signIn = await fetch(`${b.baseUrl}/login`, {
      method: "POST",
      redirect: "manual",
      headers: {
        origin: b.baseUrl,
        cookie: `patchbay_csrf=${preSession}`,
        "content-type": "application/x-www-form-urlencoded",
      },
      body: new URLSearchParams({ _csrf: token, email, password }).toString(),
    });
    expect(signIn.status, serverLogs()).toBe(303);
    const session = /patchbay_session=([^;]+)/.exec(signIn.headers.get("set-cookie") ?? "")?.[1] ?? "";
    const home = await fetch(`${a.baseUrl}/`, {
      redirect: "manual",
      headers: { cookie: `patchbay_session=${session}` },
    });
    expect(home.status).toBe(303);
    expect(home.headers.get("location")).toMatch(/^\/orgs\/org_/);
  });

  test("b. concurrent PATCHes with the same If-Match: one wins, the rest get 412 across instances", async () => {
    const responses = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        send(
          i,
          "PATCH",
          `/environments/${tenant.environmentId}`,
          { "if-match": '"1"', "idempotency-key": randomUUID() },
          { name: `renamed-${i}` },
        ),
      ),
    );
    const results = await Promise.all(
      responses.map(async (res) => ({
        status: res.status,
        type: res.headers.get("content-type") ?? "",
        body: (await res.json()) as Record<string, unknown>,
      })),
    );
    const winners = results.filter((r) => r.status === 200);
    const losers = results.filter((r) => r.status !== 200);
    expect(winners).toHaveLength(1);
    expect(winners[0]?.body).toMatchObject({ id: tenant.environmentId, revision: 2 });
    expect(losers).toHaveLength(19);
    for (const loser of losers) {
      expect(loser.status).toBe(412);
      expect(loser.type).toMatch(/^application\/problem\+json/);
      expect(loser.body).toMatchObject({ code: "revision_conflict", currentRevision: 2 });
    }
    const [row] = await sql<{ name: string; revision: number }[]>`
      select name, revision from environments where id = ${tenant.environmentId}`;
    expect(row).toEqual({ name: winners[0]?.body.name, revision: 2 });
  });

  test("c. one Idempotency-Key sent 10 times at once to both instances creates one environment", async () => {
    const key = randomUUID();
    const responses = await Promise.all(
      Array.from({ length: 10 }, (_, i) =>
        send(i, "POST", "/environments", { "idempotency-key": key }, { name: "shared" }),
      ),
    );
    const results = await Promise.all(
      responses.map(async (res) => ({
        status: res.status,
        replayed: res.headers.get("idempotency-replayed"),
        etag: res.headers.get("etag"),
        location: res.headers.get("location"),
        body: await res.text(),
      })),
    );
    expect(
      results.map((r) => r.status),
      serverLogs(),
    ).toEqual(Array(10).fill(201));
    const first = results[0];
    for (const r of results) {
      expect(r.body).toBe(first?.body);
      expect(r.etag).toBe(first?.etag);
      expect(r.location).toBe(first?.location);
    }
    expect(results.filter((r) => r.replayed === "true")).toHaveLength(9);
    expect(results.filter((r) => r.replayed === null)).toHaveLength(1);
    const created = JSON.parse(first?.body ?? "{}") as EnvironmentBody;
    expect(created).toMatchObject({ name: "shared", revision: 1 });
    const rows = await sql<{ id: string }[]>`
      select id from environments where organization_id = ${tenant.organizationId} and name = 'shared'`;
    expect(rows).toEqual([{ id: created.id }]);
  });

  test("d. SIGTERM drains: an in-flight request completes, nothing is cut mid-response, exit 0", async () => {
    const [leaving, staying] = servers;
    if (!leaving || !staying) throw new Error("two servers expected");

    // A slow request: headers and half the body now, the rest after SIGTERM.
    const body = Buffer.from(JSON.stringify({ name: "drained" }));
    const half = Math.floor(body.length / 2);
    const slow = httpRequest(`${leaving.baseUrl}/api/v1/environments`, {
      method: "POST",
      agent: false,
      headers: {
        authorization: `Bearer ${tenant.apiKey}`,
        "content-type": "application/json",
        "content-length": String(body.length),
        "idempotency-key": randomUUID(),
      },
    });
    const slowResult = new Promise<{ status: number; body: string }>((resolve, reject) => {
      slow.once("response", (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (chunk: Buffer) => chunks.push(chunk));
        res.once("end", () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString("utf8") }),
        );
        res.once("error", reject);
      });
      slow.once("error", reject);
    });
    slow.write(body.subarray(0, half));
    await sleep(300); // the server has the headers: the request is in flight

    // A steady stream of fresh-connection GETs to the leaving instance across the shutdown.
    const outcomes: Outcome[] = [];
    let streaming = true;
    const stream = (async () => {
      const pending: Promise<void>[] = [];
      while (streaming) {
        pending.push(probe(`${leaving.baseUrl}/readyz`).then((o) => void outcomes.push(o)));
        await sleep(25);
      }
      await Promise.all(pending);
    })();
    await sleep(150);

    const started = Date.now();
    const stopped = leaving.stop(); // SIGTERM now
    await sleep(500);
    slow.end(body.subarray(half));
    const finished = await slowResult;
    const status = await stopped;
    const elapsed = Date.now() - started;
    await sleep(150);
    streaming = false;
    await stream;
    servers = [staying];

    expect(finished.status, finished.body).toBe(201);
    const drained = JSON.parse(finished.body) as EnvironmentBody;
    expect(drained.name).toBe("drained");
    expect(status).toEqual({ code: 0, signal: null });
    expect(elapsed).toBeLessThan(5_000);
    expect(outcomes.filter((o) => o.kind === "broken")).toEqual([]);
    expect(outcomes.some((o) => o.kind === "ok")).toBe(true);
    expect(outcomes.some((o) => o.kind === "refused")).toBe(true);

    // The other instance carries on and sees the drained request's write.
    const res = await send(0, "GET", `/environments/${drained.id}`, {});
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ name: "drained" });
  });
});

/** ok: a complete response; refused: no connection (listener closed); broken: anything else. */
type Outcome = { kind: "ok" | "refused" } | { kind: "broken"; detail: string };

/** A GET on its own connection, classified. A reset after the response started is `broken`. */
function probe(url: string): Promise<Outcome> {
  return new Promise((resolve) => {
    let responded = false;
    const req = httpRequest(url, { agent: false, timeout: 5_000 }, (res) => {
      responded = true;
      const chunks: Buffer[] = [];
      res.on("data", (chunk: Buffer) => chunks.push(chunk));
      res.once("end", () => {
        const text = Buffer.concat(chunks).toString("utf8");
        resolve(
          res.statusCode === 200 && text.includes('"ok"')
            ? { kind: "ok" }
            : { kind: "broken", detail: `HTTP ${res.statusCode}: ${text}` },
        );
      });
      res.once("error", (error) => resolve({ kind: "broken", detail: `mid-response: ${error.message}` }));
      res.once("aborted", () => resolve({ kind: "broken", detail: "response aborted" }));
    });
    req.once("timeout", () => req.destroy(new Error("timed out")));
    req.once("error", (error: NodeJS.ErrnoException) => {
      if (!responded && error.code === "ECONNREFUSED") resolve({ kind: "refused" });
      else
        resolve({
          kind: "broken",
          detail: `${responded ? "mid-response" : "before response"}: ${error.code ?? error.message}`,
        });
    });
    req.end();
  });
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
