import { type Payer, type WalletActor, walletPermissions } from "../../actor.ts";
import { type ServiceContext, withTransaction } from "../../context.ts";
import { AppError } from "../../errors.ts";
import { newId, newUuid } from "../../ids.ts";
import { recordAudit } from "../../platform/audit/record-audit.ts";
import { isUniqueViolation } from "../../platform/db/errors.ts";
import { environments } from "../../platform/db/schema/environments.ts";
import { organizations } from "../../platform/db/schema/organizations.ts";
import { publishableKeys } from "../../platform/db/schema/publishable-keys.ts";
import { generatePublishableKey, newPublishableKeyId } from "../publishable-keys/index.ts";
import { findWalletOrganization } from "./callers.ts";
import { organizationActions, sendTelemetryAction, startOnboardingAction } from "./next-actions.ts";
import type { SignupInput, SignupResult } from "./schemas.ts";

/**
 * Creates a payer's wallet organisation, its first environment and a publishable key (spec 1B
 * step 2). One per wallet: a second signup is `already_signed_up` with the existing one's actions.
 */
export async function signUpWallet(args: {
  ctx: ServiceContext<Payer>;
  input: SignupInput;
}): Promise<SignupResult> {
  const { ctx, input } = args;
  const { deps, actor } = ctx;
  const { wallet } = actor;
  const key = generatePublishableKey();
  const organizationId = newId("org");
  const environmentId = newUuid();
  const environmentName = input.environmentName ?? "production";
  const organizationName = input.organizationName ?? `Wallet ${wallet.address}`;
  const keyId = newPublishableKeyId();
  // From here the payer is the wallet actor of its new organisation.
  const asOrganization: ServiceContext<WalletActor> = {
    ...ctx,
    actor: { ...actor, organizationId, environmentId, permissions: walletPermissions },
  };
  try {
    await withTransaction(deps.db, async (tx) => {
      await tx.insert(organizations).values({
        id: organizationId,
        name: organizationName,
        kind: "wallet",
        walletAddress: wallet.address,
        walletNetwork: wallet.network,
      });
      await tx.insert(environments).values({ id: environmentId, organizationId, name: environmentName });
      await tx.insert(publishableKeys).values({
        id: keyId,
        organizationId,
        environmentId,
        name: "Signup key",
        prefix: key.prefix,
        keyHash: key.hash,
        createdBy: `wallet:${wallet.address}`,
      });
      await recordAudit(tx, asOrganization, {
        action: "organization.signed_up",
        targetType: "organization",
        targetId: organizationId,
        environmentId: environmentId,
        details: { network: wallet.network, environmentId, publishableKeyId: keyId },
      });
    });
  } catch (error) {
    // The unique (network, address) index holds one organisation per wallet, also when two
    // first signups race. A refusal, so the gate charges nothing.
    const existing = isUniqueViolation(error) ? await findWalletOrganization(deps.db, wallet) : undefined;
    if (!existing) throw error;
    throw new AppError(
      "already_signed_up",
      "This wallet already has an organisation; nothing was charged. Follow next_actions.",
      { organizationId: existing.id, next_actions: await organizationActions(deps, existing.id) },
    );
  }
  const endpoint = deps.config.baseUrl;
  return {
    organization: { id: organizationId, name: organizationName, wallet },
    environment: { id: environmentId, name: environmentName },
    publishableKey: { id: keyId, key: key.key },
    telemetry: {
      endpoint,
      protocol: "http/protobuf",
      headers: { authorization: `Bearer ${key.key}` },
      env: {
        OTEL_EXPORTER_OTLP_ENDPOINT: endpoint,
        OTEL_EXPORTER_OTLP_HEADERS: `authorization=Bearer%20${key.key}`,
        OTEL_EXPORTER_OTLP_PROTOCOL: "http/protobuf",
      },
    },
    next_actions: [
      await startOnboardingAction(deps, organizationId, environmentId),
      sendTelemetryAction(deps),
    ],
  };
}
