import { join } from "node:path";
import type { Config } from "./config.ts";
import type { Deps } from "./deps.ts";
import { createAuthCache } from "./features/api-keys/auth-cache.ts";
import { listenForAuthChanges } from "./features/api-keys/auth-changes.ts";
import {
  type BootstrapResult,
  bootstrapOrganization,
} from "./features/organizations/bootstrap-organization.ts";
import { createLanguageModel } from "./features/tasks/model-config.ts";
import { jobQueues } from "./features/tasks/task-queue.ts";
import { setUserPassword } from "./features/web-sessions/set-password.ts";
import { randomToken } from "./ids.ts";
import { createsDatabase, type DatabaseHandle, openDatabase } from "./platform/db/client.ts";
import { migrateDatabase } from "./platform/db/migrate.ts";
import type { PgliteOpening } from "./platform/db/pglite-open.ts";
import { organizations } from "./platform/db/schema/organizations.ts";
import { createEgress } from "./platform/egress/egress-fetch.ts";
import type { Logger } from "./platform/logging/logger.ts";
import { startPayments } from "./platform/payments/payments.ts";
import { createJobs } from "./platform/queue/queue.ts";
import { loadKeyring } from "./platform/vault/load-keyring.ts";
import { withServices } from "./services.ts";

/** Opens and migrates the configured database under the start-up lock. */
export async function openMigratedDatabase(config: Config): Promise<DatabaseHandle> {
  return (await openAndMigrate(config, async () => undefined)).database;
}

/** Opens the database, then migrates it and runs `then` under the start-up lock; closes it on failure. */
async function openAndMigrate<T>(
  config: Config,
  then: (database: DatabaseHandle) => Promise<T>,
  opening?: PgliteOpening,
): Promise<{ database: DatabaseHandle; result: T }> {
  const database = await openDatabase(config.database, opening);
  try {
    const result = await database.withStartupLock(async () => {
      await migrateDatabase(database);
      return then(database);
    });
    return { database, result };
  } catch (error) {
    await database.close();
    throw error;
  }
}

/** The first-run demo tenant, with the owner's sign-in for the web UI (printed once). */
export type DemoTenant = BootstrapResult & { email: string; password: string };

const DEMO_EMAIL = "owner@example.com";

/** 100 random bits in five groups of four: easy to copy from a terminal, infeasible to guess. */
const demoPassword = (): string => (randomToken(13).slice(0, 20).match(/.{4}/g) ?? []).join("-");

/** `opening`: PGlite already started for `config.database` (`prepareToServe`). */
export async function buildDeps(
  config: Config,
  logger: Logger,
  opening?: PgliteOpening,
): Promise<Deps & { demo?: DemoTenant }> {
  const { keyring } = loadKeyring(config);
  if (opening?.creates ?? createsDatabase(config.database)) {
    logger.info({ dataDir: config.dataDir }, "creating the embedded database…");
  }
  // The dev chain starts while the database opens and migrates. The demo tenant waits for both:
  // its key is printed once, so it is not made by a start that then fails (dev chain port taken).
  const starting = startPayments({
    settings: config.x402,
    cacheDir: join(config.dataDir, "cache"),
    logger,
  });
  // Handled below; this keeps a refusal that comes while the database is still opening from
  // counting as an unhandled rejection meanwhile.
  starting.catch(() => undefined);
  let opened: { database: DatabaseHandle; result: DemoTenant | undefined };
  try {
    // First run of a non-production service on an empty database: a demo tenant so the
    // embedded default is usable at once. Under the lock, so two instances make one.
    opened = await openAndMigrate(
      config,
      async (database) => {
        await starting;
        if (config.nodeEnv === "production") return undefined;
        const [any] = await database.db.select({ id: organizations.id }).from(organizations).limit(1);
        if (any) return undefined;
        const tenant = await bootstrapOrganization({ db: database.db, input: { email: DEMO_EMAIL } });
        const password = demoPassword();
        await setUserPassword({ db: database.db, now: new Date(), input: { email: DEMO_EMAIL, password } });
        return { ...tenant, email: DEMO_EMAIL, password };
      },
      opening,
    );
  } catch (error) {
    await starting.then(
      (payments) => payments.close(),
      () => undefined,
    );
    // The dev chain's refusal says what to do; a database error that came with it is secondary.
    await starting;
    throw error;
  }
  const payments = await starting;
  const { database, result: demo } = opened;
  // Trusted only once LISTEN is in force; until then (and whenever it drops) keys are read
  // from the database. A first attempt that fails is retried in the background.
  const authCache = createAuthCache();
  await listenForAuthChanges(database, authCache, logger);
  const deps = withServices({
    config,
    db: database.db,
    database,
    logger,
    authCache,
    keyring,
    egress: createEgress(config.egress),
    languageModel: config.model ? await createLanguageModel(config.model) : undefined,
    jobs: createJobs({
      database,
      pglite: database.pglite,
      postgresUrl: config.database.kind === "postgres" ? config.database.url : undefined,
      logger,
      queues: jobQueues,
    }),
    clock: () => new Date(),
    payments,
  });
  return { ...deps, demo };
}
