import { execFileSync } from "node:child_process";
import { createHmac, generateKeyPairSync } from "node:crypto";
import { createServer, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import type { GithubAppSettings } from "../../src/features/source-hosting/github/github-app.ts";

/**
 * A local HTTP server that answers the GitHub REST calls patchbay makes with recorded responses
 * (the shapes GitHub documents and returns, trimmed of fields nobody reads), and keeps every
 * request it received for assertions. Octokit's `baseUrl` points here.
 */
export const BASE_SHA = "7638417db6d59f3c431d3e1f261cc637155684cd";
const BASE_TREE = "691272480426f78a0138979dd3ce63b77f706feb";
const BLOB_SHA = "3a0f86fb8db8eea7ccbb9a95f325ddbedfb25e15";
const TREE_SHA = "cd8274d15fa3ae2ab983129fb037999f264ba9a7";
const COMMIT_SHA = "7044a8a032e85b6ab611033b2ac8af7ce85805b2";
export const PR_NUMBER = 1347;
export const INSTALLATION_ID = 41234567;
export const FULL_NAME = "acme/checkout";
export const WEBHOOK_SECRET = "whsec-patchbay-test-7d1c";
/** The App's OAuth client (GitHub shows both on the App's settings page). */
export const CLIENT_ID = "Iv23liPatchbayTest01";
export const CLIENT_SECRET = "0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c";
/**
 * Web-flow codes GitHub appends to the callback after a person installs and authorises the App
 * (single use, like GitHub's): the installer's user can access INSTALLATION_ID, the outsider's
 * (a GitHub user who installed nothing) no installation of this App.
 */
export const INSTALLER_CODE = "a7c3f0e9d2b14c6e8f01";
export const OUTSIDER_CODE = "b8d4e1f0a3c25d7f9e12";

export type Recorded = { method: string; path: string; query: string; body: unknown; auth: string };

type Route = {
  method: string;
  path: RegExp;
  answer: (
    m: RegExpExecArray,
    req: { body: unknown; query: URLSearchParams; authorization: string },
  ) => { status: number; body?: unknown; headers?: Record<string, string>; raw?: Buffer };
};

export type GithubReplay = {
  apiUrl: string;
  requests: Recorded[];
  privateKey: string;
  /** Pretends the branch was already pushed by an earlier attempt. */
  branchExists: Set<string>;
  /** While set, the code exchange answers 502 as GitHub does in an outage. */
  outage: { tokenExchange: boolean };
  close(): Promise<void>;
};

const api = (url: string, path: string) => `${url}${path}`;

export async function startGithubReplay(opts: { repoPath: string }): Promise<GithubReplay> {
  const { privateKey } = generateKeyPairSync("rsa", {
    modulusLength: 2048,
    privateKeyEncoding: { type: "pkcs1", format: "pem" },
    publicKeyEncoding: { type: "spki", format: "pem" },
  });
  const requests: Recorded[] = [];
  const branchExists = new Set<string>();
  const startedAt = new Date().toISOString();
  let url = "";
  // What GitHub knows about its users: the token a code turns into, the installations it sees.
  const users = new Map([
    [INSTALLER_CODE, { token: "ghu_16C7e42F292c6912E7710c838347Ae178B4a", installations: [INSTALLATION_ID] }],
    [OUTSIDER_CODE, { token: "ghu_9a8B7c6D5e4F3a2B1c0D9e8F7a6B5c4D3e2F", installations: [] as number[] }],
  ]);
  const usedCodes = new Set<string>();
  const outage = { tokenExchange: false };
  const installationJson = (id: number) => ({
    id,
    account: { login: "acme", id: 583231, type: "Organization" },
    repository_selection: "selected",
    access_tokens_url: api(url, `/app/installations/${id}/access_tokens`),
    repositories_url: api(url, "/installation/repositories"),
    html_url: `https://github.com/organizations/acme/settings/installations/${id}`,
    app_id: 1029384,
    app_slug: "patchbay-test",
    target_id: 583231,
    target_type: "Organization",
    permissions: { contents: "write", metadata: "read", pull_requests: "write" },
    events: ["pull_request"],
    created_at: startedAt,
    updated_at: startedAt,
    single_file_name: null,
    suspended_at: null,
  });
  const repoJson = () => ({
    id: 1296269,
    node_id: "MDEwOlJlcG9zaXRvcnkxMjk2MjY5",
    name: "checkout",
    full_name: FULL_NAME,
    private: true,
    owner: { login: "acme", id: 583231, type: "Organization", html_url: "https://github.com/acme" },
    html_url: "https://github.com/acme/checkout",
    url: api(url, "/repos/acme/checkout"),
    default_branch: "main",
    visibility: "private",
    permissions: { admin: false, maintain: false, push: true, triage: true, pull: true },
  });
  const routes: Route[] = [
    {
      method: "POST",
      path: /^\/app\/installations\/(\d+)\/access_tokens$/,
      answer: () => ({
        status: 201,
        body: {
          token: "ghs_16C7e42F292c6912E7710c838347Ae178B4a",
          expires_at: new Date(Date.now() + 3600_000).toISOString().replace(/\.\d+Z$/, "Z"),
          permissions: { contents: "write", metadata: "read", pull_requests: "write" },
          repository_selection: "selected",
        },
      }),
    },
    {
      // The web flow's code exchange. GitHub answers a refused exchange with 200 and an `error`.
      method: "POST",
      path: /^\/login\/oauth\/access_token$/,
      answer: (_m, req) => {
        if (outage.tokenExchange) {
          return {
            status: 502,
            headers: { "content-type": "text/html; charset=utf-8" },
            raw: Buffer.from("<!DOCTYPE html><html><head><title>Unicorn! · GitHub</title></head></html>"),
          };
        }
        const form = oauthForm(req.body, req.query);
        if (form.get("client_id") !== CLIENT_ID || form.get("client_secret") !== CLIENT_SECRET) {
          return { status: 200, body: oauthError("incorrect_client_credentials") };
        }
        const code = form.get("code") ?? "";
        const user = users.get(code);
        if (!user || usedCodes.has(code)) return { status: 200, body: oauthError("bad_verification_code") };
        usedCodes.add(code);
        return {
          status: 200,
          body: {
            access_token: user.token,
            expires_in: 28800,
            refresh_token: `ghr_${user.token.slice(4)}R3fr35h`,
            refresh_token_expires_in: 15897600,
            scope: "",
            token_type: "bearer",
          },
        };
      },
    },
    {
      method: "GET",
      path: /^\/user\/installations$/,
      answer: (_m, req) => {
        const token = req.authorization.replace(/^(token|bearer) /i, "");
        const user = [...users.values()].find((u) => u.token === token);
        if (!user) {
          return {
            status: 401,
            body: {
              message: "Bad credentials",
              documentation_url: "https://docs.github.com/rest",
              status: "401",
            },
          };
        }
        const perPage = Number(req.query.get("per_page") ?? 30);
        const page = Number(req.query.get("page") ?? 1);
        const all = user.installations.map((id) => installationJson(id));
        return {
          status: 200,
          body: { total_count: all.length, installations: all.slice((page - 1) * perPage, page * perPage) },
        };
      },
    },
    { method: "GET", path: /^\/repos\/acme\/checkout$/, answer: () => ({ status: 200, body: repoJson() }) },
    {
      method: "GET",
      path: /^\/installation\/repositories$/,
      answer: () => ({
        status: 200,
        body: { total_count: 1, repository_selection: "selected", repositories: [repoJson()] },
      }),
    },
    {
      method: "GET",
      path: /^\/repos\/acme\/checkout\/git\/ref\/heads\/(.+)$/,
      answer: (m) => {
        const branch = decodeURIComponent(m[1] ?? "");
        if (branch === "main") return { status: 200, body: refJson(url, "main", BASE_SHA) };
        if (branchExists.has(branch)) return { status: 200, body: refJson(url, branch, COMMIT_SHA) };
        return notFound("git/refs#get-a-reference");
      },
    },
    {
      method: "GET",
      path: /^\/repos\/acme\/checkout\/tarball\/([0-9a-f]{40})$/,
      // GitHub answers with a redirect to codeload; Octokit's fetch follows it.
      answer: (m) => ({
        status: 302,
        headers: { location: api(url, `/_codeload/acme/checkout/legacy.tar.gz/${m[1]}?token=AABBCC`) },
      }),
    },
    {
      method: "GET",
      path: /^\/_codeload\/acme\/checkout\/legacy\.tar\.gz\/([0-9a-f]{40})$/,
      answer: () => ({
        status: 200,
        headers: {
          "content-type": "application/x-gzip",
          "content-disposition": "attachment; filename=acme-checkout-7638417.tar.gz",
        },
        raw: execFileSync("git", ["archive", "--format=tar.gz", "--prefix=acme-checkout-7638417/", "main"], {
          cwd: opts.repoPath,
        }),
      }),
    },
    {
      method: "GET",
      path: /^\/repos\/acme\/checkout\/git\/commits\/([0-9a-f]{40})$/,
      answer: (m) =>
        m[1] === BASE_SHA
          ? { status: 200, body: commitJson(url, BASE_SHA, BASE_TREE, []) }
          : m[1] === COMMIT_SHA
            ? { status: 200, body: commitJson(url, COMMIT_SHA, TREE_SHA, [BASE_SHA]) }
            : notFound("git/commits#get-a-commit-object"),
    },
    {
      method: "GET",
      path: /^\/repos\/acme\/checkout\/git\/trees\/([0-9a-f]{40})$/,
      answer: () => ({
        status: 200,
        body: {
          sha: BASE_TREE,
          url: api(url, `/repos/acme/checkout/git/trees/${BASE_TREE}`),
          tree: [
            {
              path: "package.json",
              mode: "100644",
              type: "blob",
              sha: "a1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
              size: 120,
            },
            { path: "src", mode: "040000", type: "tree", sha: "b1b2c3d4e5f60718293a4b5c6d7e8f9012345678" },
            {
              path: "src/order-id.js",
              mode: "100644",
              type: "blob",
              sha: "c1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
              size: 240,
            },
            {
              path: "src/orders.js",
              mode: "100644",
              type: "blob",
              sha: "d1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
              size: 260,
            },
            { path: "test", mode: "040000", type: "tree", sha: "e1b2c3d4e5f60718293a4b5c6d7e8f9012345678" },
            {
              path: "test/order-id.test.js",
              mode: "100644",
              type: "blob",
              sha: "f1b2c3d4e5f60718293a4b5c6d7e8f9012345678",
              size: 420,
            },
          ],
          truncated: false,
        },
      }),
    },
    {
      method: "POST",
      path: /^\/repos\/acme\/checkout\/git\/blobs$/,
      answer: () => ({
        status: 201,
        body: { url: api(url, `/repos/acme/checkout/git/blobs/${BLOB_SHA}`), sha: BLOB_SHA },
      }),
    },
    {
      method: "POST",
      path: /^\/repos\/acme\/checkout\/git\/trees$/,
      answer: () => ({
        status: 201,
        body: {
          sha: TREE_SHA,
          url: api(url, `/repos/acme/checkout/git/trees/${TREE_SHA}`),
          tree: [],
          truncated: false,
        },
      }),
    },
    {
      method: "POST",
      path: /^\/repos\/acme\/checkout\/git\/commits$/,
      answer: () => ({ status: 201, body: commitJson(url, COMMIT_SHA, TREE_SHA, [BASE_SHA]) }),
    },
    {
      method: "POST",
      path: /^\/repos\/acme\/checkout\/git\/refs$/,
      answer: (_m, req) => {
        const ref = String((req.body as { ref?: string }).ref ?? "");
        branchExists.add(ref.replace(/^refs\/heads\//, ""));
        return { status: 201, body: refJson(url, ref.replace(/^refs\/heads\//, ""), COMMIT_SHA) };
      },
    },
    {
      method: "GET",
      path: /^\/repos\/acme\/checkout\/pulls$/,
      answer: () => ({ status: 200, body: [] }),
    },
    {
      method: "POST",
      path: /^\/repos\/acme\/checkout\/pulls$/,
      answer: (_m, req) => {
        const b = req.body as { title: string; body: string; head: string; base: string; draft: boolean };
        return {
          status: 201,
          body: {
            url: api(url, `/repos/acme/checkout/pulls/${PR_NUMBER}`),
            id: 1_947_213_311,
            node_id: "PR_kwDOABCDEF5z8d0v",
            html_url: `https://github.com/acme/checkout/pull/${PR_NUMBER}`,
            number: PR_NUMBER,
            state: "open",
            locked: false,
            title: b.title,
            body: b.body,
            draft: b.draft,
            user: { login: "patchbay-test[bot]", type: "Bot" },
            head: { label: `acme:${b.head}`, ref: b.head, sha: COMMIT_SHA },
            base: { label: `acme:${b.base}`, ref: b.base, sha: BASE_SHA },
            merged: false,
            mergeable: null,
            merge_commit_sha: null,
            created_at: new Date().toISOString(),
          },
        };
      },
    },
  ];

  const server: Server = createServer(async (req, res) => {
    const body = await readBody(req);
    const target = new URL(req.url ?? "/", "http://replay");
    // GitHub decodes escaped path parameters (Octokit sends `heads%2Fmain` for `{ref}`).
    const pathname = decodeURIComponent(target.pathname);
    let parsed: unknown = body;
    try {
      parsed = body ? JSON.parse(body) : undefined;
    } catch {
      // leave as text
    }
    requests.push({
      method: req.method ?? "",
      path: pathname,
      query: target.search,
      body: parsed,
      auth: String(req.headers.authorization ?? "").split(" ")[0] ?? "",
    });
    for (const route of routes) {
      const m = route.method === req.method ? route.path.exec(pathname) : null;
      if (!m) continue;
      const answer = route.answer(m, {
        body: parsed,
        query: target.searchParams,
        authorization: String(req.headers.authorization ?? ""),
      });
      res.writeHead(answer.status, {
        "content-type": "application/json; charset=utf-8",
        "x-github-api-version-selected": "2022-11-28",
        ...answer.headers,
      });
      res.end(answer.raw ?? (answer.body === undefined ? "" : JSON.stringify(answer.body)));
      return;
    }
    res.writeHead(404, { "content-type": "application/json; charset=utf-8" });
    res.end(
      JSON.stringify({
        message: "Not Found",
        documentation_url: "https://docs.github.com/rest",
        status: "404",
      }),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  return {
    apiUrl: url,
    requests,
    privateKey,
    branchExists,
    outage,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

/** A recorded `pull_request` webhook delivery (action `closed`), signed like GitHub signs it. */
export function pullRequestClosed(opts: { branch: string; merged: boolean; secret?: string }) {
  const body = JSON.stringify({
    action: "closed",
    number: PR_NUMBER,
    pull_request: {
      url: `https://api.github.com/repos/acme/checkout/pulls/${PR_NUMBER}`,
      html_url: `https://github.com/acme/checkout/pull/${PR_NUMBER}`,
      number: PR_NUMBER,
      state: "closed",
      draft: false,
      merged: opts.merged,
      merged_at: opts.merged ? new Date().toISOString() : null,
      merged_by: opts.merged ? { login: "octocat", type: "User" } : null,
      head: { label: `acme:${opts.branch}`, ref: opts.branch, sha: COMMIT_SHA },
      base: { label: "acme:main", ref: "main", sha: BASE_SHA },
    },
    repository: {
      id: 1296269,
      full_name: FULL_NAME,
      name: "checkout",
      private: true,
      owner: { login: "acme" },
    },
    organization: { login: "acme", id: 583231 },
    sender: { login: "octocat", id: 1, type: "User" },
    installation: { id: INSTALLATION_ID, node_id: "MDIzOkludGVncmF0aW9uSW5zdGFsbGF0aW9uNDEyMzQ1Njc=" },
  });
  const signature = `sha256=${createHmac("sha256", opts.secret ?? WEBHOOK_SECRET)
    .update(body)
    .digest("hex")}`;
  return {
    body,
    headers: {
      "content-type": "application/json",
      "x-github-event": "pull_request",
      "x-github-delivery": "72d3162e-cc78-11e3-81ab-4c9367dc0958",
      "x-hub-signature-256": signature,
      "user-agent": "GitHub-Hookshot/044aadd",
    },
  };
}

function refJson(url: string, branch: string, sha: string) {
  return {
    ref: `refs/heads/${branch}`,
    node_id: "REF_kwDOABCDEFq0cmVmcy9oZWFkcy9tYWlu",
    url: api(url, `/repos/acme/checkout/git/refs/heads/${branch}`),
    object: { sha, type: "commit", url: api(url, `/repos/acme/checkout/git/commits/${sha}`) },
  };
}

function commitJson(url: string, sha: string, tree: string, parents: string[]) {
  return {
    sha,
    node_id: "C_kwDOABCDEFoAKDcwNDRhOGEwMzJlODViNmFiNjExMDMzYjJhYzhhZjdjZTg1ODA1YjI",
    url: api(url, `/repos/acme/checkout/git/commits/${sha}`),
    html_url: `https://github.com/acme/checkout/commit/${sha}`,
    author: {
      name: "patchbay-test[bot]",
      email: "bot@users.noreply.github.com",
      date: "2026-11-22T04:00:00Z",
    },
    committer: { name: "GitHub", email: "noreply@github.com", date: "2026-11-22T04:00:00Z" },
    tree: { sha: tree, url: api(url, `/repos/acme/checkout/git/trees/${tree}`) },
    message: "commit",
    parents: parents.map((p) => ({
      sha: p,
      url: api(url, `/repos/acme/checkout/git/commits/${p}`),
      html_url: `https://github.com/acme/checkout/commit/${p}`,
    })),
    verification: { verified: false, reason: "unsigned", signature: null, payload: null, verified_at: null },
  };
}

/** The access-token request's parameters: a JSON body (Octokit), a form body, or the query. */
function oauthForm(body: unknown, query: URLSearchParams): URLSearchParams {
  if (body && typeof body === "object") {
    return new URLSearchParams(
      Object.entries(body as Record<string, unknown>).map(([k, v]) => [k, String(v)]),
    );
  }
  return typeof body === "string" && body ? new URLSearchParams(body) : query;
}

const oauthErrors = {
  bad_verification_code: ["The code passed is incorrect or expired.", "bad-verification-code"],
  incorrect_client_credentials: [
    "The client_id and/or client_secret passed are incorrect.",
    "incorrect-client-credentials",
  ],
} as const;

function oauthError(error: keyof typeof oauthErrors) {
  const [description, anchor] = oauthErrors[error];
  return {
    error,
    error_description: description,
    error_uri: `https://docs.github.com/apps/managing-oauth-apps/troubleshooting-oauth-app-access-token-request-errors/#${anchor}`,
  };
}

function notFound(doc: string) {
  return {
    status: 404,
    body: { message: "Not Found", documentation_url: `https://docs.github.com/rest/${doc}`, status: "404" },
  };
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => resolve(Buffer.concat(chunks).toString("utf8")));
  });
}

/** The App's settings pointed at a replay: the ids and secrets it knows. */
export function replaySettings(
  replay: Pick<GithubReplay, "apiUrl" | "privateKey">,
  overrides: Partial<GithubAppSettings> = {},
): GithubAppSettings {
  return {
    appId: "1029384",
    privateKey: replay.privateKey,
    webhookSecret: WEBHOOK_SECRET,
    slug: "patchbay-test",
    clientId: CLIENT_ID,
    clientSecret: CLIENT_SECRET,
    apiUrl: replay.apiUrl,
    webUrl: "https://github.com",
    ...overrides,
  };
}
