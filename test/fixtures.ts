import { Writable } from "node:stream";
import { test as base } from "vitest";
import { createApp } from "../src/app.ts";
import { loadConfig } from "../src/config.ts";
import type { Deps } from "../src/deps.ts";
import { type BootstrapResult, bootstrapOrganization } from "../src/features/organizations/bootstrap-organization.ts";
import { generateKek, parseKeyring } from "../src/features/vault/keyring.ts";
import { createLogger } from "../src/logger.ts";
import { createTestDatabase } from "./database.ts";
import { type Client, client } from "./http.ts";

export type Tenant = BootstrapResult & { api: Client };

/** Every log line the app wrote during the file, for "no secret in logs" assertions. */
export type LogCapture = { chunks: string[]; text(): string };

type FileFixtures = {
  logs: LogCapture;
  deps: Deps;
  app: ReturnType<typeof createApp>;
};

type TestFixtures = {
  /** A fresh organisation (owner, `production` environment, all-permission owner key). */
  owner: Tenant;
  /** A second, unrelated organisation: its resources must be invisible to `owner` and back. */
  stranger: Tenant;
};

export async function newTenant(deps: Deps, app: FileFixtures["app"], email?: string): Promise<Tenant> {
  const result = await bootstrapOrganization({ db: deps.db, input: { email } });
  return { ...result, api: client(app, result.apiKey) };
}

export const test = base.extend<TestFixtures, FileFixtures>({
  logs: [
    // biome-ignore lint/correctness/noEmptyPattern: vitest fixtures take their deps by destructuring
    async ({}, use) => {
      const chunks: string[] = [];
      await use({ chunks, text: () => chunks.join("") });
    },
    { scope: "file" },
  ],
  deps: [
    async ({ logs }, use) => {
      const database = await createTestDatabase();
      const destination = new Writable({
        write(chunk, _enc, cb) {
          logs.chunks.push(String(chunk));
          cb();
        },
      });
      const config = loadConfig({ NODE_ENV: "test", PATCHBAY_DATA_DIR: "/nonexistent" });
      const deps: Deps = {
        config,
        db: database.handle.db,
        database: database.handle,
        logger: createLogger({ level: "debug", destination }),
        keyring: parseKeyring(generateKek(1)),
        clock: () => new Date(),
      };
      await use(deps);
      await database.drop();
    },
    { scope: "file" },
  ],
  app: [async ({ deps }, use) => use(createApp(deps)), { scope: "file" }],
  owner: async ({ deps, app }, use) => use(await newTenant(deps, app)),
  stranger: async ({ deps, app }, use) => use(await newTenant(deps, app)),
});

export { expect, describe } from "vitest";
