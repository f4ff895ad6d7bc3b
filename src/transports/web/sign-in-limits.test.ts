import { describe, expect, newTenant, test } from "../../../test/fixtures.ts";
import { type ClientNetwork, givePassword, TEST_PASSWORD, webClient } from "../../../test/web.ts";
import { createApp } from "../../app.ts";
import type { Deps } from "../../deps.ts";
import {
  SIGN_IN_MAX_ATTEMPTS_PER_ADDRESS,
  SIGN_IN_MAX_ATTEMPTS_PER_EMAIL,
  SIGN_IN_PAIR_FIRST_DELAY_MS,
  SIGN_IN_PAIR_FREE_ATTEMPTS,
  SIGN_IN_PAIR_MEMORY_MS,
  SIGN_IN_WINDOW_MS,
} from "../../features/web-sessions/session-policy.ts";

const WRONG = "not the password at all";

/** An app on the file's database whose clock the test moves, optionally behind trusted proxies. */
function clockedApp(deps: Deps, trustedProxies: string[] = []) {
  let now = new Date();
  const app = createApp({ ...deps, clock: () => now, config: { ...deps.config, trustedProxies } });
  return {
    app,
    advance(ms: number) {
      now = new Date(now.getTime() + ms);
    },
  };
}

/** One sign-in from its own browser (fresh CSRF token), as a client at `network`. */
async function attempt(
  app: Parameters<typeof webClient>[0],
  email: string,
  password: string,
  network: ClientNetwork,
) {
  const browser = webClient(app, "http://localhost", network);
  return browser.signIn(email, password);
}

const statuses = (responses: Response[]) => responses.map((r) => r.status);
const count = (list: number[], status: number) => list.filter((s) => s === status).length;
const retryAfter = (res: Response) => Number(res.headers.get("retry-after"));

/** Password checks are logged once each when they fail: the count of argon2 runs that said no. */
const failedChecks = (text: string) => text.split('"msg":"web sign-in failed"').length - 1;

