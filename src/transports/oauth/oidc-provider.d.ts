// The part of oidc-provider 9 that patchbay uses, typed (the package ships no types and
// @types/oidc-provider is not a dependency). Callbacks patchbay configures are typed at their
// definitions in src/transports/oauth/provider.ts.
declare module "oidc-provider" {
  import type { IncomingMessage } from "node:http";

  type Json = Record<string, unknown>;

  /** A Node response, or anything that behaves like one (src/transports/oauth/node-bridge.ts). */
  type NodeResponse = object;

  export type OidcClient = {
    readonly clientId: string;
    readonly clientName?: string;
    readonly redirectUris: readonly string[];
    readonly grantTypes: readonly string[];
    readonly applicationType: string;
    readonly clientAuthMethod: string;
    grantTypeAllowed(type: string): boolean;
  };

  export type Grant = {
    readonly jti: string;
    accountId?: string;
    clientId?: string;
    addOIDCScope(scope: string): void;
    addResourceScope(resource: string, scope: string): void;
    save(): Promise<string>;
    destroy(): Promise<void>;
  };

  export type Interaction = {
    readonly uid: string;
    readonly prompt: { name: string; reasons: string[]; details: Json };
    readonly params: Json;
    readonly session?: { accountId?: string; uid?: string };
    readonly returnTo: string;
    readonly deviceCode?: string;
  };

  export type InteractionResults = {
    login?: { accountId: string; remember?: boolean; ts?: number; amr?: string[]; acr?: string };
    consent?: { grantId?: string };
    error?: string;
    error_description?: string;
  };

  /** The Koa context oidc-provider hands to configuration callbacks and middleware. */
  export type KoaContextWithOIDC = {
    readonly req: IncomingMessage;
    body: unknown;
    status: number;
    type: string;
    readonly path: string;
    readonly method: string;
    readonly ip: string;
    get(header: string): string;
    set(header: string, value: string): void;
    readonly oidc: {
      readonly route?: string;
      readonly provider: Provider;
      readonly client?: OidcClient;
      readonly result?: InteractionResults;
      readonly params?: Json;
    };
  };

  export type ErrorOut = { error: string; error_description?: string; state?: string };

  export class Provider {
    constructor(issuer: string, configuration?: Json);
    proxy: boolean;
    readonly issuer: string;
    callback(): (req: IncomingMessage, res: NodeResponse) => Promise<void>;
    use(middleware: (ctx: KoaContextWithOIDC, next: () => Promise<void>) => Promise<void>): this;
    on(event: string, listener: (...args: unknown[]) => void): this;
    interactionDetails(req: IncomingMessage, res: NodeResponse): Promise<Interaction>;
    interactionResult(
      req: IncomingMessage,
      res: NodeResponse,
      result: InteractionResults,
      options?: { mergeWithLastSubmission?: boolean },
    ): Promise<string>;
    readonly Grant: {
      new (init: { accountId: string; clientId: string }): Grant;
      find(id: string): Promise<Grant | undefined>;
    };
    readonly Client: { find(id: string): Promise<OidcClient | undefined> };
  }

  type ErrorClass = new (description?: string) => Error & { error: string; status: number };

  export const errors: {
    InvalidTarget: ErrorClass;
    InvalidRequest: ErrorClass;
    InvalidClientMetadata: ErrorClass;
    OIDCProviderError: ErrorClass;
  };

  export default Provider;
}
