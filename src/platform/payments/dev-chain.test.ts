import { expect, test } from "vitest";
import { deriveDevAccount, devAccount } from "./dev-chain.ts";

test("the dev chain's well-known accounts are the mnemonic's #0 and #1", () => {
  for (const index of [0, 1]) expect(devAccount(index)).toEqual(deriveDevAccount(index));
  expect(devAccount(2)).toEqual(deriveDevAccount(2));
  expect(new Set([0, 1, 2].map((i) => devAccount(i).address)).size).toBe(3);
});