describe("sign-in limits", () => {
  test("40 parallel wrong passwords across two instances: only the pair's free attempts reach the password check", async ({
    deps,
    logs,
  }) => {
    await newTenant(deps, createApp(deps), "par@example.com");
    await givePassword(deps, "par@example.com");
    const [first, second] = [createApp(deps), createApp(deps)];
    const network = { peer: "198.51.100.1" };
    // Every browser holds its form first, so the 40 posts go out together.
    const browsers = await Promise.all(
      Array.from({ length: 40 }, async (_, i) => {
        const browser = webClient(i % 2 ? second : first, "http://localhost", network);
        await browser.page("/login");
        return browser;
      }),
    );
    const before = failedChecks(logs.text());
    const results = statuses(
      await Promise.all(
        browsers.map((browser) => browser.post("/login", { email: "par@example.com", password: WRONG })),
      ),
    );
    expect(count(results, 401)).toBe(SIGN_IN_PAIR_FREE_ATTEMPTS);
    expect(count(results, 429)).toBe(40 - SIGN_IN_PAIR_FREE_ATTEMPTS);
    expect(failedChecks(logs.text()) - before).toBe(SIGN_IN_PAIR_FREE_ATTEMPTS);
  });

  test("a stranger who exhausts his own attempts does not lock the owner out", async ({ deps }) => {
    await newTenant(deps, createApp(deps), "owner1@example.com");
    await givePassword(deps, "owner1@example.com");
    const { app } = clockedApp(deps);
    const attacker = { peer: "203.0.113.66" };
    for (let i = 0; i < SIGN_IN_PAIR_FREE_ATTEMPTS; i++) {
      expect((await attempt(app, "owner1@example.com", `${WRONG} ${i}`, attacker)).status).toBe(401);
    }
    // Refused before the password is looked at: even the right one gets nowhere from here.
    expect((await attempt(app, "owner1@example.com", TEST_PASSWORD, attacker)).status).toBe(429);
    const owner = await attempt(app, "owner1@example.com", TEST_PASSWORD, { peer: "198.51.100.20" });
    expect(owner.status).toBe(303);
    // The owner's success clears the owner's own pair, not the stranger's.
    expect((await attempt(app, "owner1@example.com", WRONG, attacker)).status).toBe(429);
  });

  test("each attempt past a pair's free ones waits longer: 429 with a growing Retry-After", async ({
    deps,
  }) => {
    await newTenant(deps, createApp(deps), "slow@example.com");
    await givePassword(deps, "slow@example.com");
    const clock = clockedApp(deps);
    const client = { peer: "198.51.100.30" };
    const guess = (password = WRONG) => attempt(clock.app, "slow@example.com", password, client);
    for (let i = 0; i < SIGN_IN_PAIR_FREE_ATTEMPTS; i++) expect((await guess()).status).toBe(401);

    const waits: number[] = [];
    for (let step = 0; step < 3; step++) {
      const refused = await guess();
      expect(refused.status).toBe(429);
      const wait = retryAfter(refused);
      waits.push(wait);
      // Knocking again while refused neither counts nor pushes the wait out.
      expect(retryAfter(await guess())).toBe(wait);
      clock.advance(wait * 1000 - 1000);
      expect((await guess()).status).toBe(429);
      clock.advance(1000);
      expect((await guess()).status).toBe(401);
    }
    const firstWait = SIGN_IN_PAIR_FIRST_DELAY_MS / 1000;
    expect(waits).toEqual([firstWait, 2 * firstWait, 4 * firstWait]);

    const page = await guess();
    expect(page.status).toBe(429);
    expect(await page.text()).toContain(
      `Too many failed sign-in attempts. Try again in ${(8 * firstWait) / 60} minutes.`,
    );
    // The right password after the wait clears the pair: the next mistake is free again.
    clock.advance(retryAfter(page) * 1000);
    expect((await guess(TEST_PASSWORD)).status).toBe(303);
    expect((await guess()).status).toBe(401);
    expect((await guess()).status).toBe(401);
  });

  test("a pair is forgotten an hour after its last attempt", async ({ deps }) => {
    const clock = clockedApp(deps);
    const client = { peer: "198.51.100.31" };
    const guess = () => attempt(clock.app, "forget@example.com", WRONG, client);
    for (let i = 0; i < SIGN_IN_PAIR_FREE_ATTEMPTS; i++) expect((await guess()).status).toBe(401);
    expect((await guess()).status).toBe(429);
    clock.advance(SIGN_IN_PAIR_MEMORY_MS);
    for (let i = 0; i < SIGN_IN_PAIR_FREE_ATTEMPTS; i++) expect((await guess()).status).toBe(401);
  });

  test("the per-email ceiling holds across many addresses, then lifts with its window", async ({
    deps,
    logs,
  }) => {
    await newTenant(deps, createApp(deps), "target@example.com");
    await givePassword(deps, "target@example.com");
    const clock = clockedApp(deps);
    const addresses = Math.ceil(SIGN_IN_MAX_ATTEMPTS_PER_EMAIL / SIGN_IN_PAIR_FREE_ATTEMPTS) + 4;
    const browsers = await Promise.all(
      Array.from({ length: addresses * SIGN_IN_PAIR_FREE_ATTEMPTS }, async (_, i) => {
        const peer = `192.0.2.${Math.floor(i / SIGN_IN_PAIR_FREE_ATTEMPTS) + 1}`;
        const browser = webClient(clock.app, "http://localhost", { peer });
        await browser.page("/login");
        return browser;
      }),
    );
    const before = failedChecks(logs.text());
    const results = statuses(
      await Promise.all(
        browsers.map((browser) => browser.post("/login", { email: "target@example.com", password: WRONG })),
      ),
    );
    expect(count(results, 401)).toBe(SIGN_IN_MAX_ATTEMPTS_PER_EMAIL);
    expect(count(results, 429)).toBe(browsers.length - SIGN_IN_MAX_ATTEMPTS_PER_EMAIL);
    expect(failedChecks(logs.text()) - before).toBe(SIGN_IN_MAX_ATTEMPTS_PER_EMAIL);
    // A distributed attack this size stops everyone, the owner too, until the window ends.
    const owner = { peer: "198.51.100.40" };
    const locked = await attempt(clock.app, "target@example.com", TEST_PASSWORD, owner);
    expect(locked.status).toBe(429);
    expect(retryAfter(locked)).toBe(SIGN_IN_WINDOW_MS / 1000);
    clock.advance(SIGN_IN_WINDOW_MS);
    expect((await attempt(clock.app, "target@example.com", TEST_PASSWORD, owner)).status).toBe(303);
  });

  test("the per-address limit counts failures across emails; a success of one's own resets nothing", async ({
    deps,
  }) => {
    await newTenant(deps, createApp(deps), "mallory@example.com");
    await givePassword(deps, "mallory@example.com");
    const { app } = clockedApp(deps);
    const mallory = { peer: "203.0.113.77" };
    const emails = Math.ceil(SIGN_IN_MAX_ATTEMPTS_PER_ADDRESS / SIGN_IN_PAIR_FREE_ATTEMPTS);
    const guesses = Array.from({ length: SIGN_IN_MAX_ATTEMPTS_PER_ADDRESS - 1 }, (_, i) =>
      attempt(app, `victim${i % emails}@example.com`, WRONG, mallory),
    );
    expect(count(statuses(await Promise.all(guesses)), 401)).toBe(SIGN_IN_MAX_ATTEMPTS_PER_ADDRESS - 1);
    // Signing in to his own account gives back only that one attempt.
    expect((await attempt(app, "mallory@example.com", TEST_PASSWORD, mallory)).status).toBe(303);
    expect((await attempt(app, "fresh1@example.com", WRONG, mallory)).status).toBe(401);
    const refused = await attempt(app, "fresh2@example.com", WRONG, mallory);
    expect(refused.status).toBe(429);
    expect(retryAfter(refused)).toBe(SIGN_IN_WINDOW_MS / 1000);
    // Another address is not affected.
    expect((await attempt(app, "fresh2@example.com", WRONG, { peer: "203.0.113.78" })).status).toBe(401);
  });

  test("an IPv6 client is limited as its /64", async ({ deps }) => {
    await newTenant(deps, createApp(deps), "six@example.com");
    await givePassword(deps, "six@example.com");
    const { app } = clockedApp(deps);
    for (let i = 0; i < SIGN_IN_PAIR_FREE_ATTEMPTS; i++) {
      const status = (await attempt(app, "six@example.com", WRONG, { peer: `2001:db8:1:2::${i + 1}` }))
        .status;
      expect(status).toBe(401);
    }
    expect((await attempt(app, "six@example.com", WRONG, { peer: "2001:db8:1:2:ffff::1" })).status).toBe(429);
    expect((await attempt(app, "six@example.com", TEST_PASSWORD, { peer: "2001:db8:1:3::1" })).status).toBe(
      303,
    );
  });
});

