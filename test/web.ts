import { eq } from "drizzle-orm";
import type { Deps } from "../src/deps.ts";
import { setUserPassword } from "../src/features/web-sessions/set-password.ts";
import { users } from "../src/platform/db/schema/users.ts";

type AppLike = {
  request(input: string, init?: RequestInit, env?: object): Response | Promise<Response>;
};

/** Where a client's requests come from; in process there is no socket unless a test gives one. */
export type ClientNetwork = {
  /** The socket peer's address, as @hono/node-server's getConnInfo reads it. Unset: "unknown". */
  peer?: string;
  /** Headers sent with every request, e.g. X-Forwarded-For. */
  headers?: Record<string, string>;
};

export type FormFields = Record<string, string | string[]>;

export type PostOptions = {
  /** Origin header to send; null sends none. Default: the app's own origin. */
  origin?: string | null;
  /** The `_csrf` field; default the token from the last page this client loaded; false sends none. */
  csrf?: string | false;
  /** Raw content type and body instead of a form. */
  raw?: { type: string; body: string };
};

/**
 * A cookie-keeping, redirect-inspecting browser stand-in for the web UI, in process
 * (`app.request`): it posts forms as a browser does (Origin, urlencoded body, the page's
 * `_csrf` token) so tests can also leave each part out.
 */
export type WebClient = {
  readonly origin: string;
  cookies: Map<string, string>;
  /** The `_csrf` token of the last HTML page loaded. */
  token: string | undefined;
  get(path: string): Promise<Response>;
  post(path: string, fields?: FormFields, opts?: PostOptions): Promise<Response>;
  /** GET a page and return its HTML (asserting the status). */
  page(path: string, status?: number): Promise<string>;
  signIn(email: string, password: string): Promise<Response>;
};

export const TEST_PASSWORD = "correct horse battery staple";

export function webClient(app: AppLike, origin = "http://localhost", network: ClientNetwork = {}): WebClient {
  const cookies = new Map<string, string>();
  const env = network.peer ? { incoming: { socket: { remoteAddress: network.peer } } } : undefined;
  const client: WebClient = {
    origin,
    cookies,
    token: undefined,
    async get(path) {
      const res = await app.request(
        `${origin}${path}`,
        { headers: { ...network.headers, ...cookieHeader() } },
        env,
      );
      return remember(res);
    },
    async post(path, fields = {}, opts = {}) {
      const headers: Record<string, string> = { ...network.headers, ...cookieHeader() };
      const sendOrigin = opts.origin === undefined ? origin : opts.origin;
      if (sendOrigin !== null) headers.origin = sendOrigin;
      let body: string;
      if (opts.raw) {
        headers["content-type"] = opts.raw.type;
        body = opts.raw.body;
      } else {
        headers["content-type"] = "application/x-www-form-urlencoded";
        const params = new URLSearchParams();
        const token = opts.csrf === undefined ? client.token : opts.csrf;
        if (token) params.append("_csrf", token);
        for (const [k, v] of Object.entries(fields)) for (const one of [v].flat()) params.append(k, one);
        body = params.toString();
      }
      const res = await app.request(`${origin}${path}`, { method: "POST", headers, body }, env);
      return remember(res);
    },
    async page(path, status = 200) {
      const res = await client.get(path);
      const text = await res.text();
      if (res.status !== status)
        throw new Error(`GET ${path}: expected ${status}, got ${res.status}\n${text}`);
      client.token = csrfOf(text) ?? client.token;
      return text;
    },
    async signIn(email, password) {
      await client.page("/login");
      return client.post("/login", { email, password });
    },
  };

  function cookieHeader(): Record<string, string> {
    if (cookies.size === 0) return {};
    return { cookie: [...cookies].map(([k, v]) => `${k}=${v}`).join("; ") };
  }

  async function remember(res: Response): Promise<Response> {
    for (const line of res.headers.getSetCookie()) {
      const [pair = "", ...attrs] = line.split(";");
      const eq = pair.indexOf("=");
      const name = pair.slice(0, eq).trim();
      const value = pair.slice(eq + 1).trim();
      const expired = attrs.some(
        (a) => /^\s*max-age=0\s*$/i.test(a) || /^\s*expires=thu, 01 jan 1970/i.test(a),
      );
      if (expired || value === "") cookies.delete(name);
      else cookies.set(name, value);
    }
    if (res.headers.get("content-type")?.startsWith("text/html")) {
      const text = await res.clone().text();
      client.token = csrfOf(text) ?? client.token;
    }
    return res;
  }
  return client;
}

export const csrfOf = (html: string): string | undefined => /name="_csrf" value="([^"]+)"/.exec(html)?.[1];

/** Gives a (bootstrapped) user the test password. */
export async function givePassword(deps: Deps, email: string, password = TEST_PASSWORD): Promise<void> {
  await setUserPassword({ db: deps.db, now: deps.clock(), input: { email, password } });
}

/** A browser stand-in signed in as the user (given the test password first). */
export async function signedInBrowser(app: AppLike, deps: Deps, userId: string): Promise<WebClient> {
  const [user] = await deps.db.select({ email: users.email }).from(users).where(eq(users.id, userId));
  if (!user) throw new Error(`no user ${userId}`);
  await givePassword(deps, user.email);
  const browser = webClient(app, deps.config.baseUrl);
  const res = await browser.signIn(user.email, TEST_PASSWORD);
  if (res.status !== 303) throw new Error(`sign-in failed: ${res.status}`);
  return browser;
}
