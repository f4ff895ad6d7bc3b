// The OAuth server's paths and cookie names, apart from the provider itself: the routes and pages
// that name them load without oidc-provider, which is loaded on the first OAuth request.

/** Where the provider's endpoints live; all under /oauth so one route forwards them. */
export const oauthRoutes = {
  authorization: "/oauth/authorize",
  token: "/oauth/token",
  registration: "/oauth/register",
  revocation: "/oauth/revoke",
  device_authorization: "/oauth/device_authorization",
  code_verification: "/oauth/device",
  jwks: "/oauth/jwks",
  end_session: "/oauth/session/end",
  userinfo: "/oauth/userinfo",
  introspection: "/oauth/introspect",
  pushed_authorization_request: "/oauth/par",
  backchannel_authentication: "/oauth/backchannel",
  challenge: "/oauth/challenge",
  credential: "/oauth/credential",
} as const;

export const interactionPath = (uid: string): string => `/oauth/interaction/${uid}`;

/** The provider's cookie names; its session cookie is dropped at the start of each flow. */
export const providerCookies = {
  session: "patchbay_oauth_session",
  interaction: "patchbay_oauth_interaction",
  resume: "patchbay_oauth_resume",
} as const;
