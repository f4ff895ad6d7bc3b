// Test support for the browser tests: a real patchbay on a loopback port (this file's deps,
// in process) and a real Chromium (the Debian package, driven by playwright-core; never a
// downloaded browser).
import { existsSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { join } from "node:path";
import { serve } from "@hono/node-server";
import { type Browser, chromium, type Locator, type Page } from "playwright-core";
import { createApp } from "../../src/app.ts";
import type { Deps } from "../../src/deps.ts";
import { test as base } from "../fixtures.ts";

export const chromiumPath = process.env.PATCHBAY_CHROMIUM ?? "/usr/bin/chromium";
export const haveChromium = existsSync(chromiumPath);

export type WebUi = {
  /** http://127.0.0.1:<port>, also the app's configured base URL (invitation links point here). */
  baseUrl: string;
  browser: Browser;
  /** A page in a fresh browser context: its own cookies, like another person's browser. */
  newPage(): Promise<Page>;
  close(): Promise<void>;
};

/** The suite's fixtures plus `web`: the file's app served on loopback, driven by one Chromium. */
export const webTest = base.extend<{ web: WebUi }>({
  web: [
    async ({ deps }, use) => {
      const web = await startWebUi(deps);
      await use(web);
      await web.close();
    },
    { scope: "file" },
  ],
});

export async function startWebUi(deps: Deps): Promise<WebUi> {
  let app: ReturnType<typeof createApp> | undefined;
  const server = await new Promise<Server>((resolve) => {
    const s = serve(
      {
        fetch: (req, env) => (app ? app.fetch(req, env) : new Response("starting", { status: 503 })),
        port: 0,
        hostname: "127.0.0.1",
      },
      () => resolve(s as Server),
    );
  });
  const baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  app = createApp({ ...deps, config: { ...deps.config, baseUrl } });
  const browser = await chromium.launch({
    executablePath: chromiumPath,
    args: ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking"],
  });
  return {
    baseUrl,
    browser,
    async newPage() {
      const context = await browser.newContext({ baseURL: baseUrl, viewport: { width: 1200, height: 860 } });
      context.setDefaultTimeout(15_000);
      return context.newPage();
    },
    async close() {
      await browser.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

/** Signs in through the form, as a person would. */
export async function signIn(page: Page, email: string, password: string): Promise<void> {
  await page.goto("/login");
  await page.getByLabel("Email").fill(email);
  await page.getByLabel("Password").fill(password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.waitForURL((url) => !url.pathname.startsWith("/login"));
}

/**
 * Screenshots for docs/screenshots/, written only when PATCHBAY_SCREENSHOTS names the folder
 * (`npm run screenshots`): an ordinary test run leaves the working tree alone.
 */
export async function screenshot(page: Page, name: string): Promise<void> {
  const dir = process.env.PATCHBAY_SCREENSHOTS;
  if (!dir) return;
  await mkdir(dir, { recursive: true });
  await page.screenshot({ path: join(dir, `${name}.png`), fullPage: true });
}

/** A screenshot of one part of a page (a chart), for docs/screenshots/; small files. */
export async function screenshotOf(locator: Locator, name: string): Promise<void> {
  const dir = process.env.PATCHBAY_SCREENSHOTS;
  if (!dir) return;
  await mkdir(dir, { recursive: true });
  await locator.screenshot({ path: join(dir, `${name}.png`) });
}
