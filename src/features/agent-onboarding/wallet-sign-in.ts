import { randomBytes } from "node:crypto";
import {
  buildSIWxSchema,
  type EVMMessageVerifier,
  parseSIWxHeader,
  type SIWxExtension,
  type SIWxPayload,
  validateSIWxMessage,
  verifySIWxSignature,
} from "@x402/extensions/sign-in-with-x";
import { and, eq, gt, isNull } from "drizzle-orm";
import { createPublicClient, http } from "viem";
import { signedInWalletPermissions, type WalletActor } from "../../actor.ts";
import type { Deps } from "../../deps.ts";
import { AppError } from "../../errors.ts";
import { siwxNonces } from "../../platform/db/schema/siwx-nonces.ts";
import { isUnanswered } from "../../platform/payments/facilitator.ts";
import type { Payments } from "../../platform/payments/payments.ts";
import { payerOf, resolveWalletActor } from "./callers.ts";

/** How long a challenge waits for its signature: an agent signs at once, a replay gets no time. */
const CHALLENGE_TTL_MS = 5 * 60_000;

const STATEMENT =
  "Sign in with the wallet that pays for your patchbay organisation to read its remediations and onboarding for free.";

type SignInDeps = Pick<Deps, "db" | "config" | "payments" | "clock">;

/** Wallets sign in on the network they pay on; without payments there is nothing to sign in with. */
const signInNetwork = (payments: Payments): string | undefined =>
  payments.kind === "ready" ? payments.network : undefined;

/**
 * A fresh `sign-in-with-x` challenge (CAIP-122, EIP-4361 on EVM) for the free read at `path`,
 * in the extension's wire form; undefined when payments are unavailable. The nonce is stored so
 * that a signature over it is accepted once, for this URI and network, before it expires.
 */
export async function issueSignInChallenge(
  deps: SignInDeps,
  path: string,
): Promise<SIWxExtension | undefined> {
  const network = signInNetwork(deps.payments);
  if (!network) return undefined;
  const now = deps.clock();
  const expiresAt = new Date(now.getTime() + CHALLENGE_TTL_MS);
  const uri = `${deps.config.baseUrl}${path}`;
  const nonce = randomBytes(16).toString("hex");
  await deps.db.insert(siwxNonces).values({ nonce, uri, network, issuedAt: now, expiresAt });
  return {
    info: {
      domain: new URL(deps.config.baseUrl).host,
      uri,
      statement: STATEMENT,
      version: "1",
      nonce,
      issuedAt: now.toISOString(),
      expirationTime: expiresAt.toISOString(),
      resources: [uri],
    },
    supportedChains: [{ chainId: network, type: "eip191" }],
    schema: buildSIWxSchema(),
  };
}

/** A refused sign-in: `reason` is the extension's code (`invalid_siwx_…`). */
const refused = (reason: string, why: string) =>
  new AppError(
    "sign_in_invalid",
    `Sign-in with the wallet was refused (${reason}): ${why} Request the route again without credentials for a fresh challenge, sign it, and send it once in SIGN-IN-WITH-X.`,
    { reason },
  );

/**
 * The wallet that signed the `SIGN-IN-WITH-X` header for a request to `path`, acting for its own
 * organisation with read permissions only. Checked with the SDK: the payload's shape, the domain
 * and URI against this server's public origin, the times, the signature (EIP-191; EIP-1271/6492
 * contract wallets where the chain can be asked); then by patchbay: the network is the one it
 * takes payments on, the URI is this request's, and the nonce is one it issued for that URI,
 * unexpired and unused. The nonce is spent last, so a refused attempt leaves it to its owner.
 */
export async function signInWallet(deps: Deps, args: { header: string; path: string }): Promise<WalletActor> {
  let payload: SIWxPayload;
  try {
    payload = parseSIWxHeader(args.header);
  } catch {
    throw refused("invalid_siwx_payload", "SIGN-IN-WITH-X must be the base64 JSON of a signed challenge.");
  }
  const network = signInNetwork(deps.payments);
  if (!network || payload.chainId !== network) {
    throw refused(
      "invalid_siwx_unsupported_chain",
      `Sign in on ${network ?? "the payment network"}, the chain offered in the challenge.`,
    );
  }
  const fields = await validateSIWxMessage(payload, new URL(new URL(deps.config.baseUrl).origin));
  if (!fields.isValid) throw refused(fields.invalidReason, `${fields.invalidMessage}.`);
  const uri = `${deps.config.baseUrl}${args.path}`;
  if (payload.uri !== uri)
    throw refused("invalid_siwx_uri_mismatch", `The challenge was for ${payload.uri}.`);
  const signature = await verifySIWxSignature(payload, {
    evmVerifier: contractWalletVerifier(deps.payments),
  });
  if (!signature.isValid) {
    // The chain could not be asked about a contract wallet: an outage, not a verdict.
    if (signature.invalidReason === "invalid_siwx_verifier_error") {
      throw new AppError("service_unavailable", "The chain could not be reached to check the signature.", {
        retryAfterSeconds: 2,
      });
    }
    throw refused(signature.invalidReason, "The signature does not match the message and address.");
  }
  const actor = await resolveWalletActor(deps, payerOf({ payer: signature.payer, network }));
  await spendNonce(deps, { nonce: payload.nonce, uri, network });
  return { ...actor, permissions: signedInWalletPermissions };
}

async function spendNonce(deps: SignInDeps, challenge: { nonce: string; uri: string; network: string }) {
  const now = deps.clock();
  const [spent] = await deps.db
    .update(siwxNonces)
    .set({ usedAt: now })
    .where(
      and(
        eq(siwxNonces.nonce, challenge.nonce),
        eq(siwxNonces.uri, challenge.uri),
        eq(siwxNonces.network, challenge.network),
        isNull(siwxNonces.usedAt),
        gt(siwxNonces.expiresAt, now),
      ),
    )
    .returning({ nonce: siwxNonces.nonce });
  if (spent) return;
  const [row] = await deps.db.select().from(siwxNonces).where(eq(siwxNonces.nonce, challenge.nonce));
  if (row && !row.usedAt && row.uri === challenge.uri && row.expiresAt.getTime() <= now.getTime()) {
    throw refused("invalid_siwx_expired", "The challenge expired.");
  }
  throw refused(
    "invalid_siwx_nonce",
    "The challenge's nonce is unknown here or was already used; each signed challenge signs in once.",
  );
}

/**
 * viem's check of a message signature against the chain patchbay runs (the dev chain): the
 * EOA's signature first, locally, then a contract wallet's (EIP-1271, EIP-6492) through the
 * node. Without a node, the SDK checks EOA signatures alone. Only a node that does not answer is
 * an error (the SDK's `invalid_siwx_verifier_error`); anything else the check throws on is a
 * signature that does not verify.
 */
const verifiers = new WeakMap<Payments, EVMMessageVerifier>();
function contractWalletVerifier(payments: Payments): EVMMessageVerifier | undefined {
  const rpcUrl = payments.kind === "ready" ? payments.devChain?.rpcUrl : undefined;
  if (!rpcUrl) return undefined;
  let verifier = verifiers.get(payments);
  if (!verifier) {
    const client = createPublicClient({ transport: http(rpcUrl, { timeout: 4_000, retryCount: 1 }) });
    verifier = async (args) => {
      try {
        return await client.verifyMessage({ ...args, mode: "eoa" });
      } catch (error) {
        if (isUnanswered(error)) throw error;
        return false;
      }
    };
    verifiers.set(payments, verifier);
  }
  return verifier;
}
