import { createHash } from "node:crypto";
import { randomToken } from "../../ids.ts";

/** Receipts live five minutes (DESIGN §5) and are single use. */
export const RECEIPT_TTL_MS = 5 * 60 * 1000;

export function newReceipt(): { receipt: string; hash: string } {
  const receipt = `dlr_${randomToken(20)}`;
  return { receipt, hash: hashReceipt(receipt) };
}

export const hashReceipt = (receipt: string): string => createHash("sha256").update(receipt).digest("hex");
