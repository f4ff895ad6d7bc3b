import { expect, test } from "vitest";
import { deriveDevAccount, devAccount } from "./dev-chain.ts";

test("the dev chain's well-known accounts are the mnemonic's #0 and #1", () => {
  for (const index of [0, 1]) expect(devAccount(index)).toEqual(deriveDevAccount(index));
  expect(devAccount(0).address).not.toBe(devAccount(1).address);
});
