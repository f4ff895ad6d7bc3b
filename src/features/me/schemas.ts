import { z } from "@hono/zod-openapi";
import { PermissionSchema } from "../api-keys/index.ts";

export const MeSchema = z
  .object({
    actor: z.object({
      type: z.enum(["api_key", "web_session", "oauth_token"]),
      id: z.string().openapi({ description: "The key's id, or for an OAuth token its grant's (`oag_…`)." }),
      clientId: z
        .string()
        .optional()
        .openapi({ description: "OAuth tokens: the client they were issued to." }),
      scopes: z.array(z.string()).optional().openapi({ description: "OAuth tokens: the scopes granted." }),
    }),
    user: z.object({ id: z.string(), email: z.string() }),
    organization: z.object({ id: z.string(), name: z.string(), kind: z.enum(["standard", "wallet"]) }),
    role: z.enum(["owner", "admin", "member"]),
    permissions: z.array(PermissionSchema),
  })
  .openapi("Me");
export type Me = z.infer<typeof MeSchema>;
