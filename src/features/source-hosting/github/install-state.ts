import type { Keyring } from "../../../platform/vault/keyring.ts";
import { signToken, verifyToken } from "../../../platform/vault/signed-token.ts";
import type { GithubIntegration } from "./github-app.ts";

/** How long an install link works. */
const INSTALL_STATE_TTL_MS = 60 * 60 * 1000;

type InstallState = { o: string; iat: number };

// What the link needs of `Deps`, named here: this module sits below configuration, which reads
// the App's settings type from this feature.
type StateDeps = {
  remediation: { github: GithubIntegration | undefined };
  keyring: Keyring;
  clock: () => Date;
};

/**
 * The link that installs patchbay's GitHub App for an organisation (undefined without an App):
 * installing and choosing repositories happen on GitHub, by a person. Its `state` is signed and
 * names the organisation, so the callback binds the installation to the organisation that asked
 * for it. It authorises nothing by itself — the callback binds only for a browser signed in as an
 * owner or admin of that organisation — so an agent may hand it to its human.
 */
export function githubInstallUrl(
  deps: StateDeps,
  organizationId: string,
): { url: string; expiresAt: string } | undefined {
  const github = deps.remediation.github;
  if (!github) return undefined;
  const now = deps.clock().getTime();
  const state: InstallState = { o: organizationId, iat: now };
  return {
    url: github.installUrl(signToken(deps.keyring, "github/install-state", state)),
    expiresAt: new Date(now + INSTALL_STATE_TTL_MS).toISOString(),
  };
}

/** The state of a link we signed that has not expired, else undefined. */
export function readInstallState(
  deps: Pick<StateDeps, "keyring" | "clock">,
  token: string,
): InstallState | undefined {
  const payload = verifyToken(deps.keyring, "github/install-state", token) as
    | Partial<InstallState>
    | undefined;
  if (typeof payload?.o !== "string" || typeof payload.iat !== "number") return undefined;
  if (deps.clock().getTime() - payload.iat > INSTALL_STATE_TTL_MS) return undefined;
  return { o: payload.o, iat: payload.iat };
}
