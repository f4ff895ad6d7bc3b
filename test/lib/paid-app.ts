import { createApp } from "../../src/app.ts";
import type { Deps } from "../../src/deps.ts";
import { test as base } from "../fixtures.ts";
import { startTestChain, type TestChain } from "./dev-chain.ts";
import { scriptedModel } from "./scripted-model.ts";

/** The file's app with real payments: the dev chain (anvil) and the in-process facilitator. */
export type PaidApp = { deps: Deps; app: ReturnType<typeof createApp>; base: string };

/** The shared fixtures plus a file-scoped dev chain and an app that charges on it. */
export const paidTest = base.extend<{ chain: TestChain; paid: PaidApp }>({
  chain: [
    // biome-ignore lint/correctness/noEmptyPattern: vitest fixtures take their deps by destructuring
    async ({}, use) => {
      const chain = await startTestChain();
      await use(chain);
      await chain.close();
    },
    { scope: "file" },
  ],
  paid: [
    async ({ deps, chain }, use) => {
      const paidDeps: Deps = { ...deps, payments: chain.payments };
      await use({ deps: paidDeps, app: createApp(paidDeps), base: paidDeps.config.baseUrl });
    },
    { scope: "file" },
  ],
});

/**
 * The same paid app with a model configured (the AI SDK's mock, scripted with no turn: nothing
 * here may start a run's agent), so the routes that start runs can run and are suggested.
 */
export function withModel(paid: PaidApp): PaidApp {
  const deps: Deps = { ...paid.deps, languageModel: scriptedModel([]).model };
  return { deps, app: createApp(deps), base: paid.base };
}

/** A JSON POST's init. */
export const jsonPost = (body: unknown): RequestInit => ({
  method: "POST",
  headers: { "content-type": "application/json" },
  body: JSON.stringify(body),
});