describe("client address behind proxies", () => {
  test("X-Forwarded-For from a trusted proxy tells clients apart; the owner behind it still signs in", async ({
    deps,
  }) => {
    await newTenant(deps, createApp(deps), "lb@example.com");
    await givePassword(deps, "lb@example.com");
    const { app } = clockedApp(deps, ["10.0.0.0/8"]);
    const viaProxy = (client: string, forwarded = client) => ({
      peer: "10.1.2.3",
      headers: { "x-forwarded-for": forwarded },
    });
    for (let i = 0; i < SIGN_IN_PAIR_FREE_ATTEMPTS; i++) {
      expect((await attempt(app, "lb@example.com", WRONG, viaProxy("198.51.100.77"))).status).toBe(401);
    }
    expect((await attempt(app, "lb@example.com", WRONG, viaProxy("198.51.100.77"))).status).toBe(429);
    // What the client wrote left of the proxy's entry is ignored: rotating it changes nothing.
    const spoofed = viaProxy("198.51.100.77", "192.0.2.99, 198.51.100.77");
    expect((await attempt(app, "lb@example.com", WRONG, spoofed)).status).toBe(429);
    // Another client behind the same load balancer is someone else.
    expect((await attempt(app, "lb@example.com", TEST_PASSWORD, viaProxy("198.51.100.78"))).status).toBe(303);
  });

  test("X-Forwarded-For from an untrusted peer is ignored", async ({ deps }) => {
    await newTenant(deps, createApp(deps), "spoof@example.com");
    await givePassword(deps, "spoof@example.com");
    const { app } = clockedApp(deps, ["10.0.0.0/8"]);
    const spoofing = (i: number) => ({
      peer: "203.0.113.50",
      headers: { "x-forwarded-for": `198.51.100.${i}` },
    });
    for (let i = 0; i < SIGN_IN_PAIR_FREE_ATTEMPTS; i++) {
      expect((await attempt(app, "spoof@example.com", WRONG, spoofing(i))).status).toBe(401);
    }
    expect((await attempt(app, "spoof@example.com", TEST_PASSWORD, spoofing(200))).status).toBe(429);
    // With no trusted proxies at all (the default), a trusted-looking peer's header is ignored too.
    const plain = clockedApp(deps);
    const internal = (i: number) => ({ peer: "10.9.9.9", headers: { "x-forwarded-for": `198.51.100.${i}` } });
    for (let i = 0; i < SIGN_IN_PAIR_FREE_ATTEMPTS; i++) {
      expect((await attempt(plain.app, "spoof@example.com", WRONG, internal(i))).status).toBe(401);
    }
    expect((await attempt(plain.app, "spoof@example.com", WRONG, internal(99))).status).toBe(429);
  });
});
